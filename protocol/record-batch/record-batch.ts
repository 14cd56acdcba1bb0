/**
 * Record batch v2 (magic 2): decode a batch into its header fields and records, encode one from fields and
 * records, and the LogAppendTime rewrite the broker applies to stored batches. The fixed header layout is
 * in ./header.ts, the record layout in ./records.ts, codecs in ./compression.ts.
 */
import {
  ATTR_CONTROL,
  ATTR_DELETE_HORIZON,
  ATTR_TIMESTAMP_TYPE_LOG_APPEND,
  ATTR_TRANSACTIONAL,
  BATCH_HEADER_SIZE,
  BATCH_LOG_OVERHEAD,
  BATCH_OFFSETS,
  readBatchHeader,
  type BatchHeader,
} from './header.js';
import { COMPRESSION_CODES, DEFAULT_MAX_DECOMPRESSED_BYTES, compress, compressionOf, decompress, type CompressionType, type DecompressScratch } from './compression.js';
import { assertBatchCrc, writeBatchCrc } from './crc.js';
import { RecordBatchError } from './errors.js';
import { decodeRecords, encodeRecords, type KafkaRecord, type RecordInput } from './records.js';

export const MAGIC_V2 = 2;

export type TimestampType = 'create' | 'log-append';

/** Control record types (the key's `type` field). 0 and 1 are transaction markers. */
export const CONTROL_TYPE_ABORT = 0;
export const CONTROL_TYPE_COMMIT = 1;

export interface ControlRecordInfo {
  /** 'abort' or 'commit' for transaction markers; 'other' for KRaft control records (leader change...). */
  readonly kind: 'abort' | 'commit' | 'other';
  readonly type: number;
  /** Version of the control record key. */
  readonly version: number;
  /** The transaction coordinator's epoch, from an end-transaction marker's value; null otherwise. */
  readonly coordinatorEpoch: number | null;
}

export interface RecordBatch extends BatchHeader {
  readonly compression: CompressionType;
  readonly timestampType: TimestampType;
  readonly isTransactional: boolean;
  readonly isControl: boolean;
  /** Bit 6: baseTimestamp holds the delete horizon of a compacted batch with tombstones. */
  readonly hasDeleteHorizon: boolean;
  /** Producer id/epoch/sequence are set (producerId >= 0): the batch came from an idempotent producer. */
  readonly isIdempotent: boolean;
  readonly records: readonly KafkaRecord[];
  /** For control batches, what the (single) control record says; null for data batches. */
  readonly control: ControlRecordInfo | null;
}

export interface DecodeOptions {
  /** Check the CRC before decoding (default true). Batches re-read from a verified log may skip it. */
  readonly verifyCrc?: boolean;
  /** Output limit for decompressing the records (default DEFAULT_MAX_DECOMPRESSED_BYTES). */
  readonly maxDecompressedBytes?: number;
}

/** Checks size and magic of the batch at `pos`; returns its end. */
export function checkBatchBounds(buf: Buffer, pos: number): number {
  const available = buf.length - pos;
  if (available < BATCH_OFFSETS.magic + 1) {
    throw new RecordBatchError('TRUNCATED', `batch at byte ${pos} has only ${available} bytes`, { offset: pos });
  }
  const magic = buf.readInt8(pos + BATCH_OFFSETS.magic);
  if (magic !== MAGIC_V2) {
    throw new RecordBatchError(
      'UNSUPPORTED_MAGIC',
      magic === 0 || magic === 1
        ? `batch at byte ${pos} uses the legacy message format (magic ${magic}); Floe accepts record batch v2 only: upgrade the client or set it to produce with a modern API version`
        : `batch at byte ${pos} has unknown magic ${magic}; only record batch v2 (magic 2) is supported`,
      { offset: pos },
    );
  }
  if (available < BATCH_HEADER_SIZE) {
    throw new RecordBatchError('TRUNCATED', `batch at byte ${pos} has ${available} bytes, fewer than the ${BATCH_HEADER_SIZE}-byte header`, { offset: pos });
  }
  const size = buf.readInt32BE(pos + BATCH_OFFSETS.batchLength) + BATCH_LOG_OVERHEAD;
  if (size < BATCH_HEADER_SIZE) {
    throw new RecordBatchError('INVALID_LENGTH', `batch at byte ${pos} declares ${size} bytes, fewer than its own header`, { offset: pos });
  }
  if (size > available) {
    throw new RecordBatchError('TRUNCATED', `batch at byte ${pos} declares ${size} bytes but only ${available} are present`, { offset: pos });
  }
  return pos + size;
}

function controlInfo(records: readonly KafkaRecord[]): ControlRecordInfo | null {
  const first = records[0];
  if (first === undefined || first.key === null || first.key.length < 4) {
    throw new RecordBatchError('INVALID_RECORD', 'control batch without a control record key (version int16, type int16)');
  }
  const version = first.key.readInt16BE(0);
  const type = first.key.readInt16BE(2);
  const isMarker = type === CONTROL_TYPE_ABORT || type === CONTROL_TYPE_COMMIT;
  const coordinatorEpoch = isMarker && first.value !== null && first.value.length >= 6 ? first.value.readInt32BE(2) : null;
  return { kind: type === CONTROL_TYPE_ABORT ? 'abort' : type === CONTROL_TYPE_COMMIT ? 'commit' : 'other', type, version, coordinatorEpoch };
}

/** Returns the (decompressed) records section of the batch at [pos, end); see DecompressScratch for `scratch`. */
export function recordsSection(buf: Buffer, pos: number, end: number, compression: CompressionType, maxDecompressedBytes: number, scratch?: DecompressScratch): Buffer {
  const raw = buf.subarray(pos + BATCH_HEADER_SIZE, end);
  return compression === 'none' ? raw : decompress(compression, raw, maxDecompressedBytes, scratch);
}

/**
 * Decodes the batch starting at `pos`. Keys, values and header values are subarrays of `buf` (or of the
 * decompressed records), never copies. Throws RecordBatchError.
 */
export function decodeRecordBatch(buf: Buffer, pos = 0, options: DecodeOptions = {}): RecordBatch {
  const end = checkBatchBounds(buf, pos);
  if (options.verifyCrc ?? true) assertBatchCrc(buf, pos);
  const header = readBatchHeader(buf, pos);
  const compression = compressionOf(header.attributes);
  if (header.recordsCount < 0) {
    throw new RecordBatchError('RECORD_COUNT_MISMATCH', `batch at byte ${pos} declares ${header.recordsCount} records`, { offset: pos });
  }
  const data = recordsSection(buf, pos, end, compression, options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES);
  const records = decodeRecords(data, header.recordsCount);
  const isControl = (header.attributes & ATTR_CONTROL) !== 0;
  return {
    ...header,
    compression,
    timestampType: (header.attributes & ATTR_TIMESTAMP_TYPE_LOG_APPEND) !== 0 ? 'log-append' : 'create',
    isTransactional: (header.attributes & ATTR_TRANSACTIONAL) !== 0,
    isControl,
    hasDeleteHorizon: (header.attributes & ATTR_DELETE_HORIZON) !== 0,
    isIdempotent: header.producerId >= 0n,
    records,
    control: isControl ? controlInfo(records) : null,
  };
}

export interface EncodeRecordBatchInput {
  /** Default 0n; the broker assigns the real one with setBaseOffset. */
  readonly baseOffset?: bigint;
  /** Default -1 (unknown), as clients send it. */
  readonly partitionLeaderEpoch?: number;
  /** Default 'none'. */
  readonly compression?: CompressionType;
  readonly compressionLevel?: number;
  /** Default 'create'. */
  readonly timestampType?: TimestampType;
  readonly isTransactional?: boolean;
  readonly isControl?: boolean;
  readonly hasDeleteHorizon?: boolean;
  /** Default: the last record's offsetDelta (0 for an empty batch). Set it to keep a compacted batch's range. */
  readonly lastOffsetDelta?: number;
  readonly baseTimestamp: bigint;
  /** Default: baseTimestamp plus the largest timestampDelta. */
  readonly maxTimestamp?: bigint;
  /** Default -1n (no idempotence). */
  readonly producerId?: bigint;
  /** Default -1. */
  readonly producerEpoch?: number;
  /** Default -1. */
  readonly baseSequence?: number;
  readonly records: readonly RecordInput[];
}

/** Encodes a v2 batch with a correct batchLength and CRC. */
export function encodeRecordBatch(input: EncodeRecordBatchInput): Buffer {
  const compression = input.compression ?? 'none';
  let attributes = COMPRESSION_CODES[compression];
  if (input.timestampType === 'log-append') attributes |= ATTR_TIMESTAMP_TYPE_LOG_APPEND;
  if (input.isTransactional === true) attributes |= ATTR_TRANSACTIONAL;
  if (input.isControl === true) attributes |= ATTR_CONTROL;
  if (input.hasDeleteHorizon === true) attributes |= ATTR_DELETE_HORIZON;
  const records = input.records;
  let maxDelta = 0;
  for (let i = 0; i < records.length; i++) {
    const d = records[i]!.timestampDelta ?? 0;
    if (i === 0 || d > maxDelta) maxDelta = d;
  }
  const lastRecord = records[records.length - 1];
  const lastOffsetDelta = input.lastOffsetDelta ?? (lastRecord === undefined ? 0 : (lastRecord.offsetDelta ?? records.length - 1));
  const maxTimestamp = input.maxTimestamp ?? input.baseTimestamp + BigInt(maxDelta);

  const encoded = encodeRecords(records);
  const body = compression === 'none' ? encoded : compress(compression, encoded, input.compressionLevel === undefined ? {} : { level: input.compressionLevel });
  const buf = Buffer.allocUnsafe(BATCH_HEADER_SIZE + body.length);
  buf.writeBigInt64BE(input.baseOffset ?? 0n, BATCH_OFFSETS.baseOffset);
  buf.writeInt32BE(BATCH_HEADER_SIZE + body.length - BATCH_LOG_OVERHEAD, BATCH_OFFSETS.batchLength);
  buf.writeInt32BE(input.partitionLeaderEpoch ?? -1, BATCH_OFFSETS.partitionLeaderEpoch);
  buf.writeInt8(MAGIC_V2, BATCH_OFFSETS.magic);
  buf.writeInt16BE(attributes, BATCH_OFFSETS.attributes);
  buf.writeInt32BE(lastOffsetDelta, BATCH_OFFSETS.lastOffsetDelta);
  buf.writeBigInt64BE(input.baseTimestamp, BATCH_OFFSETS.baseTimestamp);
  buf.writeBigInt64BE(maxTimestamp, BATCH_OFFSETS.maxTimestamp);
  buf.writeBigInt64BE(input.producerId ?? -1n, BATCH_OFFSETS.producerId);
  buf.writeInt16BE(input.producerEpoch ?? -1, BATCH_OFFSETS.producerEpoch);
  buf.writeInt32BE(input.baseSequence ?? -1, BATCH_OFFSETS.baseSequence);
  buf.writeInt32BE(records.length, BATCH_OFFSETS.recordsCount);
  body.copy(buf, BATCH_HEADER_SIZE);
  writeBatchCrc(buf, 0);
  return buf;
}

/**
 * The control record of a transaction marker (EndTxn): key = version 0, type; value = version 0,
 * coordinatorEpoch. Encode it in a batch with `isControl: true, isTransactional: true`.
 */
export function controlMarkerRecord(kind: 'abort' | 'commit', coordinatorEpoch: number): RecordInput {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(kind === 'abort' ? CONTROL_TYPE_ABORT : CONTROL_TYPE_COMMIT, 2);
  const value = Buffer.alloc(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(coordinatorEpoch, 2);
  return { key, value };
}

/**
 * For LogAppendTime topics: marks the batch at `pos` as LogAppendTime (attribute bit 3), stores
 * `timestamp` as its maxTimestamp, and recomputes the CRC. Everything else stays byte-identical.
 */
export function setLogAppendTime(buf: Buffer, timestamp: bigint, pos = 0): void {
  checkBatchBounds(buf, pos);
  const attributes = buf.readInt16BE(pos + BATCH_OFFSETS.attributes);
  buf.writeInt16BE(attributes | ATTR_TIMESTAMP_TYPE_LOG_APPEND, pos + BATCH_OFFSETS.attributes);
  buf.writeBigInt64BE(timestamp, pos + BATCH_OFFSETS.maxTimestamp);
  writeBatchCrc(buf, pos);
}
