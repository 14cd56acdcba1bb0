import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BATCH_HEADER_SIZE, readBatchHeader, setBaseOffset } from '../../../protocol/record-batch/header.js';

test('readBatchHeader reads every fixed field at its offset', () => {
  const buf = Buffer.alloc(BATCH_HEADER_SIZE);
  buf.writeBigInt64BE(42n, 0);
  buf.writeInt32BE(BATCH_HEADER_SIZE - 12, 8);
  buf.writeInt32BE(7, 12);
  buf.writeInt8(2, 16);
  buf.writeUInt32BE(0xdeadbeef, 17);
  buf.writeInt16BE(0x18, 21);
  buf.writeInt32BE(3, 23);
  buf.writeBigInt64BE(1000n, 27);
  buf.writeBigInt64BE(1003n, 35);
  buf.writeBigInt64BE(99n, 43);
  buf.writeInt16BE(5, 51);
  buf.writeInt32BE(11, 53);
  buf.writeInt32BE(4, 57);
  const h = readBatchHeader(buf);
  assert.deepEqual(h, {
    baseOffset: 42n,
    sizeInBytes: BATCH_HEADER_SIZE,
    partitionLeaderEpoch: 7,
    magic: 2,
    crc: 0xdeadbeef,
    attributes: 0x18,
    lastOffsetDelta: 3,
    baseTimestamp: 1000n,
    maxTimestamp: 1003n,
    producerId: 99n,
    producerEpoch: 5,
    baseSequence: 11,
    recordsCount: 4,
  });
  setBaseOffset(buf, 1234n);
  assert.equal(readBatchHeader(buf).baseOffset, 1234n);
  assert.equal(readBatchHeader(buf).crc, 0xdeadbeef);
});
