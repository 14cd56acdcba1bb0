import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeRecordBatch, decodeRecordBatch, controlMarkerRecord, setLogAppendTime } from '../../../protocol/record-batch/record-batch.js';
import type { RecordInput } from '../../../protocol/record-batch/records.js';
import type { CompressionType } from '../../../protocol/record-batch/compression.js';
import { RecordBatchError } from '../../../protocol/record-batch/errors.js';
import { isBatchCrcValid } from '../../../protocol/record-batch/crc.js';
import { BATCH_OFFSETS, readBatchHeader } from '../../../protocol/record-batch/header.js';

const CODECS: CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

function sampleRecords(): RecordInput[] {
  return [
    { key: Buffer.from('k1'), value: Buffer.from('v1'), timestampDelta: 0 },
    { key: null, value: null, timestampDelta: -5 },
    { key: Buffer.alloc(0), value: Buffer.alloc(0), timestampDelta: 2 ** 40 },
    {
      key: Buffer.from([0, 255, 1]),
      value: Buffer.from('with headers'),
      timestampDelta: -(2 ** 35),
      headers: [
        { key: 'dup', value: Buffer.from('a') },
        { key: 'x', value: null },
        { key: 'dup', value: Buffer.from('b') },
        { key: '', value: Buffer.alloc(0) },
        { key: 'ünïcødé', value: Buffer.from([1, 2, 3]) },
      ],
    },
  ];
}

function assertRecordsEqual(actual: ReturnType<typeof decodeRecordBatch>['records'], expected: RecordInput[]): void {
  assert.equal(actual.length, expected.length);
  expected.forEach((e, i) => {
    const a = actual[i]!;
    assert.equal(a.offsetDelta, e.offsetDelta ?? i);
    assert.equal(a.timestampDelta, e.timestampDelta ?? 0);
    assert.equal(a.attributes, e.attributes ?? 0);
    assert.deepEqual(a.key, e.key ?? null);
    assert.deepEqual(a.value, e.value ?? null);
    assert.deepEqual(a.headers, e.headers ?? []);
  });
}

for (const compression of CODECS) {
  test(`round trip with ${compression}: nulls, empties, duplicate headers, negative deltas`, () => {
    const records = sampleRecords();
    const buf = encodeRecordBatch({
      baseOffset: 100n,
      partitionLeaderEpoch: 3,
      compression,
      baseTimestamp: 1_700_000_000_000n,
      producerId: 77n,
      producerEpoch: 4,
      baseSequence: 12,
      isTransactional: true,
      records,
    });
    assert.ok(isBatchCrcValid(buf));
    const b = decodeRecordBatch(buf);
    assert.equal(b.baseOffset, 100n);
    assert.equal(b.sizeInBytes, buf.length);
    assert.equal(b.partitionLeaderEpoch, 3);
    assert.equal(b.magic, 2);
    assert.equal(b.compression, compression);
    assert.equal(b.lastOffsetDelta, 3);
    assert.equal(b.baseTimestamp, 1_700_000_000_000n);
    assert.equal(b.maxTimestamp, 1_700_000_000_000n + 2n ** 40n);
    assert.equal(b.producerId, 77n);
    assert.equal(b.producerEpoch, 4);
    assert.equal(b.baseSequence, 12);
    assert.equal(b.isTransactional, true);
    assert.equal(b.isIdempotent, true);
    assert.equal(b.isControl, false);
    assert.equal(b.control, null);
    assert.equal(b.timestampType, 'create');
    assertRecordsEqual(b.records, records);
  });

  test(`large batch with ${compression} (5,000 records, 2 headers each)`, () => {
    const records: RecordInput[] = [];
    for (let i = 0; i < 5000; i++) {
      records.push({
        key: Buffer.from(`key-${i}`),
        value: Buffer.from(JSON.stringify({ i, name: `user-${i % 97}`, pad: 'x'.repeat(i % 300) })),
        timestampDelta: i * 3,
        headers: [
          { key: 'trace', value: Buffer.from(String(i)) },
          { key: 'trace', value: null },
        ],
      });
    }
    const buf = encodeRecordBatch({ compression, baseTimestamp: 0n, records });
    const b = decodeRecordBatch(buf);
    assert.equal(b.recordsCount, 5000);
    assert.equal(b.isIdempotent, false);
    assertRecordsEqual(b.records, records);
  });
}

test('keys and values of an uncompressed batch are views into the input, not copies', () => {
  const buf = encodeRecordBatch({ baseTimestamp: 0n, records: [{ key: Buffer.from('kk'), value: Buffer.from('vv') }] });
  const r = decodeRecordBatch(buf).records[0]!;
  assert.equal(r.key!.buffer, buf.buffer);
  assert.equal(r.value!.buffer, buf.buffer);
});

test('control batches: commit and abort markers decode with their coordinator epoch', () => {
  for (const kind of ['commit', 'abort'] as const) {
    const buf = encodeRecordBatch({ baseTimestamp: 5n, isControl: true, isTransactional: true, producerId: 9n, producerEpoch: 1, records: [controlMarkerRecord(kind, 42)] });
    const b = decodeRecordBatch(buf);
    assert.equal(b.isControl, true);
    assert.equal(b.isTransactional, true);
    assert.deepEqual(b.control, { kind, type: kind === 'abort' ? 0 : 1, version: 0, coordinatorEpoch: 42 });
  }
});

test('a corrupted byte is reported as CRC_MISMATCH (CORRUPT_MESSAGE)', () => {
  const buf = encodeRecordBatch({ compression: 'zstd', baseTimestamp: 0n, records: sampleRecords() });
  buf[buf.length - 3]! ^= 0x40;
  assert.throws(
    () => decodeRecordBatch(buf),
    (e: unknown) => e instanceof RecordBatchError && e.code === 'CRC_MISMATCH' && e.kafkaErrorCode === 2,
  );
});

test('a truncated batch is reported as TRUNCATED', () => {
  const buf = encodeRecordBatch({ baseTimestamp: 0n, records: sampleRecords() });
  for (const cut of [buf.length - 1, 40, 10]) {
    assert.throws(() => decodeRecordBatch(buf.subarray(0, cut)), (e: unknown) => e instanceof RecordBatchError && e.code === 'TRUNCATED' && e.kafkaErrorCode === 2);
  }
});

test('magic 0 and 1 are rejected as UNSUPPORTED_MAGIC (UNSUPPORTED_FOR_MESSAGE_FORMAT)', () => {
  for (const magic of [0, 1]) {
    // Legacy message set entry: offset, size, crc, magic, attributes, [timestamp], key -1, value.
    const msg = Buffer.alloc(12 + 4 + 1 + 1 + (magic === 1 ? 8 : 0) + 4 + 4 + 3);
    msg.writeInt32BE(msg.length - 12, 8);
    msg.writeInt8(magic, 16);
    assert.throws(
      () => decodeRecordBatch(msg),
      (e: unknown) => e instanceof RecordBatchError && e.code === 'UNSUPPORTED_MAGIC' && e.kafkaErrorCode === 43 && /legacy/.test(e.message),
    );
  }
});

test('unknown compression code 5 is UNSUPPORTED_COMPRESSION', () => {
  const buf = encodeRecordBatch({ baseTimestamp: 0n, records: [{ value: Buffer.from('x') }] });
  buf.writeInt16BE(5, BATCH_OFFSETS.attributes);
  assert.throws(() => decodeRecordBatch(buf, 0, { verifyCrc: false }), (e: unknown) => e instanceof RecordBatchError && e.code === 'UNSUPPORTED_COMPRESSION' && e.kafkaErrorCode === 76);
});

test('setLogAppendTime sets bit 3 and maxTimestamp, keeps records byte-identical and the CRC valid', () => {
  const buf = encodeRecordBatch({ baseTimestamp: 1000n, compression: 'lz4', records: sampleRecords() });
  const before = Buffer.from(buf);
  setLogAppendTime(buf, 123456789n);
  assert.ok(isBatchCrcValid(buf));
  const h = readBatchHeader(buf);
  assert.equal(h.maxTimestamp, 123456789n);
  assert.equal(h.attributes & 0x08, 0x08);
  assert.equal(decodeRecordBatch(buf).timestampType, 'log-append');
  assert.deepEqual(buf.subarray(BATCH_OFFSETS.records), before.subarray(BATCH_OFFSETS.records));
  assert.deepEqual(buf.subarray(BATCH_OFFSETS.baseTimestamp, BATCH_OFFSETS.maxTimestamp), before.subarray(BATCH_OFFSETS.baseTimestamp, BATCH_OFFSETS.maxTimestamp));
});
