import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { LogTopicConfig } from './config.js';
import { LogError } from './errors.js';
import { syncDir } from './files.js';
import type { InlineWrites } from './inline-writes.js';
import type { LogObserver } from './log-observer.js';
import {
  PartitionLog,
  type ClosedSegment,
  type LogAppendTimeRewriter,
  type RecordLocator,
} from './partition-log.js';

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface ClosedSegmentEvent extends ClosedSegment, TopicPartition {}

export interface LogManagerOptions {
  dataDir: string;
  /** Topic configs for a topic, used for logs found on disk at start-up and for create() without a config. */
  configFor?: (topic: string) => LogTopicConfig;
  clock?: () => number;
  setLogAppendTime?: LogAppendTimeRewriter;
  recordLocator?: RecordLocator;
  /** Gate on deleting a segment by retention or DeleteRecords (the tiering plugin: "committed to the table"). */
  canDeleteSegment?: (tp: TopicPartition, baseOffset: number, lastOffset: number) => boolean | Promise<boolean>;
  /** Every segment that closes in any partition, after it is fsynced. */
  onSegmentClosed?: (event: ClosedSegmentEvent) => void;
  onError?: (err: unknown) => void;
  /** Told every partition's append waits, write times and fsync times (the broker's metrics). */
  observer?: LogObserver;
  /** Which writes the broker's thread makes itself, for every partition; without it all go to the thread pool. */
  inlineWrites?: InlineWrites;
}

/** Directory of a deleted partition awaiting removal: `<topic>-<partition>.<uuid>-delete` (Kafka's scheme). */
const DELETE_SUFFIX = '-delete';
const PARTITION_DIR = /^(.+)-(\d+)$/;

export function partitionDirName(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/** Parses `<topic>-<partition>`; undefined for anything else (including deleted partitions). */
export function parsePartitionDirName(name: string): TopicPartition | undefined {
  if (name.endsWith(DELETE_SUFFIX)) return undefined;
  const m = PARTITION_DIR.exec(name);
  if (m === null) return undefined;
  const partition = Number(m[2]);
  if (!Number.isSafeInteger(partition)) return undefined;
  return { topic: m[1] as string, partition };
}

/**
 * All partition logs under one data directory: opens them at start-up (recovering those not shut down
 * cleanly), creates and deletes them, runs retention, and closes them all cleanly.
 */
export class LogManager {
  private readonly logs = new Map<string, PartitionLog>();
  private readonly pending = new Map<string, Promise<PartitionLog>>();
  private closed = false;

  private constructor(private readonly options: LogManagerOptions) {}

  static async open(options: LogManagerOptions): Promise<LogManager> {
    const manager = new LogManager(options);
    await mkdir(options.dataDir, { recursive: true });
    const entries = await readdir(options.dataDir, { withFileTypes: true });
    const found: TopicPartition[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      if (entry.name.endsWith(DELETE_SUFFIX)) {
        await rm(join(options.dataDir, entry.name), { recursive: true, force: true });
        continue;
      }
      const tp = parsePartitionDirName(entry.name);
      if (tp !== undefined) found.push(tp);
    }
    try {
      // Open a few at a time: recovery is disk-bound, and thousands of partitions shouldn't open thousands of scans.
      const queue = [...found];
      const workers = Array.from({ length: Math.min(4, queue.length) }, async () => {
        for (let tp = queue.shift(); tp !== undefined; tp = queue.shift()) {
          manager.logs.set(key(tp.topic, tp.partition), await manager.openLog(tp.topic, tp.partition, undefined));
        }
      });
      await Promise.all(workers);
    } catch (err) {
      await manager.close();
      throw err;
    }
    return manager;
  }

  private async openLog(topic: string, partition: number, config: LogTopicConfig | undefined): Promise<PartitionLog> {
    const o = this.options;
    const tp = { topic, partition };
    const log = await PartitionLog.open({
      dir: join(o.dataDir, partitionDirName(topic, partition)),
      config: config ?? o.configFor?.(topic) ?? {},
      ...(o.clock ? { clock: o.clock } : {}),
      ...(o.setLogAppendTime ? { setLogAppendTime: o.setLogAppendTime } : {}),
      ...(o.recordLocator ? { recordLocator: o.recordLocator } : {}),
      ...(o.onError ? { onError: o.onError } : {}),
      ...(o.observer ? { observer: o.observer } : {}),
      ...(o.inlineWrites ? { inlineWrites: o.inlineWrites } : {}),
      ...(o.canDeleteSegment ? { canDeleteSegment: (base: number, last: number) => o.canDeleteSegment?.(tp, base, last) ?? true } : {}),
    });
    const listener = o.onSegmentClosed;
    if (listener !== undefined) log.onSegmentClosed((seg) => listener({ ...seg, topic, partition }));
    return log;
  }

  get(topic: string, partition: number): PartitionLog | undefined {
    return this.logs.get(key(topic, partition));
  }

  /** Every open log with its topic-partition. */
  *entries(): IterableIterator<[TopicPartition, PartitionLog]> {
    for (const [k, log] of this.logs) yield [parseKey(k), log];
  }

  /** Creates a partition log (or returns the existing one: creation is idempotent, as replaying metadata needs). */
  async getOrCreate(topic: string, partition: number, config?: LogTopicConfig): Promise<PartitionLog> {
    this.checkOpen();
    if (!/^[a-zA-Z0-9._-]{1,249}$/.test(topic) || topic === '.' || topic === '..') {
      throw new LogError('INVALID_CONFIG', `"${topic}" is not a legal topic name (1-249 of [a-zA-Z0-9._-])`);
    }
    if (!Number.isSafeInteger(partition) || partition < 0) throw new LogError('UNKNOWN_PARTITION', `partition ${partition} must be a non-negative integer`);
    const k = key(topic, partition);
    const existing = this.logs.get(k);
    if (existing !== undefined) return existing;
    let opening = this.pending.get(k);
    if (opening === undefined) {
      opening = this.openLog(topic, partition, config).then(
        (log) => {
          this.pending.delete(k);
          this.logs.set(k, log);
          return log;
        },
        (err: unknown) => {
          this.pending.delete(k);
          throw err;
        },
      );
      this.pending.set(k, opening);
    }
    return opening;
  }

  /**
   * Deletes a partition log: closes it, renames its directory out of the way (atomic), then removes the files.
   * A crash in between leaves a `-delete` directory that the next open removes.
   */
  async delete(topic: string, partition: number): Promise<void> {
    this.checkOpen();
    const k = key(topic, partition);
    const log = this.logs.get(k);
    if (log === undefined) throw new LogError('UNKNOWN_PARTITION', `no log for ${topic}-${partition} on this broker`);
    this.logs.delete(k);
    await log.close();
    const doomed = join(this.options.dataDir, `${partitionDirName(topic, partition)}.${randomUUID().replaceAll('-', '')}${DELETE_SUFFIX}`);
    await rename(log.dir, doomed);
    await syncDir(this.options.dataDir);
    await rm(doomed, { recursive: true, force: true });
  }

  /** Runs retention on every log; returns the number of segments deleted. */
  async enforceRetention(): Promise<number> {
    let n = 0;
    for (const log of this.logs.values()) n += await log.enforceRetention();
    return n;
  }

  async flushAll(): Promise<void> {
    await Promise.all([...this.logs.values()].map((log) => log.flush()));
  }

  /** Closes every log cleanly (each fsyncs and writes its clean-shutdown marker). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled(this.pending.values());
    const results = await Promise.allSettled([...this.logs.values()].map((log) => log.close()));
    this.logs.clear();
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  private checkOpen(): void {
    if (this.closed) throw new LogError('LOG_CLOSED', 'the log manager is closed');
  }
}

function key(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function parseKey(k: string): TopicPartition {
  const i = k.lastIndexOf('\u0000');
  return { topic: k.slice(0, i), partition: Number(k.slice(i + 1)) };
}
