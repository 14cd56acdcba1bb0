import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { S3FileIO } from '../../../iceberg/io/s3.js';
import { createFileIO, registerFileIO, registeredSchemes, schemeOf } from '../../../iceberg/io/registry.js';
import { startS3Server } from '../../helpers/s3-server.js';
import { assertFileIOError } from './contract.js';

async function tempRoot(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-registry-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('file:// and file:/ warehouses open a LocalFileIO rooted at that folder, with its options', async (t) => {
  const root = await tempRoot(t);
  for (const warehouse of [`file://${root}/wh`, `file:${root}/wh`]) {
    const io = createFileIO(warehouse, { local: { fsync: false } });
    t.after(() => io.close());
    assert.ok(io instanceof LocalFileIO);
    assert.equal(io.root, `${root}/wh`);
    await io.put(`${warehouse}/t/a`, Buffer.from('x'));
    await assertFileIOError(io.get(`file://${root}/elsewhere`), 'INVALID_LOCATION');
  }
});

test('s3:// (and s3a://, s3n://) warehouses open an S3FileIO with the s3 options', async (t) => {
  const s3 = await startS3Server();
  t.after(() => s3.stop());
  for (const scheme of ['s3', 'S3', 's3a', 's3n']) {
    const io = createFileIO(`${scheme}://${s3.bucket}/warehouse`, { s3: s3.fileIOOptions({ conditionalWrites: false }) });
    t.after(() => io.close());
    assert.ok(io instanceof S3FileIO);
  }
  const io = createFileIO(`s3://${s3.bucket}/warehouse`, { s3: s3.fileIOOptions() });
  t.after(() => io.close());
  await io.put(`s3://${s3.bucket}/warehouse/a`, Buffer.from('via registry'));
  assert.equal((await io.get(`s3://${s3.bucket}/warehouse/a`)).toString(), 'via registry');
});

test('unknown or missing schemes are refused with the list of available ones', () => {
  assert.equal(schemeOf('/no/scheme'), undefined);
  assert.equal(schemeOf('GS://b/k'), 'gs');
  for (const bad of ['/var/floe', 'gs://bucket/wh', 'warehouse']) {
    assert.throws(
      () => createFileIO(bad),
      (err: Error & { code?: string }) => err.code === 'INVALID_LOCATION' && /file:\/\/, s3:\/\//.test(err.message),
    );
  }
});

test('a registered scheme is used for its warehouses', async (t) => {
  const root = await tempRoot(t);
  const seen: string[] = [];
  registerFileIO('memtest', (warehouse) => {
    seen.push(warehouse);
    return new LocalFileIO({ root });
  });
  assert.ok(registeredSchemes().includes('memtest'));
  const io = createFileIO('memtest://x/y');
  t.after(() => io.close());
  assert.deepEqual(seen, ['memtest://x/y']);
  assert.throws(() => registerFileIO('s3://', () => io), /not a URL scheme/);
});
