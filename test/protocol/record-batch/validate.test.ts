import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateBatch } from '../../../protocol/record-batch/validate.js';
import { encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { RecordBatchError, type RecordBatchErrorCode } from '../../../protocol/record-batch/errors.js';
import { writeBatchCrc, computeBatchCrc, assertBatchCrc } from '../../../protocol/record-batch/crc.js';
import { scanBatches } from '../../../protocol/record-batch/batches.js';
import { BATCH_OFFSETS } from '../../../protocol/record-batch/header.js';

const records = [0, 1, 2].map((i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), timestampDelta: i * 10 }));

function rejects(buf: Buffer, code: RecordBatchErrorCode, kafka: number, options = {}): void {
  assert.throws(() => validateBatch(buf, options), (e: unknown) => e instanceof RecordBatchError && e.code === code && e.kafkaErrorCode === kafka);
}

test('a well-formed produced batch validates and reports its header', () => {
  const buf = encodeRecordBatch({ baseTimestamp: 1000n, compression: 'gzip', producerId: 5n, producerEpoch: 0, baseSequence: 0, records });
  const v = validateBatch(buf, { maxBytes: 1 << 20 });
  assert.equal(v.compression, 'gzip');
  assert.equal(v.header.recordsCount, 3);
  assert.equal(v.maxRecordTimestamp, 1020n);
});

test('rejections map to the Kafka error codes the broker answers with', () => {
  const good = encodeRecordBatch({ baseTimestamp: 0n, records });
  rejects(good, 'BATCH_TOO_LARGE', 10, { maxBytes: good.length - 1 });
  rejects(Buffer.concat([good, good]), 'INVALID_LENGTH', 2);
  rejects(good.subarray(0, good.length - 2), 'TRUNCATED', 2);

  const badCrc = Buffer.from(good);
  badCrc.writeUInt32BE((computeBatchCrc(badCrc) ^ 1) >>> 0, BATCH_OFFSETS.crc);
  rejects(badCrc, 'CRC_MISMATCH', 2);

  const countTooHigh = Buffer.from(good);
  countTooHigh.writeInt32BE(4, BATCH_OFFSETS.recordsCount);
  writeBatchCrc(countTooHigh);
  rejects(countTooHigh, 'RECORD_COUNT_MISMATCH', 2);
  const countTooLow = Buffer.from(good);
  countTooLow.writeInt32BE(2, BATCH_OFFSETS.recordsCount);
  writeBatchCrc(countTooLow);
  rejects(countTooLow, 'RECORD_COUNT_MISMATCH', 2);

  const gap = encodeRecordBatch({ baseTimestamp: 0n, records: records.map((r, i) => ({ ...r, offsetDelta: i * 2 })) });
  rejects(gap, 'INVALID_OFFSET_DELTA', 87);
  // The same batch is fine for a compacted log, where gaps are legitimate.
  assert.equal(validateBatch(gap, { strictOffsets: false }).header.lastOffsetDelta, 4);
  const badLast = encodeRecordBatch({ baseTimestamp: 0n, lastOffsetDelta: 7, records });
  rejects(badLast, 'INVALID_OFFSET_DELTA', 87);

  const badRecord = Buffer.from(good);
  badRecord[BATCH_OFFSETS.records] = 0x7f; // first record length becomes -64
  writeBatchCrc(badRecord);
  rejects(badRecord, 'INVALID_RECORD', 87);

  const legacy = Buffer.from(good);
  legacy.writeInt8(1, BATCH_OFFSETS.magic);
  rejects(legacy, 'UNSUPPORTED_MAGIC', 43);
});

test('a bomb inside a batch is bounded by maxDecompressedBytes', () => {
  const bomb = encodeRecordBatch({ baseTimestamp: 0n, compression: 'zstd', records: [{ value: Buffer.alloc(8 << 20) }] });
  assert.ok(bomb.length < 4096);
  rejects(bomb, 'DECOMPRESSED_TOO_LARGE', 10, { maxDecompressedBytes: 1 << 20 });
});

test('assertBatchCrc validates in place', () => {
  const buf = encodeRecordBatch({ baseTimestamp: 0n, records });
  assertBatchCrc(buf);
  buf[BATCH_OFFSETS.attributes + 1]! ^= 0x10;
  assert.throws(() => assertBatchCrc(buf), (e: unknown) => e instanceof RecordBatchError && e.code === 'CRC_MISMATCH');
});

test('scanBatches finds each batch and tolerates a partial trailing batch', () => {
  const a = encodeRecordBatch({ baseOffset: 0n, baseTimestamp: 0n, records });
  const b = encodeRecordBatch({ baseOffset: 3n, baseTimestamp: 0n, compression: 'snappy', records: records.slice(0, 2) });
  const all = Buffer.concat([a, b, a]);
  for (let cut = 0; cut <= all.length; cut += 7) {
    const scan = scanBatches(all.subarray(0, cut));
    const expectedEnds = [a.length, a.length + b.length, all.length].filter((e) => e <= cut);
    assert.deepEqual(scan.batches.map((x) => x.end), expectedEnds);
    assert.equal(scan.completeBytes + scan.partialBytes, cut);
  }
  const full = scanBatches(all);
  assert.deepEqual(full.batches.map((x) => [x.baseOffset, x.lastOffset]), [[0n, 2n], [3n, 4n], [0n, 2n]]);
  assert.equal(full.partialBytes, 0);
  const broken = Buffer.from(all);
  broken.writeInt32BE(3, a.length + BATCH_OFFSETS.batchLength);
  assert.throws(() => scanBatches(broken), (e: unknown) => e instanceof RecordBatchError && e.code === 'INVALID_LENGTH');
});
