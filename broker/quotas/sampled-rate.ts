/**
 * A rate over sliding sample windows, computed as Kafka's Rate over a SampledStat (quota.window.num samples
 * of quota.window.size.seconds each): recording adds to the current sample, a sample older than
 * `samples * windowMs` is reset, and the rate is the sum of the samples divided by the time they cover, at
 * least `samples - 1` windows (so a first burst is not divided by a few milliseconds). The clock is passed
 * in, so tests drive it.
 */
interface Sample {
  value: number;
  /** When this sample's window started. */
  startMs: number;
}

export interface RateWindows {
  /** quota.window.num */
  readonly samples: number;
  /** quota.window.size.seconds in milliseconds */
  readonly windowMs: number;
}

export class SampledRate {
  private readonly ring: Sample[] = [];
  private current = 0;
  /** When something was last recorded (idle rates are forgotten). */
  lastRecordMs: number;

  constructor(
    private readonly windows: RateWindows,
    nowMs: number,
  ) {
    this.ring.push({ value: 0, startMs: nowMs });
    this.lastRecordMs = nowMs;
  }

  record(value: number, nowMs: number): void {
    let sample = this.ring[this.current] as Sample;
    if (nowMs - sample.startMs >= this.windows.windowMs) {
      this.current = (this.current + 1) % this.windows.samples;
      if (this.current >= this.ring.length) this.ring.push({ value: 0, startMs: nowMs });
      sample = this.ring[this.current] as Sample;
      sample.value = 0;
      sample.startMs = nowMs;
    }
    sample.value += value;
    this.lastRecordMs = nowMs;
  }

  /** Takes back a recorded value (Kafka unrecords a fetch it answers empty); never below zero. */
  unrecord(value: number): void {
    const sample = this.ring[this.current] as Sample;
    sample.value = Math.max(0, sample.value - value);
  }

  /** The time the samples cover, in milliseconds (Kafka's Rate.windowSize). */
  windowSize(nowMs: number): number {
    this.purge(nowMs);
    let oldest = Infinity;
    for (const s of this.ring) oldest = Math.min(oldest, s.startMs);
    let elapsed = nowMs - oldest;
    const full = Math.floor(elapsed / this.windows.windowMs);
    const minFull = this.windows.samples - 1;
    if (full < minFull) elapsed += (minFull - full) * this.windows.windowMs;
    return elapsed;
  }

  /** Units per second. */
  rate(nowMs: number): number {
    const size = this.windowSize(nowMs);
    let total = 0;
    for (const s of this.ring) total += s.value;
    return size <= 0 ? 0 : (total * 1000) / size;
  }

  /**
   * How long the client must wait so that its rate falls back to `bound` (Kafka's QuotaUtils.throttleTime:
   * (rate - bound) / bound * windowSize); 0 when within the bound.
   */
  throttleMs(bound: number, nowMs: number): number {
    const rate = this.rate(nowMs);
    if (rate <= bound) return 0;
    const size = this.windowSize(nowMs);
    // A quota of 0 refuses everything: wait a whole window span, as long as the rate is measured over.
    if (bound <= 0) return this.windows.samples * this.windows.windowMs;
    return Math.round(((rate - bound) / bound) * size);
  }

  private purge(nowMs: number): void {
    const expireAge = this.windows.samples * this.windows.windowMs;
    for (const s of this.ring) {
      if (nowMs - s.startMs >= expireAge) {
        s.value = 0;
        s.startMs = nowMs;
      }
    }
  }
}
