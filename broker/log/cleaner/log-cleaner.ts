/**
 * The log cleaner (Kafka's LogCleaner, one thread): every `log.cleaner.backoff.ms` it looks at the partition
 * logs of topics whose cleanup.policy includes compact, picks the one with the highest dirty ratio among
 * those due for a clean (clean-partition.ts says when), cleans it, and looks again at once. Its I/O is
 * throttled to `log.cleaner.io.max.bytes.per.second`. The offset up to which each partition was cleaned is
 * checkpointed in the partition directory (`cleaner-offset.checkpoint`), so the dirty ratio survives a
 * restart. Cleaning runs beside appends and fetches: only the swap of a cleaned segment is serialized with
 * the partition's appends (PartitionLog.replaceSegments).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../files.js';
import type { LogManager, TopicPartition } from '../log-manager.js';
import type { PartitionLog } from '../partition-log.js';
import { cleanPartition, planClean, type CleanPlan, type MayClean } from './clean-partition.js';

export const CLEANER_CHECKPOINT_FILE = 'cleaner-offset.checkpoint';

export interface LogCleanerOptions {
  logs: LogManager;
  backoffMs: number;
  /** Infinity: no throttle. */
  ioMaxBytesPerSecond: number;
  /** The partition's last stable offset (open transactions); default: the log end offset. */
  lastStableOffset?: (tp: TopicPartition, log: PartitionLog) => number | Promise<number>;
  /** Whether a closed segment may be cleaned yet (tiering: only once the table holds it). */
  mayClean?: (tp: TopicPartition, baseOffset: number, lastOffset: number) => boolean | Promise<boolean>;
  clock?: () => number;
  onError?: (err: unknown, tp: TopicPartition) => void;
  /** A clean of `tp` starts (its plan: segments, dirty ratio, why). */
  onCleaning?: (tp: TopicPartition, plan: CleanPlan) => void;
  onCleaned?: (tp: TopicPartition, summary: { recordsRemoved: number; bytesRead: number; bytesWritten: number; reason: string }) => void;
}

/** Cumulative counters since start, and gauges from the last look at every compacted partition. */
export interface LogCleanerMetrics {
  passes: number;
  failures: number;
  bytesRead: number;
  bytesWritten: number;
  recordsRemoved: number;
  /** Highest dirty ratio among compacted partitions at the last look. */
  maxDirtyRatio: number;
  /** Longest wait of a dirty record (ms) among compacted partitions at the last look. */
  maxCompactionDelayMs: number;
  /** Compacted partitions at the last look. */
  partitions: number;
}

interface PartitionState {
  firstDirty: number;
  nextDeleteHorizon: number | undefined;
}

export class LogCleaner {
  readonly metrics: LogCleanerMetrics = { passes: 0, failures: 0, bytesRead: 0, bytesWritten: 0, recordsRemoved: 0, maxDirtyRatio: 0, maxCompactionDelayMs: 0, partitions: 0 };
  private readonly state = new WeakMap<PartitionLog, PartitionState>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private started = false;
  private stopped = false;
  private readonly clock: () => number;
  private throttleStart = 0;
  private throttleBytes = 0;

  constructor(private readonly options: LogCleanerOptions) {
    this.clock = options.clock ?? Date.now;
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.schedule(this.options.backoffMs);
  }

  /** Stops the cleaner, waiting for a clean in progress to finish its current step. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const run = this.runOnce().catch(() => false);
      this.running = run;
      void run.then((cleaned) => this.schedule(cleaned ? 0 : this.options.backoffMs));
    }, ms);
    this.timer.unref();
  }

  /** Looks at every compacted partition and cleans the filthiest one that is due. Returns whether it cleaned. */
  async runOnce(): Promise<boolean> {
    const now = this.clock();
    let best: { tp: TopicPartition; log: PartitionLog; plan: CleanPlan; st: PartitionState } | undefined;
    let maxRatio = 0;
    let maxDelay = 0;
    let partitions = 0;
    for (const [tp, log] of [...this.options.logs.entries()]) {
      if (!log.topicConfig.compact) continue;
      partitions++;
      try {
        const st = await this.stateOf(log, now);
        const mayClean = this.options.mayClean;
        const plan = await planClean(log, {
          now,
          lastStableOffset: this.options.lastStableOffset ? await this.options.lastStableOffset(tp, log) : log.logEndOffset,
          firstDirtyOffset: st.firstDirty,
          ...(st.nextDeleteHorizon !== undefined ? { nextDeleteHorizon: st.nextDeleteHorizon } : {}),
          ...(mayClean ? { mayClean: ((b, l) => mayClean(tp, b, l)) satisfies MayClean } : {}),
        });
        maxRatio = Math.max(maxRatio, plan.dirtyRatio);
        maxDelay = Math.max(maxDelay, plan.compactionDelayMs);
        if (plan.reason !== undefined && (best === undefined || plan.dirtyRatio > best.plan.dirtyRatio)) best = { tp, log, plan, st };
      } catch (err) {
        this.options.onError?.(err, tp);
      }
    }
    this.metrics.maxDirtyRatio = maxRatio;
    this.metrics.maxCompactionDelayMs = maxDelay;
    this.metrics.partitions = partitions;
    if (best === undefined || this.stopped) return false;
    const { tp, log, plan, st } = best;
    try {
      this.options.onCleaning?.(tp, plan);
      this.throttleStart = this.clock();
      this.throttleBytes = 0;
      const result = await cleanPartition(log, plan, { now, throttle: (n) => this.throttle(n) });
      const m = this.metrics;
      m.passes++;
      m.bytesRead += result.stats.bytesRead;
      m.bytesWritten += result.stats.bytesWritten;
      m.recordsRemoved += result.stats.recordsRemoved;
      if (result.groupsSwapped === result.groupsPlanned) {
        st.firstDirty = Math.max(st.firstDirty, result.cleanedTo);
        st.nextDeleteHorizon = Number.isFinite(result.nextDeleteHorizon) ? result.nextDeleteHorizon : undefined;
        await writeFileAtomic(log.dir, join(log.dir, CLEANER_CHECKPOINT_FILE), Buffer.from(`${st.firstDirty}\n`));
      }
      this.options.onCleaned?.(tp, { recordsRemoved: result.stats.recordsRemoved, bytesRead: result.stats.bytesRead, bytesWritten: result.stats.bytesWritten, reason: plan.reason ?? '' });
      return result.groupsSwapped > 0;
    } catch (err) {
      this.metrics.failures++;
      this.options.onError?.(err, tp);
      return false;
    }
  }

  private async stateOf(log: PartitionLog, now: number): Promise<PartitionState> {
    let st = this.state.get(log);
    if (st === undefined) {
      // After a start the horizons stamped earlier are unknown: one clean of the clean section finds them.
      st = { firstDirty: (await readCleanerCheckpoint(log.dir)) ?? 0, nextDeleteHorizon: now };
      this.state.set(log, st);
    }
    return st;
  }

  private async throttle(bytes: number): Promise<void> {
    const rate = this.options.ioMaxBytesPerSecond;
    if (!Number.isFinite(rate)) return;
    this.throttleBytes += bytes;
    const due = this.throttleStart + (this.throttleBytes / rate) * 1000;
    const wait = due - this.clock();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 0x7fffffff)));
  }
}

export async function readCleanerCheckpoint(dir: string): Promise<number | undefined> {
  try {
    const n = Number((await readFile(join(dir, CLEANER_CHECKPOINT_FILE), 'utf8')).trim());
    return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
