// Deletion vectors as Floe writes them (Puffin files of deletion-vector-v1 blobs), read back by an
// independent reader: test/interop/python/puffin_dv.py checks the Puffin layout, the blob's length, magic and
// CRC-32, and decodes the Roaring bitmap with pyroaring (CRoaring). Spark reading an upsert table of format v3
// is the end-to-end check (test/interop/engines/spark-upsert.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DataFileContent, type DataFile } from '../../iceberg/data-file.js';
import { serializeDeletionVector, writeDeletionVector } from '../../iceberg/deletion-vectors.js';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { parseJson } from '../../iceberg/json.js';
import { runVenvPython } from '../helpers/peers.js';

const READER = fileURLToPath(new URL('../interop/python/puffin_dv.py', import.meta.url));

interface Read {
  files: { footer: { blobs: { type: string; fields: number[]; 'snapshot-id': number; 'sequence-number': number; offset: number; length: number }[] }; blobs: { properties: Record<string, string>; positions: number[] }[] }[];
}

test('deletion vectors decode with pyroaring to the positions written: arrays, full bitmap containers, positions past 2^32', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-dv-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: pathToFileURL(dir).href, fsync: false });
  const cases: number[][] = [
    [0],
    [3, 1, 2, 2, 65535, 65536, 70000],
    // More than 4,096 values in one 64 Ki block: a bitmap container.
    Array.from({ length: 5000 }, (_, i) => i * 3),
    [7, 2 ** 32 + 5, 2 ** 33],
  ];
  const files: string[] = [];
  const entries: DataFile[] = [];
  for (const [i, positions] of cases.entries()) {
    const location = pathToFileURL(join(dir, `dv-${i}.puffin`)).href;
    const f = await writeDeletionVector(io, location, `s3://bucket/data/file-${i}.parquet`, positions, { partition: { kafka_partition: i } });
    entries.push(f);
    files.push((await readFile(join(dir, `dv-${i}.puffin`))).toString('base64'));
  }
  const read = parseJson(await runVenvPython(READER, JSON.stringify({ files }))) as unknown as Read;
  cases.forEach((positions, i) => {
    const want = [...new Set(positions)].sort((a, b) => a - b);
    const got = read.files[i];
    const blob = got?.footer.blobs[0];
    assert.deepEqual(got?.blobs[0]?.positions, want, `case ${i}: positions`);
    assert.deepEqual(got?.blobs[0]?.properties, { 'referenced-data-file': `s3://bucket/data/file-${i}.parquet`, cardinality: String(want.length) });
    assert.equal(blob?.type, 'deletion-vector-v1');
    assert.deepEqual(blob?.fields, [2147483645]);
    assert.equal(blob?.['snapshot-id'], -1);
    assert.equal(blob?.['sequence-number'], -1);
    const e = entries[i];
    assert.equal(e?.content, DataFileContent.POSITION_DELETES);
    assert.equal(e?.file_format, 'puffin');
    assert.equal(e?.record_count, BigInt(want.length));
    assert.equal(e?.referenced_data_file, `s3://bucket/data/file-${i}.parquet`);
    assert.equal(e?.content_offset, BigInt(blob?.offset ?? -1));
    assert.equal(e?.content_size_in_bytes, BigInt(blob?.length ?? -1));
  });
});

test('a deletion vector refuses negative positions and an empty set', async () => {
  assert.throws(() => serializeDeletionVector([-1]), /row positions/);
  const io = new LocalFileIO({ root: pathToFileURL(tmpdir()).href, fsync: false });
  await assert.rejects(writeDeletionVector(io, pathToFileURL(join(tmpdir(), 'never.puffin')).href, 'f.parquet', []), /would delete no row/);
});
