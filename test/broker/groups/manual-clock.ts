/** A Clock for tests: time moves only when `advance` is called, and due timers fire in time order. */
import type { Clock, Timer } from '../../../broker/groups/clock.js';

interface Entry {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export class ManualClock implements Clock {
  private t = 1_000_000;
  private seq = 0;
  private entries: Entry[] = [];

  now(): number {
    return this.t;
  }

  schedule(ms: number, fn: () => void): Timer {
    const e: Entry = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.entries.push(e);
    return { cancel: () => void (e.cancelled = true) };
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way (including ones they schedule). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      this.entries = this.entries.filter((e) => !e.cancelled);
      let next: Entry | undefined;
      for (const e of this.entries) if (e.at <= end && (!next || e.at < next.at || (e.at === next.at && e.seq < next.seq))) next = e;
      if (!next) break;
      this.t = next.at;
      next.cancelled = true;
      next.fn();
    }
    this.t = end;
  }

  /** Timers still pending (not fired, not cancelled). */
  pending(): number {
    return this.entries.filter((e) => !e.cancelled).length;
  }
}
