/**
 * What the plugin needs from the conversion layer (`../convert`, `../offset-index`): turn a closed segment into
 * data files plus its segment-to-offset index, and rebuild batches from them. The plugin decides where and
 * when (queue, commit, retention); the codec decides how. `convert-codec.ts` adapts the conversion layer to
 * this interface; keeping the seam here lets the plugin be tested and evolved without touching either side.
 */
import type { DataFile } from '../../iceberg/data-file.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import type { PartitionSpec } from '../../iceberg/partition-spec.js';
import type { Schema } from '../../iceberg/schema.js';
import type { RebuildCompression } from '../convert/batch-assembly.js';
import type { RemoteFetchResult } from './api.js';
import type { DeadLetter, TypedCounts } from '../typed/typed-rows.js';
import type { RecordTypers } from '../typed/record-typers.js';

export interface ConvertSegmentInput {
  readonly io: FileIO;
  /** The table's location (`<warehouse>/<namespace>/<topic>`); files go under it, named deterministically. */
  readonly tableLocation: string;
  /** The table's current schema and default partition spec id. */
  readonly schema: Schema;
  readonly specId: number;
  readonly partition: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  /** The closed `.log` file. */
  readonly segmentPath: string;
  /** Tag in every file name after the offsets (compaction's outputs, so they never take an input's name). */
  readonly nameTag?: string;
  /** Log bytes per data file, instead of the codec's own setting (compaction's target). */
  readonly targetFileBytes?: number;
  /** Schema table modes: types values into columns (../typed/); absent for `key_value`. */
  readonly typed?: RecordTypers;
}

export interface ConvertedSegment {
  /** Data files written (not yet committed), offset ordered; empty when the segment holds only control batches. */
  readonly dataFiles: readonly DataFile[];
  /** Index objects written beside the data. */
  readonly indexFiles: readonly string[];
  /** Schema table modes: what typing did, and the records it could not type. */
  readonly typed?: { readonly counts: TypedCounts; readonly deadLetters: readonly DeadLetter[] };
}

export interface ReadSegmentInput {
  readonly io: FileIO;
  readonly partition: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly dataFiles: readonly string[];
  readonly indexFiles: readonly string[];
  readonly fetchOffset: number;
  readonly maxBytes: number;
  readonly minOneBatch: boolean;
  /**
   * How the rebuilt batches are compressed, instead of the codec's setting. Compaction asks for 'original'
   * so the batches it rewrites keep their attributes (the codec bits are a column of the table).
   */
  readonly compression?: RebuildCompression;
}

/** Table compaction's rewrite of consecutive tiered segments into one merged segment's files. */
export interface RewriteSegmentsInput {
  readonly io: FileIO;
  readonly tableLocation: string;
  readonly schema: Schema;
  readonly specId: number;
  readonly partition: number;
  /** The inputs, in offset order (their files are under the table location). */
  readonly segments: readonly { readonly baseOffset: number; readonly lastOffset: number; readonly dataFiles: readonly string[]; readonly indexFiles: readonly string[] }[];
  /** Tag in the outputs' names (never an input's name). */
  readonly nameTag: string;
  /** Where temporary files go (a fresh folder under it, removed after). */
  readonly tmpDir: string;
  /** Waits as long as compaction's rate limit needs for `bytes` more bytes read. */
  readonly throttle?: (bytes: number) => Promise<void>;
  readonly typed?: RecordTypers;
  /** What is rewritten, for error messages. */
  readonly where: string;
}

/** One of the codec's read caches, for metrics. */
export interface CacheStats {
  /** e.g. `remote_batches`, `parquet_footers`, `offset_indexes`. */
  readonly cache: string;
  readonly hits: number;
  readonly misses: number;
  /** Bytes held now, and the budget. */
  readonly bytes: number;
  readonly maxBytes: number;
  readonly entries: number;
}

export interface SegmentCodec {
  /** The schema new topic tables are created with. */
  tableSchema(): Schema;
  /** The partition spec new topic tables are created with (identity on the Kafka partition). */
  partitionSpec(schema: Schema): PartitionSpec;
  /** Writes the segment's data files and index; names are deterministic so a retry overwrites. */
  convertSegment(input: ConvertSegmentInput): Promise<ConvertedSegment>;
  /**
   * Rebuilds the segments' batches (with their original attributes) into one merged segment and converts it
   * into one data file and its index, written (not committed) under the table location.
   */
  rewriteSegments(input: RewriteSegmentsInput): Promise<ConvertedSegment>;
  /** Rebuilds the stored batches from the batch holding `fetchOffset`, within `maxBytes`. */
  readSegment(input: ReadSegmentInput): Promise<RemoteFetchResult>;
  /** Counters of the read caches, when the codec has any. */
  cacheStats?(): readonly CacheStats[];
  /** Releases what the codec runs (conversion workers); the plugin calls it when it closes. */
  close?(): Promise<void>;
}
