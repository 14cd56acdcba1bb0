/** The error type of the Parquet layer under `iceberg/parquet/`. `code` is stable; the message says what to fix. */
export type ParquetErrorCode =
  | 'INVALID_PARQUET'
  | 'MISSING_FIELD_ID'
  | 'TYPE_MISMATCH'
  | 'UNSUPPORTED_TYPE'
  | 'WRITE_FAILED';

export class ParquetError extends Error {
  constructor(
    readonly code: ParquetErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ParquetError';
  }
}
