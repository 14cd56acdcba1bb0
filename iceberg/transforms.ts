/**
 * Iceberg partition transforms (spec, "Partition Transforms" and Appendix B): their representation, parsing
 * and printing in the spec's string form (`identity`, `bucket[16]`, `truncate[10]`, `year`, `month`, `day`,
 * `hour`, `void`), result types, the 32-bit Murmur3 hash, and applying a transform to a source value.
 *
 * Source values are given in the representation the data layer uses:
 * - int, date (days), time (µs), timestamp/timestamptz (µs), timestamp_ns/timestamptz_ns (ns), long:
 *   `number` (safe integer) or `bigint`
 * - decimal: the unscaled value as `bigint` (the scale comes from the type)
 * - string: `string`; binary and fixed: `Uint8Array`; uuid: `string` (`'f79c3e09-...'`) or 16 bytes
 * - boolean: `boolean`; float/double: `number`
 * `null`/`undefined` always maps to `null`.
 */
import { IcebergError, formatPrimitiveType, parsePrimitiveType, type ParsedPrimitive } from './types.js';

/** A parsed transform. The spec's JSON keeps the string form (see `transformToString`). */
export type Transform =
  | { readonly kind: 'identity' }
  | { readonly kind: 'bucket'; readonly numBuckets: number }
  | { readonly kind: 'truncate'; readonly width: number }
  | { readonly kind: 'year' }
  | { readonly kind: 'month' }
  | { readonly kind: 'day' }
  | { readonly kind: 'hour' }
  | { readonly kind: 'void' }
  /** A transform this implementation does not know. Readers ignore it (spec v3); writers must not use it. */
  | { readonly kind: 'unknown'; readonly name: string };

/** A transform in the spec's JSON spelling, e.g. `'bucket[16]'`. */
export type TransformString = string;

export type TransformValue = null | boolean | number | bigint | string | Uint8Array;

const PARAM = /^(bucket|truncate)\[\s*(-?\d+)\s*\]$/;
const NAME = /^[a-z][a-z0-9_]*$/;

/**
 * Parses a transform string. Known names with bad parameters (`bucket[0]`, `truncate[x]`, `bucket`) throw
 * IcebergError 'INVALID_TRANSFORM'; a well-formed unknown name (`zorder`) parses to `{ kind: 'unknown' }`.
 */
export function parseTransform(text: string): Transform {
  const s = text.trim();
  switch (s) {
    case 'identity':
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
    case 'void':
      return { kind: s };
  }
  const m = PARAM.exec(s);
  if (m) {
    const n = Number(m[2]);
    if (!Number.isSafeInteger(n) || n < 1 || n > 2147483647) {
      throw new IcebergError('INVALID_TRANSFORM', `Invalid transform '${text}': the ${m[1] === 'bucket' ? 'bucket count' : 'width'} must be a positive 32-bit integer`);
    }
    return m[1] === 'bucket' ? { kind: 'bucket', numBuckets: n } : { kind: 'truncate', width: n };
  }
  if (/^(bucket|truncate)\b/.test(s)) {
    throw new IcebergError('INVALID_TRANSFORM', `Invalid transform '${text}': write it as ${s.startsWith('bucket') ? 'bucket[N]' : 'truncate[W]'} with a positive integer`);
  }
  if (!NAME.test(s) || /^(identity|year|month|day|hour|void)/.test(s)) {
    throw new IcebergError(
      'INVALID_TRANSFORM',
      `Invalid transform '${text}': expected identity, bucket[N], truncate[W], year, month, day, hour or void`,
    );
  }
  return { kind: 'unknown', name: s };
}

export function transformToString(t: Transform): TransformString {
  switch (t.kind) {
    case 'bucket':
      return `bucket[${t.numBuckets}]`;
    case 'truncate':
      return `truncate[${t.width}]`;
    case 'unknown':
      return t.name;
    default:
      return t.kind;
  }
}

const BUCKET_SOURCES = new Set(['int', 'long', 'decimal', 'date', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns', 'string', 'uuid', 'fixed', 'binary']);
const TRUNCATE_SOURCES = new Set(['int', 'long', 'decimal', 'string', 'binary']);
const DATE_SOURCES = new Set(['date', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);
const HOUR_SOURCES = new Set(['timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);

function asParsed(sourceType: string | ParsedPrimitive): ParsedPrimitive {
  return typeof sourceType === 'string' ? parsePrimitiveType(sourceType) : sourceType;
}

/** Whether the transform can be applied to a column of this primitive type. */
export function canTransform(t: Transform, sourceType: string | ParsedPrimitive): boolean {
  const k = asParsed(sourceType).kind;
  switch (t.kind) {
    case 'identity':
      return k !== 'geometry' && k !== 'geography' && k !== 'variant';
    case 'bucket':
      return BUCKET_SOURCES.has(k);
    case 'truncate':
      return TRUNCATE_SOURCES.has(k);
    case 'year':
    case 'month':
    case 'day':
      return DATE_SOURCES.has(k);
    case 'hour':
      return HOUR_SOURCES.has(k);
    case 'void':
    case 'unknown':
      return true;
  }
}

/** The partition value's type (spec table "Partition Transforms"); throws if the transform can't apply. */
export function resultType(t: Transform, sourceType: string | ParsedPrimitive): string {
  const p = asParsed(sourceType);
  if (!canTransform(t, p)) {
    throw new IcebergError('INVALID_TRANSFORM', `Transform '${transformToString(t)}' cannot be applied to a ${formatPrimitiveType(p)} column`);
  }
  switch (t.kind) {
    case 'identity':
    case 'truncate':
    case 'void':
      return formatPrimitiveType(p);
    case 'bucket':
    case 'year':
    case 'month':
    case 'hour':
      return 'int';
    case 'day':
      return 'date';
    case 'unknown':
      // The reference implementation treats unknown transforms' results as strings for display.
      return 'string';
  }
}

/** Whether two transforms order values the same way, so one can satisfy a sort by the other. */
export function preservesOrder(t: Transform): boolean {
  return t.kind === 'identity' || t.kind === 'truncate' || t.kind === 'year' || t.kind === 'month' || t.kind === 'day' || t.kind === 'hour';
}

// ---------------------------------------------------------------------------------------------------------
// Murmur3 x86 32-bit, seed 0 (spec Appendix B).

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function mixK1(k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, C2);
}

function mixH1(h: number, k: number): number {
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function fmix(h: number, length: number): number {
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** Murmur3 x86_32 of the bytes, as a signed 32-bit integer. */
export function murmur3Bytes(bytes: Uint8Array): number {
  let h = 0;
  const n = bytes.length;
  const blocks = n & ~3;
  for (let i = 0; i < blocks; i += 4) {
    const k = (bytes[i] ?? 0) | ((bytes[i + 1] ?? 0) << 8) | ((bytes[i + 2] ?? 0) << 16) | ((bytes[i + 3] ?? 0) << 24);
    h = mixH1(h, mixK1(k));
  }
  const tail = n & 3;
  if (tail > 0) {
    let k = bytes[blocks] ?? 0;
    if (tail > 1) k ^= (bytes[blocks + 1] ?? 0) << 8;
    if (tail > 2) k ^= (bytes[blocks + 2] ?? 0) << 16;
    h ^= mixK1(k);
  }
  return fmix(h, n);
}

/**
 * hashLong: Murmur3 of the 8 little-endian bytes of a 64-bit integer. The spec's `hashInt` is this too: the
 * reference implementation hashes every integer as a long, which is what its test vectors (date
 * 2017-11-16 -> -653330422, true -> 1392991556) encode, and keeps buckets stable across int->long.
 */
export function murmur3Long(v: number | bigint): number {
  const b = BigInt.asUintN(64, BigInt(v));
  const lo = Number(b & 0xffffffffn) | 0;
  const hi = Number(b >> 32n) | 0;
  return fmix(mixH1(mixH1(0, mixK1(lo)), mixK1(hi)), 8);
}

/** Minimal two's-complement big-endian bytes of an integer (decimal hashing and single-value encoding). */
export function minBigEndian(v: bigint): Uint8Array {
  const bytes: number[] = [];
  let x = v;
  for (;;) {
    bytes.unshift(Number(BigInt.asUintN(8, x)));
    const rest = x >> 8n;
    const signBit = (bytes[0] ?? 0) & 0x80;
    if ((rest === 0n && signBit === 0) || (rest === -1n && signBit !== 0)) break;
    x = rest;
  }
  return Uint8Array.from(bytes);
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function uuidToBytes(uuid: string): Uint8Array {
  if (!UUID.test(uuid)) throw new IcebergError('INVALID_TRANSFORM', `'${uuid}' is not a UUID`);
  return Uint8Array.from(Buffer.from(uuid.replaceAll('-', ''), 'hex'));
}

function integer(v: TransformValue, type: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw new IcebergError('INVALID_TRANSFORM', `A ${type} value must be an integer number or bigint, got ${typeof v}`);
}

function bytesOf(v: TransformValue, type: string): Uint8Array {
  if (v instanceof Uint8Array) return v;
  throw new IcebergError('INVALID_TRANSFORM', `A ${type} value must be a Uint8Array, got ${typeof v}`);
}

function stringOf(v: TransformValue, type: string): string {
  if (typeof v === 'string') return v;
  throw new IcebergError('INVALID_TRANSFORM', `A ${type} value must be a string, got ${typeof v}`);
}

const floorDiv = (a: bigint, b: bigint): bigint => {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
};

/** Microseconds for the hash of a (ns or µs) timestamp: nanoseconds are floored to µs first (note [3]). */
function micros(p: ParsedPrimitive, v: TransformValue): bigint {
  const x = integer(v, p.kind);
  return p.kind === 'timestamp_ns' || p.kind === 'timestamptz_ns' ? floorDiv(x, 1000n) : x;
}

/** The spec's 32-bit hash of a value of the given type (Appendix B). */
export function hashValue(sourceType: string | ParsedPrimitive, v: Exclude<TransformValue, null>): number {
  const p = asParsed(sourceType);
  switch (p.kind) {
    case 'int':
    case 'long':
    case 'time':
      return murmur3Long(integer(v, p.kind));
    case 'date':
      return murmur3Long(integer(v, p.kind));
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return murmur3Long(micros(p, v));
    case 'decimal':
      return murmur3Bytes(minBigEndian(integer(v, p.kind)));
    case 'string':
      return murmur3Bytes(Buffer.from(stringOf(v, p.kind), 'utf8'));
    case 'uuid':
      return murmur3Bytes(typeof v === 'string' ? uuidToBytes(v) : bytesOf(v, p.kind));
    case 'fixed':
    case 'binary':
      return murmur3Bytes(bytesOf(v, p.kind));
    case 'boolean':
      return murmur3Long(v === true ? 1 : 0);
    case 'float':
    case 'double': {
      if (typeof v !== 'number') throw new IcebergError('INVALID_TRANSFORM', `A ${p.kind} value must be a number`);
      const d = Number.isNaN(v) ? NaN : v === 0 ? 0 : v;
      const view = new DataView(new ArrayBuffer(8));
      view.setFloat64(0, d);
      const bits = Number.isNaN(d) ? 0x7ff8000000000000n : view.getBigInt64(0);
      return murmur3Long(bits);
    }
    default:
      throw new IcebergError('INVALID_TRANSFORM', `The spec defines no 32-bit hash for ${formatPrimitiveType(p)}`);
  }
}

/** `bucket_N(x) = (murmur3(x) & Integer.MAX_VALUE) % N`. */
export function bucketOf(sourceType: string | ParsedPrimitive, v: Exclude<TransformValue, null>, numBuckets: number): number {
  return (hashValue(sourceType, v) & 0x7fffffff) % numBuckets;
}

/** Truncates a string to at most `length` code points (never splitting a surrogate pair). */
function truncateString(s: string, length: number): string {
  let out = '';
  let n = 0;
  for (const cp of s) {
    if (n++ === length) break;
    out += cp;
  }
  return out;
}

const US_PER_HOUR = 3_600_000_000n;
const US_PER_DAY = 86_400_000_000n;

function daysOf(p: ParsedPrimitive, v: TransformValue): bigint {
  if (p.kind === 'date') return integer(v, p.kind);
  return floorDiv(micros(p, v), US_PER_DAY);
}

/** Civil year and month (1-12) of a day count since 1970-01-01 (proleptic Gregorian, like java.time). */
function yearMonthOfDays(days: number): { year: number; month: number } {
  const d = new Date(days * 86_400_000);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1 };
}

/**
 * Applies a transform to one value of the source type. Results: identity/truncate -> the source
 * representation; bucket/year/month/hour -> `number` (int); day -> `number` (days since epoch, a date).
 * void and unknown transforms yield `null`.
 */
export function applyTransform(t: Transform, sourceType: string | ParsedPrimitive, v: TransformValue | undefined): TransformValue {
  if (v === null || v === undefined) return null;
  const p = asParsed(sourceType);
  if (!canTransform(t, p)) resultType(t, p);
  switch (t.kind) {
    case 'identity':
      return v;
    case 'void':
    case 'unknown':
      return null;
    case 'bucket':
      return bucketOf(p, v, t.numBuckets);
    case 'truncate': {
      const w = BigInt(t.width);
      switch (p.kind) {
        case 'int':
        case 'long': {
          const x = integer(v, p.kind);
          const r = x - (((x % w) + w) % w);
          return typeof v === 'number' ? Number(r) : r;
        }
        case 'decimal': {
          const x = integer(v, p.kind);
          return x - (((x % w) + w) % w);
        }
        case 'string':
          return truncateString(stringOf(v, p.kind), t.width);
        default:
          return bytesOf(v, p.kind).subarray(0, t.width);
      }
    }
    case 'year':
      return yearMonthOfDays(Number(daysOf(p, v))).year - 1970;
    case 'month': {
      const { year, month } = yearMonthOfDays(Number(daysOf(p, v)));
      return (year - 1970) * 12 + (month - 1);
    }
    case 'day':
      return Number(daysOf(p, v));
    case 'hour':
      return Number(floorDiv(micros(p, v), US_PER_HOUR));
  }
}
