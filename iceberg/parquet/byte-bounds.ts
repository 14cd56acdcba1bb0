/**
 * The min/max statistics of a string or binary column chunk, tracked on a bounded prefix of each value.
 *
 * The native writer stores at most `STATS_PREFIX` (64) bytes of a bound: a longer min becomes its truncated
 * prefix and a longer max a truncated prefix with its last character or byte incremented (both marked
 * inexact), as Iceberg's truncate(L) does for its metrics. Those truncated bounds depend only on the first
 * bytes of the chunk's min and max, so the tracker compares and keeps only a prefix long enough to decide
 * them: 65 bytes for binary; for strings up to 4 * 65 bytes, cut back to the start of a character (the
 * bounds are computed on decoded UTF-8), which still holds more than 64 characters. The order of prefixes
 * agrees with the order of the values (a <= b implies prefix(a) <= prefix(b); for strings because valid
 * UTF-8 sequences that share bytes share their character boundaries), so the smallest prefix is the min's
 * prefix and the largest the max's. The result is byte for byte what truncating the exact min and max gives, without a
 * copy of every new max (a column of increasing values, such as JSON events with growing ids, makes one
 * per row).
 *
 * One case needs the whole value: a max whose first 64 characters cannot be incremented (all 0xff bytes,
 * or all U+10FFFF) has no shorter upper bound, and is then kept whole and exact. Such a max is copied.
 */
import { truncateLowerBound, truncateUpperBound } from '../metrics.js';

/** Longest min/max kept for string and binary chunks; longer ones are truncated and marked inexact. */
export const STATS_PREFIX = 64;

/** Compares a[as, ae) with b[bs, be) as unsigned bytes. */
export function compareBytes(a: Uint8Array, as: number, ae: number, b: Uint8Array, bs: number, be: number): number {
  const n = Math.min(ae - as, be - bs);
  for (let k = 0; k < n; k++) {
    const d = a[as + k]! - b[bs + k]!;
    if (d !== 0) return d;
  }
  return ae - as - (be - bs);
}

/** A chunk's bound as stored: its bytes and whether it is the exact min or max. */
export interface Bound {
  readonly bytes: Uint8Array;
  readonly exact: boolean;
}

/**
 * Min and max of the values added since the last reset, for a `string` or `binary` column (`truncate`
 * true: bounds truncated to STATS_PREFIX as above) or a fixed-length one (`truncate` false: `width`-byte
 * values kept whole).
 *
 * `add` only notes where a new min or max is (a column of increasing values has a new max in every row);
 * `settle` copies them into the tracker's own buffers. The bytes given to `add` must stay unchanged until
 * the next `settle`, which the writer calls once per run of values it encodes.
 */
export class ByteBounds {
  private readonly keep: number;
  private readonly min: Uint8Array;
  private readonly max: Uint8Array;
  // The min's and max's prefixes: minSrc[minAt, minAt + minLen), own buffers once settled; length -1: none.
  private minSrc: Uint8Array;
  private minAt = 0;
  private minLen = -1;
  private maxSrc: Uint8Array;
  private maxAt = 0;
  private maxLen = -1;
  /** Whether the max's prefix is longer than STATS_PREFIX and has no shorter upper bound. */
  private maxStuck = false;
  /** With maxStuck, the whole max when it is longer than the prefix kept; else null. */
  private maxWhole: Uint8Array | null = null;

  constructor(
    private readonly type: 'string' | 'binary',
    private readonly truncate: boolean,
    width = 0,
  ) {
    this.keep = !truncate ? width : type === 'string' ? 4 * (STATS_PREFIX + 1) : STATS_PREFIX + 1;
    this.min = new Uint8Array(this.keep);
    this.max = new Uint8Array(this.keep);
    this.minSrc = this.min;
    this.maxSrc = this.max;
  }

  /** Adds the value src[s, e). */
  add(src: Uint8Array, s: number, e: number): void {
    let pe = e;
    if (e - s > this.keep) {
      pe = s + this.keep;
      // A string prefix ends before a character (src[pe] is not a continuation byte).
      if (this.type === 'string') while (pe > s && (src[pe]! & 0xc0) === 0x80) pe--;
    }
    // The max first: a value at or above it cannot be below the min (min <= max), so increasing or repeated
    // values (ids, header keys) need one comparison, not two.
    const c = this.maxLen < 0 ? 1 : compareBytes(src, s, pe, this.maxSrc, this.maxAt, this.maxAt + this.maxLen);
    if (this.minLen < 0 || (c < 0 && compareBytes(src, s, pe, this.minSrc, this.minAt, this.minAt + this.minLen) < 0)) {
      this.minSrc = src;
      this.minAt = s;
      this.minLen = pe - s;
    }
    if (c > 0) {
      this.maxSrc = src;
      this.maxAt = s;
      this.maxLen = pe - s;
      this.maxWhole = null;
      // Only a prefix starting with 0xff (binary) or U+10FFFF (0xf4, string) can lack a shorter upper bound.
      const first = src[s];
      this.maxStuck = this.truncate && pe - s > STATS_PREFIX && (first === 0xff || first === 0xf4) && truncateUpperBound(this.type, src.subarray(s, pe), STATS_PREFIX) === undefined;
    }
    // Same prefix as the max: only a stuck max needs the rest of the value.
    if (c >= 0 && this.maxStuck && pe < e && (this.maxWhole === null || compareBytes(src, s, e, this.maxWhole, 0, this.maxWhole.length) > 0)) this.maxWhole = Uint8Array.prototype.slice.call(src, s, e); // a copy even of a Buffer
  }

  /** Copies the min and max noted since the last call into the tracker's buffers. */
  settle(): void {
    if (this.minSrc !== this.min) {
      this.min.set(this.minSrc.subarray(this.minAt, this.minAt + this.minLen));
      this.minSrc = this.min;
      this.minAt = 0;
    }
    if (this.maxSrc !== this.max) {
      this.max.set(this.maxSrc.subarray(this.maxAt, this.maxAt + this.maxLen));
      this.maxSrc = this.max;
      this.maxAt = 0;
    }
  }

  /** The chunk's min, or undefined before any value. */
  lower(): Bound | undefined {
    this.settle();
    if (this.minLen < 0) return undefined;
    const min = this.min.slice(0, this.minLen);
    if (!this.truncate || min.length <= STATS_PREFIX) return { bytes: min, exact: true };
    return { bytes: truncateLowerBound(this.type, min, STATS_PREFIX), exact: false };
  }

  /** The chunk's max, or undefined before any value. */
  upper(): Bound | undefined {
    this.settle();
    if (this.maxLen < 0) return undefined;
    const max = this.max.slice(0, this.maxLen);
    if (!this.truncate || max.length <= STATS_PREFIX) return { bytes: max, exact: true };
    if (!this.maxStuck) return { bytes: truncateUpperBound(this.type, max, STATS_PREFIX)!, exact: false };
    // No shorter upper bound: the whole max, exact.
    return { bytes: this.maxWhole ?? max, exact: true };
  }

  reset(): void {
    this.minSrc = this.min;
    this.minAt = 0;
    this.minLen = -1;
    this.maxSrc = this.max;
    this.maxAt = 0;
    this.maxLen = -1;
    this.maxStuck = false;
    this.maxWhole = null;
  }
}
