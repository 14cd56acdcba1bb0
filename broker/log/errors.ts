/**
 * Errors raised by the partition log. Each carries a stable `code`, the Kafka error code a handler should put
 * in its response, and a message that says what the caller can do about it.
 */
export const LOG_ERRORS = Object.freeze({
  /** The requested offset is below the log start offset or above the log end offset. */
  OFFSET_OUT_OF_RANGE: { kafkaCode: 1, retriable: false },
  /** The bytes given to append are not a sequence of whole v2 record batches. */
  CORRUPT_MESSAGE: { kafkaCode: 2, retriable: true },
  /** One batch is larger than the segment size, so it can never be stored. */
  RECORD_LIST_TOO_LARGE: { kafkaCode: 18, retriable: false },
  /** A topic config value is out of range. */
  INVALID_CONFIG: { kafkaCode: 40, retriable: false },
  /** The disk failed (write, fsync, truncate); the log is closed and must be reopened after fixing the disk. */
  KAFKA_STORAGE_ERROR: { kafkaCode: 56, retriable: true },
  /** The log (or its manager) was closed or deleted while the call was pending. */
  LOG_CLOSED: { kafkaCode: 56, retriable: true },
  /** LogAppendTime was requested but no timestamp rewriter was configured. */
  LOG_APPEND_TIME_UNSUPPORTED: { kafkaCode: 35, retriable: false },
  /** The partition log already exists (create) or does not exist (delete). */
  LOG_EXISTS: { kafkaCode: 36, retriable: false },
  UNKNOWN_PARTITION: { kafkaCode: 3, retriable: true },
});

export type LogErrorCode = keyof typeof LOG_ERRORS;

export class LogError extends Error {
  readonly code: LogErrorCode;
  /** The Kafka protocol error code that a request handler should return for this error. */
  readonly kafkaCode: number;
  readonly retriable: boolean;

  constructor(code: LogErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LogError';
    this.code = code;
    this.kafkaCode = LOG_ERRORS[code].kafkaCode;
    this.retriable = LOG_ERRORS[code].retriable;
  }
}

export function isLogError(err: unknown, code?: LogErrorCode): err is LogError {
  return err instanceof LogError && (code === undefined || err.code === code);
}
