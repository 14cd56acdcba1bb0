/**
 * Background compaction for the whole broker: partitions ask for it after each landed tiering commit (and
 * once when their topic is configured), and one compaction runs at a time across every topic, so it takes
 * at most one conversion's worth of CPU and memory beside produce, fetch and tiering:
 *
 * - It waits while closed segments wait for a copy (`tieringBusy`: a backlog, not a copy running with
 *   nothing behind it), checking again every `idleRetryMs`: tiering, which bounds the table's freshness,
 *   goes first, and a compaction started never delays a copy by more than one conversion's share. Under
 *   steady produce of small segments there is nearly always a segment waiting, so a compaction deferred for
 *   `maxDeferMs` runs anyway (still alone and rate-limited): otherwise the small files would pile up exactly
 *   when they are made fastest.
 * - What it reads is rate-limited (`bytesPerSecond`, a token bucket with one second of burst), and the
 *   conversion that follows yields the event loop as tiering's does (segment-to-parquet.ts).
 * - A partition asked for twice while waiting runs once; a compaction that merged something asks again
 *   (the plan may have more groups than one commit takes).
 *
 * Failures are reported and not retried until the partition asks again (its next commit).
 */

export interface CompactionSchedulerOptions {
  /** Compacts one partition; resolves true when it changed the table (then the partition is asked again). */
  readonly run: (topic: string, partition: number) => Promise<boolean>;
  /** True while closed segments wait to be copied (tiering has a backlog). */
  readonly tieringBusy: () => boolean;
  /** Bytes compaction may read per second (Infinity: no limit). */
  readonly bytesPerSecond: number;
  readonly idleRetryMs?: number;
  /** How long compaction defers to a tiering backlog at most (default 5 s). */
  readonly maxDeferMs?: number;
  readonly onError?: (err: unknown, context: Record<string, unknown>) => void;
  readonly now?: () => number;
}

export class CompactionScheduler {
  private readonly queue = new Map<string, { topic: string; partition: number }>();
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  private tokens: number;
  private refilledAt: number;
  private readonly now: () => number;
  /** Since when queued work has been deferred to a tiering backlog (undefined: not deferred). */
  private deferredSince: number | undefined;

  constructor(private readonly options: CompactionSchedulerOptions) {
    this.now = options.now ?? Date.now;
    this.tokens = options.bytesPerSecond;
    this.refilledAt = this.now();
  }

  /** Asks for a compaction of the partition (returns at once). */
  request(topic: string, partition: number): void {
    if (this.closed) return;
    this.queue.set(`${topic}\u0000${partition}`, { topic, partition });
    this.pump();
  }

  forgetTopic(topic: string): void {
    for (const [k, v] of this.queue) if (v.topic === topic) this.queue.delete(k);
    this.checkIdle();
  }

  /** Resolves when nothing is queued or running (tests, benchmarks). */
  idle(): Promise<void> {
    const done = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.timer?.ref(); // someone waits now: the retry timer keeps the process alive
    this.pump();
    this.checkIdle();
    return done;
  }

  /** Stops taking work and waits for the running compaction. */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    this.checkIdle();
  }

  /** The rate limit: resolves once `bytes` more may be read. */
  async throttle(bytes: number): Promise<void> {
    const rate = this.options.bytesPerSecond;
    if (!Number.isFinite(rate) || rate <= 0) return;
    const now = this.now();
    this.tokens = Math.min(rate, this.tokens + ((now - this.refilledAt) / 1000) * rate);
    this.refilledAt = now;
    this.tokens -= bytes;
    if (this.tokens < 0) await new Promise((r) => setTimeout(r, Math.ceil((-this.tokens / rate) * 1000)));
  }

  private checkIdle(): void {
    if (this.running !== undefined || (this.queue.size > 0 && !this.closed)) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private pump(): void {
    if (this.closed || this.running !== undefined || this.timer !== undefined) return;
    const next = this.queue.entries().next();
    if (next.done === true) return this.checkIdle();
    const deferred = this.deferredSince === undefined ? 0 : this.now() - this.deferredSince;
    if (this.options.tieringBusy() && deferred < (this.options.maxDeferMs ?? 5_000)) {
      this.deferredSince ??= this.now();
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, this.options.idleRetryMs ?? 100);
      if (this.idleWaiters.length === 0) this.timer.unref();
      return;
    }
    const [key, { topic, partition }] = next.value;
    this.queue.delete(key);
    this.deferredSince = undefined;
    this.running = (async () => {
      try {
        if (await this.options.run(topic, partition)) this.request(topic, partition);
      } catch (err) {
        this.options.onError?.(err, { topic, partition, step: 'compaction' });
      }
    })().finally(() => {
      this.running = undefined;
      this.pump();
      this.checkIdle();
    });
  }
}
