import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** What InlineWrites reads each window; injectable for tests. */
export interface InlineWritesClock {
  /** Milliseconds, monotonic. */
  now(): number;
  /** The broker's thread's event-loop utilization (0..1) since the previous call. */
  utilization(): number;
}

export interface InlineWritesOptions {
  /** Writes larger than this always go to the thread pool; 0 sends every write there. */
  maxBytes: number;
  clock?: InlineWritesClock;
}

/** How often the decision is taken again, from the window just ended. */
const WINDOW_MS = 100;
/**
 * The broker's thread is saturated when its event-loop utilization stays at this level for SATURATED_WINDOWS
 * windows in a row. One window is not enough: on a loaded machine the thread is preempted or collects
 * garbage for tens of ms at a time (event-loop delays of 35-260 ms, bench/RESULTS.md), which fills a window
 * without the thread having more work than it can do.
 */
const SATURATED = 0.98;
const SATURATED_WINDOWS = 5;
/**
 * Two inline writes this slow within POOL_HOLD_MS mean the kernel is throttling writers behind writeback.
 * One alone may be the thread preempted in the middle of a write, which says nothing about the next.
 */
const SLOW_WRITE_MS = 20;
/** Once writes go to the pool, they stay there at least this long. */
const POOL_HOLD_MS = 1000;

function eventLoopClock(): InlineWritesClock {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return {
    now: () => performance.now(),
    utilization: () => {
      const current = performance.eventLoopUtilization();
      const u = performance.eventLoopUtilization(current, last).utilization;
      last = current;
      return u;
    },
  };
}

/**
 * Decides for each write of appends into a segment whether the broker's thread makes it itself (a
 * synchronous positional write into the page cache) or hands it to libuv's thread pool. One per broker,
 * shared by every partition log.
 *
 * Small writes go inline while the thread has room. A 16 KiB write into the page cache took about 24 µs of
 * the thread on the machine of bench/RESULTS.md, about what handing it to the pool cost the thread, and the
 * pool's round trip (a pool thread woken and scheduled beside the broker's, the completion seen a loop turn
 * later) was most of the broker-side produce latency at a moderate rate. Writes go to the pool instead, for
 * at least POOL_HOLD_MS, when the thread is saturated: there the appends that arrive while a pooled write
 * runs are written together, and the copy runs beside the thread rather than on it (inline, 16 KiB batches
 * at 8 partitions came to 0.78-0.93x the MB/s of pooled writes). Also after slow inline writes
 * (SLOW_WRITE_MS): a kernel throttling writers would hold every connection on the thread, not one
 * partition's appends.
 */
export class InlineWrites {
  private readonly maxBytes: number;
  private readonly clock: InlineWritesClock;
  private inline = true;
  private windowStart: number;
  private saturatedWindows = 0;
  private lastSlowWrite = -Infinity;
  private pooledUntil = -Infinity;

  constructor(options: InlineWritesOptions) {
    this.maxBytes = options.maxBytes;
    this.clock = options.clock ?? eventLoopClock();
    this.windowStart = this.clock.now();
  }

  /** Whether a write of `bytes` should be made on the broker's thread. */
  shouldInline(bytes: number): boolean {
    if (bytes > this.maxBytes) return false;
    const now = this.clock.now();
    if (now - this.windowStart >= WINDOW_MS) this.decide(now);
    return this.inline;
  }

  /** An inline write took `seconds`. */
  wroteInline(seconds: number): void {
    if (seconds * 1000 < SLOW_WRITE_MS) return;
    const now = this.clock.now();
    if (now - this.lastSlowWrite < POOL_HOLD_MS) this.toPool(now);
    this.lastSlowWrite = now;
  }

  private toPool(now: number): void {
    this.inline = false;
    this.pooledUntil = now + POOL_HOLD_MS;
  }

  private decide(now: number): void {
    this.saturatedWindows = this.clock.utilization() >= SATURATED ? this.saturatedWindows + 1 : 0;
    if (this.saturatedWindows >= SATURATED_WINDOWS) this.toPool(now);
    else if (now >= this.pooledUntil) this.inline = true;
    this.windowStart = now;
  }
}
