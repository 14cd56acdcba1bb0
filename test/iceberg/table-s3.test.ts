/**
 * The table suite and the catalog contract with the warehouse on S3 (s3rver, a real S3-compatible HTTP server).
 * s3rver ignores If-None-Match/If-Match, so S3FileIO reports conditionalWrites=false and the WarehouseCatalog
 * runs on its catalog-held pointer: these tests exercise that fallback, 20 concurrent writers included.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { S3FileIO } from '../../iceberg/io/s3.js';
import { WarehouseCatalog } from '../../iceberg/catalog/warehouse.js';
import { startS3Server, type S3TestServer } from '../helpers/s3-server.js';
import { tableSuite } from './table-suite.js';
import { catalogContract } from './catalog/contract.js';

let shared: Promise<S3TestServer> | undefined;
after(async () => {
  await (await shared)?.stop();
});

async function s3Env(t: import('node:test').TestContext): Promise<{ io: S3FileIO; catalog: WarehouseCatalog }> {
  const s3 = await (shared ??= startS3Server());
  const io = new S3FileIO(s3.fileIOOptions());
  t.after(() => io.close());
  return { io, catalog: new WarehouseCatalog({ io, warehouse: `s3://${s3.bucket}/wh-${randomUUID()}` }) };
}

tableSuite('S3 warehouse (s3rver)', s3Env);
catalogContract('WarehouseCatalog on S3 (s3rver)', async (t) => (await s3Env(t)).catalog);

test('on s3rver the catalog falls back to the catalog-held pointer', async (t) => {
  const { catalog } = await s3Env(t);
  assert.equal(await catalog.usesConditionalWrites(), false);
});
