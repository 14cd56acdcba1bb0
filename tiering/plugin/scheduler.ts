/**
 * The tiering scheduler: closed segments wait in a per-partition queue (offset order, duplicates ignored),
 * at most `maxConcurrentCopies` are converted at once across all partitions (one at a time per partition, so
 * each partition's history stays in order), and copied segments are committed per topic at most once per
 * commit interval, all partitions of the topic in one commit. It never runs on the produce path: `enqueue`
 * only records the segment. Memory is bounded by the concurrency (the converter bounds each copy) and by
 * `maxUncommittedSegments` per topic, which forces an early commit.
 *
 * Copies are throttled to `copyBytesPerSecond` (Kafka's remote.log.manager.copy.max.bytes.per.second)
 * across all topics, and a topic's backlog (closed segments not yet in its table) is reported as it
 * catches up: see backlog-progress.ts.
 *
 * Failures are retried with capped exponential backoff; a segment the table already holds is dropped. A
 * copy that must wait for the broker's transaction state (the copy says NOT_STABLE) is not a failure: its
 * partition waits, checking again every `stableRetryMs`.
 */
import { TieringError, type LogSegmentData, type RemoteLogSegmentMetadata, type TieringObserver } from './api.js';
import { BacklogProgress, type Backlog, type BacklogReport } from './backlog-progress.js';

/** What the scheduler drives, per topic. */
export interface TieringTarget {
  copy(segment: LogSegmentData): Promise<RemoteLogSegmentMetadata>;
  /** Commits copied segments; false when none could be committed yet (retry with a later batch). */
  commit(segments: readonly RemoteLogSegmentMetadata[]): Promise<boolean>;
  /** Highest committed offset of a partition, -1 when none. */
  committedOffset(partition: number): number;
}

export interface SchedulerOptions {
  readonly target: (topic: string) => TieringTarget | undefined;
  readonly commitIntervalMs: (topic: string) => number;
  readonly maxConcurrentCopies?: number;
  readonly maxUncommittedSegments?: number;
  readonly onError?: (err: unknown, context: Record<string, unknown>) => void;
  /** Told about each copy and commit (metrics). */
  readonly observer?: TieringObserver;
  readonly now?: () => number;
  /** Backoff after a failure: base and cap in ms. */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  /** How often a segment waiting for the transaction state (NOT_STABLE) is tried again (ms). Default 200. */
  readonly stableRetryMs?: number;
  /** Bytes of local segments copied per second at most, over all topics; unlimited when absent. */
  readonly copyBytesPerSecond?: number;
  /** Told when a large backlog starts, as it goes down, and when it is gone. */
  readonly onBacklog?: (report: BacklogReport) => void;
}

interface PartitionQueue {
  readonly topic: string;
  readonly partition: number;
  readonly segments: LogSegmentData[];
  busy: boolean;
  failures: number;
  retryAt: number;
}

interface TopicState {
  uploaded: RemoteLogSegmentMetadata[];
  lastCommitAt: number;
  /** When the last commit attempt failed (meaningful while failures > 0). */
  lastFailureAt: number;
  committing: boolean;
  /** The target's last commit answer was false (nothing it could commit yet, e.g. control batches only). */
  refused: boolean;
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

export class TieringScheduler {
  private readonly queues = new Map<string, PartitionQueue>();
  private readonly topics = new Map<string, TopicState>();
  private running = 0;
  private closed = false;
  private wakeTimer: NodeJS.Timeout | undefined;
  private idleWaiters: (() => void)[] = [];
  private forcing = false;
  private readonly now: () => number;
  private readonly maxCopies: number;
  private readonly maxUncommitted: number;
  /** No copy starts before this (the throttle's debt). */
  private throttleUntil = 0;
  private readonly progress: BacklogProgress;

  constructor(private readonly options: SchedulerOptions) {
    this.now = options.now ?? Date.now;
    this.maxCopies = Math.max(1, options.maxConcurrentCopies ?? 2);
    this.maxUncommitted = Math.max(1, options.maxUncommittedSegments ?? 64);
    this.progress = new BacklogProgress({ now: this.now, backlog: (topic) => this.backlog(topic), report: (r) => options.onBacklog?.(r) });
  }

  /** Closed segments of the topic not yet in its table: waiting, being copied, or copied and uncommitted. */
  backlog(topic: string): Backlog {
    let segments = 0;
    let bytes = 0;
    for (const q of this.queues.values()) {
      if (q.topic !== topic) continue;
      segments += q.segments.length;
      for (const s of q.segments) bytes += s.sizeInBytes;
    }
    for (const u of this.topics.get(topic)?.uploaded ?? []) {
      // Copied segments of control batches only wait for a data segment to commit with: they are settled.
      if (u.dataFiles.length === 0) continue;
      segments++;
      bytes += u.sizeInBytes;
    }
    return { segments, bytes };
  }

  /** Every topic with a backlog, with its catch-up progress when it is in one. */
  backlogs(): { topic: string; backlog: Backlog; progress: BacklogReport | undefined }[] {
    const names = new Set([...[...this.queues.values()].map((q) => q.topic), ...this.topics.keys()]);
    const out: { topic: string; backlog: Backlog; progress: BacklogReport | undefined }[] = [];
    for (const topic of [...names].sort()) {
      const backlog = this.backlog(topic);
      if (backlog.segments > 0) out.push({ topic, backlog, progress: this.progress.current(topic) });
    }
    return out;
  }

  /** Records a closed segment for copy; returns at once. */
  enqueue(segment: LogSegmentData): void {
    if (this.closed) return;
    const k = `${segment.topic}\u0000${segment.partition}`;
    let q = this.queues.get(k);
    if (q === undefined) {
      q = { topic: segment.topic, partition: segment.partition, segments: [], busy: false, failures: 0, retryAt: 0 };
      this.queues.set(k, q);
    }
    if (q.segments.some((s) => s.baseOffset === segment.baseOffset)) return;
    q.segments.push(segment);
    q.segments.sort((a, b) => a.baseOffset - b.baseOffset);
    this.progress.enqueued(segment.topic, segment.sizeInBytes);
    this.pump();
  }

  /** Retries failed copies now instead of after their backoff (what they waited for is there now). */
  retryNow(): void {
    for (const q of this.queues.values()) q.retryAt = 0;
    this.pump();
  }

  /** Drops queued work of a topic (deleted, or tiering turned off). */
  forgetTopic(topic: string): void {
    for (const [k, q] of this.queues) if (q.topic === topic) this.queues.delete(k);
    this.progress.forget(topic);
    const t = this.topics.get(topic);
    if (t?.timer) clearTimeout(t.timer);
    this.topics.delete(topic);
    this.checkIdle();
  }

  /** Copies and commits everything queued now, ignoring the commit interval; resolves when idle. */
  drain(): Promise<void> {
    this.forcing = true;
    const done = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.pump();
    for (const topic of this.topics.keys()) void this.commitTopic(topic);
    this.checkIdle();
    return done.finally(() => {
      if (this.idleWaiters.length === 0) this.forcing = false;
    });
  }

  /** Stops taking work; waits for running copies and commits what was copied. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    for (const t of this.topics.values()) if (t.timer) clearTimeout(t.timer);
    while (this.running > 0 || [...this.topics.values()].some((t) => t.committing)) await new Promise((r) => setTimeout(r, 5));
    for (const [topic, t] of this.topics) if (t.uploaded.length > 0) await this.commitTopic(topic, true);
    for (const w of this.idleWaiters.splice(0)) w();
  }

  /**
   * Whether closed segments wait for a copy to start (a backlog): background work such as compaction waits
   * until tiering keeps up. A copy running with nothing behind it is not a backlog.
   */
  get copiesWaiting(): boolean {
    for (const q of this.queues.values()) if (q.segments.length > (q.busy ? 1 : 0)) return true;
    return false;
  }

  private isIdle(): boolean {
    if (this.running > 0) return false;
    for (const q of this.queues.values()) if (q.segments.length > 0) return false;
    for (const t of this.topics.values()) if (t.uploaded.length > 0 || t.committing) return false;
    return true;
  }

  private checkIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return;
    this.forcing = false;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private pump(): void {
    if (this.closed) return;
    const now = this.now();
    let nextRetry = Infinity;
    for (const q of this.queues.values()) {
      if (this.running >= this.maxCopies) break;
      if (q.busy || q.segments.length === 0) continue;
      if (q.retryAt > now) {
        nextRetry = Math.min(nextRetry, q.retryAt);
        continue;
      }
      const t = this.topicState(q.topic);
      if (t.uploaded.length >= this.maxUncommitted) {
        // Full: commit now, unless the last commit failed and its backoff is not over (then its timer does).
        if (t.failures > 0 && now < t.lastFailureAt + this.backoff(t.failures)) this.scheduleCommit(q.topic);
        else void this.commitTopic(q.topic, true);
        continue;
      }
      const rate = this.options.copyBytesPerSecond;
      if (rate !== undefined) {
        // Throttled: a copy starts once the bytes before it have had their time.
        if (now < this.throttleUntil) {
          nextRetry = Math.min(nextRetry, this.throttleUntil);
          break;
        }
        this.throttleUntil = Math.max(this.throttleUntil, now) + ((q.segments[0]?.sizeInBytes ?? 0) * 1000) / rate;
      }
      q.busy = true;
      this.running++;
      void this.copyNext(q).finally(() => {
        q.busy = false;
        this.running--;
        this.pump();
        this.checkIdle();
      });
    }
    if (Number.isFinite(nextRetry)) this.wakeAt(nextRetry);
  }

  private wakeAt(at: number): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.pump();
    }, Math.max(0, at - this.now()));
    this.unrefUnlessWaited(this.wakeTimer);
  }

  /** Background timers must not keep the process alive, except while someone awaits drain(). */
  private unrefUnlessWaited(timer: NodeJS.Timeout): void {
    if (this.idleWaiters.length === 0) timer.unref();
  }

  private topicState(topic: string): TopicState {
    let t = this.topics.get(topic);
    if (t === undefined) {
      t = { uploaded: [], lastCommitAt: 0, lastFailureAt: 0, committing: false, refused: false, failures: 0, timer: undefined };
      this.topics.set(topic, t);
    }
    return t;
  }

  private async copyNext(q: PartitionQueue): Promise<void> {
    const segment = q.segments[0];
    if (segment === undefined) return;
    const target = this.options.target(q.topic);
    if (target === undefined) {
      q.segments.shift(); // not tiered (any more)
      return;
    }
    const t = this.topicState(q.topic);
    const copiedUpTo = Math.max(target.committedOffset(q.partition), ...t.uploaded.filter((u) => u.partition === q.partition).map((u) => u.lastOffset));
    if (segment.lastOffset <= copiedUpTo) {
      q.segments.shift();
      this.progress.settled(q.topic);
      return;
    }
    const started = performance.now();
    try {
      const meta = await target.copy(segment);
      q.segments.shift();
      q.failures = 0;
      t.uploaded.push(meta);
      t.refused = false;
      this.observe((o) => o.segmentCopied?.({ topic: q.topic, partition: q.partition, sizeInBytes: segment.sizeInBytes, seconds: (performance.now() - started) / 1000, rows: meta.rows }));
      this.scheduleCommit(q.topic, q);
    } catch (err) {
      if (err instanceof TieringError && err.code === 'ALREADY_COMMITTED') {
        q.segments.shift();
        this.progress.settled(q.topic);
        return;
      }
      if (err instanceof TieringError && err.code === 'NOT_STABLE') {
        // Waiting for the transaction state is not a failure: no backoff growth, nothing to report.
        q.retryAt = this.now() + (this.options.stableRetryMs ?? 200);
        return;
      }
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        // The local segment is gone (topic deleted, or removed by DeleteRecords): nothing left to copy.
        q.segments.shift();
        this.progress.settled(q.topic);
        this.options.onError?.(err, { topic: q.topic, partition: q.partition, baseOffset: segment.baseOffset, dropped: true });
        return;
      }
      q.failures++;
      q.retryAt = this.now() + this.backoff(q.failures);
      this.observe((o) => o.copyFailed?.({ topic: q.topic, partition: q.partition }));
      this.options.onError?.(err, { topic: q.topic, partition: q.partition, baseOffset: segment.baseOffset, attempt: q.failures });
    }
  }

  private copiesPending(topic: string, except?: PartitionQueue): boolean {
    for (const q of this.queues.values()) if (q.topic === topic && ((q.busy && q !== except) || q.segments.length > 0)) return true;
    return false;
  }

  private backoff(failures: number): number {
    const base = this.options.retryBaseMs ?? 100;
    const max = this.options.retryMaxMs ?? 30_000;
    return Math.min(max, base * 2 ** Math.min(failures - 1, 20));
  }

  /** `from`: the queue whose copy just finished (it still counts as busy until its caller returns). */
  private scheduleCommit(topic: string, from?: PartitionQueue): void {
    const t = this.topicState(topic);
    if (t.committing || t.uploaded.length === 0) return;
    // Draining: wait for the topic's other copies so they share the commit (the last copy schedules it).
    if (this.forcing && t.uploaded.length < this.maxUncommitted && this.copiesPending(topic, from)) return;
    const interval = this.options.commitIntervalMs(topic);
    // After a failure the backoff counts from that failure, so a long outage (a catalog down) is retried
    // every retryMaxMs at most, not as fast as attempts fail once the last success is an interval ago.
    const retryAt = t.failures > 0 ? t.lastFailureAt + this.backoff(t.failures) : 0;
    const due = this.forcing || t.uploaded.length >= this.maxUncommitted ? retryAt : Math.max(t.lastCommitAt + interval, retryAt);
    const wait = Math.max(0, due - this.now());
    if (t.timer) clearTimeout(t.timer);
    t.timer = setTimeout(() => {
      t.timer = undefined;
      void this.commitTopic(topic);
    }, wait);
    this.unrefUnlessWaited(t.timer);
  }

  private async commitTopic(topic: string, evenIfClosed = false): Promise<void> {
    const t = this.topics.get(topic);
    if (t === undefined || t.committing || t.uploaded.length === 0 || (this.closed && !evenIfClosed)) return;
    const target = this.options.target(topic);
    if (target === undefined) {
      t.uploaded = [];
      this.checkIdle();
      return;
    }
    t.committing = true;
    const batch = t.uploaded.slice();
    const started = performance.now();
    const retry = t.failures > 0;
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const committed = await target.commit(batch);
      t.refused = !committed;
      if (committed) {
        this.observe((o) => o.committed?.({ topic, segments: batch.length, seconds: seconds(), retry }));
        t.uploaded = t.uploaded.filter((u) => !batch.includes(u));
        t.failures = 0;
        t.lastCommitAt = this.now();
        this.progress.settled(topic);
      } else if (this.forcing || this.closed) {
        // Only control batches so far: nothing to commit as rows; leave them for the next data segment.
        t.lastCommitAt = this.now();
      }
    } catch (err) {
      t.failures++;
      t.lastFailureAt = this.now();
      this.observe((o) => o.commitFailed?.({ topic, seconds: seconds(), retry }));
      this.options.onError?.(err, { topic, segments: batch.length, attempt: t.failures });
    } finally {
      t.committing = false;
    }
    // Segments copied while this commit ran are committed next, control-only ones too (a transaction's marker
    // settles its rows), unless the target just refused what is left (it waits for a data segment).
    if (!this.closed && t.uploaded.length > 0 && !(this.forcing && t.failures === 0 && t.refused && !this.hasMoreThanControl(t))) this.scheduleCommit(topic);
    this.pump();
    this.checkIdleIgnoringControlOnly();
  }

  private observe(call: (o: TieringObserver) => void): void {
    const o = this.options.observer;
    if (o === undefined) return;
    try {
      call(o);
    } catch {
      // Metrics must never break tiering.
    }
  }

  private hasMoreThanControl(t: TopicState): boolean {
    return t.uploaded.some((u) => u.dataFiles.length > 0);
  }

  /** Idle check that treats copied control-only segments the target refused to commit alone as settled. */
  private checkIdleIgnoringControlOnly(): void {
    if (this.idleWaiters.length === 0) return;
    if (this.running > 0) return;
    for (const q of this.queues.values()) if (q.segments.length > 0) return;
    for (const t of this.topics.values()) if (t.committing || this.hasMoreThanControl(t) || (t.uploaded.length > 0 && !t.refused)) return;
    this.forcing = false;
    for (const w of this.idleWaiters.splice(0)) w();
  }
}
