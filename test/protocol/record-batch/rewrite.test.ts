// rewriteBatch (protocol/record-batch/rewrite.ts): a batch re-encoded with fewer records keeps its base
// offset, last offset delta, attributes, producer fields, leader epoch and max timestamp, its surviving
// records keep their offsets, timestamps and headers, and the CRC is valid; a delete horizon shifts the
// base timestamp and leaves the records' timestamps as they were.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecordBatch, encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { rewriteBatch } from '../../../protocol/record-batch/rewrite.js';
import type { CompressionType } from '../../../protocol/record-batch/compression.js';

const original = (compression: CompressionType) =>
  decodeRecordBatch(
    encodeRecordBatch({
      baseOffset: 100n,
      partitionLeaderEpoch: 4,
      compression,
      timestampType: 'create',
      isTransactional: true,
      baseTimestamp: 1_000n,
      producerId: 42n,
      producerEpoch: 7,
      baseSequence: 9,
      records: [0, 1, 2, 3].map((i) => ({ key: Buffer.from(`k${i}`), value: i === 2 ? null : Buffer.from(`v${i}`), offsetDelta: i, timestampDelta: 10 * i, headers: [{ key: 'h', value: Buffer.from(String(i)) }, { key: 'h', value: null }] })),
    }),
  );

const timestamps = (b: ReturnType<typeof decodeRecordBatch>) => b.records.map((r) => Number(b.baseTimestamp) + r.timestampDelta);

for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
  test(`a ${codec} batch rewritten with records 1 and 2 keeps its header fields and those records`, () => {
    const b = original(codec);
    const out = decodeRecordBatch(rewriteBatch(b, [b.records[1], b.records[2]].filter((r) => r !== undefined)), 0, { verifyCrc: true });
    assert.deepEqual(
      [out.baseOffset, out.lastOffsetDelta, out.partitionLeaderEpoch, out.compression, out.isTransactional, out.isControl, out.hasDeleteHorizon, out.producerId, out.producerEpoch, out.baseSequence, out.maxTimestamp, out.baseTimestamp],
      [100n, 3, 4, codec, true, false, false, 42n, 7, 9, 1_030n, 1_000n],
    );
    assert.deepEqual(out.records.map((r) => [r.offsetDelta, r.key?.toString(), r.value?.toString() ?? null, r.headers.map((h) => [h.key, h.value?.toString() ?? null])]), [
      [1, 'k1', 'v1', [['h', '1'], ['h', null]]],
      [2, 'k2', null, [['h', '2'], ['h', null]]],
    ]);
    assert.deepEqual(timestamps(out), [1_010, 1_020]);
  });
}

test('a delete horizon is stamped without changing the records\' timestamps', () => {
  const b = original('none');
  const out = decodeRecordBatch(rewriteBatch(b, b.records.slice(2), { deleteHorizon: 50_000n }), 0, { verifyCrc: true });
  assert.equal(out.hasDeleteHorizon, true);
  assert.equal(out.baseTimestamp, 50_000n);
  assert.deepEqual(timestamps(out), [1_020, 1_030]);
  assert.equal(out.maxTimestamp, 1_030n);
});

test('an empty rewrite keeps the batch\'s offset range', () => {
  const b = original('zstd');
  const out = decodeRecordBatch(rewriteBatch(b, []), 0, { verifyCrc: true });
  assert.deepEqual([out.baseOffset, out.lastOffsetDelta, out.records.length, out.producerId, out.baseSequence], [100n, 3, 0, 42n, 9]);
});
