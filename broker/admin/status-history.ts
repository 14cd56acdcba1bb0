/**
 * The last hour of each topic, sampled in memory for the status page and the data-quality signals: every
 * `intervalMs` (default 10 s) one point per topic in a bounded ring (default 360 points), read from what the
 * broker already counts: log end offsets (in memory), the freshness lag (the partition reader, which reads
 * one batch header when a table's committed offset moves) and the rows tiering converted with their null
 * keys and values (BrokerMetrics.converted). Nothing is done per request or per record.
 *
 * Data-quality signals per topic, each against the topic's own last hour:
 * - records per minute now (the last minute) against the hour's median records per minute; flagged when it
 *   is under a third or over three times the median (after MIN_BASELINE_POINTS points, with a median > 0);
 * - share of null keys and of null values among the rows converted in the last few minutes against the
 *   hour's share; flagged when they differ by more than QUALITY_SHARE_DELTA (with enough rows to tell).
 * Dead-letter and raw-kept rates slot in beside them once typed tables count them.
 */
import type { LogManager } from '../log/log-manager.js';
import type { SegmentRowCounts } from '../../tiering/plugin/api.js';
import type { PartitionReader } from './partition-metrics.js';

export const STATUS_SAMPLE_INTERVAL_MS = 10_000;
export const STATUS_HISTORY_POINTS = 360;
/** Points needed before a baseline is trusted (6 points = 1 minute at the default interval). */
export const MIN_BASELINE_POINTS = 6;
/** Records-per-minute outside [median / RATE_FACTOR, median * RATE_FACTOR] is flagged. */
export const RATE_FACTOR = 3;
/** A null share further than this from the hour's share is flagged. */
export const QUALITY_SHARE_DELTA = 0.25;
/** Rows needed in the recent window before null shares are compared. */
export const MIN_QUALITY_ROWS = 10;

export interface StatusPoint {
  /** Sample time, ms since the epoch. */
  readonly t: number;
  /** Records appended per second since the previous point. */
  readonly recordsPerSecond: number;
  /** Largest freshness lag of the topic's partitions, in records and in ms of event time (0 when untiered). */
  readonly lagRecords: number;
  readonly lagMs: number;
  /** Rows converted into the table so far (cumulative since start), with null keys and values. */
  readonly converted: SegmentRowCounts;
}

export interface QualitySignals {
  readonly recordsPerMinute: number;
  /** The hour's median records per minute; undefined before MIN_BASELINE_POINTS points. */
  readonly recordsPerMinuteBaseline: number | undefined;
  readonly rateFlag: boolean;
  /** Shares among rows converted recently (last minutes) and over the hour; undefined without rows. */
  readonly nullKeyShare: number | undefined;
  readonly nullKeyShareBaseline: number | undefined;
  readonly nullValueShare: number | undefined;
  readonly nullValueShareBaseline: number | undefined;
  readonly nullKeyFlag: boolean;
  readonly nullValueFlag: boolean;
  /** Schema modes: shares of dead letters and of typed records kept raw (undefined for key_value topics). */
  readonly deadLetterShare: number | undefined;
  readonly deadLetterShareBaseline: number | undefined;
  readonly rawKeptShare: number | undefined;
  readonly rawKeptShareBaseline: number | undefined;
  readonly deadLetterFlag: boolean;
  readonly rawKeptFlag: boolean;
}

export interface StatusHistorySources {
  readonly logs: LogManager;
  readonly partitions: PartitionReader;
  readonly converted: ReadonlyMap<string, SegmentRowCounts>;
  readonly now?: () => number;
}

const ZERO: SegmentRowCounts = { records: 0, nullKeys: 0, nullValues: 0 };

class Ring<T> {
  private readonly items: T[] = [];
  private start = 0;
  constructor(private readonly capacity: number) {}
  push(item: T): void {
    if (this.items.length < this.capacity) this.items.push(item);
    else {
      this.items[this.start] = item;
      this.start = (this.start + 1) % this.capacity;
    }
  }
  toArray(): T[] {
    return [...this.items.slice(this.start), ...this.items.slice(0, this.start)];
  }
  get size(): number {
    return this.items.length;
  }
}

export class StatusHistory {
  private readonly rings = new Map<string, Ring<StatusPoint>>();
  private readonly lastEnd = new Map<string, { t: number; end: number }>();
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> | undefined;

  constructor(
    private readonly sources: StatusHistorySources,
    private readonly options: { intervalMs?: number; points?: number; onError?: (err: unknown) => void } = {},
  ) {}

  /** Samples now and then every interval (the timer does not keep the process alive). */
  start(): void {
    if (this.timer !== undefined) return;
    // A sample that fails (a log closing under it) is skipped: the next one tries again.
    const tick = () => this.sample().catch((err: unknown) => this.options.onError?.(err));
    void tick();
    this.timer = setInterval(() => void tick(), this.options.intervalMs ?? STATUS_SAMPLE_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Takes one point per topic (one sample at a time; a call during a sample waits for it). */
  sample(): Promise<void> {
    this.sampling ??= this.takeSample().finally(() => (this.sampling = undefined));
    return this.sampling;
  }

  private async takeSample(): Promise<void> {
    const now = (this.sources.now ?? Date.now)();
    const ends = new Map<string, number>();
    for (const [tp, plog] of this.sources.logs.entries()) ends.set(tp.topic, (ends.get(tp.topic) ?? 0) + plog.logEndOffset);
    const lag = new Map<string, { records: number; ms: number }>();
    for (const r of await this.sources.partitions.read()) {
      const l = lag.get(r.topic) ?? { records: 0, ms: 0 };
      lag.set(r.topic, { records: Math.max(l.records, r.lagRecords ?? 0), ms: Math.max(l.ms, (r.lagSeconds ?? 0) * 1000) });
    }
    for (const [topic, end] of ends) {
      const prev = this.lastEnd.get(topic);
      const seconds = prev === undefined ? 0 : (now - prev.t) / 1000;
      const recordsPerSecond = prev === undefined || seconds <= 0 ? 0 : Math.max(0, end - prev.end) / seconds;
      this.lastEnd.set(topic, { t: now, end });
      let ring = this.rings.get(topic);
      if (ring === undefined) {
        ring = new Ring(this.options.points ?? STATUS_HISTORY_POINTS);
        this.rings.set(topic, ring);
      }
      const l = lag.get(topic) ?? { records: 0, ms: 0 };
      ring.push({ t: now, recordsPerSecond, lagRecords: l.records, lagMs: Math.round(l.ms), converted: this.sources.converted.get(topic) ?? ZERO });
    }
    for (const topic of [...this.rings.keys()]) {
      if (!ends.has(topic)) {
        this.rings.delete(topic);
        this.lastEnd.delete(topic);
      }
    }
  }

  topics(): string[] {
    return [...this.rings.keys()].sort();
  }

  points(topic: string): StatusPoint[] {
    return this.rings.get(topic)?.toArray() ?? [];
  }

  quality(topic: string): QualitySignals {
    return qualityOf(this.points(topic), this.options.intervalMs ?? STATUS_SAMPLE_INTERVAL_MS);
  }
}

/** The data-quality signals of a topic's points (see the file comment). */
export function qualityOf(points: readonly StatusPoint[], intervalMs: number): QualitySignals {
  // The first point of a topic has no rate yet.
  const rates = points.slice(1).map((p) => p.recordsPerSecond * 60);
  const perMinute = Math.max(1, Math.round(60_000 / intervalMs));
  const recent = rates.slice(-perMinute);
  const recordsPerMinute = recent.length === 0 ? 0 : recent.reduce((a, b) => a + b, 0) / recent.length;
  const baseline = rates.length >= MIN_BASELINE_POINTS ? median(rates) : undefined;
  const rateFlag = baseline !== undefined && baseline > 0 && (recordsPerMinute < baseline / RATE_FACTOR || recordsPerMinute > baseline * RATE_FACTOR);
  const first = points[0]?.converted ?? ZERO;
  const last = points[points.length - 1]?.converted ?? ZERO;
  // Recent rows: the last five minutes' worth of points (conversion happens once per commit interval).
  const windowStart = points[Math.max(0, points.length - 1 - perMinute * 5)]?.converted ?? ZERO;
  const share = (from: SegmentRowCounts, to: SegmentRowCounts, k: 'nullKeys' | 'nullValues' | 'deadLetters' | 'rawKept') =>
    to.records - from.records > 0 && to[k] !== undefined ? ((to[k] ?? 0) - (from[k] ?? 0)) / (to.records - from.records) : undefined;
  // Before a first conversion inside the window the hour's share is the share since start.
  const hourFrom = last.records - first.records > 0 ? first : ZERO;
  const recentFrom = last.records - windowStart.records > 0 ? windowStart : hourFrom;
  const nullKeyShare = share(recentFrom, last, 'nullKeys');
  const nullValueShare = share(recentFrom, last, 'nullValues');
  const nullKeyShareBaseline = share(hourFrom, last, 'nullKeys');
  const nullValueShareBaseline = share(hourFrom, last, 'nullValues');
  const deadLetterShare = share(recentFrom, last, 'deadLetters');
  const deadLetterShareBaseline = share(hourFrom, last, 'deadLetters');
  const rawKeptShare = share(recentFrom, last, 'rawKept');
  const rawKeptShareBaseline = share(hourFrom, last, 'rawKept');
  const enough = last.records - recentFrom.records >= MIN_QUALITY_ROWS && recentFrom !== hourFrom;
  const off = (a: number | undefined, b: number | undefined) => enough && a !== undefined && b !== undefined && Math.abs(a - b) > QUALITY_SHARE_DELTA;
  return {
    recordsPerMinute,
    recordsPerMinuteBaseline: baseline,
    rateFlag,
    nullKeyShare,
    nullKeyShareBaseline,
    nullValueShare,
    nullValueShareBaseline,
    nullKeyFlag: off(nullKeyShare, nullKeyShareBaseline),
    nullValueFlag: off(nullValueShare, nullValueShareBaseline),
    deadLetterShare,
    deadLetterShareBaseline,
    rawKeptShare,
    rawKeptShareBaseline,
    deadLetterFlag: off(deadLetterShare, deadLetterShareBaseline),
    rawKeptFlag: off(rawKeptShare, rawKeptShareBaseline),
  };
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
