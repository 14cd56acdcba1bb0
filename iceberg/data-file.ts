/**
 * Data and delete files, and the manifest entries that track them (Iceberg spec, "Manifests"). Field names
 * are the spec's (`file_path`, `record_count`, ...) so the in-memory model and the Avro records line up one
 * to one; `avro/manifest-schemas.ts` holds their stored form. 64-bit values are bigint, exactly.
 */
import type { TransformValue } from './transforms.js';
import type { DataFileMetrics } from './metrics.js';

/** `content` of a data_file (field 134). */
export const DataFileContent = { DATA: 0, POSITION_DELETES: 1, EQUALITY_DELETES: 2 } as const;
export type DataFileContent = (typeof DataFileContent)[keyof typeof DataFileContent];

/** `status` of a manifest entry (field 0). */
export const ManifestEntryStatus = { EXISTING: 0, ADDED: 1, DELETED: 2 } as const;
export type ManifestEntryStatus = (typeof ManifestEntryStatus)[keyof typeof ManifestEntryStatus];

export type FileFormat = 'parquet' | 'avro' | 'orc' | 'puffin';

/** A partition value (the transform's result), or null. */
export type PartitionValue = TransformValue;

/** The partition tuple of a file, keyed by partition field name, in partition-spec order. */
export type PartitionData = Readonly<Record<string, PartitionValue>>;

export interface DataFile {
  readonly content: DataFileContent;
  readonly file_path: string;
  readonly file_format: FileFormat;
  readonly partition: PartitionData;
  readonly record_count: bigint;
  readonly file_size_in_bytes: bigint;
  readonly column_sizes?: ReadonlyMap<number, bigint> | null;
  readonly value_counts?: ReadonlyMap<number, bigint> | null;
  readonly null_value_counts?: ReadonlyMap<number, bigint> | null;
  readonly nan_value_counts?: ReadonlyMap<number, bigint> | null;
  readonly lower_bounds?: ReadonlyMap<number, Uint8Array> | null;
  readonly upper_bounds?: ReadonlyMap<number, Uint8Array> | null;
  readonly key_metadata?: Uint8Array | null;
  /** Row group offsets, ascending. */
  readonly split_offsets?: readonly bigint[] | null;
  /** Required for equality deletes, null otherwise. */
  readonly equality_ids?: readonly number[] | null;
  readonly sort_order_id?: number | null;
  /** Position deletes / deletion vectors: the one data file they apply to. */
  readonly referenced_data_file?: string | null;
  /** v3: row lineage; null until inherited. */
  readonly first_row_id?: bigint | null;
  /** v3 deletion vectors: where the blob sits in the Puffin file. */
  readonly content_offset?: bigint | null;
  readonly content_size_in_bytes?: bigint | null;
}

/** A delete file is a DataFile whose content is not DATA. */
export type DeleteFile = DataFile & { readonly content: typeof DataFileContent.POSITION_DELETES | typeof DataFileContent.EQUALITY_DELETES };

export interface ManifestEntry {
  readonly status: ManifestEntryStatus;
  /** Null for ADDED entries of a manifest written before the commit: inherited from the manifest list. */
  readonly snapshot_id: bigint | null;
  readonly sequence_number: bigint | null;
  readonly file_sequence_number: bigint | null;
  readonly data_file: DataFile;
}

export class DataFileError extends Error {
  constructor(
    readonly code: 'INVALID_DATA_FILE',
    message: string,
  ) {
    super(message);
    this.name = 'DataFileError';
  }
}

/** Checks the spec's rules that tie fields of a data file together. Throws DataFileError with the fix. */
export function validateDataFile(f: DataFile): void {
  const fail = (msg: string): never => {
    throw new DataFileError('INVALID_DATA_FILE', `Data file ${f.file_path}: ${msg}`);
  };
  if (!f.file_path) fail('file_path is empty; give the full URI with its scheme');
  if (f.record_count < 0n) fail('record_count is negative');
  if (f.file_size_in_bytes < 0n) fail('file_size_in_bytes is negative');
  if (f.content === DataFileContent.EQUALITY_DELETES && !(f.equality_ids && f.equality_ids.length > 0)) {
    fail('equality delete files need equality_ids (the field ids that define row equality)');
  }
  if (f.content !== DataFileContent.EQUALITY_DELETES && f.equality_ids != null) fail('equality_ids are only for equality delete files; leave them null');
  if (f.content === DataFileContent.POSITION_DELETES && f.sort_order_id != null) fail('position delete files must not carry a sort_order_id');
  if (f.split_offsets) {
    for (let i = 1; i < f.split_offsets.length; i++) {
      if ((f.split_offsets[i] as bigint) < (f.split_offsets[i - 1] as bigint)) fail('split_offsets must be sorted ascending');
    }
  }
  if ((f.content_offset == null) !== (f.content_size_in_bytes == null)) fail('content_offset and content_size_in_bytes go together');
}

export interface ParquetDataFileInput {
  readonly file_path: string;
  readonly partition: PartitionData;
  readonly metrics: DataFileMetrics;
  readonly split_offsets?: readonly bigint[];
  readonly sort_order_id?: number | null;
  readonly content?: DataFileContent;
  readonly equality_ids?: readonly number[] | null;
  readonly referenced_data_file?: string | null;
}

/** A DataFile for a Parquet file written by `parquet/writer.ts`, metrics and split offsets included. */
export function parquetDataFile(input: ParquetDataFileInput): DataFile {
  const m = input.metrics;
  const f: DataFile = {
    content: input.content ?? DataFileContent.DATA,
    file_path: input.file_path,
    file_format: 'parquet',
    partition: input.partition,
    record_count: m.record_count,
    file_size_in_bytes: m.file_size_in_bytes,
    column_sizes: m.column_sizes,
    value_counts: m.value_counts,
    null_value_counts: m.null_value_counts,
    nan_value_counts: m.nan_value_counts,
    lower_bounds: m.lower_bounds,
    upper_bounds: m.upper_bounds,
    split_offsets: input.split_offsets ?? null,
    sort_order_id: input.sort_order_id ?? null,
    equality_ids: input.equality_ids ?? null,
    referenced_data_file: input.referenced_data_file ?? null,
  };
  validateDataFile(f);
  return f;
}
