/**
 * The one error type of the record-batch layer (codecs, CRC, decoding, validation). Each code maps to the
 * Kafka error code the broker answers with, through KAFKA_ERROR_CODES, so the produce path never has to
 * guess.
 */

export type RecordBatchErrorCode =
  /** The buffer ends before the batch (or a record inside it) does. */
  | 'TRUNCATED'
  /** batchLength disagrees with the buffer, or a record's length disagrees with its contents. */
  | 'INVALID_LENGTH'
  /** The CRC32C stored in the batch does not match its bytes. */
  | 'CRC_MISMATCH'
  /**
   * Magic 0 or 1: the legacy message formats, which Floe does not accept. Answered with
   * UNSUPPORTED_FOR_MESSAGE_FORMAT (43) rather than CORRUPT_MESSAGE (2): the bytes are not corrupt, and
   * clients treat CORRUPT_MESSAGE as retriable, so they would resend the same batch forever. (Apache Kafka
   * 4 answers INVALID_RECORD for the same case; 43 names the cause more precisely.)
   */
  | 'UNSUPPORTED_MAGIC'
  /** recordsCount disagrees with the records actually present. */
  | 'RECORD_COUNT_MISMATCH'
  /** A record cannot be decoded (bad varint, negative length, bytes left over). */
  | 'INVALID_RECORD'
  /** Offset deltas are not 0..count-1 (produce) or not increasing within lastOffsetDelta (log). */
  | 'INVALID_OFFSET_DELTA'
  /** Compression bits 5, 6 or 7: no such codec. */
  | 'UNSUPPORTED_COMPRESSION'
  /** The compressed bytes are not valid for their codec (bad frame, bad checksum, bad block). */
  | 'DECOMPRESSION_FAILED'
  /** Decompressing would exceed the configured output limit (a decompression bomb, or a limit too low). */
  | 'DECOMPRESSED_TOO_LARGE'
  /** The batch exceeds the configured maximum size (max.message.bytes). */
  | 'BATCH_TOO_LARGE';

/** Kafka error codes (from the protocol guide) the broker answers with for each RecordBatchErrorCode. */
export const KAFKA_ERROR_CODES: Readonly<Record<RecordBatchErrorCode, number>> = Object.freeze({
  TRUNCATED: 2, // CORRUPT_MESSAGE
  INVALID_LENGTH: 2, // CORRUPT_MESSAGE
  CRC_MISMATCH: 2, // CORRUPT_MESSAGE
  UNSUPPORTED_MAGIC: 43, // UNSUPPORTED_FOR_MESSAGE_FORMAT
  RECORD_COUNT_MISMATCH: 2, // CORRUPT_MESSAGE
  INVALID_RECORD: 87, // INVALID_RECORD
  INVALID_OFFSET_DELTA: 87, // INVALID_RECORD
  UNSUPPORTED_COMPRESSION: 76, // UNSUPPORTED_COMPRESSION_TYPE
  DECOMPRESSION_FAILED: 2, // CORRUPT_MESSAGE
  DECOMPRESSED_TOO_LARGE: 10, // MESSAGE_TOO_LARGE
  BATCH_TOO_LARGE: 10, // MESSAGE_TOO_LARGE
});

export class RecordBatchError extends Error {
  override readonly name = 'RecordBatchError';
  readonly code: RecordBatchErrorCode;
  /** The Kafka error code to answer a Produce request with. */
  readonly kafkaErrorCode: number;
  /** Byte position in the examined buffer (or decompressed records) where the problem was found. */
  readonly offset: number | undefined;

  constructor(code: RecordBatchErrorCode, message: string, options: { offset?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.kafkaErrorCode = KAFKA_ERROR_CODES[code];
    this.offset = options.offset;
  }
}

export function isRecordBatchError(e: unknown): e is RecordBatchError {
  return e instanceof RecordBatchError;
}
