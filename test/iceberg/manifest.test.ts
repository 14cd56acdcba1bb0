import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Schema } from '../../iceberg/schema.js';
import type { PartitionSpec } from '../../iceberg/partition-spec.js';
import { DataFileContent, ManifestEntryStatus, type ManifestEntry } from '../../iceberg/data-file.js';
import { inheritFromManifestFile, readManifest, writeManifest, writeManifestFile } from '../../iceberg/manifest.js';
import { readContainer } from '../../iceberg/avro/container.js';
import { AvroError } from '../../iceberg/avro/errors.js';
import { fromSingleValue, toSingleValue } from '../../iceberg/metrics.js';
import { readWithPythonAvro } from './avro/python-avro.js';

const schema: Schema = {
  type: 'struct',
  'schema-id': 3,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: true, type: 'timestamptz' },
    { id: 3, name: 'part', required: true, type: 'int' },
    { id: 4, name: 'name', required: false, type: 'string' },
  ],
};
const spec: PartitionSpec = {
  'spec-id': 7,
  fields: [
    { 'source-id': 3, 'field-id': 1000, name: 'part', transform: 'identity' },
    { 'source-id': 2, 'field-id': 1001, name: 'ts-day', transform: 'day' },
  ],
};

const BIG_SNAPSHOT = 8744736658442914487n; // beyond 2^53: must survive exactly
const BIG_COUNT = 2n ** 53n + 1n;

function entry(path: string, status: ManifestEntry['status'], part: number | null, day: number | null, rows: bigint, seq: bigint | null): ManifestEntry {
  return {
    status,
    snapshot_id: status === ManifestEntryStatus.ADDED ? null : BIG_SNAPSHOT,
    sequence_number: seq,
    file_sequence_number: seq,
    data_file: {
      content: DataFileContent.DATA,
      file_path: path,
      file_format: 'parquet',
      partition: { part, 'ts-day': day },
      record_count: rows,
      file_size_in_bytes: 4096n,
      column_sizes: new Map([[1, BIG_COUNT], [4, 10n]]),
      value_counts: new Map([[1, rows]]),
      null_value_counts: new Map([[4, 0n]]),
      nan_value_counts: new Map(),
      lower_bounds: new Map([[1, toSingleValue('long', 0n)], [4, toSingleValue('string', 'a')]]),
      upper_bounds: new Map([[1, toSingleValue('long', rows - 1n)], [4, toSingleValue('string', 'zz')]]),
      key_metadata: null,
      split_offsets: [4n, 1000n],
      equality_ids: null,
      sort_order_id: 0,
      referenced_data_file: null,
      first_row_id: null,
      content_offset: null,
      content_size_in_bytes: null,
    },
  };
}

const entries: ManifestEntry[] = [
  entry('s3://b/t/data/part=1/00000000000000000000.parquet', ManifestEntryStatus.ADDED, 1, 19700, 10n, null),
  entry('s3://b/t/data/part=0/00000000000000000100.parquet', ManifestEntryStatus.ADDED, 0, 19701, 5n, null),
  entry('s3://b/t/data/part=null/00000000000000000000.parquet', ManifestEntryStatus.EXISTING, null, 19650, BIG_COUNT, 4n),
];
const options = { formatVersion: 2, schema, partitionSpec: spec, content: 'data' as const };

test('a v2 manifest is readable by python3-avro with every field id, header key and exact long', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-manifest-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { bytes, manifestFile } = writeManifestFile(entries, options, { manifest_path: join(dir, 'm0.avro'), added_snapshot_id: 42n });
  const path = join(dir, 'm0.avro');
  await writeFile(path, bytes);
  const py = readWithPythonAvro(path);

  assert.deepEqual(py.missingIds, []);
  assert.equal(py.meta['format-version'], '2');
  assert.equal(py.meta['content'], 'data');
  assert.equal(py.meta['schema-id'], '3');
  assert.equal(py.meta['partition-spec-id'], '7');
  assert.equal(py.meta['avro.codec'], 'deflate');
  assert.deepEqual(JSON.parse(py.meta['schema'] as string), schema);
  assert.deepEqual(JSON.parse(py.meta['partition-spec'] as string), spec.fields);
  assert.equal(py.records.length, 3);
  const [r0, , r2] = py.records as Record<string, Record<string, unknown>>[];
  assert.equal(r0?.['status'], '1');
  assert.equal(r0?.['snapshot_id'], null);
  assert.equal(r2?.['snapshot_id'], BIG_SNAPSHOT.toString());
  const df2 = r2?.['data_file'] as Record<string, unknown>;
  assert.equal(df2['record_count'], BIG_COUNT.toString());
  assert.equal(df2['file_format'], 'PARQUET');
  // Non-string map keys are arrays of key/value records; the partition field name was made Avro-safe.
  assert.deepEqual(df2['column_sizes'], [{ key: '1', value: BIG_COUNT.toString() }, { key: '4', value: '10' }]);
  assert.deepEqual(df2['partition'], { part: null, ts_x2Dday: new Date(19650 * 86_400_000).toISOString().slice(0, 10) });
  assert.deepEqual(df2['split_offsets'], ['4', '1000']);

  // The ids are the spec's, not just present.
  const avroSchema = readContainer(bytes).schema as { fields: { name: string; 'field-id': number; type: unknown }[] };
  assert.deepEqual(avroSchema.fields.map((f) => [f.name, f['field-id']]), [['status', 0], ['snapshot_id', 1], ['sequence_number', 3], ['file_sequence_number', 4], ['data_file', 2]]);
  const dataFile = avroSchema.fields[4]?.type as { fields: { name: string; 'field-id': number; type: unknown }[] };
  const ids = Object.fromEntries(dataFile.fields.map((f) => [f.name, f['field-id']]));
  assert.deepEqual(ids, {
    content: 134, file_path: 100, file_format: 101, partition: 102, record_count: 103, file_size_in_bytes: 104, column_sizes: 108,
    value_counts: 109, null_value_counts: 110, nan_value_counts: 137, lower_bounds: 125, upper_bounds: 128, key_metadata: 131,
    split_offsets: 132, equality_ids: 135, sort_order_id: 140, referenced_data_file: 143,
  });
  const partition = dataFile.fields[3]?.type as { fields: { 'field-id': number }[] };
  assert.deepEqual(partition.fields.map((f) => f['field-id']), [1000, 1001]);
  const colSizes = JSON.stringify(dataFile.fields[6]?.type);
  assert.match(colSizes, /"logicalType":"map"/);
  assert.match(colSizes, /"name":"k117_v118".*"field-id":117.*"field-id":118/);

  // Manifest list row: counts and partition summaries.
  assert.equal(manifestFile.added_files_count, 2);
  assert.equal(manifestFile.existing_files_count, 1);
  assert.equal(manifestFile.added_rows_count, 15n);
  assert.equal(manifestFile.existing_rows_count, BIG_COUNT);
  assert.equal(manifestFile.manifest_length, BigInt(bytes.length));
  assert.equal(manifestFile.partition_spec_id, 7);
  assert.equal(manifestFile.min_sequence_number, 4n);
  const [p0, p1] = manifestFile.partitions ?? [];
  assert.equal(p0?.contains_null, true);
  assert.equal(fromSingleValue('int', p0?.lower_bound as Uint8Array), 0);
  assert.equal(fromSingleValue('int', p0?.upper_bound as Uint8Array), 1);
  assert.equal(p1?.contains_null, false);
  assert.equal(fromSingleValue('date', p1?.lower_bound as Uint8Array), 19650);
  assert.equal(fromSingleValue('date', p1?.upper_bound as Uint8Array), 19701);
});

test('a manifest round-trips through our reader with exact bigints, and inheritance fills nulls', () => {
  const bytes = writeManifest(entries, options);
  const m = readManifest(bytes);
  assert.deepEqual(m.entries, entries);
  assert.equal(m.metadata.formatVersion, 2);
  assert.equal(m.metadata.schemaId, 3);
  assert.deepEqual(m.metadata.partitionSpec, spec);
  const inherited = inheritFromManifestFile(m.entries, {
    manifest_path: 'x', manifest_length: 1n, partition_spec_id: 7, content: 0, sequence_number: 9n, min_sequence_number: 4n,
    added_snapshot_id: 42n, added_files_count: 2, existing_files_count: 1, deleted_files_count: 0,
    added_rows_count: 15n, existing_rows_count: BIG_COUNT, deleted_rows_count: 0n, first_row_id: 100n,
  });
  assert.deepEqual(inherited.map((e) => [e.snapshot_id, e.sequence_number, e.data_file.first_row_id]), [
    [42n, 9n, 100n],
    [42n, 9n, 110n],
    [BIG_SNAPSHOT, 4n, 115n],
  ]);
});

test('v3 manifests carry first_row_id and deletion-vector fields; delete files need a deletes manifest', () => {
  const dv: ManifestEntry = {
    ...entry('s3://b/t/data/dv.puffin', ManifestEntryStatus.ADDED, 1, 19700, 3n, null),
  };
  const del: ManifestEntry = {
    ...dv,
    data_file: { ...dv.data_file, content: DataFileContent.POSITION_DELETES, file_format: 'puffin', sort_order_id: null, referenced_data_file: 's3://b/t/data/a.parquet', content_offset: 4n, content_size_in_bytes: 40n },
  };
  assert.throws(() => writeManifest([del], { ...options, formatVersion: 3 }), (e: unknown) => e instanceof AvroError && e.code === 'INVALID_MANIFEST');
  const bytes = writeManifest([del], { ...options, formatVersion: 3, content: 'deletes' });
  const back = readManifest(bytes);
  assert.equal(back.metadata.content, 'deletes');
  assert.deepEqual(back.entries, [del]);
  const df = (readContainer(bytes).schema as { fields: { type: { fields: { name: string; 'field-id': number }[] } }[] }).fields[4]?.type.fields ?? [];
  const ids = new Map(df.map((f) => [f.name, f['field-id']]));
  assert.equal(ids.get('first_row_id'), 142);
  assert.equal(ids.get('content_offset'), 144);
  assert.equal(ids.get('content_size_in_bytes'), 145);
  assert.throws(() => writeManifest([del], { ...options, formatVersion: 1 }), (e: unknown) => e instanceof AvroError && e.code === 'UNSUPPORTED_FORMAT_VERSION');
});
