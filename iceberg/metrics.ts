/**
 * Column metrics for data files (Iceberg spec, "Manifests": column_sizes, value_counts, null_value_counts,
 * nan_value_counts, lower_bounds, upper_bounds, keyed by field id) and the binary single-value serialization
 * of Appendix D that the bounds use. Metrics come from the Parquet footer where it is exact (sizes, counts,
 * integer/string/binary/decimal statistics) and from the Arrow data otherwise (NaN counts, float bounds).
 * String and binary bounds follow Iceberg's default metrics mode `truncate(16)`.
 */
import * as arrow from 'apache-arrow';
import type { NestedField, StructType, Type } from './schema.js';
import { parsePrimitiveType, type ParsedPrimitive } from './types.js';
import { PhysicalType, type ParquetFooter } from './parquet/footer.js';

/** A value as Appendix D serializes it: ints/dates/floats as number, longs/times/timestamps/decimals (unscaled) as bigint. */
export type SingleValue = boolean | number | bigint | string | Uint8Array;

export class MetricsError extends Error {
  readonly code = 'UNSUPPORTED_BOUND_TYPE';
  constructor(message: string) {
    super(message);
    this.name = 'MetricsError';
  }
}

export interface DataFileMetrics {
  readonly record_count: bigint;
  readonly file_size_in_bytes: bigint;
  readonly column_sizes: Map<number, bigint>;
  readonly value_counts: Map<number, bigint>;
  readonly null_value_counts: Map<number, bigint>;
  readonly nan_value_counts: Map<number, bigint>;
  readonly lower_bounds: Map<number, Uint8Array>;
  readonly upper_bounds: Map<number, Uint8Array>;
}

export const DEFAULT_TRUNCATE_LENGTH = 16;

const utf8 = new TextEncoder();
const utf8d = new TextDecoder('utf-8', { fatal: true });

// ---------------------------------------------------------------------------------------------------
// Appendix D: binary single-value serialization

function parse(type: string | ParsedPrimitive): ParsedPrimitive {
  return typeof type === 'string' ? parsePrimitiveType(type) : type;
}

function le(size: 4 | 8, write: (v: DataView) => void): Uint8Array {
  const out = new Uint8Array(size);
  write(new DataView(out.buffer));
  return out;
}

/** Minimal big-endian two's complement bytes of an unscaled decimal value. */
export function decimalToBytes(unscaled: bigint): Uint8Array {
  const bytes: number[] = [];
  let v = unscaled;
  for (;;) {
    const b = Number(v & 0xffn);
    bytes.unshift(b);
    v >>= 8n;
    // Stop when the remaining value is pure sign extension of the byte just written.
    if ((v === 0n && (b & 0x80) === 0) || (v === -1n && (b & 0x80) !== 0)) break;
  }
  return Uint8Array.from(bytes);
}

/** The unscaled value of big-endian two's complement bytes (any length). */
export function decimalFromBytes(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  if (((bytes[0] as number) & 0x80) !== 0) v -= 1n << BigInt(bytes.length * 8);
  return v;
}

function uuidBytes(v: SingleValue): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (typeof v === 'string') {
    const hex = v.replace(/-/g, '');
    if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new MetricsError(`'${v}' is not a UUID`);
    return Uint8Array.from(hex.match(/../g) as string[], (h) => parseInt(h, 16));
  }
  throw new MetricsError('A uuid value must be 16 bytes or its string form');
}

/** Serializes a value of a primitive type as Appendix D says. */
export function toSingleValue(type: string | ParsedPrimitive, value: SingleValue): Uint8Array {
  const t = parse(type);
  switch (t.kind) {
    case 'boolean':
      return Uint8Array.of(value ? 1 : 0);
    case 'int':
    case 'date':
      return le(4, (d) => d.setInt32(0, Number(value), true));
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return le(8, (d) => d.setBigInt64(0, BigInt(value as number | bigint), true));
    case 'float':
      return le(4, (d) => d.setFloat32(0, Number(value), true));
    case 'double':
      return le(8, (d) => d.setFloat64(0, Number(value), true));
    case 'string':
      return utf8.encode(String(value));
    case 'uuid':
      return uuidBytes(value);
    case 'fixed':
    case 'binary':
      if (!(value instanceof Uint8Array)) throw new MetricsError(`A ${t.kind} value must be a Uint8Array`);
      return value;
    case 'decimal':
      return decimalToBytes(BigInt(value as number | bigint));
    default:
      throw new MetricsError(`Type ${t.kind} has no binary single-value serialization (Appendix D)`);
  }
}

/** Reads a value serialized by `toSingleValue`. */
export function fromSingleValue(type: string | ParsedPrimitive, bytes: Uint8Array): SingleValue {
  const t = parse(type);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const need = (n: number): void => {
    if (bytes.length !== n) throw new MetricsError(`A ${t.kind} bound must be ${n} bytes, got ${bytes.length}`);
  };
  switch (t.kind) {
    case 'boolean':
      need(1);
      return bytes[0] !== 0;
    case 'int':
    case 'date':
      need(4);
      return dv.getInt32(0, true);
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      need(8);
      return dv.getBigInt64(0, true);
    case 'float':
      need(4);
      return dv.getFloat32(0, true);
    case 'double':
      need(8);
      return dv.getFloat64(0, true);
    case 'string':
      return utf8d.decode(bytes);
    case 'uuid':
      need(16);
      return bytes;
    case 'fixed':
    case 'binary':
      return bytes;
    case 'decimal':
      return decimalFromBytes(bytes);
    default:
      throw new MetricsError(`Type ${t.kind} has no binary single-value serialization (Appendix D)`);
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** Orders two serialized values of one type the way Iceberg orders the values themselves. */
export function compareSingleValues(type: string | ParsedPrimitive, a: Uint8Array, b: Uint8Array): number {
  const t = parse(type);
  // UTF-8 byte order is code point order; binary, fixed and uuid compare as unsigned bytes.
  if (t.kind === 'string' || t.kind === 'binary' || t.kind === 'fixed' || t.kind === 'uuid') return compareBytes(a, b);
  const x = fromSingleValue(t, a);
  const y = fromSingleValue(t, b);
  if (typeof x === 'number' && typeof y === 'number') {
    // -0.0 precedes +0.0 (IEEE 754 totalOrder), as the spec asks of float bounds.
    if (x === 0 && y === 0) return (Object.is(x, -0) ? 0 : 1) - (Object.is(y, -0) ? 0 : 1);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof x === 'bigint' && typeof y === 'bigint') return x < y ? -1 : x > y ? 1 : 0;
  if (typeof x === 'boolean' && typeof y === 'boolean') return Number(x) - Number(y);
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// truncate(L) for string and binary bounds

/** A lower bound for values of `type` that is at most `length` characters (string) or bytes (binary). */
export function truncateLowerBound(type: string | ParsedPrimitive, bound: Uint8Array, length = DEFAULT_TRUNCATE_LENGTH): Uint8Array {
  const t = parse(type);
  if (t.kind === 'binary') return bound.length <= length ? bound : bound.slice(0, length);
  if (t.kind === 'string') {
    const cps = [...utf8d.decode(bound)];
    return cps.length <= length ? bound : utf8.encode(cps.slice(0, length).join(''));
  }
  return bound;
}

/**
 * An upper bound of at most `length` characters/bytes that is >= `bound`: the prefix with its last
 * incrementable character (or byte) increased by one. Undefined when no such bound exists (then omit it).
 */
export function truncateUpperBound(type: string | ParsedPrimitive, bound: Uint8Array, length = DEFAULT_TRUNCATE_LENGTH): Uint8Array | undefined {
  const t = parse(type);
  if (t.kind === 'binary') {
    if (bound.length <= length) return bound;
    // A copy: Buffer's slice would be a view, and the increment below would change the caller's bytes.
    const out = Uint8Array.prototype.slice.call(bound, 0, length);
    for (let i = out.length - 1; i >= 0; i--) {
      if ((out[i] as number) < 0xff) {
        out[i] = (out[i] as number) + 1;
        return out.slice(0, i + 1);
      }
    }
    return undefined;
  }
  if (t.kind === 'string') {
    const cps = [...utf8d.decode(bound)].map((c) => c.codePointAt(0) as number);
    if (cps.length <= length) return bound;
    const kept = cps.slice(0, length);
    for (let i = kept.length - 1; i >= 0; i--) {
      let next = (kept[i] as number) + 1;
      if (next >= 0xd800 && next <= 0xdfff) next = 0xe000; // skip surrogates: not valid scalar values
      if (next <= 0x10ffff) {
        kept[i] = next;
        return utf8.encode(String.fromCodePoint(...kept.slice(0, i + 1)));
      }
    }
    return undefined;
  }
  return bound;
}

// ---------------------------------------------------------------------------------------------------
// Metrics from a Parquet footer (+ Arrow data for floats)

interface LeafInfo {
  readonly type: ParsedPrimitive;
  /** Inside a list or map: bounds and NaN counts are not kept (as Iceberg's reference writer does). */
  readonly repeated: boolean;
}

/** Every primitive field of a schema by id, with whether it sits in a list or map. */
export function primitiveFieldsById(schema: StructType): Map<number, LeafInfo> {
  const out = new Map<number, LeafInfo>();
  const visit = (id: number, type: Type, repeated: boolean): void => {
    if (typeof type === 'string') {
      out.set(id, { type: parsePrimitiveType(type), repeated });
      return;
    }
    if (type.type === 'struct') for (const f of type.fields) visit(f.id, f.type, repeated);
    else if (type.type === 'list') visit(type['element-id'], type.element, true);
    else {
      visit(type['key-id'], type.key, true);
      visit(type['value-id'], type.value, true);
    }
  };
  for (const f of schema.fields) visit(f.id, f.type, false);
  return out;
}

/** Float/double statistics gathered from Arrow data, keyed by field id. */
export interface FloatStats {
  nanCount: bigint;
  min?: number;
  max?: number;
}

/**
 * Scans the float and double columns (outside lists and maps) of record batches for NaN counts and
 * bounds. A value under a null struct counts as null.
 */
export class FloatStatsCollector {
  readonly stats = new Map<number, FloatStats>();
  private readonly fields: readonly NestedField[];

  constructor(schema: StructType) {
    this.fields = schema.fields;
  }

  add(batch: arrow.RecordBatch): void {
    const all = (): boolean => true;
    for (const f of this.fields) {
      const col = batch.getChild(f.name);
      if (col) for (const d of col.data) this.visit(f, d, all);
    }
  }

  private visit(field: NestedField, data: arrow.Data, parentValid: (i: number) => boolean): void {
    const t = field.type;
    if (typeof t !== 'string') {
      if (t.type !== 'struct') return;
      const vec = arrow.makeVector(data);
      const valid = (i: number): boolean => parentValid(i) && vec.isValid(i);
      t.fields.forEach((child, idx) => {
        const cd = data.children[idx];
        if (cd) this.visit(child, cd, valid);
      });
      return;
    }
    if (t !== 'float' && t !== 'double') return;
    const vec = arrow.makeVector(data) as arrow.Vector<arrow.Float>;
    let s = this.stats.get(field.id);
    if (!s) this.stats.set(field.id, (s = { nanCount: 0n }));
    for (let i = 0; i < vec.length; i++) {
      if (!parentValid(i) || !vec.isValid(i)) continue;
      const v = vec.get(i) as number;
      if (Number.isNaN(v)) {
        s.nanCount++;
        continue;
      }
      if (s.min === undefined || v < s.min || (v === 0 && s.min === 0 && Object.is(v, -0))) s.min = v;
      if (s.max === undefined || v > s.max || (v === 0 && s.max === 0 && Object.is(s.max, -0))) s.max = v;
    }
  }
}

export interface ParquetMetricsOptions {
  /** truncate(L) for string and binary bounds; default 16. */
  readonly truncateLength?: number;
  /** Float/double statistics from the data (NaN counts and bounds). Without them floats get no bounds. */
  readonly floatStats?: ReadonlyMap<number, FloatStats>;
}

/** Converts a Parquet min/max statistic of a leaf to Appendix D bytes, or undefined when it can't be trusted. */
function statToSingleValue(t: ParsedPrimitive, physical: PhysicalType, raw: Uint8Array): Uint8Array | undefined {
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  switch (t.kind) {
    case 'boolean':
      return raw.length === 1 ? Uint8Array.of(raw[0] ? 1 : 0) : undefined;
    case 'int':
    case 'date':
      return physical === PhysicalType.INT32 && raw.length === 4 ? new Uint8Array(raw) : undefined;
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (physical === PhysicalType.INT64 && raw.length === 8) return new Uint8Array(raw);
      if (physical === PhysicalType.INT32 && raw.length === 4) return toSingleValue(t, BigInt(dv.getInt32(0, true)));
      return undefined;
    case 'decimal':
      if (physical === PhysicalType.INT32 && raw.length === 4) return decimalToBytes(BigInt(dv.getInt32(0, true)));
      if (physical === PhysicalType.INT64 && raw.length === 8) return decimalToBytes(dv.getBigInt64(0, true));
      if (physical === PhysicalType.FIXED_LEN_BYTE_ARRAY || physical === PhysicalType.BYTE_ARRAY) return decimalToBytes(decimalFromBytes(raw));
      return undefined;
    case 'string':
    case 'binary':
      return physical === PhysicalType.BYTE_ARRAY ? new Uint8Array(raw) : undefined;
    case 'uuid':
    case 'fixed':
      return physical === PhysicalType.FIXED_LEN_BYTE_ARRAY ? new Uint8Array(raw) : undefined;
    default:
      return undefined; // floats come from the data; others have no bounds
  }
}

function add(map: Map<number, bigint>, id: number, v: bigint): void {
  map.set(id, (map.get(id) ?? 0n) + v);
}

/** Data file metrics for a written Parquet file, keyed by Iceberg field id. */
export function parquetMetrics(schema: StructType, footer: ParquetFooter, fileSize: number | bigint, options: ParquetMetricsOptions = {}): DataFileMetrics {
  const truncate = options.truncateLength ?? DEFAULT_TRUNCATE_LENGTH;
  const fields = primitiveFieldsById(schema);
  const m: DataFileMetrics = {
    record_count: footer.numRows,
    file_size_in_bytes: BigInt(fileSize),
    column_sizes: new Map(),
    value_counts: new Map(),
    null_value_counts: new Map(),
    nan_value_counts: new Map(),
    lower_bounds: new Map(),
    upper_bounds: new Map(),
  };
  // Loops and a module-level helper, not per-call closures: this runs once per data file, and V8 may drop a
  // dead closure's optimized code at a full GC, so per-call closures were compiled again and again.
  for (let col = 0; col < footer.leaves.length; col++) {
    const id = footer.leaves[col]!.fieldId;
    if (id === undefined) continue;
    const info = fields.get(id);
    if (!info) continue;
    let lower: Uint8Array | undefined;
    let upper: Uint8Array | undefined;
    let boundsOk = !info.repeated;
    let nullsKnown = true;
    for (const rg of footer.rowGroups) {
      const chunk = rg.columns[col];
      if (!chunk) continue;
      add(m.column_sizes, id, chunk.totalCompressedSize);
      add(m.value_counts, id, chunk.numValues);
      const st = chunk.statistics;
      if (st?.nullCount !== undefined) add(m.null_value_counts, id, st.nullCount);
      else nullsKnown = false;
      if (!boundsOk) continue;
      const nonNull = chunk.numValues - (st?.nullCount ?? 0n);
      if (nonNull === 0n && st?.nullCount !== undefined) continue; // an all-null chunk bounds nothing
      const lo = st?.minValue ? statToSingleValue(info.type, chunk.physicalType, st.minValue) : undefined;
      const hi = st?.maxValue ? statToSingleValue(info.type, chunk.physicalType, st.maxValue) : undefined;
      if (!lo || !hi) {
        boundsOk = false;
        continue;
      }
      if (!lower || compareSingleValues(info.type, lo, lower) < 0) lower = lo;
      if (!upper || compareSingleValues(info.type, hi, upper) > 0) upper = hi;
    }
    if (!nullsKnown) m.null_value_counts.delete(id);
    if (boundsOk && lower && upper) {
      m.lower_bounds.set(id, truncateLowerBound(info.type, lower, truncate));
      const up = truncateUpperBound(info.type, upper, truncate);
      if (up) m.upper_bounds.set(id, up);
    }
  }
  for (const [id, s] of options.floatStats ?? []) {
    const info = fields.get(id);
    if (!info || info.repeated) continue;
    m.nan_value_counts.set(id, s.nanCount);
    if (s.min !== undefined && s.max !== undefined) {
      m.lower_bounds.set(id, toSingleValue(info.type, s.min));
      m.upper_bounds.set(id, toSingleValue(info.type, s.max));
    }
  }
  return m;
}
