/**
 * Fixed layout of a record batch v2 header (magic 2). The log, the fetch path and the codecs read these
 * fields in place without decoding the records. The base offset sits outside the CRC'd part, so the broker
 * can assign offsets without touching the CRC. (LogAppendTime topics also rewrite the max timestamp and
 * the timestamp-type attribute, which the CRC covers; the CRC is recomputed in that one case.)
 *
 *   baseOffset           int64   0
 *   batchLength          int32   8   bytes after this field
 *   partitionLeaderEpoch int32  12
 *   magic                int8   16
 *   crc                  uint32 17   CRC32C of everything from attributes to the end
 *   attributes           int16  21
 *   lastOffsetDelta      int32  23
 *   baseTimestamp        int64  27
 *   maxTimestamp         int64  35
 *   producerId           int64  43
 *   producerEpoch        int16  51
 *   baseSequence         int32  53
 *   recordsCount         int32  57
 *   records              ...    61
 */
export const BATCH_OFFSETS = Object.freeze({
  baseOffset: 0,
  batchLength: 8,
  partitionLeaderEpoch: 12,
  magic: 16,
  crc: 17,
  attributes: 21,
  lastOffsetDelta: 23,
  baseTimestamp: 27,
  maxTimestamp: 35,
  producerId: 43,
  producerEpoch: 51,
  baseSequence: 53,
  recordsCount: 57,
  records: 61,
});

/** Bytes of the batch header, up to and including `recordsCount`. */
export const BATCH_HEADER_SIZE = 61;
/** The `baseOffset` and `batchLength` fields that precede the length-counted part. */
export const BATCH_LOG_OVERHEAD = 12;

export const ATTR_COMPRESSION_MASK = 0x07;
export const ATTR_TIMESTAMP_TYPE_LOG_APPEND = 0x08;
export const ATTR_TRANSACTIONAL = 0x10;
export const ATTR_CONTROL = 0x20;
export const ATTR_DELETE_HORIZON = 0x40;

export interface BatchHeader {
  readonly baseOffset: bigint;
  /** Total size of the batch in bytes, including the 12-byte log overhead. */
  readonly sizeInBytes: number;
  readonly partitionLeaderEpoch: number;
  readonly magic: number;
  readonly crc: number;
  readonly attributes: number;
  readonly lastOffsetDelta: number;
  readonly baseTimestamp: bigint;
  readonly maxTimestamp: bigint;
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  readonly recordsCount: number;
}

/**
 * Reads the header of the batch that starts at `pos`. The caller must have checked that at least
 * BATCH_HEADER_SIZE bytes are available; this function does not validate the CRC.
 */
export function readBatchHeader(buf: Buffer, pos = 0): BatchHeader {
  return {
    baseOffset: buf.readBigInt64BE(pos + BATCH_OFFSETS.baseOffset),
    sizeInBytes: buf.readInt32BE(pos + BATCH_OFFSETS.batchLength) + BATCH_LOG_OVERHEAD,
    partitionLeaderEpoch: buf.readInt32BE(pos + BATCH_OFFSETS.partitionLeaderEpoch),
    magic: buf.readInt8(pos + BATCH_OFFSETS.magic),
    crc: buf.readUInt32BE(pos + BATCH_OFFSETS.crc),
    attributes: buf.readInt16BE(pos + BATCH_OFFSETS.attributes),
    lastOffsetDelta: buf.readInt32BE(pos + BATCH_OFFSETS.lastOffsetDelta),
    baseTimestamp: buf.readBigInt64BE(pos + BATCH_OFFSETS.baseTimestamp),
    maxTimestamp: buf.readBigInt64BE(pos + BATCH_OFFSETS.maxTimestamp),
    producerId: buf.readBigInt64BE(pos + BATCH_OFFSETS.producerId),
    producerEpoch: buf.readInt16BE(pos + BATCH_OFFSETS.producerEpoch),
    baseSequence: buf.readInt32BE(pos + BATCH_OFFSETS.baseSequence),
    recordsCount: buf.readInt32BE(pos + BATCH_OFFSETS.recordsCount),
  };
}

/** Rewrites the base offset in place. The CRC does not cover it, so the batch stays valid. */
export function setBaseOffset(buf: Buffer, baseOffset: bigint, pos = 0): void {
  buf.writeBigInt64BE(baseOffset, pos + BATCH_OFFSETS.baseOffset);
}
