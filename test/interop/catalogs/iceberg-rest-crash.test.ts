// Crash safety of tiering through an external REST catalog (Apache Iceberg's RESTCatalogServer over moto's
// S3 server, see iceberg-rest.test.ts): the kill -9 harness of the tiering crash tests
// (test/helpers/crash-harness.ts) with the broker registering its table in that catalog. Ten kills in a row
// on one log and one table, at every crash point; 'mid-commit' here is the ambiguous one: the catalog has
// answered the commit, the broker dies before reading the answer. After the last restart the table (read by
// pyiceberg through the external catalog) holds one row per offset, no duplicates, no gaps, the Kafka
// records byte for byte, and every acknowledged record is in the log once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../../helpers/broker.js';
import { killAtEveryPoint, TOPIC, type CrashSetup } from '../../helpers/crash-harness.js';
import { motoPython } from '../../helpers/peers.js';
import { startMotoS3Server } from '../../helpers/s3-server.js';
import { ChildRunner, externalCatalogFlags, pyicebergRows } from './external.js';
import { startIcebergRestServer } from './iceberg-rest-server.js';

const BUCKET = 'crash';

test('external REST catalog: ten kills in a row at every crash point, on the same log and table: nothing lost or duplicated', { timeout: 480_000 }, async (t) => {
  const root = await tempDir('floe-extcat-crash-');
  const s3 = await startMotoS3Server({ bucket: BUCKET, python: motoPython() });
  assert.ok(typeof s3 !== 'string', `moto's S3 server is needed (scripts/peers/55-moto.sh): ${String(s3)}`);
  const catalog = await startIcebergRestServer(s3, { dir: root, bucket: BUCKET });
  const runner = new ChildRunner();
  const cleanups: (() => Promise<unknown>)[] = [];
  // One hook, newest first: brokers and clients stop before the catalog, the S3 server and the folders.
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    runner.killAll();
    await catalog.stop();
    await s3.stop();
    await rm(root, { recursive: true, force: true });
  });
  const setup: CrashSetup = {
    warehouseFlags: externalCatalogFlags(s3, catalog, BUCKET),
    readRows: async () => (await pyicebergRows(runner, s3, catalog, TOPIC)).map((r) => ({ partition: r.partition, offset: r.offset, key: Buffer.from(r.key), value: Buffer.from(r.value) })),
  };
  const logDir = join(root, 'log');
  const points = ['mid-commit:1', 'mid-upload:2', 'before-commit:1', 'after-commit:1', 'mid-commit:2', 'mid-upload:1', 'before-commit:2', 'mid-commit:1', 'after-commit:2', 'mid-commit:3'];
  t.diagnostic(await killAtEveryPoint(setup, logDir, points, cleanups));
});
