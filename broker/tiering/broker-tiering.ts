/**
 * The broker's side of tiered storage: the one place the broker meets the tiering plugin (through
 * `tiering/plugin/api.ts`), so that handlers and logs see only `RemoteLogReader` and two log hooks.
 *
 * - Hands the tiering settings (`iceberg.warehouse`, `iceberg.s3.*`, `iceberg.rest.*`) to tiering/, which
 *   builds the warehouse, catalog, plugin and REST catalog server (openIcebergTiering), and stops them.
 * - Configures each topic from its configs (remote.storage.enable / iceberg.enabled, iceberg.namespace,
 *   iceberg.commit.interval.ms, retention.*, iceberg.compaction.*) when the broker starts and whenever topics change.
 * - Log hooks: every closed segment of a tiered topic goes to the plugin's queue; a local segment may be
 *   deleted only once the table holds it (local.retention.* decide when, via the partition log's config).
 * - Rolls the active segment of every tiered partition each commit interval, so a quiet topic's records
 *   reach the table within about one interval.
 * - Applies total retention (retention.ms/bytes) to the tables on the broker's retention schedule; DeleteRecords
 *   moves the remote log start; a deleted topic's table is dropped and purged (Kafka deletes its data).
 * - After a restart, re-queues closed segments the table does not hold yet (the table's summary says which).
 * - Transactions: tiering gets each partition's last stable offset, open and aborted transactions from the
 *   producer state (attachTransactions), so the rows of aborted and still-open transactions are hidden from
 *   table readers (Kafka fetches still return them) until a later commit finds the open ones decided. No
 *   segment is copied before the producer state is attached.
 * - A topic whose table cannot be opened (an external catalog down at start-up, a table Floe did not make)
 *   keeps its local segments (none is handed off untiered) and its table is opened again with backoff;
 *   tablesBehind() says which tables are behind and why (floe_table_behind_seconds), and each failure is logged.
 * - Recovery from the warehouse alone: a partition whose local log is empty but whose table holds offsets up
 *   to C (the local disk was lost) starts its local log at C + 1; earlier offsets are served from the table.
 */
import { join } from 'node:path';
import type { BacklogReport, PartitionCompaction, TableExpiry, TableSnapshotInfo, TableStats, TieringObserver, TieringPlugin, TopicBacklog, TopicTieringConfig, TypedKeySettings, TypedValueSettings } from '../../tiering/plugin/api.js';
import { openIcebergTiering, type IcebergTieringSettings, type OpenedIcebergTiering } from '../../tiering/plugin/open-iceberg-tiering.js';
import type { CacheStats, SegmentCodec } from '../../tiering/plugin/segment-codec.js';
import type { BrokerConfig } from '../config/settings.js';
import type { ClosedSegmentEvent, LogManager, TopicPartition } from '../log/log-manager.js';
import type { PartitionLog } from '../log/partition-log.js';
import type { Logger } from '../logger.js';
import type { PartitionTxns } from '../producers/partition-txns.js';
import type { TopicRecord } from '../metadata/metadata-store.js';
import { compacts, deletesByRetention, effectiveConfigs, numericConfig } from '../topics/topic-configs.js';
import { TablesBehind, type Behind } from './tables-behind.js';

/** Compaction's scratch folder in the log dir (rebuilt segments before conversion). */
export const COMPACTION_SCRATCH_DIR = '.compaction-tmp';

/** What Fetch and ListOffsets need from tiered storage. */
export interface RemoteLogReader {
  /** The partition's first offset, remote or local (Kafka's log start offset). */
  logStartOffset(topic: string, partition: number, localStartOffset: number): number;
  /** The highest offset committed to the table, -1 when none (ListOffsets -5). */
  lastTieredOffset(topic: string, partition: number): number;
  /** Batches from tiered storage at `fetchOffset` (below the local log start), empty when none. */
  read(topic: string, partition: number, fetchOffset: number, maxBytes: number, minOneBatch: boolean): Promise<Buffer>;
  /** DeleteRecords: moves the remote log start up to `offset` (no-op for untiered topics or lower offsets). */
  deleteRecordsBefore(topic: string, partition: number, offset: number): Promise<void>;
  /** ListOffsets by timestamp over the tiered data; undefined when no tiered record qualifies. */
  offsetForTimestamp(topic: string, partition: number, timestamp: number): Promise<{ offset: number; timestamp: number } | undefined>;
  /**
   * ListOffsets MAX_TIMESTAMP over the tiered data from the log start: the largest timestamp and the earliest
   * offset carrying it; undefined when nothing is tiered (or the topic is not).
   */
  maxTimestampOffset(topic: string, partition: number): Promise<{ offset: number; timestamp: number } | undefined>;
}

/** Where tiering reads a partition's transactions (the PartitionAppender's producer state). */
export interface ProducerStateReader {
  readState(log: PartitionLog): Promise<{ readonly txns: PartitionTxns }>;
}

/** The tiering settings of a topic from its configs and the broker's defaults. */
export function topicTieringConfig(overrides: Readonly<Record<string, string>>, config: BrokerConfig, topic = ''): TopicTieringConfig {
  const eff = effectiveConfigs(overrides, config);
  const n = (name: string) => numericConfig(eff, name);
  // Without delete in cleanup.policy Kafka applies no retention; compaction never removes rows from the
  // table (it keeps every record), Kafka reads of its tiered range show the compacted view instead.
  const deletes = deletesByRetention(eff);
  const never = (v: number) => (!deletes || v < 0 || v >= Number.MAX_SAFE_INTEGER ? Infinity : v);
  const mode = eff.get('iceberg.mode')?.value;
  const keyMode = eff.get('iceberg.key.mode')?.value;
  const value: TypedValueSettings | undefined = mode === 'value_schema_id_prefix' || mode === 'value_schema_latest' ? { mode, subject: eff.get('iceberg.value.subject')?.value || `${topic}-value` } : undefined;
  const key: TypedKeySettings | undefined = keyMode === 'key_schema_id_prefix' || keyMode === 'key_schema_latest' ? { mode: keyMode, subject: eff.get('iceberg.key.subject')?.value || `${topic}-key` } : undefined;
  return {
    enabled: eff.get('remote.storage.enable')?.value === 'true' || eff.get('iceberg.enabled')?.value === 'true',
    namespace: (eff.get('iceberg.namespace')?.value ?? 'kafka').split('.').filter((s) => s !== ''),
    ...(eff.get('iceberg.table.name')?.value ? { tableName: eff.get('iceberg.table.name')?.value } : {}),
    commitIntervalMs: n('iceberg.commit.interval.ms'),
    retentionMs: never(n('retention.ms')),
    retentionBytes: never(n('retention.bytes')),
    compaction: {
      enabled: eff.get('iceberg.compaction.enabled')?.value === 'true',
      minInputFiles: n('iceberg.compaction.min.input.files'),
      targetFileSizeBytes: n('iceberg.compaction.target.file.size.bytes') > 0 ? n('iceberg.compaction.target.file.size.bytes') : undefined,
    },
    ...(compacts(eff) ? { compacted: { deleteRetentionMs: n('delete.retention.ms') } } : {}),
    ...(eff.get('iceberg.upsert.enabled')?.value === 'true'
      ? {
          upsert: {
            cdc: eff.get('iceberg.upsert.cdc.format')?.value === 'debezium' ? ('debezium' as const) : ('none' as const),
            orderField: eff.get('iceberg.upsert.order.field')?.value || undefined,
            idColumns: (eff.get('iceberg.upsert.id.columns')?.value ?? '').split(',').map((c) => c.trim()).filter((c) => c !== ''),
            formatVersion: eff.get('iceberg.upsert.format.version')?.value === '3' ? (3 as const) : (2 as const),
          },
        }
      : {}),
    ...(value !== undefined || key !== undefined
      ? {
          typed: {
            value,
            key,
            invalidRecordAction: eff.get('iceberg.invalid.record.action')?.value === 'drop' ? ('drop' as const) : ('dlq_table' as const),
          },
        }
      : {}),
  };
}

export interface BrokerTieringOptions {
  readonly config: BrokerConfig;
  readonly log: Logger;
  readonly codec: SegmentCodec;
  /** Replaces the plugin built from the config (tests). */
  readonly plugin?: TieringPlugin;
  /** Told about each copy and commit (metrics). */
  readonly observer?: TieringObserver;
  /** HTTPS and authentication of the REST catalog (broker/security/http-services.ts). */
  readonly restSecurity?: Pick<IcebergTieringSettings['rest'], 'createServer' | 'auth'>;
}

/** Reads served from tiered storage since start (Fetch below the local log start), for metrics. */
export interface RemoteReadCounters {
  reads: number;
  bytes: number;
}

export class BrokerTiering implements RemoteLogReader {
  private logs: LogManager | undefined;
  private readonly rollTimers = new Map<string, { interval: number; timer: NodeJS.Timeout }>();
  private retentionTimer: NodeJS.Timeout | undefined;
  readonly remoteReads: RemoteReadCounters = { reads: 0, bytes: 0 };
  /** Tiered topics whose table could not be opened yet: retried with backoff; their segments stay local. */
  private readonly unopened = new Map<string, { failures: number; timer: NodeJS.Timeout | undefined }>();
  /**
   * Topics whose configuration tiers them, from the moment the broker hears of it: before their table is
   * open (a first open still in flight, or a create whose early open failed) nothing tells the plugin's
   * view of them apart from a topic that is not tiered, and their logs must keep every segment all the same.
   */
  private readonly tieredByConfig = new Set<string>();
  private stopped = false;

  private constructor(
    readonly plugin: TieringPlugin,
    /** What openIcebergTiering built (absent when a test hands in its own plugin). */
    private readonly opened: OpenedIcebergTiering | undefined,
    private readonly config: BrokerConfig,
    private readonly log: Logger,
    private readonly codec?: SegmentCodec,
    private readonly behind: TablesBehind = new TablesBehind(),
  ) {}

  /** Topics whose table is behind because tiering keeps failing, with the reason and since when. */
  tablesBehind(): IterableIterator<[string, Behind]> {
    return this.behind.entries();
  }

  /** Opens the tiering stack (tiering/ builds it from the config); undefined when remote.log.storage.system.enable is off. */
  static async start(options: BrokerTieringOptions): Promise<BrokerTiering | undefined> {
    const { config, log } = options;
    if (!config['remote.log.storage.system.enable']) return undefined;
    if (options.plugin) return new BrokerTiering(options.plugin, undefined, config, log, options.codec);
    const tlog = log.child({ logger: 'tiering' });
    const behind = new TablesBehind();
    const inner = options.observer;
    // A landed commit means the table caught up with what was copied: it is no longer behind. Every other
    // event goes to the broker's observer (metrics) as it is.
    const committed: NonNullable<TieringObserver['committed']> = (e) => {
      if (behind.recovered(e.topic)) tlog.info('the table is tiering again', { topic: e.topic });
      inner?.committed?.(e);
    };
    const observer = new Proxy<TieringObserver>(inner ?? {}, {
      get(target, prop) {
        if (prop === 'committed') return committed;
        const v: unknown = Reflect.get(target, prop);
        return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
      },
    });
    const c = config;
    const catalog = c['iceberg.catalog.type'] === 'rest'
      ? {
          type: 'rest' as const,
          uri: c['iceberg.catalog.uri'],
          warehouse: c['iceberg.catalog.warehouse'],
          prefix: c['iceberg.catalog.prefix'],
          token: c['iceberg.catalog.token'],
          credential: c['iceberg.catalog.credential'],
          oauth2ServerUri: c['iceberg.catalog.oauth2.server.uri'],
          scope: c['iceberg.catalog.scope'],
          ...(c['iceberg.catalog.sigv4.enabled']
            ? {
                sigv4: {
                  region: c['iceberg.catalog.signing.region'],
                  signingName: c['iceberg.catalog.signing.name'],
                  accessKeyId: c['iceberg.catalog.access.key.id'],
                  secretAccessKey: c['iceberg.catalog.secret.access.key'],
                  sessionToken: c['iceberg.catalog.session.token'],
                },
              }
            : {}),
        }
      : { type: 'builtin' as const };
    const opened = await openIcebergTiering({
      catalog,
      warehouse: config['iceberg.warehouse'],
      s3: {
        endpoint: config['iceberg.s3.endpoint'],
        region: config['iceberg.s3.region'],
        pathStyleAccess: config['iceberg.s3.path.style.access'],
        accessKeyId: config['iceberg.s3.access.key.id'],
        secretAccessKey: config['iceberg.s3.secret.access.key'],
      },
      rest: { port: config['iceberg.rest.port'], host: config['iceberg.rest.host'], token: config['iceberg.rest.token'], ...options.restSecurity },
      maxConcurrentCopies: config['remote.log.manager.copier.thread.pool.size'],
      // Under the log dir, not the OS's temporary folder: emptied at each start, so a crash mid-compaction
      // leaves nothing behind for good (a name no partition folder can have: those end in -<partition>).
      compaction: { bytesPerSecond: config['iceberg.compaction.max.bytes.per.second'], tmpDir: join(config['log.dirs'], COMPACTION_SCRATCH_DIR) },
      onInfo: (message, context) => tlog.info(message, context),
      onWarn: (message, context) => tlog.warn(message, context),
      codec: options.codec,
      onError: (err, context) => {
        const topic = typeof context['topic'] === 'string' ? context['topic'] : undefined;
        const b = topic === undefined ? undefined : behind.failed(topic, err);
        tlog.warn('tiering step failed; it will be retried (the table is behind the log; produce and fetch are unaffected)', { err, ...context, ...(b ? { behind: b.reason, behindSinceMs: b.sinceMs } : {}) });
      },
      observer,
      waitForTransactions: true,
      ...(config['remote.log.manager.copy.max.bytes.per.second'] < Number.MAX_SAFE_INTEGER ? { copyBytesPerSecond: config['remote.log.manager.copy.max.bytes.per.second'] } : {}),
      onBacklog: (r) => logBacklog(tlog, r),
      maintenance: { intervalMs: config['iceberg.maintenance.interval.ms'], orphanWindowMs: config['iceberg.orphan.files.older.than.ms'] },
    });
    if (opened.restUrl !== undefined) tlog.info('iceberg REST catalog started', { url: opened.restUrl, warehouse: opened.warehouse });
    return new BrokerTiering(opened.plugin, opened, config, tlog, options.codec, behind);
  }

  /** Topics whose tables lag behind their closed segments, with the progress of a backfill or catch-up. */
  backlogs(): readonly TopicBacklog[] {
    return this.plugin.backlogs();
  }

  /** The REST catalog's URL, when it runs. */
  get restCatalogUrl(): string | undefined {
    return this.opened?.restUrl;
  }

  /**
   * Hands tiering the producer state, from which it learns each partition's last stable offset and aborted
   * transactions before tiering a segment (see tiering/plugin/api.ts PartitionTransactions).
   */
  attachTransactions(producers: ProducerStateReader): void {
    this.plugin.attachTransactions?.(async (tp, fromOffset, toOffset) => {
      const plog = this.logs?.get(tp.topic, tp.partition);
      if (plog === undefined) return undefined;
      const { txns } = await producers.readState(plog);
      // Read together with the log end, in one turn: the state changes in the same step as the log end.
      const open = [...txns.openTxns()].map((t) => ({ producerId: t.producerId, firstOffset: t.firstOffset }));
      return { lastStableOffset: txns.lastStableOffset(plog.logEndOffset), aborted: txns.abortedOverlapping(fromOffset, toOffset + 1), open };
    });
  }

  /**
   * The log start offset of the partition `plog` is the local log of, remote data included (the producer
   * state keeps aborted transactions from there on); the local start for a log tiering does not know.
   */
  logStartOf = (plog: PartitionLog): number => {
    for (const [tp, l] of this.logs?.entries() ?? []) if (l === plog) return this.logStartOffset(tp.topic, tp.partition, plog.logStartOffset);
    return plog.logStartOffset;
  };

  /** Partition log hook: may this local segment be deleted? Only once the table holds all of it. */
  canDeleteSegment = (tp: TopicPartition, _baseOffset: number, lastOffset: number): boolean => {
    // A tiered topic whose table is not open yet keeps everything: nothing leaves the disk untiered.
    if (this.unopened.has(tp.topic)) return false;
    if (!this.plugin.isTiered(tp.topic)) return !this.tieredByConfig.has(tp.topic);
    return this.plugin.metadata.highestCommittedOffset(tp) >= lastOffset;
  };

  /** Partition log hook: a segment closed. */
  onSegmentClosed = (event: ClosedSegmentEvent): void => {
    this.plugin.segmentClosed({
      topic: event.topic,
      partition: event.partition,
      baseOffset: event.baseOffset,
      lastOffset: event.lastOffset,
      path: event.path,
      sizeInBytes: event.sizeInBytes,
      maxTimestamp: event.maxTimestamp,
    });
  };

  /** Configures every topic and re-queues closed segments the tables do not hold yet. */
  async attach(logs: LogManager, topics: readonly TopicRecord[]): Promise<void> {
    this.logs = logs;
    // A table that cannot be opened (catalog down) must not keep the broker from serving Kafka: topicChanged
    // leaves it to be retried in the background.
    for (const t of topics) await this.topicChanged(t.name, t);
    this.retentionTimer = setInterval(() => {
      this.enforceRetention().catch((err: unknown) => this.log.error('table retention failed', { err }));
    }, this.config['log.retention.check.interval.ms']);
    this.retentionTimer.unref();
  }

  /**
   * Before a new topic becomes visible: load its table (a topic of that name may have history there, e.g.
   * after the local disk was lost) and make its empty logs continue after it, so that no client can produce
   * at an offset the table already holds. Failures are logged; topicChanged tries again after the creation.
   */
  prepareNewTopic = async (name: string, partitions: number, configs: Readonly<Record<string, string>>): Promise<void> => {
    try {
      const cfg = topicTieringConfig(configs, this.config, name);
      if (!cfg.enabled) return;
      this.tieredByConfig.add(name);
      await this.plugin.configureTopic(name, cfg);
      for (let p = 0; p < partitions; p++) {
        const plog = this.logs?.get(name, p);
        const committed = this.plugin.metadata.highestCommittedOffset({ topic: name, partition: p });
        if (plog !== undefined && committed >= 0 && plog.logEndOffset <= committed) await this.recoverFromTable(name, p, plog, committed);
      }
    } catch (err) {
      this.log.warn('could not load the table of a new topic before it became visible; retrying after its creation', { err, topic: name });
    }
  };

  /** A topic was created, altered or deleted (record undefined). */
  async topicChanged(name: string, record: TopicRecord | undefined): Promise<void> {
    if (record === undefined) {
      // Kafka deletes a deleted topic's data: its table goes too, files and all, unless the table is to be kept.
      this.tieredByConfig.delete(name);
      this.stopRolling(name);
      clearTimeout(this.unopened.get(name)?.timer);
      this.unopened.delete(name);
      this.behind.recovered(name);
      const drop = this.config['iceberg.delete.on.topic.delete'];
      await this.plugin.removeTopic(name, { dropTable: drop });
      this.log.info(drop ? 'dropped the table of a deleted topic' : 'kept the table of a deleted topic (iceberg.delete.on.topic.delete=false)', { topic: name });
      return;
    }
    const cfg = topicTieringConfig(record.configs, this.config, name);
    // Before the first await: a segment that closes while the table opens asks canDeleteSegment meanwhile.
    if (cfg.enabled) this.tieredByConfig.add(name);
    else this.tieredByConfig.delete(name);
    const waiting = this.unopened.get(name);
    if (waiting?.timer) clearTimeout(waiting.timer);
    try {
      await this.plugin.configureTopic(name, cfg);
    } catch (err) {
      if (!cfg.enabled || this.stopped) throw err;
      this.openLater(name, record, err);
      return;
    }
    if (this.unopened.delete(name)) {
      this.behind.recovered(name);
      this.log.info('opened the table of a topic; its closed segments are tiered now', { topic: name });
    }
    if (!cfg.enabled) {
      this.stopRolling(name);
      return;
    }
    this.startRolling(name, cfg.commitIntervalMs);
    for (let p = 0; p < record.partitions; p++) {
      const plog = this.logs?.get(name, p);
      if (plog === undefined) continue;
      const committed = this.plugin.metadata.highestCommittedOffset({ topic: name, partition: p });
      if (committed >= 0 && plog.logEndOffset <= committed) await this.recoverFromTable(name, p, plog, committed);
      for (const s of plog.segmentInfos()) {
        if (!s.active && s.lastOffset > committed) this.onSegmentClosed({ ...s, topic: name, partition: p });
      }
    }
  }

  /**
   * The topic's table could not be opened: its log keeps every segment (canDeleteSegment), segments still
   * roll on the commit interval, and the open is tried again with capped exponential backoff (1 s .. 60 s).
   */
  private openLater(name: string, record: TopicRecord, err: unknown): void {
    const failures = (this.unopened.get(name)?.failures ?? 0) + 1;
    const delay = Math.min(60_000, 1000 * 2 ** Math.min(failures - 1, 6));
    const b = this.behind.failed(name, err);
    this.log.warn('cannot open the table of a tiered topic; its segments stay on local disk and the table is opened again later (produce and fetch are unaffected)', { err, topic: name, behind: b.reason, behindSinceMs: b.sinceMs, attempt: failures, retryInMs: delay });
    const cfg = topicTieringConfig(record.configs, this.config, name);
    this.startRolling(name, cfg.commitIntervalMs);
    const timer = setTimeout(() => {
      const entry = this.unopened.get(name);
      if (entry) entry.timer = undefined;
      if (this.stopped) return;
      this.topicChanged(name, record).catch((e: unknown) => this.log.error('tiering could not follow a topic change', { err: e, topic: name }));
    }, delay);
    timer.unref();
    this.unopened.set(name, { failures, timer });
  }

  /**
   * The table holds more of this partition than its local log (the local disk was lost, or the log dir is
   * new): an empty local log continues after the table's history, so offsets are never reused.
   */
  private async recoverFromTable(topic: string, partition: number, plog: PartitionLog, committed: number): Promise<void> {
    if (await plog.startEmptyLogAt(committed + 1)) {
      const remoteStart = this.plugin.metadata.remoteLogStartOffset({ topic, partition });
      this.log.info('recovered a partition\'s history from its table', { topic, partition, remoteLogStartOffset: remoteStart, localLogStartOffset: committed + 1 });
      return;
    }
    this.log.error('the local log is behind its table: offsets the table holds would be reused', {
      topic,
      partition,
      logEndOffset: plog.logEndOffset,
      committedOffset: committed,
      fix: 'stop the broker, remove this partition directory (its records are older than the table or were written after the disk was lost) and restart',
    });
  }

  private startRolling(topic: string, interval: number): void {
    const existing = this.rollTimers.get(topic);
    if (existing?.interval === interval) return;
    if (existing) clearInterval(existing.timer);
    const timer = setInterval(() => {
      for (const [tp, plog] of this.logs?.entries() ?? []) {
        if (tp.topic !== topic) continue;
        plog.roll().catch((err: unknown) => this.log.warn('commit-interval roll failed', { err, topic, partition: tp.partition }));
      }
    }, Math.min(interval, 0x7fffffff));
    timer.unref();
    this.rollTimers.set(topic, { interval, timer });
  }

  private stopRolling(topic: string): void {
    const t = this.rollTimers.get(topic);
    if (t) clearInterval(t.timer);
    this.rollTimers.delete(topic);
  }

  /** Total retention on every tiered table. */
  async enforceRetention(now = Date.now()): Promise<number> {
    let n = 0;
    for (const topic of new Set([...(this.logs?.entries() ?? [])].map(([tp]) => tp.topic))) {
      if (this.plugin.isTiered(topic)) n += await this.plugin.enforceRetention(topic, now);
    }
    return n;
  }

  logStartOffset(topic: string, partition: number, localStartOffset: number): number {
    if (!this.plugin.isTiered(topic)) return localStartOffset;
    const remote = this.plugin.metadata.remoteLogStartOffset({ topic, partition });
    return remote === undefined ? localStartOffset : Math.min(remote, localStartOffset);
  }

  lastTieredOffset(topic: string, partition: number): number {
    return this.plugin.isTiered(topic) ? this.plugin.metadata.highestCommittedOffset({ topic, partition }) : -1;
  }

  async read(topic: string, partition: number, fetchOffset: number, maxBytes: number, minOneBatch: boolean): Promise<Buffer> {
    if (!this.plugin.isTiered(topic)) return Buffer.alloc(0);
    const committed = this.plugin.metadata.highestCommittedOffset({ topic, partition });
    if (fetchOffset > committed) return Buffer.alloc(0);
    const records = (await this.plugin.read({ topic, partition }, fetchOffset, maxBytes, minOneBatch)).records;
    this.remoteReads.reads++;
    this.remoteReads.bytes += records.length;
    return records;
  }

  /** Whether the topic is tiered (an Iceberg table). */
  isTiered(topic: string): boolean {
    return this.plugin.isTiered(topic);
  }

  /** The first offset held in the table, undefined when the partition has no remote data (or is not tiered). */
  remoteLogStartOffset(topic: string, partition: number): number | undefined {
    return this.plugin.isTiered(topic) ? this.plugin.metadata.remoteLogStartOffset({ topic, partition }) : undefined;
  }

  /** What the topic's table holds (files, snapshots, manifests); undefined when not tiered. */
  tableStats(topic: string): Promise<TableStats | undefined> {
    return this.plugin.tableStats(topic);
  }

  /** The topic's table as `<namespace>.<name>`; undefined when not tiered. */
  tableName(topic: string): string | undefined {
    return this.plugin.tableName(topic);
  }

  /** The partitions the topic's table holds history for; empty when not tiered. */
  tablePartitions(topic: string): number[] {
    return this.plugin.tablePartitions(topic);
  }

  /** The snapshots kept in the topic's table; undefined when not tiered. */
  snapshots(topic: string): Promise<readonly TableSnapshotInfo[] | undefined> {
    return this.plugin.snapshots(topic);
  }

  /** The runbook's rebuild of a partition's rows from `fromOffset` on (admin API). */
  rebuild(topic: string, partition: number, fromOffset: number): Promise<PartitionCompaction> {
    return this.plugin.rebuild({ topic, partition }, fromOffset);
  }

  /** Operator compaction of one partition (admin API). */
  compact(topic: string, partition: number, overrides: { targetFileSizeBytes?: number; minInputFiles?: number } = {}): Promise<PartitionCompaction> {
    return this.plugin.compact({ topic, partition }, overrides);
  }

  /** Operator snapshot expiry of the topic's table (admin API); undefined when not tiered. */
  maintain(topic: string): Promise<TableExpiry | undefined> {
    return this.plugin.maintain(topic);
  }

  /** Recovery runbook: hides offsets [from, to] from table readers; Kafka fetches still serve them. */
  hideRows(topic: string, partition: number, from: number, to: number): Promise<{ readonly rowsHidden: number; readonly deleteFiles: number }> {
    return this.plugin.hideRows({ topic, partition }, from, to);
  }

  /** Recovery runbook: rolls the table back to a snapshot when Kafka loses nothing. */
  rollbackTo(topic: string, snapshotId: string): Promise<{ readonly partitionsChanged: number }> {
    return this.plugin.rollbackTo(topic, snapshotId);
  }

  /** Hits and misses of the remote read caches. */
  cacheStats(): readonly CacheStats[] {
    return this.codec?.cacheStats?.() ?? [];
  }

  async deleteRecordsBefore(topic: string, partition: number, offset: number): Promise<void> {
    if (this.plugin.isTiered(topic)) await this.plugin.deleteRecordsBefore({ topic, partition }, offset);
  }

  offsetForTimestamp(topic: string, partition: number, timestamp: number): Promise<{ offset: number; timestamp: number } | undefined> {
    return this.plugin.isTiered(topic) ? this.plugin.offsetForTimestamp({ topic, partition }, timestamp) : Promise.resolve(undefined);
  }

  maxTimestampOffset(topic: string, partition: number): Promise<{ offset: number; timestamp: number } | undefined> {
    return this.plugin.isTiered(topic) ? this.plugin.maxTimestampOffset({ topic, partition }) : Promise.resolve(undefined);
  }

  /** Copies and commits everything queued (tests and tools). */
  drain(): Promise<void> {
    return this.plugin.drain();
  }

  /** Stops timers, the REST server and the plugin (which commits what it copied). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const u of this.unopened.values()) clearTimeout(u.timer);
    for (const t of this.rollTimers.values()) clearInterval(t.timer);
    this.rollTimers.clear();
    clearInterval(this.retentionTimer);
    if (this.opened) await this.opened.close();
    else await this.plugin.close();
  }
}


const MiB = 1024 * 1024;

/** Log lines of a backfill or catch-up: its size when it starts, progress with the time left, the rate at the end. */
function logBacklog(log: Logger, r: BacklogReport): void {
  const fields = {
    topic: r.topic,
    segments: r.segments,
    percent: Math.round(r.percent * 10) / 10,
    doneMiB: Math.round((r.doneBytes / MiB) * 10) / 10,
    totalMiB: Math.round((r.totalBytes / MiB) * 10) / 10,
    mibPerSecond: Math.round((r.bytesPerSecond / MiB) * 10) / 10,
    ...(r.etaSeconds !== undefined ? { etaSeconds: Math.ceil(r.etaSeconds) } : {}),
    elapsedSeconds: Math.round(r.elapsedSeconds),
  };
  if (r.phase === 'started') log.info('tiering backlog: closed segments the table does not hold yet are being converted, oldest first', fields);
  else if (r.phase === 'progress') log.info('tiering backlog progress', fields);
  else log.info('tiering backlog done: the table holds every closed segment', fields);
}
