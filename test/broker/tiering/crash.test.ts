// Crash safety of tiering on a local warehouse, with the broker as users run it (dist/broker/main.js); the
// harness (test/helpers/crash-harness.ts) kills it with FLOE_TIERING_CRASH_AT at a crash point while a
// producer writes, restarts it, and checks the table and Kafka reads (see there). The same runs on S3 in
// test/tiering/faults/crash-s3.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../../helpers/broker.js';
import { crashCycle, killAtEveryPoint, restartAndVerify, type CrashSetup } from '../../helpers/crash-harness.js';
import { tableRows } from '../../helpers/tiered-table.js';

function localSetup(warehouse: string): CrashSetup {
  return { warehouseFlags: [`--iceberg.warehouse=${warehouse}`], readRows: (restUrl) => tableRows(restUrl, 'crashy', warehouse) };
}

for (const point of ['mid-upload:4', 'before-commit:2', 'mid-commit:2', 'after-commit:2']) {
  const name = point.split(':')[0] as string;
  test(`a broker killed at ${name} recovers: one table row per record, every record fetchable from offset 0`, { timeout: 60_000 }, async (t) => {
    const root = await tempDir('floe-crash-');
    const cleanups: (() => Promise<unknown>)[] = [];
    // One hook, newest first: clients and brokers stop before their folders are removed.
    t.after(async () => {
      for (const c of cleanups.reverse()) await c().catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    });
    const logDir = join(root, 'log');
    const setup = localSetup(join(root, 'warehouse'));
    const acked = await crashCycle(setup, logDir, point, name, true);
    assert.ok(acked.length > 0, 'some records were acknowledged before the crash');
    const { ends, rows } = await restartAndVerify(setup, logDir, acked, cleanups);
    t.diagnostic(`${point}: ${acked.length} acknowledged records, log ends ${JSON.stringify([...ends])}, ${rows.length} table rows`);
  });
}

test('ten kills in a row at every crash point, on the same log and warehouse: nothing lost or duplicated', { timeout: 360_000 }, async (t) => {
  const root = await tempDir('floe-crash-cycles-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const logDir = join(root, 'log');
  const setup = localSetup(join(root, 'warehouse'));
  const points = ['mid-upload:2', 'before-commit:1', 'after-commit:1', 'mid-upload:1', 'before-commit:2', 'after-commit:2', 'mid-upload:3', 'before-commit:1', 'after-commit:1', 'mid-upload:1'];
  t.diagnostic(await killAtEveryPoint(setup, logDir, points, cleanups));
});
