import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManifestContent, readManifestList, writeManifestList, type ManifestFile } from '../../iceberg/manifest-list.js';
import { readContainer } from '../../iceberg/avro/container.js';
import { AvroError } from '../../iceberg/avro/errors.js';
import { readWithPythonAvro } from './avro/python-avro.js';

const SNAP = 8744736658442914487n;
const PARENT = 9007199254740993n; // 2^53 + 1

const manifests: ManifestFile[] = [
  {
    manifest_path: 's3://b/t/metadata/new-m0.avro',
    manifest_length: 7000n,
    partition_spec_id: 0,
    content: ManifestContent.DATA,
    sequence_number: null,
    min_sequence_number: null,
    added_snapshot_id: SNAP,
    added_files_count: 2,
    existing_files_count: 0,
    deleted_files_count: 0,
    added_rows_count: 300n,
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
    partitions: [{ contains_null: false, contains_nan: null, lower_bound: Uint8Array.of(0, 0, 0, 0), upper_bound: Uint8Array.of(3, 0, 0, 0) }],
    key_metadata: null,
    first_row_id: null,
  },
  {
    manifest_path: 's3://b/t/metadata/old-m1.avro',
    manifest_length: 6000n,
    partition_spec_id: 0,
    content: ManifestContent.DELETES,
    sequence_number: 3n,
    min_sequence_number: 2n,
    added_snapshot_id: PARENT,
    added_files_count: 0,
    existing_files_count: 1,
    deleted_files_count: 1,
    added_rows_count: 0n,
    existing_rows_count: 7n,
    deleted_rows_count: 1n,
    partitions: [{ contains_null: true, contains_nan: false, lower_bound: null, upper_bound: null }],
    key_metadata: null,
    first_row_id: null,
  },
];

test('a v2 manifest list is readable by python3-avro with ids, header keys and exact longs', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-mlist-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { bytes, manifests: written } = writeManifestList(manifests, { formatVersion: 2, snapshotId: SNAP, parentSnapshotId: PARENT, sequenceNumber: 5n });
  const path = join(dir, 'snap.avro');
  await writeFile(path, bytes);
  const py = readWithPythonAvro(path);
  assert.deepEqual(py.missingIds, []);
  assert.equal(py.meta['snapshot-id'], SNAP.toString());
  assert.equal(py.meta['parent-snapshot-id'], PARENT.toString());
  assert.equal(py.meta['sequence-number'], '5');
  assert.equal(py.meta['format-version'], '2');
  assert.equal(py.records.length, 2);
  const [r0, r1] = py.records;
  // The new manifest got the snapshot's sequence number; the old one kept its own.
  assert.equal(r0?.['sequence_number'], '5');
  assert.equal(r0?.['min_sequence_number'], '5');
  assert.equal(r1?.['sequence_number'], '3');
  assert.equal(r0?.['added_snapshot_id'], SNAP.toString());
  assert.equal(r1?.['content'], '1');
  assert.deepEqual(r0?.['partitions'], [{ contains_null: false, contains_nan: null, lower_bound: { hex: '00000000' }, upper_bound: { hex: '03000000' } }]);
  assert.equal(written[0]?.sequence_number, 5n);

  const schema = readContainer(bytes).schema as { fields: { name: string; 'field-id': number; type: unknown }[] };
  assert.deepEqual(schema.fields.map((f) => f['field-id']), [500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519]);
  const partitions = JSON.stringify(schema.fields[13]?.type);
  assert.match(partitions, /"element-id":508/);
  for (const id of [509, 518, 510, 511]) assert.match(partitions, new RegExp(`"field-id":${id}`));
});

test('a manifest list round-trips through our reader; v3 assigns first_row_id to data manifests', () => {
  const v2 = writeManifestList(manifests, { formatVersion: 2, snapshotId: SNAP, parentSnapshotId: null, sequenceNumber: 5n });
  const back = readManifestList(v2.bytes);
  assert.deepEqual(back.metadata, { snapshotId: SNAP, parentSnapshotId: null, sequenceNumber: 5n, formatVersion: 2 });
  assert.deepEqual(back.manifests, v2.manifests);

  const v3 = writeManifestList(manifests, { formatVersion: 3, snapshotId: SNAP, parentSnapshotId: PARENT, sequenceNumber: 5n, firstRowId: 1000n });
  assert.equal(v3.manifests[0]?.first_row_id, 1000n);
  assert.equal(v3.manifests[1]?.first_row_id, null); // delete manifests never get row ids
  assert.equal(v3.assignedRows, 300n);
  const back3 = readManifestList(v3.bytes);
  assert.equal(back3.metadata.firstRowId, 1000n);
  assert.deepEqual(back3.manifests, v3.manifests);
  const ids = (readContainer(v3.bytes).schema as { fields: { 'field-id': number }[] }).fields.map((f) => f['field-id']);
  assert.equal(ids.at(-1), 520);

  assert.throws(
    () => writeManifestList(manifests, { formatVersion: 3, snapshotId: SNAP, sequenceNumber: 5n }),
    (e: unknown) => e instanceof AvroError && e.code === 'INVALID_MANIFEST' && /firstRowId/.test(e.message),
  );
});
