/**
 * A topic's table as `key=value` strings, by three independent readers: pyiceberg through the REST catalog
 * (test/interop/engines/pyiceberg_driver.py in the peers' venv), icebird and DuckDB
 * (test/tiering/e2e/table-readers.ts). Keys and values are compared as UTF-8 text; the transaction tests
 * write text.
 */
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { parseJson } from '../../../iceberg/json.js';
import { runVenvPython } from '../../helpers/peers.js';
import { readWithDuckDB, readWithIcebird, type IcebirdBytes } from '../../tiering/e2e/table-readers.js';

const PYICEBERG = fileURLToPath(new URL('../engines/pyiceberg_driver.py', import.meta.url));

type B64 = { b64: string } | null;
const fromB64 = (v: B64): string => (v === null ? '' : Buffer.from(v.b64, 'base64').toString());
const text = (v: IcebirdBytes | Buffer): string => (v === null ? '' : typeof v === 'string' ? v : Buffer.from(v).toString());

/** Rows of `kafka.<topic>` as `key=value`, in table order, per reader. */
export async function tableEntries(t: TestContext, restUrl: string, io: FileIO, topic: string): Promise<{ pyiceberg: string[]; icebird: string[]; duckdb: string[] }> {
  const out = await runVenvPython(PYICEBERG, JSON.stringify({ catalog: { type: 'rest', uri: restUrl }, table: `kafka.${topic}`, scans: [{ filter: null }] }));
  const scan = (parseJson(out) as unknown as { scans: { rows: [{ key: B64 }, B64][] }[] }).scans[0];
  const pyiceberg = (scan?.rows ?? []).map(([k, v]) => `${fromB64(k.key)}=${fromB64(v)}`);
  const icebird = (await readWithIcebird(restUrl, io, ['kafka'], topic)).map((r) => `${text(r.key)}=${text(r.value)}`);
  const duckdb = (await readWithDuckDB(t, restUrl, io, ['kafka'], topic)).map((r) => `${text(r.key)}=${text(r.value)}`);
  return { pyiceberg, icebird, duckdb };
}
