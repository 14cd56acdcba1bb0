/**
 * One Kafka topic as an Iceberg table: `<namespace>.<topic>`, created on first use and owned by Floe (the
 * `floe.owner` property makes the REST catalog refuse outside commits; see topic-table.ts). Holds the
 * committed remote history of every partition (see partition-manifest.ts) and implements, for this topic, the
 * three table operations:
 *
 * - copy: convert a closed segment into data files and index objects (deterministic names; not visible yet;
 *   see copy-segment.ts);
 * - commit: make many copied segments, of many partitions, visible in ONE snapshot whose summary records each
 *   partition's highest committed offset and manifest. `SnapshotUpdate.validate` refuses a commit whose base
 *   already holds those offsets, and an ambiguous failure is settled by reloading the table: the summary says
 *   whether it landed. So a retry after a crash neither duplicates nor loses rows. What each partition adds
 *   to the snapshot is planned in commit-segments.ts;
 * - remove: total retention, data files and manifest entries in one overwrite snapshot, objects deleted after;
 *   DeleteRecords moves the remote log start the same way (truncateBefore); a deleted topic's table is dropped
 *   with its files (drop).
 *
 * Iceberg readers see the records from the log start on, as Kafka does: when the start cuts through a
 * segment (DeleteRecords inside it, now or before the segment was committed), the rows below it get a
 * position delete file (iceberg/position-deletes.ts) in the commit that moves the start or adds the segment,
 * named from the data file and the start so a retry rewrites the same object. Kafka fetches read the data
 * files as before. The delete files replace older ones of the same segment and leave the table with it.
 * Rows of aborted transactions, and of transactions still open, are hidden the same way in the commit that
 * adds their segment (txn-deletes.ts); the topic's first commit after the open ones have ended settles them
 * (txn-settlement.ts), whichever partitions it carries.
 *
 * Compaction (compact) merges runs of small segments of a partition into one segment in a 'replace'
 * snapshot whose summary names the new history (see compaction.ts and compaction-plan.ts); the replaced
 * files stay in storage for older snapshots and fetches in flight. Every read holds leases (file-leases.ts)
 * on the files it reads, so snapshot expiry can tell which unreferenced files a reader still has.
 *
 * Operations that change the table run one at a time (a promise chain); reads use the in-memory manifests.
 */
import type { Catalog, TableIdentifier } from '../../iceberg/catalog/catalog.js';
import type { DataFile } from '../../iceberg/data-file.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import type { SnapshotUpdate } from '../../iceberg/transaction.js';
import { latestSummaryProperty } from '../../iceberg/transaction.js';
import type { Table } from '../../iceberg/table.js';
import type { TableMetadata } from '../../iceberg/table-metadata.js';
import { TieringError, type PartitionTransactions, type LogSegmentData, type RemoteFetchResult, type RemoteLogSegmentMetadata } from './api.js';
import { crashPoint } from './crash-points.js';
import { FileLeases } from './file-leases.js';
import { TopicCompaction, type CompactionOutcome, type CompactOptions } from './topic-compaction.js';
import { TopicRunbook, type HideResult, type RollbackResult } from './topic-runbook.js';
import { copySegment } from './copy-segment.js';
import { commitPartition, type CommitSegmentsContext } from './commit-segments.js';
import {
  carryHistory,
  SEGMENTS_PREFIX,
  committedOffsetIn,
  emptyManifest,
  loadManifests,
  nameHistory,
  segmentFor,
  toMetadata,
  type PartitionManifest,
  type SegmentEntry,
} from './partition-manifest.js';
import type { SegmentCodec } from './segment-codec.js';
import type { MaintenanceResult, TableMaintenance } from './table-maintenance.js';
import { TopicTyping, type TypingReport } from './topic-typing.js';
import type { RegistryReader } from '../typed/value-typer.js';
import type { TopicTypingSettings } from '../typed/record-typers.js';
import { hideBelow, rowsBelow, type RowsContext } from './hide-below.js';
import { undecidedPartitions, type PartitionTxnLookup, type SettlementContext } from './txn-settlement.js';
import { maxTimestampOffset, offsetForTimestamp, type TimestampOffset } from './remote-timestamps.js';
import { dropTopicTable, loadTopicTable } from './topic-table.js';
import { partitionTuples, specIsOurs } from './partition-tuples.js';
import { TopicUpsert, type UpsertReport } from './latest/topic-upsert.js';
import { TopicRetention } from './topic-retention.js';
import type { UpsertSettings } from './latest/latest-table.js';
import { CompactedView, type CompactedViewSettings } from './compacted-view.js';

export type { CompactionOutcome, CompactOptions } from './topic-compaction.js';

export { FLOE_OWNER, TOPIC_PROPERTY } from './table-checks.js';
export { deleteFileLocation } from './hide-below.js';
export type { PartitionTxnLookup } from './txn-settlement.js';

const EMPTY = Buffer.alloc(0);

export class IcebergTopic {
  private manifests = new Map<number, PartitionManifest>();
  private tail: Promise<unknown> = Promise.resolve();
  private readonly compaction: TopicCompaction;
  private readonly runbook: TopicRunbook;
  private readonly retention: TopicRetention;
  private compacting: Promise<unknown> = Promise.resolve();
  private retired = false;
  /** Told the partitions of every landed tiering commit (the plugin's compaction trigger). */
  onCommitted: ((partitions: readonly number[]) => void) | undefined;
  /** Schema table modes: value typing, typed layout and dead letters (topic-typing.ts). */
  readonly typing: TopicTyping;
  /** The `_latest` upsert table, when `iceberg.upsert.enabled` (latest/topic-upsert.ts). */
  private upsert: TopicUpsert;
  /** Told how the upsert table's syncs go (the plugin's metrics and warnings). */
  upsertReport: UpsertReport = {};
  /** What Kafka reads of a compacted topic's tiered range (compacted-view.ts); undefined: every record. */
  private compactedView: CompactedView | undefined;

  private constructor(
    readonly topic: string,
    readonly id: TableIdentifier,
    private table: Table,
    private readonly io: FileIO,
    private readonly codec: SegmentCodec,
    readonly leases: FileLeases,
  ) {
    this.typing = new TopicTyping(topic, id, io);
    // Compaction gets the table's internals through this host only (its commits go through the chain).
    this.compaction = new TopicCompaction({
      topic,
      io,
      codec,
      leases,
      table: () => this.table,
      manifest: (p) => this.manifest(p),
      serial: (fn) => this.serial(fn),
      commitHistory: (update, next) => this.commitHistory(update, next),
      reload: () => this.reload(),
      specIsOurs: () => specIsOurs(this.table, this.codec),
      retired: () => this.retired,
      typed: () => this.typing.typers,
    });
    // The recovery runbook (hide, rollback) likewise (topic-runbook.ts).
    this.runbook = new TopicRunbook({
      topic,
      io,
      table: () => this.table,
      manifest: (p) => this.manifest(p),
      partitions: () => this.partitions(),
      serial: (fn) => this.serial(fn),
      commitHistory: (update, next) => this.commitHistory(update, next),
      rowsBelow: (p, segment, location, index, offset) => rowsBelow(this.rows(), p, segment, location, index, offset),
      partitionTuples: (p, segment) => partitionTuples(this.table, this.codec, p, segment),
    });
    // Retention and DeleteRecords likewise (topic-retention.ts).
    this.retention = new TopicRetention({
      table: () => this.table,
      manifest: (p) => this.manifest(p),
      serial: (fn) => this.serial(fn),
      commitHistory: (update, next) => this.commitHistory(update, next),
      deleteObjects: (locations) => this.deleteObjects(locations),
      hideBelow: async (p, segment, offset) => hideBelow(this.rows(), p, segment, offset, await partitionTuples(this.table, this.codec, p, segment)),
    });
    // The upsert table reads the committed history and data files through this source only.
    this.upsert = new TopicUpsert(
      {
        topic,
        io,
        codec,
        tableLocation: table.location,
        schema: () => this.table.schema(),
        spec: () => this.codec.partitionSpec(this.table.schema()),
        partitions: () => this.partitions(),
        manifest: (p) => this.manifest(p),
        dataFiles: async () => new Map((await this.table.files()).dataFiles.map((e) => [e.data_file.file_path, e.data_file])),
      },
      id,
      async (f) => {
        if (!this.leases.inUse(f)) await this.io.delete(f);
      },
      {
        synced: (...a) => this.upsertReport.synced?.(...a),
        failed: (...a) => this.upsertReport.failed?.(...a),
      },
    );
  }

  /**
   * Keeps (or, with undefined settings, drops) the topic's `_latest` upsert table (latest/latest-table.ts);
   * it is synced after each operation on the topic table.
   */
  configureUpsert(settings: UpsertSettings | undefined, catalog: Catalog): Promise<void> {
    return this.serial(() => this.upsert.configure(settings, catalog));
  }

  /**
   * Makes Kafka fetches show the compacted view of the table (a `compact` cleanup policy), or, with
   * undefined settings, every record.
   */
  configureCompactedView(settings: CompactedViewSettings | undefined): void {
    if (settings === undefined) this.compactedView = undefined;
    else if (this.compactedView !== undefined) this.compactedView.configure(settings);
    else this.compactedView = new CompactedView({ manifest: (p) => this.manifest(p), read: (...a) => this.readStored(...a) }, settings);
  }

  /** Hides offsets [from, to] of a partition from table readers (position deletes; Kafka still reads them). */
  hideRows(partition: number, from: number, to: number): Promise<HideResult> {
    return this.runbook.hideRows(partition, from, to);
  }

  /** Makes the table show what snapshot `snapshotId` showed, when that loses nothing Kafka reads (topic-runbook.ts). */
  rollbackTo(snapshotId: string): Promise<RollbackResult> {
    return this.runbook.rollbackTo(snapshotId);
  }

  /** The snapshots kept in the table, oldest first, with the committed offsets each records. */
  snapshotInfos(): ReturnType<TopicRunbook['snapshotInfos']> {
    return this.runbook.snapshotInfos();
  }

  /** Sets how values become rows (see TopicTyping.configure); undefined settings are `key_value`. */
  configureTyping(settings: TopicTypingSettings | undefined, registry: () => RegistryReader | null | undefined, catalog: Catalog, report: TypingReport = {}): void {
    this.typing.configure(settings, registry, catalog, { schema: this.table.schema(), lastColumnId: this.table.metadata['last-column-id'] }, report);
  }

  /** Loads the topic's table (creating the namespace and table if missing) and its committed history. */
  static async open(options: { catalog: Catalog; io: FileIO; codec: SegmentCodec; topic: string; namespace: readonly string[]; tableName?: string | undefined; leases?: FileLeases; checkLocation?: (location: string) => string | undefined }): Promise<IcebergTopic> {
    const { io, codec, topic } = options;
    const id: TableIdentifier = { namespace: options.namespace, name: options.tableName ?? topic };
    const table = await loadTopicTable({ ...options, id });
    const t = new IcebergTopic(topic, id, table, io, codec, options.leases ?? new FileLeases());
    t.manifests = await loadManifests(io, t.table.metadata);
    return t;
  }

  get tableLocation(): string {
    return this.table.location;
  }

  /** The table's metadata as of its last load or commit here (read-only; metrics read their stats from it). */
  get metadata(): TableMetadata {
    return this.table.metadata;
  }

  manifest(partition: number): PartitionManifest {
    return this.manifests.get(partition) ?? emptyManifest(partition);
  }

  partitions(): number[] {
    return [...this.manifests.keys()].sort((a, b) => a - b);
  }

  /**
   * Converts and uploads one closed segment (copy-segment.ts). Throws ALREADY_COMMITTED when the table holds
   * it already. `txns` is the broker's view of the partition's transactions: the rows of aborted
   * transactions, and of ones still open, get position delete files (txn-deletes.ts), written here and
   * committed with the data files. Without `txns` nothing is hidden.
   */
  async copy(segment: LogSegmentData, txns?: PartitionTransactions): Promise<RemoteLogSegmentMetadata> {
    const committed = this.manifest(segment.partition).committedOffset;
    if (segment.lastOffset <= committed) {
      throw new TieringError('ALREADY_COMMITTED', `${this.topic}-${segment.partition} segment ${segment.baseOffset}..${segment.lastOffset} is already in the table (committed up to ${committed}); nothing to do`);
    }
    if (segment.lastOffset < this.manifest(segment.partition).logStartOffset) {
      // Deleted (DeleteRecords) before it was tiered: nothing to keep; the commit only moves the committed offset.
      return { topic: this.topic, partition: segment.partition, baseOffset: segment.baseOffset, lastOffset: segment.lastOffset, maxTimestamp: segment.maxTimestamp, sizeInBytes: segment.sizeInBytes, dataFiles: [], indexFiles: [] };
    }
    const copied = await copySegment({ topic: this.topic, io: this.io, codec: this.codec, table: this.table, typing: this.typing }, segment, txns);
    this.pendingFiles.set(key(segment.partition, segment.baseOffset), copied.dataFiles);
    this.pendingDeletes.set(key(segment.partition, segment.baseOffset), copied.deletes);
    return copied.metadata;
  }

  /** DataFiles of copied, uncommitted segments (the commit needs their metrics, not just their paths). */
  private readonly pendingFiles = new Map<string, readonly DataFile[]>();
  /** Position delete files over the aborted transactional rows of copied, uncommitted segments. */
  private readonly pendingDeletes = new Map<string, readonly DataFile[]>();

  /**
   * Commits copied segments (any partitions, offset order within each) in one snapshot. Segments the table
   * already holds are dropped silently (a retry after a crash); a segment that would leave the committed
   * history out of order throws OUT_OF_ORDER. A batch of control-only segments (no data files) commits a
   * snapshot without file changes. Resolves true once committed.
   */
  commit(segments: readonly RemoteLogSegmentMetadata[], txnsOf?: PartitionTxnLookup): Promise<boolean> {
    return this.serial(() => this.doCommit(segments, txnsOf));
  }

  private async doCommit(segments: readonly RemoteLogSegmentMetadata[], txnsOf: PartitionTxnLookup | undefined): Promise<boolean> {
    const byPartition = new Map<number, RemoteLogSegmentMetadata[]>();
    for (const s of [...segments].sort((a, b) => a.partition - b.partition || a.baseOffset - b.baseOffset)) {
      if (s.lastOffset <= this.manifest(s.partition).committedOffset) continue;
      const list = byPartition.get(s.partition) ?? [];
      list.push(s);
      byPartition.set(s.partition, list);
    }
    const update = this.table.newAppend();
    let files = 0;
    const next = new Map<number, PartitionManifest>();
    const expected = new Map<number, number>();
    // Objects of segments deleted (DeleteRecords) before they were committed, and undecided delete files of
    // segments settled before their first commit (no snapshot names them): deleted once the commit lands.
    const dropped: string[] = [];
    // Data files this commit adds (the upsert table learns their entries once it lands).
    const addedFiles: DataFile[] = [];
    // Every partition with undecided segments is settled in every commit of the topic, whether or not it
    // gets new segments: an ended transaction's rows wait for the topic's next commit at most.
    const partitions = [...new Set([...byPartition.keys(), ...this.undecidedPartitions()])].sort((a, b) => a - b);
    for (const p of partitions) {
      const m = this.manifest(p);
      const planned = await commitPartition(this.commitContext(), p, m, byPartition.get(p) ?? [], update, txnsOf);
      if (planned === undefined) continue;
      expected.set(p, m.committedOffset);
      next.set(p, planned.next);
      files += planned.files;
      addedFiles.push(...planned.addedFiles);
      dropped.push(...planned.dropped);
    }
    if (next.size === 0) return true;
    // Segments holding only control batches add no rows: the snapshot then only moves the committed offsets
    // and the segment lists, so those segments are in the remote history and their local copies can go.
    if (files === 0) update.allowNoFileChanges();
    for (const m of next.values()) await nameHistory(this.io, this.table.location, update, m);
    carryHistory(update, this.table.metadata, next.keys());
    const layoutVersion = this.typing.withLayout(update);
    await this.typing.commitDeadLetters([...byPartition.values()].flat());
    update.validate((base) => {
      for (const [p, before] of expected) {
        const now = committedOffsetIn(base, p);
        if (now !== before) {
          throw new TieringError('ALREADY_COMMITTED', `${this.topic}-${p}: the table is committed up to ${now}, not ${before} as this commit assumed; reload and retry`);
        }
      }
    });
    crashPoint('before-commit');
    try {
      await this.table.commit(update);
    } catch (err) {
      // Ambiguous or refused: the table's summary says what is committed.
      await this.reload();
      // A commit that only settles moves no committed offset: it landed if the history names its delete files.
      const landed = byPartition.size > 0
        ? [...next].every(([p, m]) => this.manifest(p).committedOffset >= m.committedOffset)
        : [...next].every(([p, m]) => deleteFilesOf(this.manifest(p).segments) === deleteFilesOf(m.segments));
      if (!landed) throw err;
      this.forget(byPartition);
      return true;
    }
    for (const [p, m] of next) this.manifests.set(p, m);
    this.typing.landed(layoutVersion);
    this.forget(byPartition);
    this.upsert.learn(addedFiles);
    crashPoint('after-commit');
    await this.deleteObjects(dropped);
    this.onCommitted?.([...next.keys()]);
    return true;
  }

  /** Partitions with a committed segment whose rows of open transactions are hidden until they end. */
  private undecidedPartitions(): number[] {
    return undecidedPartitions(this.manifests.values());
  }

  /** Whether some committed rows wait for the end of their transaction (see txn-settlement.ts). */
  get hasUndecided(): boolean {
    return this.undecidedPartitions().length > 0;
  }

  /** What commit-segments.ts needs of this topic. */
  private commitContext(): CommitSegmentsContext {
    return {
      topic: this.topic,
      settlement: this.settlementContext(),
      rows: this.rows(),
      pendingFiles: (p, baseOffset) => this.pendingFiles.get(key(p, baseOffset)),
      pendingDeletes: (p, baseOffset) => this.pendingDeletes.get(key(p, baseOffset)),
      fileSizes: this.compaction.fileSizes,
    };
  }

  /** What txn-settlement.ts needs of this topic. */
  private settlementContext(): SettlementContext {
    return { topic: this.topic, io: this.io, tableLocation: this.table.location, partitionTuples: (p, s) => partitionTuples(this.table, this.codec, p, s) };
  }

  private forget(byPartition: Map<number, RemoteLogSegmentMetadata[]>): void {
    for (const [p, list] of byPartition) {
      for (const s of list) {
        this.pendingFiles.delete(key(p, s.baseOffset));
        this.pendingDeletes.delete(key(p, s.baseOffset));
        this.typing.forget(p, s.baseOffset);
      }
    }
  }

  /**
   * Deletes objects that just left the history (retention, DeleteRecords), except those a fetch in flight
   * is reading (file-leases.ts): those stay for orphan file removal, as they would after a crash.
   */
  private async deleteObjects(locations: readonly string[]): Promise<void> {
    for (const f of locations) {
      if (this.upsert.holds(f)) this.upsert.defer(f);
      else if (!this.leases.inUse(f)) await this.io.delete(f).catch(() => undefined);
    }
  }

  /**
   * Snapshot expiry and orphan removal (table-maintenance.ts), between this table's commits. The table is
   * re-read first, so property changes made through the catalog apply and the plan is made on what is
   * committed.
   */
  maintain(maintenance: TableMaintenance): Promise<MaintenanceResult> {
    return this.serial(async () => {
      await this.reload();
      // Data files the upsert table names are the topic table's too: they stay while it does.
      const result = await maintenance.run(this.table, { held: (f) => this.upsert.holds(f) });
      await this.upsert.maintain();
      return result;
    });
  }

  /** Re-reads the table and the committed history (after a failed or ambiguous commit). */
  reload(): Promise<void> {
    return (async () => {
      await this.table.refresh();
      this.manifests = await loadManifests(this.io, this.table.metadata);
    })();
  }

  /** Total retention for one partition (topic-retention.ts): the oldest segments `expired` picks leave. */
  removeOldest(partition: number, expired: (s: SegmentEntry, remainingBytes: number) => boolean): Promise<number> {
    return this.retention.removeOldest(partition, expired);
  }

  /** DeleteRecords below (or across) the remote history (topic-retention.ts). */
  truncateBefore(partition: number, offset: number): Promise<void> {
    return this.retention.truncateBefore(partition, offset);
  }

  /**
   * Commits `update` with `next` as the partition's committed history (a fresh manifest object named in the
   * summary). Refused when the table's history of the partition is not the one this change was built on (a
   * commit this process does not know about, e.g. one that landed although its call failed); any failure
   * reloads the table, so a retry builds on what is committed.
   */
  private async commitHistory(update: SnapshotUpdate, next: PartitionManifest): Promise<void> {
    const p = next.partition;
    const before = latestSummaryProperty(this.table.metadata, SEGMENTS_PREFIX + p);
    await nameHistory(this.io, this.table.location, update, next);
    carryHistory(update, this.table.metadata, [p]);
    const layoutVersion = this.typing.withLayout(update);
    update.validate((base) => {
      if (latestSummaryProperty(base, SEGMENTS_PREFIX + p) !== before) {
        throw new TieringError('HISTORY_CHANGED', `${this.topic}-${p}: the table's history of this partition changed since it was loaded; the table was reloaded, retry the operation`);
      }
    });
    try {
      await this.table.commit(update);
    } catch (err) {
      await this.reload().catch(() => undefined);
      throw err;
    }
    this.typing.landed(layoutVersion);
    this.manifests.set(p, next);
  }

  /** What hide-below.ts needs of this topic. */
  private rows(): RowsContext {
    return { topic: this.topic, io: this.io, codec: this.codec, tableLocation: this.table.location };
  }

  /** ListOffsets by timestamp over the remote history (remote-timestamps.ts). */
  offsetForTimestamp(partition: number, timestamp: number): Promise<TimestampOffset | undefined> {
    return offsetForTimestamp(this.manifest(partition), (from) => this.readStored(partition, from, 1 << 20, true), timestamp);
  }

  /** ListOffsets MAX_TIMESTAMP over the remote history (remote-timestamps.ts). */
  maxTimestampOffset(partition: number): Promise<TimestampOffset | undefined> {
    return maxTimestampOffset(this.manifest(partition), (from) => this.readStored(partition, from, 1 << 20, true));
  }

  /**
   * Drops the topic's table with its files (metadata, data, offset index), when it is this topic's table
   * (owned by Floe's tiering and naming this topic). Waits for the table's running operations (compaction
   * included) first.
   */
  static async drop(options: { catalog: Catalog; io: FileIO; topic: string; namespace: readonly string[]; tableName?: string | undefined; table?: IcebergTopic | undefined }): Promise<boolean> {
    const id: TableIdentifier = { namespace: options.namespace, name: options.tableName ?? options.topic };
    await options.table?.retire();
    return dropTopicTable(options.catalog, options.io, options.topic, id);
  }

  /**
   * What a Kafka fetch from `fetchOffset` gets: the committed batches, or for a compacted topic their
   * compacted view (compacted-view.ts).
   */
  read(partition: number, fetchOffset: number, maxBytes: number, minOneBatch: boolean): Promise<RemoteFetchResult> {
    const view = this.compactedView;
    return view === undefined ? this.readStored(partition, fetchOffset, maxBytes, minOneBatch) : view.read(partition, fetchOffset, maxBytes, minOneBatch);
  }

  /** Committed batches from `fetchOffset`, crossing into later segments when one has nothing at or after it. */
  async readStored(partition: number, fetchOffset: number, maxBytes: number, minOneBatch: boolean): Promise<RemoteFetchResult> {
    const m = this.manifest(partition);
    if (m.segments.length === 0 || fetchOffset < m.logStartOffset || fetchOffset > m.committedOffset) {
      throw new TieringError('OFFSET_OUT_OF_RANGE', `${this.topic}-${partition}: offset ${fetchOffset} is not in the remote log [${m.logStartOffset}, ${m.committedOffset}]; reset to the earliest or latest offset`);
    }
    // Each segment is looked up and leased in one turn of the event loop (see file-leases.ts); after a read,
    // the next segment comes from the current history (compaction may have merged it meanwhile: same records).
    for (let s = segmentFor(m, fetchOffset); s !== undefined; s = segmentFor(this.manifest(partition), s.lastOffset + 1)) {
      const seg = s;
      const r = await this.leases.with([...seg.dataFiles, ...seg.indexFiles], () =>
        this.codec.readSegment({
          io: this.io,
          partition,
          baseOffset: seg.baseOffset,
          lastOffset: seg.lastOffset,
          dataFiles: seg.dataFiles,
          indexFiles: seg.indexFiles,
          fetchOffset: Math.max(fetchOffset, seg.baseOffset),
          maxBytes,
          minOneBatch,
        }),
      );
      if (r.records.length > 0) return r;
      // Empty without minOneBatch may mean "the next batch is over maxBytes": moving on to a later segment
      // would skip it. Only an empty answer with minOneBatch says this segment has nothing at or after the offset.
      if (!minOneBatch) break;
    }
    return { records: EMPTY, nextOffset: fetchOffset };
  }

  /** Compacts one partition (topic-compaction.ts): one 'replace' commit, or nothing. */
  compact(partition: number, options: CompactOptions = {}): Promise<CompactionOutcome> {
    if (this.retired) return Promise.resolve({ status: 'nothing-to-do' });
    const run = this.compaction.compact(partition, options);
    this.compacting = run.catch(() => undefined);
    return run;
  }

  /**
   * The topic is going away (deleted, or its table dropped): compaction stops (one running deletes its
   * outputs instead of committing them); resolves once no operation runs on the table.
   */
  async retire(): Promise<void> {
    this.retired = true;
    await this.compacting;
    await this.tail;
  }

  segments(partition: number): RemoteLogSegmentMetadata[] {
    return this.manifest(partition).segments.map((s) => toMetadata(this.topic, partition, s));
  }

  /** Runs `fn` after the topic's other table operations; the upsert table catches up right after it. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined).then(() => this.upsert.sync());
    return run;
  }
}

/** The delete files of a partition's segments, as one comparable string. */
function deleteFilesOf(segments: readonly SegmentEntry[]): string {
  return JSON.stringify(segments.map((s) => [s.baseOffset, [...(s.deleteFiles ?? [])].sort()]));
}

function key(partition: number, baseOffset: number): string {
  return `${partition}:${baseOffset}`;
}
