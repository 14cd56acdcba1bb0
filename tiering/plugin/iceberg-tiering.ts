/**
 * The Iceberg-topic implementation of the tiering plugin: every tiered topic is a table in one catalog and
 * warehouse (see iceberg-topic.ts), closed segments flow through the TieringScheduler, and the KIP-405
 * managers are views over the topics' committed manifests.
 *
 *   const plugin = new IcebergTieringPlugin({ catalog, io, codec });
 *   await plugin.configureTopic('orders', { enabled: true, namespace: ['kafka'], commitIntervalMs: 60_000, ... });
 *   plugin.segmentClosed(segment);                         // from the partition log's roll
 *   const { records } = await plugin.read({ topic: 'orders', partition: 0 }, 0, 1 << 20, true);
 *
 * Compaction runs in the background (compaction-scheduler.ts): after each landed commit of a topic with
 * `compaction.enabled`, its partitions are planned and merged one at a time per plugin, while tiering is
 * idle and at `compaction.bytesPerSecond`. `filesInUse(location)` tells snapshot expiry which files a fetch
 * is still reading (file-leases.ts).
 */
import type { Catalog } from '../../iceberg/catalog/catalog.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import {
  TieringError,
  type LogSegmentData,
  type RemoteFetchResult,
  type RemoteLogMetadataManager,
  type RemoteLogSegmentMetadata,
  type RemoteStorageManager,
  type TableSnapshotInfo,
  type TableStats,
  type TieringObserver,
  type TieringPlugin,
  type TopicBacklog,
  type TopicPartitionId,
  type TopicTieringConfig,
  type TransactionSource,
  type PartitionTransactions,
} from './api.js';
import { CompactionScheduler } from './compaction-scheduler.js';
import { FileLeases } from './file-leases.js';
import type { RegistryReader } from '../typed/value-typer.js';
import { IcebergTopic, type CompactionOutcome, type PartitionTxnLookup } from './iceberg-topic.js';
import { segmentFor, toMetadata } from './partition-manifest.js';
import { TieringScheduler } from './scheduler.js';
import type { BacklogReport } from './backlog-progress.js';
import { TableMaintenance, type MaintenanceOptions, type MaintenanceResult } from './table-maintenance.js';
import type { SegmentCodec } from './segment-codec.js';
import { TableStatsReader } from './table-stats.js';
import type { HideResult, RollbackResult } from './topic-runbook.js';

/** A data or offset-index object Floe names from its partition and offsets: `.../partition=<p>/<base>-<last>...`. */
const FLOE_OBJECT = /\/(?:data|kafka-index)\/partition=(\d+)\/(\d{20})-(\d{20})[^/]*$/;

export interface IcebergTieringOptions {
  readonly catalog: Catalog;
  /** The warehouse's FileIO (data files, index, manifests). */
  readonly io: FileIO;
  /**
   * Where `io` can write: told each table's location (chosen by the catalog), returns why it cannot hold the
   * table's files, or undefined. The table is then not opened (retried later), with that reason.
   */
  readonly checkLocation?: (location: string) => string | undefined;
  readonly codec: SegmentCodec;
  /** Segments converted at once across all partitions. Default 2. */
  readonly maxConcurrentCopies?: number;
  /** Copied segments per topic that force a commit before the interval is up. Default 64. */
  readonly maxUncommittedSegments?: number;
  readonly onError?: (err: unknown, context: Record<string, unknown>) => void;
  /** Told about each copy and commit (metrics). */
  readonly observer?: TieringObserver;
  /**
   * Snapshot expiry (and, hourly, orphan removal) runs for each table this often; 0 turns the timer off
   * (`maintain` still works). Default 5 minutes.
   */
  readonly maintenanceIntervalMs?: number;
  /** Settings of table maintenance (orphan window and interval). */
  readonly maintenance?: Omit<MaintenanceOptions, 'inUse'>;
  readonly now?: () => number;
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  /** Background compaction, for every topic whose config enables it. */
  readonly compaction?: PluginCompactionOptions;
  /** Informational lines (a compaction done, a table compaction leaves alone). */
  readonly onInfo?: (message: string, context: Record<string, unknown>) => void;
  /** Warnings an operator should act on (a schema version a typed table cannot take). */
  readonly onWarn?: (message: string, context: Record<string, unknown>) => void;
  /**
   * The broker's transaction state comes later (attachTransactions): until then no segment is copied, so
   * none reaches the table with aborted or open transactional records visible. Without it (and without
   * attachTransactions) nothing is hidden: every record is committed data.
   */
  readonly waitForTransactions?: boolean;
  /** How often a segment waiting for the transaction state is tried again (ms). Default 200. */
  readonly stableRetryMs?: number;
  /** Bytes of local segments copied per second at most (remote.log.manager.copy.max.bytes.per.second). */
  readonly copyBytesPerSecond?: number;
  /** A topic's large backlog (a backfill, a catch-up): started, progressing, done. */
  readonly onBacklog?: (report: BacklogReport) => void;
}

export interface PluginCompactionOptions {
  /** Bytes compaction reads per second at most, across the broker (`iceberg.compaction.max.bytes.per.second`). Default 32 MiB/s. */
  readonly bytesPerSecond?: number;
  /**
   * Where rebuilt segments are written before conversion; default the OS temporary directory. A broker
   * passes a folder of its own, which openIcebergTiering empties (a crash mid-compaction leaves its files).
   */
  readonly tmpDir?: string;
  /** Log bytes of one merged segment at most (default 256 MiB; see compaction-plan.ts). */
  readonly maxGroupLogBytes?: number;
  /** How often compaction checks again whether tiering has a backlog (default 100 ms). */
  readonly idleRetryMs?: number;
  /** How long compaction defers to a tiering backlog at most (default 5 s). */
  readonly maxDeferMs?: number;
}

export const DEFAULT_COMPACTION_BYTES_PER_SECOND = 32 * 1024 * 1024;

interface Entry {
  config: TopicTieringConfig;
  table: IcebergTopic | undefined;
}

export class IcebergTieringPlugin implements TieringPlugin {
  readonly storage: RemoteStorageManager;
  readonly metadata: RemoteLogMetadataManager;
  private readonly topics = new Map<string, Entry>();
  private readonly scheduler: TieringScheduler;
  private readonly compactor: CompactionScheduler;
  /** Leases of the files fetches are reading (see filesInUse). */
  readonly leases = new FileLeases();
  /** Topics whose table compaction left alone, logged once each. */
  private readonly leftAlone = new Set<string>();
  private closed = false;
  private readonly upkeep = new Map<string, TableMaintenance>();
  private maintenanceTimer: NodeJS.Timeout | undefined;
  private maintaining: Promise<unknown> = Promise.resolve();
  private readonly stats: TableStatsReader;

  constructor(private readonly options: IcebergTieringOptions) {
    this.scheduler = new TieringScheduler({
      target: (topic) => {
        const t = this.tiered(topic);
        if (t === undefined) return undefined;
        return {
          copy: async (s) => t.copy(s, await this.transactionsOf(s.topic, s.partition, s.baseOffset, s.lastOffset)),
          commit: (segs) => t.commit(segs, this.txnLookup(topic)),
          committedOffset: (p) => t.manifest(p).committedOffset,
        };
      },
      commitIntervalMs: (topic) => this.topics.get(topic)?.config.commitIntervalMs ?? 60_000,
      ...(options.maxConcurrentCopies !== undefined ? { maxConcurrentCopies: options.maxConcurrentCopies } : {}),
      ...(options.maxUncommittedSegments !== undefined ? { maxUncommittedSegments: options.maxUncommittedSegments } : {}),
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.observer ? { observer: options.observer } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.retryBaseMs !== undefined ? { retryBaseMs: options.retryBaseMs } : {}),
      ...(options.retryMaxMs !== undefined ? { retryMaxMs: options.retryMaxMs } : {}),
      ...(options.stableRetryMs !== undefined ? { stableRetryMs: options.stableRetryMs } : {}),
      ...(options.copyBytesPerSecond !== undefined ? { copyBytesPerSecond: options.copyBytesPerSecond } : {}),
      ...(options.onBacklog ? { onBacklog: options.onBacklog } : {}),
    });
    this.compactor = new CompactionScheduler({
      run: async (topic, partition) => (await this.runCompaction(topic, partition)).status === 'compacted',
      tieringBusy: () => this.scheduler.copiesWaiting,
      bytesPerSecond: options.compaction?.bytesPerSecond ?? DEFAULT_COMPACTION_BYTES_PER_SECOND,
      ...(options.compaction?.idleRetryMs !== undefined ? { idleRetryMs: options.compaction.idleRetryMs } : {}),
      ...(options.compaction?.maxDeferMs !== undefined ? { maxDeferMs: options.compaction.maxDeferMs } : {}),
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    this.stats = new TableStatsReader(options.io);
    const every = options.maintenanceIntervalMs ?? 5 * 60 * 1000;
    if (every > 0) {
      let running = false;
      this.maintenanceTimer = setInterval(() => {
        // One round at a time: a tick during a slow round (a big table, a slow store) is skipped, not queued.
        if (running) return;
        running = true;
        this.maintaining = this.maintainAll().finally(() => (running = false));
      }, every);
      this.maintenanceTimer.unref();
    }
    this.storage = {
      copyLogSegmentData: (segment) => this.require(segment.topic).copy(segment),
      fetchLogSegment: async (segment, fetchOffset, maxBytes, minOneBatch) => {
        this.require(segment.topic);
        return this.leases.with([...segment.dataFiles, ...segment.indexFiles], () => this.options.codec.readSegment({ io: this.options.io, ...segment, fetchOffset, maxBytes, minOneBatch }));
      },
      deleteLogSegmentData: async (segment) => {
        for (const f of [...segment.dataFiles, ...segment.indexFiles, ...(segment.deleteFiles ?? [])]) await this.options.io.delete(f);
      },
    };
    this.metadata = {
      commitRemoteLogSegments: async (segments) => {
        const byTopic = new Map<string, RemoteLogSegmentMetadata[]>();
        for (const s of segments) byTopic.set(s.topic, [...(byTopic.get(s.topic) ?? []), s]);
        for (const [topic, list] of byTopic) await this.require(topic).commit(list);
      },
      listRemoteLogSegments: (tp) => this.tiered(tp.topic)?.segments(tp.partition) ?? [],
      remoteLogSegmentFor: (tp, offset) => {
        const t = this.tiered(tp.topic);
        const s = t === undefined ? undefined : segmentFor(t.manifest(tp.partition), offset);
        return s === undefined ? undefined : toMetadata(tp.topic, tp.partition, s);
      },
      highestCommittedOffset: (tp) => this.tiered(tp.topic)?.manifest(tp.partition).committedOffset ?? -1,
      remoteLogStartOffset: (tp) => {
        const m = this.tiered(tp.topic)?.manifest(tp.partition);
        return m === undefined || m.segments.length === 0 ? undefined : m.logStartOffset;
      },
      removeRemoteLogSegments: async (segments) => {
        for (const s of segments) {
          const t = this.require(s.topic);
          await t.removeOldest(s.partition, (e) => e.baseOffset <= s.baseOffset);
        }
      },
    };
  }

  async configureTopic(topic: string, config: TopicTieringConfig): Promise<void> {
    if (this.closed) throw new TieringError('CLOSED', 'the tiering plugin is closed');
    const entry = this.topics.get(topic);
    const sameTable = entry?.table !== undefined && entry.config.namespace.join('\u0000') === config.namespace.join('\u0000') && entry.config.tableName === config.tableName;
    if (!config.enabled) {
      this.topics.set(topic, { config, table: undefined });
      this.scheduler.forgetTopic(topic);
      this.compactor.forgetTopic(topic);
      return;
    }
    const table = (sameTable ? entry.table : undefined) ?? await IcebergTopic.open({ catalog: this.options.catalog, io: this.options.io, codec: this.options.codec, topic, namespace: config.namespace, tableName: config.tableName, leases: this.leases, ...(this.options.checkLocation ? { checkLocation: this.options.checkLocation } : {}) });
    this.topics.set(topic, { config, table });
    table.configureTyping(config.typed, () => this.registry, this.options.catalog, { observer: this.options.observer, onWarn: this.options.onWarn });
    table.upsertReport = {
      synced: (_id, r, seconds) => this.options.observer?.upsertSynced?.({ topic, rowsRead: r.rowsRead, rowsHidden: r.rowsHidden, appended: r.appended, rebuilt: r.rebuilt, seconds }),
      failed: (id, err) => this.options.onWarn?.(`the upsert table ${[...id.namespace, id.name].join('.')} of topic ${topic} could not catch up with its topic table; it is retried after the topic's next table operation: ${err instanceof Error ? err.message : String(err)}`, { topic }),
    };
    await table.configureUpsert(config.upsert, this.options.catalog);
    table.configureCompactedView(config.compacted);
    table.onCommitted = (partitions) => {
      for (const p of partitions) this.requestCompaction(topic, p);
      this.scheduleSettle(topic);
    };
    // A restart finds the rows of transactions that were open at the last commit still hidden.
    this.scheduleSettle(topic);
    // Catch up with what earlier runs left small (a restart, or compaction just turned on).
    for (const p of table.partitions()) this.requestCompaction(topic, p);
  }

  /**
   * The schema registry typed topics read (the broker's in-process view), or null when the broker runs
   * without one. Until it is attached, typed topics' segments wait (their conversions are retried).
   */
  attachSchemaRegistry(registry: RegistryReader | null): void {
    this.registry = registry;
    this.scheduler.retryNow();
  }

  private registry: RegistryReader | null | undefined;

  /**
   * The broker's view of its partitions' transactions (see PartitionTransactions): the records of aborted
   * transactions, and of open ones until a later commit finds them ended, are hidden from table readers.
   */
  attachTransactions(source: TransactionSource): void {
    this.transactions = source;
    this.scheduler.retryNow();
  }

  private transactions: TransactionSource | undefined;

  private async transactionsOf(topic: string, partition: number, from: number, to: number): Promise<PartitionTransactions | undefined> {
    if (this.transactions === undefined) {
      if (this.options.waitForTransactions === true) {
        throw new TieringError('NOT_STABLE', `${topic}-${partition}: the broker's transaction state is not attached yet; the segment is copied once it is`);
      }
      return undefined;
    }
    return this.transactions({ topic, partition }, from, to);
  }

  /** Whether a fetch (or a compaction) is reading `location` now: snapshot expiry must not delete it yet. */
  filesInUse(location: string): boolean {
    return this.leases.inUse(location);
  }

  /** Compacts one partition now, whatever its topic's compaction config says (operators, tests, benchmarks). */
  compact(tp: TopicPartitionId, overrides: { targetFileSizeBytes?: number; minInputFiles?: number } = {}): Promise<CompactionOutcome> {
    const cfg = this.topics.get(tp.topic)?.config.compaction;
    return this.require(tp.topic).compact(tp.partition, {
      overrides: { targetFileSizeBytes: overrides.targetFileSizeBytes ?? cfg?.targetFileSizeBytes, minInputFiles: overrides.minInputFiles ?? cfg?.minInputFiles, maxGroupLogBytes: this.options.compaction?.maxGroupLogBytes },
      ...(this.options.compaction?.tmpDir !== undefined ? { tmpDir: this.options.compaction.tmpDir } : {}),
      throttle: (bytes) => this.compactor.throttle(bytes),
    });
  }

  /**
   * Converts the partition's segments from `fromOffset` on again from their stored Kafka bytes, with the
   * topic's typing as it is now (see CompactOptions.rebuildFrom); one 'replace' commit.
   */
  rebuild(tp: TopicPartitionId, fromOffset: number): Promise<CompactionOutcome> {
    return this.require(tp.topic).compact(tp.partition, {
      rebuildFrom: fromOffset,
      ...(this.options.compaction?.tmpDir !== undefined ? { tmpDir: this.options.compaction.tmpDir } : {}),
      throttle: (bytes) => this.compactor.throttle(bytes),
    });
  }

  /** Resolves when no background compaction is queued or running. */
  compactionIdle(): Promise<void> {
    return this.compactor.idle();
  }

  private requestCompaction(topic: string, partition: number): void {
    if (this.closed || this.topics.get(topic)?.config.compaction?.enabled !== true) return;
    this.compactor.request(topic, partition);
  }

  private async runCompaction(topic: string, partition: number): Promise<CompactionOutcome> {
    if (this.topics.get(topic)?.config.compaction?.enabled !== true || this.tiered(topic) === undefined) return { status: 'nothing-to-do' };
    const started = Date.now();
    const outcome = await this.compact({ topic, partition });
    if (outcome.status === 'skipped') {
      if (!this.leftAlone.has(topic)) this.options.onInfo?.(`compaction leaves the table alone: ${outcome.reason}`, { topic });
      this.leftAlone.add(topic);
    } else if (outcome.status === 'compacted') {
      this.options.onInfo?.('compacted small files', { topic, partition, ...outcome, ms: Date.now() - started });
    } else if (outcome.status === 'gave-up') {
      this.options.onInfo?.('compaction gave up', { topic, partition, reason: outcome.reason });
    }
    return outcome;
  }

  async removeTopic(topic: string, options: { dropTable?: boolean } = {}): Promise<void> {
    const entry = this.topics.get(topic);
    this.topics.delete(topic);
    this.scheduler.forgetTopic(topic);
    this.compactor.forgetTopic(topic);
    await entry?.table?.retire();
    if (entry?.table !== undefined) this.stats.forget(entry.table.tableLocation);
    if (options.dropTable) await IcebergTopic.drop({ catalog: this.options.catalog, io: this.options.io, topic, namespace: entry?.config.namespace ?? ['kafka'], tableName: entry?.config.tableName, table: entry?.table });
  }

  async deleteRecordsBefore(tp: TopicPartitionId, offset: number): Promise<number | undefined> {
    const t = this.tiered(tp.topic);
    if (t === undefined) return undefined;
    await t.truncateBefore(tp.partition, offset);
    return this.metadata.remoteLogStartOffset(tp);
  }

  offsetForTimestamp(tp: TopicPartitionId, timestamp: number): Promise<{ offset: number; timestamp: number } | undefined> {
    const t = this.tiered(tp.topic);
    return t === undefined ? Promise.resolve(undefined) : t.offsetForTimestamp(tp.partition, timestamp);
  }

  maxTimestampOffset(tp: TopicPartitionId): Promise<{ offset: number; timestamp: number } | undefined> {
    const t = this.tiered(tp.topic);
    return t === undefined ? Promise.resolve(undefined) : t.maxTimestampOffset(tp.partition);
  }

  isTiered(topic: string): boolean {
    return this.tiered(topic) !== undefined;
  }

  segmentClosed(segment: LogSegmentData): void {
    if (this.closed || !this.isTiered(segment.topic)) return;
    this.scheduler.enqueue(segment);
  }

  read(tp: TopicPartitionId, fetchOffset: number, maxBytes: number, minOneBatch: boolean): Promise<RemoteFetchResult> {
    return this.require(tp.topic).read(tp.partition, fetchOffset, maxBytes, minOneBatch);
  }

  async enforceRetention(topic: string, now: number): Promise<number> {
    const entry = this.topics.get(topic);
    const t = entry?.table;
    if (entry === undefined || t === undefined || !entry.config.enabled) return 0;
    const { retentionMs, retentionBytes } = entry.config;
    if (retentionMs === Infinity && retentionBytes === Infinity) return 0;
    let removed = 0;
    for (const p of t.partitions()) {
      removed += await t.removeOldest(p, (s, remaining) => (s.maxTimestamp >= 0 && now - s.maxTimestamp > retentionMs) || remaining - s.sizeInBytes >= retentionBytes);
    }
    return removed;
  }

  async tableStats(topic: string): Promise<TableStats | undefined> {
    const t = this.tiered(topic);
    if (t === undefined) return undefined;
    return this.stats.read([...t.id.namespace, t.id.name].join('.'), t.metadata);
  }

  backlogs(): readonly TopicBacklog[] {
    return this.scheduler.backlogs();
  }

  /** Copies and commits every closed segment now, then settles the transactions that have ended since (settle). */
  async drain(): Promise<void> {
    await this.scheduler.drain();
    for (const topic of [...this.topics.keys()]) await this.settle(topic);
  }

  /** Per topic, the timer of its next settlement check (see scheduleSettle). */
  private readonly settleTimers = new Map<string, NodeJS.Timeout>();
  /** Settlements the timers started, awaited on close. */
  private settling: Promise<unknown> = Promise.resolve();

  private txnLookup(topic: string): PartitionTxnLookup | undefined {
    return this.transactions === undefined ? undefined : (p, from, to) => this.transactionsOf(topic, p, from, to);
  }

  /**
   * Commits, without new segments, the final deletes of the topic's committed segments whose open
   * transactions have ended (every IcebergTopic commit settles them, txn-settlement.ts); no commit when none
   * has.
   */
  private async settle(topic: string): Promise<void> {
    const t = this.tiered(topic);
    const lookup = this.txnLookup(topic);
    if (this.closed || t === undefined || lookup === undefined || !t.hasUndecided) return;
    await t.commit([], lookup);
  }

  /**
   * While a topic's table hides rows of open transactions, checks once per commit interval whether they have
   * ended and commits their settlement: the scheduler commits only when segments are copied, and the segment
   * holding a transaction's marker may be the active one for a long time.
   */
  private scheduleSettle(topic: string): void {
    if (this.closed || this.settleTimers.has(topic) || this.tiered(topic)?.hasUndecided !== true) return;
    const timer = setTimeout(() => {
      const run = this.settle(topic)
        .catch((err: unknown) => this.options.onError?.(err, { topic, settling: true }))
        .finally(() => {
          this.settleTimers.delete(topic);
          this.scheduleSettle(topic);
        });
      this.settling = Promise.all([this.settling, run]);
    }, this.topics.get(topic)?.config.commitIntervalMs ?? 60_000);
    timer.unref();
    this.settleTimers.set(topic, timer);
  }

  /** Hides offsets [from, to] of a partition from table readers; Kafka fetches still serve them (topic-runbook.ts). */
  hideRows(tp: TopicPartitionId, from: number, to: number): Promise<HideResult> {
    return this.require(tp.topic).hideRows(tp.partition, from, to);
  }

  /** Rolls the topic's table back to a snapshot, only when Kafka loses nothing (topic-runbook.ts). */
  rollbackTo(topic: string, snapshotId: string): Promise<RollbackResult> {
    return this.require(topic).rollbackTo(snapshotId);
  }

  tableName(topic: string): string | undefined {
    const t = this.tiered(topic);
    return t === undefined ? undefined : [...t.id.namespace, t.id.name].join('.');
  }

  tablePartitions(topic: string): number[] {
    return this.tiered(topic)?.partitions() ?? [];
  }

  async snapshots(topic: string): Promise<readonly TableSnapshotInfo[] | undefined> {
    const t = this.tiered(topic);
    if (t === undefined) return undefined;
    return t.snapshotInfos();
  }

  /**
   * Expires the topic table's snapshots and deletes what only they needed (orphans too, when due); undefined
   * when the topic is not tiered. Runs between the table's commits.
   */
  maintain(topic: string): Promise<MaintenanceResult | undefined> {
    const t = this.tiered(topic);
    if (t === undefined) return Promise.resolve(undefined);
    let m = this.upkeep.get(topic);
    if (m === undefined) {
      m = new TableMaintenance(this.options.io, {
        ...this.options.maintenance,
        inUse: (location) => this.filesInUse(location),
        mayStillBeCommitted: (location) => {
          const named = FLOE_OBJECT.exec(location);
          return named !== null && Number(named[3]) > t.manifest(Number(named[1])).committedOffset;
        },
      });
      this.upkeep.set(topic, m);
    }
    return t.maintain(m);
  }

  private async maintainAll(): Promise<void> {
    for (const topic of [...this.topics.keys()]) {
      if (this.closed) return;
      try {
        await this.maintain(topic);
      } catch (err) {
        this.options.onError?.(err, { topic, operation: 'maintenance' });
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.compactor.close();
    clearInterval(this.maintenanceTimer);
    for (const timer of this.settleTimers.values()) clearTimeout(timer);
    await this.settling;
    await this.scheduler.close();
    await this.maintaining;
    await this.options.codec.close?.();
  }

  private tiered(topic: string): IcebergTopic | undefined {
    const e = this.topics.get(topic);
    return e?.config.enabled ? e.table : undefined;
  }

  private require(topic: string): IcebergTopic {
    const t = this.tiered(topic);
    if (t === undefined) throw new TieringError('NOT_TIERED', `topic ${topic} is not tiered; set remote.storage.enable=true (or iceberg.enabled=true) on it`);
    return t;
  }
}
