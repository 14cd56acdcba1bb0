/** An in-memory DuckDB for a test: `sql` → rows as JSON objects; closed when the test ends. */
import type { TestContext } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';

export type DuckQuery = (sql: string) => Promise<Record<string, unknown>[]>;

export async function duck(t: Pick<TestContext, 'after'>): Promise<DuckQuery> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  t.after(() => {
    conn.closeSync();
    db.closeSync();
  });
  return async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
}
