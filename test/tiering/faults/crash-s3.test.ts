// Crash safety of tiering with the warehouse on S3 (s3rver, a real S3-compatible HTTP server started here):
// the kill -9 harness of the local crash test (test/helpers/crash-harness.ts) with the broker's S3 settings.
// On S3 an upload is a PUT that may or may not have landed when the process dies, and s3rver has no
// conditional writes, so the catalog holds the table pointer itself: the restart must still find exactly the
// committed state. Every crash point is hit, including mid-commit (the new metadata file is stored, the
// catalog pointer not yet swapped), and one log/warehouse takes eight kills in a row: twelve kills in the file.
// The table is read by DuckDB from the data files our manifest readers list (copied out of S3).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { S3FileIO } from '../../../iceberg/io/s3.js';
import { tempDir } from '../../helpers/broker.js';
import { crashCycle, killAtEveryPoint, restartAndVerify, TOPIC, type CrashSetup } from '../../helpers/crash-harness.js';
import { s3WarehouseFlags, startS3Server } from '../../helpers/s3-server.js';
import { readWithDuckDB } from '../e2e/table-readers.js';

/** A fresh bucket on a shared s3rver for one test; `cleanups` stops the S3 client. */
async function s3Setup(t: TestContext, s3: Awaited<ReturnType<typeof startS3Server>>, bucket: string, cleanups: (() => Promise<unknown>)[]): Promise<CrashSetup> {
  await s3.createBucket(bucket);
  const io = new S3FileIO(s3.fileIOOptions());
  cleanups.push(() => io.close());
  return {
    warehouseFlags: s3WarehouseFlags(s3, { bucket }),
    readRows: (restUrl) => readWithDuckDB(t, restUrl, io, ['kafka'], TOPIC),
  };
}

const s3 = await startS3Server({ bucket: 'floe-crash' });
test.after(() => s3.stop());

function withCleanups(t: TestContext, root: string): (() => Promise<unknown>)[] {
  const cleanups: (() => Promise<unknown>)[] = [];
  // One hook, newest first: clients and brokers stop before their folders are removed.
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  return cleanups;
}

for (const [i, point] of ['mid-upload:4', 'before-commit:2', 'mid-commit:2', 'after-commit:2'].entries()) {
  const name = point.split(':')[0] as string;
  test(`S3 warehouse: a broker killed at ${name} recovers: one table row per record, every record fetchable from offset 0`, { timeout: 60_000 }, async (t) => {
    const root = await tempDir('floe-crash-s3-');
    const cleanups = withCleanups(t, root);
    const setup = await s3Setup(t, s3, `crash-${i}`, cleanups);
    const logDir = join(root, 'log');
    const acked = await crashCycle(setup, logDir, point, name, true);
    assert.ok(acked.length > 0, 'some records were acknowledged before the crash');
    const { ends, rows } = await restartAndVerify(setup, logDir, acked, cleanups);
    t.diagnostic(`${point}: ${acked.length} acknowledged records, log ends ${JSON.stringify([...ends])}, ${rows.length} table rows`);
  });
}

test('S3 warehouse: eight kills in a row at every crash point, on the same log and bucket: nothing lost or duplicated', { timeout: 300_000 }, async (t) => {
  const root = await tempDir('floe-crash-s3-cycles-');
  const cleanups = withCleanups(t, root);
  const setup = await s3Setup(t, s3, 'crash-cycles', cleanups);
  const logDir = join(root, 'log');
  const points = ['mid-upload:2', 'before-commit:1', 'mid-commit:1', 'after-commit:1', 'mid-commit:2', 'mid-upload:1', 'before-commit:2', 'after-commit:2'];
  t.diagnostic(await killAtEveryPoint(setup, logDir, points, cleanups));
});
