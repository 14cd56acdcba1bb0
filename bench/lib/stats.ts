/**
 * Statistics for benchmarks: medians of repeated runs, percentiles of latency samples, and unit helpers.
 * Absolute figures drift between runs and machines, so benchmarks report ratios to baselines measured in
 * the same run; these helpers only summarise.
 */

/** Median of the values (the mean of the two middle values for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * The p-th percentile (0-100) by the nearest-rank method over `sorted`, which must be sorted ascending.
 * Nearest rank never interpolates, so p99 is a latency that some request actually had.
 */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
}

/** Summarises latency samples (any unit); sorts a copy. */
export function summarizeLatencies(samples: Float64Array): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    p50: percentileOfSorted(sorted, 50),
    p90: percentileOfSorted(sorted, 90),
    p99: percentileOfSorted(sorted, 99),
    p999: percentileOfSorted(sorted, 99.9),
    max: sorted.length === 0 ? NaN : (sorted[sorted.length - 1] as number),
    mean: sorted.length === 0 ? NaN : sum / sorted.length,
  };
}

/** Megabytes (10^6 bytes) per second. */
export function mbPerSec(bytes: number, ns: number): number {
  return ns <= 0 ? NaN : bytes / 1e6 / (ns / 1e9);
}

/** Items per second. */
export function perSec(count: number, ns: number): number {
  return ns <= 0 ? NaN : count / (ns / 1e9);
}

/** A ratio printed as a percentage, or '-' when either side is missing. */
export function pct(value: number, baseline: number): string {
  if (!Number.isFinite(value) || !Number.isFinite(baseline) || baseline === 0) return '-';
  return `${((value / baseline) * 100).toFixed(0)}%`;
}

export const KiB = 1024;
export const MiB = 1024 * 1024;

/** "16 KiB", "1 MiB". */
export function formatSize(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= KiB && bytes % KiB === 0) return `${bytes / KiB} KiB`;
  return `${bytes} B`;
}
