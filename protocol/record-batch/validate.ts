/**
 * Validation of a produced batch before the broker appends it. The broker stores the bytes exactly as
 * received; afterwards it only rewrites the base offset (setBaseOffset) and, for LogAppendTime topics,
 * the max timestamp and timestamp-type bit (setLogAppendTime, which recomputes the CRC).
 *
 * Checks, in order (the first failure throws a RecordBatchError whose kafkaErrorCode is the answer):
 *   1. magic is 2 (0 and 1 → UNSUPPORTED_MAGIC → UNSUPPORTED_FOR_MESSAGE_FORMAT, see errors.ts);
 *   2. the buffer holds exactly one whole batch (Produce v3+ carries one batch per partition);
 *   3. its size is within maxBytes (BATCH_TOO_LARGE → MESSAGE_TOO_LARGE);
 *   4. the CRC32C matches (CRC_MISMATCH → CORRUPT_MESSAGE);
 *   5. the compression code is known; the records decompress within maxDecompressedBytes;
 *   6. every record is well formed and their number equals recordsCount (walked without decoding into
 *      objects, see record-walk.ts);
 *   7. offset deltas: 0..count-1 with lastOffsetDelta = count-1 (strict, for producers), or increasing
 *      within 0..lastOffsetDelta (relaxed, for compacted batches re-read from a log).
 */
import { BATCH_OFFSETS, readBatchHeader, type BatchHeader } from './header.js';
import { DEFAULT_MAX_DECOMPRESSED_BYTES, compressionOf, type CompressionType } from './compression.js';
import { assertBatchCrc } from './crc.js';
import { RecordBatchError } from './errors.js';
import { checkBatchBounds, recordsSection } from './record-batch.js';
import { walkRecords } from './record-walk.js';

export interface ValidateOptions {
  /** Largest accepted batch in bytes (the topic's max.message.bytes). Default: no limit. */
  readonly maxBytes?: number;
  /** Output limit when decompressing the records. Default DEFAULT_MAX_DECOMPRESSED_BYTES. */
  readonly maxDecompressedBytes?: number;
  /** Offset deltas must be exactly 0..count-1 (default true, as for batches from producers). */
  readonly strictOffsets?: boolean;
}

export interface ValidatedBatch {
  readonly header: BatchHeader;
  readonly compression: CompressionType;
  /** Largest record timestamp (baseTimestamp + max timestampDelta), for the broker's timestamp checks. */
  readonly maxRecordTimestamp: bigint;
}

/** Validates `buf` as exactly one produced v2 batch. Throws RecordBatchError; returns what the broker needs. */
export function validateBatch(buf: Buffer, options: ValidateOptions = {}): ValidatedBatch {
  const end = checkBatchBounds(buf, 0);
  if (end !== buf.length) {
    throw new RecordBatchError('INVALID_LENGTH', `batchLength says the batch ends at byte ${end} but ${buf.length} bytes were sent; send exactly one batch per partition`, {
      offset: end,
    });
  }
  if (options.maxBytes !== undefined && buf.length > options.maxBytes) {
    throw new RecordBatchError('BATCH_TOO_LARGE', `batch of ${buf.length} bytes exceeds max.message.bytes ${options.maxBytes}; lower the producer's batch.size or raise the topic's max.message.bytes`);
  }
  assertBatchCrc(buf, 0);
  const header = readBatchHeader(buf, 0);
  const compression = compressionOf(header.attributes);
  if (header.recordsCount < 0) throw new RecordBatchError('RECORD_COUNT_MISMATCH', `batch declares ${header.recordsCount} records`, { offset: BATCH_OFFSETS.recordsCount });
  const data = recordsSection(buf, 0, end, compression, options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES);
  // Walked, not decoded: same checks and errors as decodeRecords, without an object per record.
  const strict = options.strictOffsets ?? true;
  const walk = walkRecords(data, header.recordsCount, strict, header.lastOffsetDelta);
  if (walk.badIndex >= 0) {
    const i = walk.badIndex;
    throw new RecordBatchError(
      'INVALID_OFFSET_DELTA',
      `record ${i} has offsetDelta ${walk.badOffsetDelta}; ${strict ? `expected ${i}` : `expected more than ${walk.badPrevious} and at most lastOffsetDelta ${header.lastOffsetDelta}`}`,
    );
  }
  if (strict && header.lastOffsetDelta !== header.recordsCount - 1) {
    throw new RecordBatchError('INVALID_OFFSET_DELTA', `lastOffsetDelta is ${header.lastOffsetDelta} but the batch holds ${header.recordsCount} records`, {
      offset: BATCH_OFFSETS.lastOffsetDelta,
    });
  }
  const maxDelta = walk.maxTimestampDelta;
  return { header, compression, maxRecordTimestamp: header.baseTimestamp + BigInt(maxDelta) };
}
