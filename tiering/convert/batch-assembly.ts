/** Batch assembly: a v2 record batch from the index's header fields and a records section, compressed or not. */
import { ATTR_COMPRESSION_MASK, BATCH_HEADER_SIZE, BATCH_LOG_OVERHEAD, BATCH_OFFSETS } from '../../protocol/record-batch/header.js';
import { compress, compressionOf } from '../../protocol/record-batch/compression.js';
import { writeBatchCrc } from '../../protocol/record-batch/crc.js';
import { MAGIC_V2 } from '../../protocol/record-batch/record-batch.js';
import type { IndexedBatch } from '../offset-index/format.js';

/** How rebuilt batches are compressed (see the module comment of parquet-to-batches.ts). */
export type RebuildCompression = 'none' | 'original';

/** Writes a v2 batch from the index's header fields and a records section; returns it with a valid CRC. */
export function assembleBatch(b: IndexedBatch, section: Buffer, compression: RebuildCompression): Buffer {
  const codec = compressionOf(b.attributes);
  const keep = compression === 'original' && codec !== 'none';
  const body = keep ? compress(codec, section) : section;
  const attributes = keep ? b.attributes : b.attributes & ~ATTR_COMPRESSION_MASK;
  const buf = Buffer.allocUnsafe(BATCH_HEADER_SIZE + body.length);
  body.copy(buf, BATCH_HEADER_SIZE);
  writeBatchHeader(buf, 0, buf.length, b, attributes);
  return buf;
}

/** Fills the 61-byte v2 header of the `size`-byte batch at buf[at...] (records already behind it) and sets the CRC. */
export function writeBatchHeader(buf: Buffer, at: number, size: number, b: IndexedBatch, attributes: number): void {
  buf.writeBigInt64BE(b.baseOffset, at + BATCH_OFFSETS.baseOffset);
  buf.writeInt32BE(size - BATCH_LOG_OVERHEAD, at + BATCH_OFFSETS.batchLength);
  buf.writeInt32BE(b.partitionLeaderEpoch, at + BATCH_OFFSETS.partitionLeaderEpoch);
  buf.writeInt8(MAGIC_V2, at + BATCH_OFFSETS.magic);
  buf.writeInt16BE(attributes, at + BATCH_OFFSETS.attributes);
  buf.writeInt32BE(b.lastOffsetDelta, at + BATCH_OFFSETS.lastOffsetDelta);
  buf.writeBigInt64BE(b.baseTimestamp, at + BATCH_OFFSETS.baseTimestamp);
  buf.writeBigInt64BE(b.maxTimestamp, at + BATCH_OFFSETS.maxTimestamp);
  buf.writeBigInt64BE(b.producerId, at + BATCH_OFFSETS.producerId);
  buf.writeInt16BE(b.producerEpoch, at + BATCH_OFFSETS.producerEpoch);
  buf.writeInt32BE(b.baseSequence, at + BATCH_OFFSETS.baseSequence);
  buf.writeInt32BE(b.recordsCount, at + BATCH_OFFSETS.recordsCount);
  writeBatchCrc(buf, at);
}
