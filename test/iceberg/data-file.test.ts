import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as arrow from 'apache-arrow';
import type { Schema } from '../../iceberg/schema.js';
import { DataFileContent, DataFileError, ManifestEntryStatus, parquetDataFile, validateDataFile, type DataFile } from '../../iceberg/data-file.js';
import { writeParquet } from '../../iceberg/parquet/writer.js';
import { readManifest, writeManifest } from '../../iceberg/manifest.js';

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'p', required: true, type: 'int' },
    { id: 2, name: 'offset', required: true, type: 'long' },
    { id: 3, name: 'value', required: false, type: 'binary' },
  ],
};

test('a written Parquet file becomes a DataFile whose metrics and split offsets survive a manifest', async () => {
  const n = 1000;
  const table = new arrow.Table({
    p: arrow.makeVector(new Int32Array(n).fill(2)),
    offset: arrow.makeVector(BigInt64Array.from({ length: n }, (_, i) => BigInt(i * 2 + 100))),
    value: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => (i % 10 === 0 ? null : Uint8Array.of(i & 0xff, 1))), new arrow.Binary()),
  });
  const res = await writeParquet(schema, table, { rowGroupRows: 400 });
  const df = parquetDataFile({ file_path: 'file:///w/t/data/p=2/00000000000000000100.parquet', partition: { p: 2 }, metrics: res.metrics, split_offsets: res.splitOffsets });
  assert.equal(df.record_count, 1000n);
  assert.equal(df.split_offsets?.length, 3);
  assert.equal(df.null_value_counts?.get(3), 100n);
  const bytes = writeManifest([{ status: ManifestEntryStatus.ADDED, snapshot_id: null, sequence_number: null, file_sequence_number: null, data_file: df }], {
    formatVersion: 2,
    schema,
    partitionSpec: { 'spec-id': 0, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'p', transform: 'identity' }] },
  });
  const back = readManifest(bytes).entries[0]?.data_file;
  assert.deepEqual(back?.lower_bounds, df.lower_bounds);
  assert.deepEqual(back?.upper_bounds, df.upper_bounds);
  assert.deepEqual(back?.split_offsets, df.split_offsets);
  assert.deepEqual(back?.column_sizes, df.column_sizes);
  assert.deepEqual(back?.partition, { p: 2 });
});

test('validateDataFile enforces the spec rules that tie fields together', () => {
  const base: DataFile = { content: DataFileContent.DATA, file_path: 's3://b/f.parquet', file_format: 'parquet', partition: {}, record_count: 1n, file_size_in_bytes: 10n };
  assert.doesNotThrow(() => validateDataFile(base));
  const bad: [Partial<DataFile>, RegExp][] = [
    [{ content: DataFileContent.EQUALITY_DELETES }, /equality_ids/],
    [{ equality_ids: [1] }, /only for equality delete/],
    [{ content: DataFileContent.POSITION_DELETES, sort_order_id: 0 }, /sort_order_id/],
    [{ split_offsets: [10n, 4n] }, /ascending/],
    [{ content_offset: 4n }, /go together/],
    [{ record_count: -1n }, /negative/],
  ];
  for (const [patch, msg] of bad) {
    assert.throws(() => validateDataFile({ ...base, ...patch } as DataFile), (e: unknown) => e instanceof DataFileError && e.code === 'INVALID_DATA_FILE' && msg.test(e.message));
  }
});
