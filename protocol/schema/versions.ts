/**
 * Kafka version ranges: `'none'`, `'N'`, `'N-M'` and `'N+'`. Parsed once and cached; membership tests are
 * two comparisons.
 */
import type { VersionRange } from './types.js';

/** An inclusive range of versions; `max` is Infinity for `'N+'`. An empty range has min > max. */
export interface VersionSpan {
  readonly min: number;
  readonly max: number;
}

const NONE: VersionSpan = Object.freeze({ min: 0, max: -1 });
const cache = new Map<string, VersionSpan>();
const PATTERN = /^(\d+)(?:(\+)|-(\d+))?$/;

/** Parse a range; throws a plain Error for a malformed declaration (a programming error, not wire data). */
export function parseVersionRange(range: VersionRange): VersionSpan {
  const cached = cache.get(range);
  if (cached !== undefined) return cached;
  let span: VersionSpan;
  const trimmed = range.trim();
  if (trimmed === 'none' || trimmed === '') {
    span = NONE;
  } else {
    const m = PATTERN.exec(trimmed);
    if (m === null) throw new Error(`invalid version range '${range}': use 'none', 'N', 'N-M' or 'N+'`);
    const min = Number(m[1]);
    const max = m[2] === '+' ? Infinity : m[3] !== undefined ? Number(m[3]) : min;
    if (max < min) throw new Error(`invalid version range '${range}': the upper bound is below the lower bound`);
    span = Object.freeze({ min, max });
  }
  cache.set(range, span);
  return span;
}

/** True if `version` lies in `range`. An undefined range means 'none'. */
export function inVersionRange(range: VersionRange | undefined, version: number): boolean {
  if (range === undefined) return false;
  const span = parseVersionRange(range);
  return version >= span.min && version <= span.max;
}

export function isEmptyRange(range: VersionRange | undefined): boolean {
  if (range === undefined) return true;
  const span = parseVersionRange(range);
  return span.min > span.max;
}

/** Every version of a bounded range, ascending. Throws for an open-ended range. */
export function listVersions(range: VersionRange): number[] {
  const span = parseVersionRange(range);
  if (span.max === Infinity) throw new Error(`version range '${range}' is open-ended; validVersions must be bounded ('N-M')`);
  const out: number[] = [];
  for (let v = span.min; v <= span.max; v++) out.push(v);
  return out;
}
