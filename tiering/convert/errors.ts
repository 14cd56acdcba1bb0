/** The error type of the tiering conversion layer (segment -> Parquet, Parquet -> batches, offset index). */
export type TieringConvertErrorCode =
  /** The segment bytes are not a sequence of whole v2 batches in offset order. */
  | 'INVALID_SEGMENT'
  /** An offset index object is corrupt, truncated or of an unknown version. */
  | 'INVALID_INDEX'
  /** The data file disagrees with its offset index (rows, row groups, offsets). */
  | 'INDEX_MISMATCH'
  /** The requested offset is not covered by this index. */
  | 'OFFSET_OUT_OF_RANGE'
  /** An option is out of range. */
  | 'INVALID_OPTION';

export class TieringConvertError extends Error {
  override readonly name = 'TieringConvertError';
  constructor(
    readonly code: TieringConvertErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
