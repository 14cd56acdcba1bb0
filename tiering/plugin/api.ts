/**
 * The tiered-storage plugin interface, shaped like Kafka's KIP-405:
 *
 * - `RemoteStorageManager` (RSM) moves bytes: copy a closed local segment to remote storage, fetch batches
 *   from a remote segment by offset, delete a remote segment's objects.
 * - `RemoteLogMetadataManager` (RLMM) knows which offset ranges of a partition are remote: the committed
 *   segments, the highest committed offset and the remote log start offset. Copies become visible only when
 *   the RLMM commits them (in the Iceberg implementation: one table snapshot for many segments).
 * - `TieringPlugin` is what the broker holds: both managers plus topic lifecycle, a copy queue that runs off
 *   the produce path, and total retention. The broker talks to tiering only through this file's types.
 *
 * Offsets and timestamps are JS numbers (exact to 2^53), as in the broker's partition log.
 */

import type { Backlog, BacklogReport } from './backlog-progress.js';

export type { Backlog, BacklogReport };

export interface TopicPartitionId {
  readonly topic: string;
  readonly partition: number;
}

/** A closed local segment (KIP-405 LogSegmentData): immutable, fsynced, with its `.index`/`.timeindex` siblings. */
export interface LogSegmentData extends TopicPartitionId {
  readonly baseOffset: number;
  /** Offset of the last record in the segment (control records included). */
  readonly lastOffset: number;
  /** Path of the `.log` file on local disk. */
  readonly path: string;
  readonly sizeInBytes: number;
  /** Largest record timestamp in the segment, -1 when unknown. */
  readonly maxTimestamp: number;
}

/** An aborted transaction of a partition, as Kafka's `.txnindex` keeps it. */
export interface AbortedTransaction {
  readonly producerId: bigint;
  /** Offset of the transaction's first batch in the partition. */
  readonly firstOffset: number;
  /** Offset of its abort marker. */
  readonly lastOffset: number;
}

/** A transaction open in a partition: its producer and the offset of its first batch there. */
export interface OpenTransaction {
  readonly producerId: bigint;
  readonly firstOffset: number;
}

/**
 * What the broker knows of a partition's transactions when a segment is tiered, so that the table holds
 * only committed records. Records of aborted transactions stay in the data files (Kafka's read_uncommitted
 * consumers read them back from there) and are hidden from table readers with position deletes committed
 * with the data files; so are the records of transactions still open, until a later commit finds them
 * decided and replaces those deletes. An open transaction holds back only its own records.
 */
export interface PartitionTransactions {
  /** The partition's last stable offset: the first offset of its earliest open transaction, else its log end. */
  readonly lastStableOffset: number;
  /** Aborted transactions overlapping the asked offsets, oldest first. */
  readonly aborted: readonly AbortedTransaction[];
  /** Transactions open now. */
  readonly open: readonly OpenTransaction[];
}

/**
 * The broker's view of a partition's transactions over [fromOffset, toOffset] (the segment being tiered).
 * Undefined: the partition has no transactional state (nothing to hide, nothing open).
 */
export type TransactionSource = (tp: TopicPartitionId, fromOffset: number, toOffset: number) => Promise<PartitionTransactions | undefined>;

/** A segment in remote storage (KIP-405 RemoteLogSegmentMetadata), copied and possibly not yet committed. */
export interface RemoteLogSegmentMetadata extends TopicPartitionId {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly maxTimestamp: number;
  /** Bytes of the local segment it was copied from (what retention.bytes counts). */
  readonly sizeInBytes: number;
  /** Objects holding its records (for the Iceberg implementation: Parquet data file locations). */
  readonly dataFiles: readonly string[];
  /** Objects describing how to rebuild its batches (the segment-to-offset index), beside the data. */
  readonly indexFiles: readonly string[];
  /**
   * Objects hiding some of its records from table readers but not from Kafka fetches (for the Iceberg
   * implementation: position delete files over the rows below the log start when it cuts through the
   * segment, over the rows of aborted transactions, and over ranges an operator hid). They leave the remote history with the segment. Absent or empty when none.
   */
  readonly deleteFiles?: readonly string[];
  /**
   * What conversion counted in its data files (from their Iceberg column metrics, so no extra pass over the
   * records): set on a fresh copy only, never stored in the table's history.
   */
  readonly rows?: SegmentRowCounts;
}

/** Rows of a converted segment, and how many have a null key or a null value. */
export interface SegmentRowCounts {
  readonly records: number;
  readonly nullKeys: number;
  readonly nullValues: number;
  /** Schema modes only: records that could not be typed, and typed records kept raw beside their columns. */
  readonly deadLetters?: number;
  readonly rawKept?: number;
}

/** Batches read from remote storage, exactly as stored (stored offsets, original producer fields, valid CRCs). */
export interface RemoteFetchResult {
  /** Concatenated record batches v2; empty when `fetchOffset` is beyond the remote data. */
  readonly records: Buffer;
  /** The offset after the last batch returned. */
  readonly nextOffset: number;
}

export interface RemoteStorageManager {
  /** Converts and uploads a closed segment; nothing is visible to readers until the RLMM commits it. */
  copyLogSegmentData(segment: LogSegmentData): Promise<RemoteLogSegmentMetadata>;
  /**
   * Whole batches of a remote segment from the batch containing `fetchOffset`, within `maxBytes` (the first
   * batch is returned whole when `minOneBatch`, Kafka's KIP-74 rule).
   */
  fetchLogSegment(segment: RemoteLogSegmentMetadata, fetchOffset: number, maxBytes: number, minOneBatch: boolean): Promise<RemoteFetchResult>;
  /** Deletes a segment's objects; it must already be removed from the RLMM (not visible to readers). */
  deleteLogSegmentData(segment: RemoteLogSegmentMetadata): Promise<void>;
}

export interface RemoteLogMetadataManager {
  /** Makes copied segments visible, all at once (one atomic commit), in offset order per partition. */
  commitRemoteLogSegments(segments: readonly RemoteLogSegmentMetadata[]): Promise<void>;
  /** Committed remote segments of a partition, in offset order. */
  listRemoteLogSegments(tp: TopicPartitionId): readonly RemoteLogSegmentMetadata[];
  /** The committed segment holding `offset`, or the first one after it (offset gaps), or undefined. */
  remoteLogSegmentFor(tp: TopicPartitionId, offset: number): RemoteLogSegmentMetadata | undefined;
  /** The highest offset committed to remote storage, -1 when none. */
  highestCommittedOffset(tp: TopicPartitionId): number;
  /** The first offset still held remotely, undefined when the partition has no remote data. */
  remoteLogStartOffset(tp: TopicPartitionId): number | undefined;
  /** Removes segments from the committed view (one atomic commit); their objects are deleted afterwards. */
  removeRemoteLogSegments(segments: readonly RemoteLogSegmentMetadata[]): Promise<void>;
}

/** The per-topic settings the broker resolves from topic configs (Kafka's names in comments). */
export interface TopicTieringConfig {
  /** `remote.storage.enable` or `iceberg.enabled`. */
  readonly enabled: boolean;
  /** `iceberg.namespace`, one level per element (default ['kafka']). */
  readonly namespace: readonly string[];
  /** `iceberg.table.name`: the table's name in the namespace; absent: the topic's name. */
  readonly tableName?: string | undefined;
  /** `iceberg.commit.interval.ms`: at most one table snapshot per interval per topic, and the freshness bound. */
  readonly commitIntervalMs: number;
  /** `retention.ms`: total retention (remote included); Infinity keeps data forever. */
  readonly retentionMs: number;
  /** `retention.bytes`: total bytes per partition (remote included); Infinity for no limit. */
  readonly retentionBytes: number;
  /** Background compaction of the table's small files; absent: off. */
  readonly compaction?: TopicCompactionConfig;
  /**
   * `iceberg.mode` other than key_value (with `iceberg.value.subject`), `iceberg.key.mode` other than binary
   * (with `iceberg.key.subject`), and `iceberg.invalid.record.action`: values and keys become typed columns
   * from the schema registry's schemas; absent: `key_value` rows with binary keys.
   */
  readonly typed?: TopicTypingSettings;
  /**
   * `iceberg.upsert.enabled`, with `iceberg.upsert.cdc.format` and `iceberg.upsert.order.field`: the topic
   * also has the `<table>_latest` upsert table (one row per key, sharing the topic table's data files); absent: none.
   */
  readonly upsert?: UpsertSettings;
  /**
   * A `cleanup.policy` with `compact`, with its `delete.retention.ms`: Kafka fetches of the tiered range
   * show the compacted view (compacted-view.ts) while the table keeps every record; absent: every record.
   */
  readonly compacted?: CompactedViewSettings;
}

export type { CompactedViewSettings } from './compacted-view.js';
import type { CompactedViewSettings } from './compacted-view.js';

export type { UpsertSettings } from './latest/latest-table.js';
import type { UpsertSettings } from './latest/latest-table.js';

export type { RegistryReader, RegistrySchema, TypedKeyMode, TypedKeySettings, TypedTableMode, TypedValueSettings } from '../typed/value-typer.js';
export type { TopicTypingSettings } from '../typed/record-typers.js';
import type { RegistryReader } from '../typed/value-typer.js';
import type { TopicTypingSettings } from '../typed/record-typers.js';

/** `iceberg.compaction.*`: merging a partition's small data files (see compaction-plan.ts). */
export interface TopicCompactionConfig {
  /** `iceberg.compaction.enabled`. */
  readonly enabled: boolean;
  /** `iceberg.compaction.min.input.files`: small files in a run of segments that trigger a compaction. */
  readonly minInputFiles: number;
  /**
   * `iceberg.compaction.target.file.size.bytes`: the size merged files aim at; undefined (config -1) uses
   * the table property `write.target-file-size-bytes` (Iceberg's default 512 MiB when unset).
   */
  readonly targetFileSizeBytes?: number | undefined;
}

/**
 * Told about tiering work as it happens, for metrics (one call per copied segment or commit, never per
 * record). Every method is optional; an observer must not throw (what it throws is ignored).
 */
export interface TieringObserver {
  /** A closed segment was converted and uploaded (not yet committed). */
  segmentCopied?(event: { readonly topic: string; readonly partition: number; readonly sizeInBytes: number; readonly seconds: number; readonly rows?: SegmentRowCounts | undefined }): void;
  /** A copy failed; it will be retried. */
  copyFailed?(event: { readonly topic: string; readonly partition: number }): void;
  /** A commit of copied segments landed. `retry`: an earlier attempt of this topic's commit had failed. */
  committed?(event: { readonly topic: string; readonly segments: number; readonly seconds: number; readonly retry: boolean }): void;
  /** A commit failed; it will be retried with backoff. */
  commitFailed?(event: { readonly topic: string; readonly seconds: number; readonly retry: boolean }): void;
  /**
   * A segment of a schema-mode topic was converted: values typed and rebuilt exactly, typed with their raw
   * bytes kept beside (they do not rebuild exactly), and dead letters by reason (`action` says whether they
   * went to the dead-letter table or were only counted).
   */
  valuesTyped?(event: { readonly topic: string; readonly exact: number; readonly rawKept: number; readonly deadLetters: Readonly<Record<string, number>>; readonly action: 'dlq_table' | 'drop' }): void;
  /** The `_latest` upsert table caught up with the topic table: rows read and hidden, partitions applied incrementally and rebuilt. */
  upsertSynced?(event: { readonly topic: string; readonly rowsRead: number; readonly rowsHidden: number; readonly appended: number; readonly rebuilt: number; readonly seconds: number }): void;
}

/** A topic's tiering backlog (see TieringPlugin.backlogs). */
export interface TopicBacklog {
  readonly topic: string;
  readonly backlog: Backlog;
  /** Present while the backlog is a catch-up episode (large enough to report). */
  readonly progress: BacklogReport | undefined;
}

/** What a topic's table holds now, read from its metadata (for metrics and status pages). */
export interface TableStats {
  /** `<namespace>.<name>`. */
  readonly table: string;
  readonly dataFiles: number;
  /** Bytes of the live data files (delete files not counted). */
  readonly dataFileBytes: number;
  readonly deleteFiles: number;
  readonly records: number;
  /** Snapshots in the table metadata (expiry removes old ones). */
  readonly snapshots: number;
  /** Manifests of the current snapshot. */
  readonly manifests: number;
  /** When the current snapshot was committed (ms since the epoch), -1 when the table has none. */
  readonly lastCommitMs: number;
}

/** One snapshot of a topic's table, as operators see it (`floe table status`, rollback). */
export interface TableSnapshotInfo {
  /** The snapshot id, as a decimal string (Iceberg ids are 64-bit). */
  readonly snapshotId: string;
  readonly parentId: string | undefined;
  readonly timestampMs: number;
  /** Iceberg's operation: append, overwrite, replace, delete. */
  readonly operation: string;
  /** Whether it is the table's current snapshot. */
  readonly current: boolean;
  /** Highest committed Kafka offset per partition as of this snapshot (from the Floe summary). */
  readonly committedOffsets: Readonly<Record<string, number>>;
}

/** Outcome of an operator's compaction of one partition. */
export type PartitionCompaction =
  | { readonly status: 'nothing-to-do' }
  | { readonly status: 'skipped'; readonly reason: string }
  | { readonly status: 'gave-up'; readonly reason: string }
  | { readonly status: 'compacted'; readonly inputSegments: number; readonly inputFiles: number; readonly outputSegments: number; readonly outputFiles: number; readonly bytesRead: number; readonly rewriteMs: number; readonly commitMs: number };

/** Outcome of snapshot expiry (and orphan removal when due) on one table. */
export interface TableExpiry {
  readonly expiredSnapshots: number;
  readonly deletedFiles: number;
  readonly deferredFiles: number;
  readonly orphansDeleted: number;
}

/** What the broker holds. Implementations: `IcebergTieringPlugin`. */
export interface TieringPlugin {
  readonly storage: RemoteStorageManager;
  readonly metadata: RemoteLogMetadataManager;
  /** Creates or loads the topic's table and its committed state; idempotent; call again when configs change. */
  configureTopic(topic: string, config: TopicTieringConfig): Promise<void>;
  /**
   * Forgets a deleted topic. With `dropTable` (what the broker does when a topic is deleted: Kafka deletes a
   * deleted topic's data) its table is dropped and purged: metadata, data files and offset index. A table
   * that is not this topic's (another owner, or another topic's) is left alone.
   */
  removeTopic(topic: string, options?: { dropTable?: boolean }): Promise<void>;
  /**
   * DeleteRecords (called for every DeleteRecords on a tiered topic, also when `offset` is beyond the remote
   * data): the remote log start moves to `offset` (persisted in a table commit), segments wholly below it
   * leave the table with their files, and the rows below `offset` of the segment holding it are hidden from
   * table readers in the same commit (Kafka fetches still get the whole batch holding `offset`). Segments
   * committed later keep rows below the start hidden too. Returns the remote log start, undefined when
   * nothing is remote.
   */
  deleteRecordsBefore(tp: TopicPartitionId, offset: number): Promise<number | undefined>;
  /** ListOffsets by timestamp in remote data: the first record at or after `offset` with timestamp >= `timestamp`. */
  offsetForTimestamp(tp: TopicPartitionId, timestamp: number): Promise<{ offset: number; timestamp: number } | undefined>;
  /**
   * ListOffsets MAX_TIMESTAMP in remote data, from the remote log start: the largest record timestamp and the
   * earliest offset carrying it (LogAppendTime batches count every record at the batch's max timestamp).
   * Undefined when no remote data record qualifies.
   */
  maxTimestampOffset(tp: TopicPartitionId): Promise<{ offset: number; timestamp: number } | undefined>;
  /** Whether the topic is tiered (configured and enabled). */
  isTiered(topic: string): boolean;
  /** Queues a closed segment for copy and commit. Never blocks: the produce path calls it. */
  segmentClosed(segment: LogSegmentData): void;
  /** Committed remote data for `offset`: reads the right segment, skipping offset gaps between segments. */
  read(tp: TopicPartitionId, fetchOffset: number, maxBytes: number, minOneBatch: boolean): Promise<RemoteFetchResult>;
  /** Applies total retention to remote data (`now` in ms since the epoch); returns the segments removed. */
  enforceRetention(topic: string, now: number): Promise<number>;
  /** What the topic's table holds now (metadata reads, cached per snapshot); undefined when not tiered. */
  tableStats(topic: string): Promise<TableStats | undefined>;
  /** Resolves when every segment queued so far is committed (or has failed for good). */
  drain(): Promise<void>;
  /**
   * Topics with closed segments their tables do not hold yet, with the progress of a large backlog (a
   * backfill after tables were turned on, a catch-up after the catalog was down).
   */
  backlogs(): readonly TopicBacklog[];
  /** The topic's table as `<namespace>.<name>`; undefined when not tiered. */
  tableName(topic: string): string | undefined;
  /** The partitions the topic's table holds history for (ascending); empty when not tiered. */
  tablePartitions(topic: string): number[];
  /** The snapshots kept in the topic's table, oldest first; undefined when not tiered. */
  snapshots(topic: string): Promise<readonly TableSnapshotInfo[] | undefined>;
  /** Compacts one partition's small files now, whatever the topic's compaction config says (operators). */
  compact(tp: TopicPartitionId, overrides?: { targetFileSizeBytes?: number; minInputFiles?: number }): Promise<PartitionCompaction>;
  /**
   * The runbook's rebuild: converts the partition's segments from `fromOffset` on again from their stored
   * Kafka bytes (after a schema or mapping fix), swapping them in with one commit; Kafka reads are the same
   * bytes before and after. 'compacted' counts the rebuilt segments.
   */
  rebuild(tp: TopicPartitionId, fromOffset: number): Promise<PartitionCompaction>;
  /** Expires old snapshots of the topic's table now (and removes orphans when due); undefined when not tiered. */
  maintain(topic: string): Promise<TableExpiry | undefined>;
  /**
   * Recovery runbook: hides offsets [from, to] of a partition from table readers with position deletes,
   * durably (kept across compaction, expiry and DeleteRecords); Kafka fetches still return those records.
   * Only committed offsets at or above the remote log start can be hidden.
   */
  hideRows(tp: TopicPartitionId, from: number, to: number): Promise<{ readonly rowsHidden: number; readonly deleteFiles: number }>;
  /**
   * Recovery runbook: makes the table show what snapshot `snapshotId` showed (as a new snapshot), only when
   * every partition's offset index is the same there as now (it undoes hides only); otherwise throws
   * WOULD_LOSE_KAFKA_DATA naming the offsets, NOT_FOUND for an unknown snapshot.
   */
  rollbackTo(topic: string, snapshotId: string): Promise<{ readonly partitionsChanged: number }>;
  /**
   * Hands tiering the schema registry typed topics read (null: the broker runs without one). Segments of
   * typed topics wait until this is called.
   */
  attachSchemaRegistry?(registry: RegistryReader | null): void;
  /**
   * Hands tiering the broker's transaction state (see PartitionTransactions): a plugin opened to wait for it
   * copies no segment until this is called.
   */
  attachTransactions?(source: TransactionSource): void;
  /**
   * Whether a Kafka fetch (or compaction) is reading the object at `location` now. Snapshot expiry asks it
   * before deleting a file no retained snapshot references: a fetch that started on an older history may
   * still be reading it.
   */
  filesInUse(location: string): boolean;
  close(): Promise<void>;
}

export type TieringErrorCode =
  | 'ALREADY_COMMITTED'
  | 'OUT_OF_ORDER'
  | 'NOT_TIERED'
  | 'OFFSET_OUT_OF_RANGE'
  | 'CORRUPT_MANIFEST'
  | 'HISTORY_CHANGED'
  | 'CLOSED'
  | 'CONVERSION_FAILED'
  | 'NOT_FOUND'
  | 'WOULD_LOSE_KAFKA_DATA'
  /** Tiering waits for the broker's transaction state (not attached yet). */
  | 'NOT_STABLE'
  /** The topic's table exists but was not made by Floe for this topic: it is never taken over. */
  | 'FOREIGN_TABLE'
  /** The catalog put the table where the warehouse's FileIO cannot write. */
  | 'UNUSABLE_LOCATION'
  /** A topic setting names something the table does not have (an upsert id column). */
  | 'INVALID_CONFIG';

/** Errors of the tiering plugin: `code` is stable, the message says what to do. */
export class TieringError extends Error {
  constructor(
    readonly code: TieringErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TieringError';
  }
}
