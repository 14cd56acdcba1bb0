/**
 * A Parquet writer in TypeScript for Arrow record batches shaped by an Iceberg schema (Iceberg spec,
 * Appendix A), with page compression done natively (`codecs.ts`). It exists because parquet-wasm's built-in
 * zstd is several times slower than libzstd here, which capped segment conversion (bench/RESULTS.md).
 *
 * What it writes (all widely read: parquet-rs, parquet-mr/Trino/Spark, DuckDB, hyparquet):
 * - format version 1 files, DataPage v1 pages, PLAIN values, RLE/bit-packed hybrid levels, no dictionaries;
 * - pages of about `pageBytes` (cut at row boundaries, so a repeated column never splits a record);
 * - every schema element carries its Iceberg field id; lists are `<name>.list.element`, maps
 *   `<name>.key_value.{key,value}` (three-level, the spec's backward-compatible form);
 * - column chunk statistics: null counts, and min/max (type-defined order, with `column_orders`) for
 *   booleans, integers, dates, times, timestamps, strings and binary (64-byte prefixes, marked inexact);
 *   floats get none here: Iceberg takes their bounds from the data (`FloatStatsCollector`).
 *
 * Types it does not write (decimal) make `nativeWriterSupports` false; `writer.ts` then uses parquet-wasm.
 */
import type * as arrow from 'apache-arrow';
import type { NestedField, StructType, Type } from '../schema.js';
import { parsePrimitiveType, type ParsedPrimitive } from '../types.js';
import { truncateLowerBound, truncateUpperBound } from '../metrics.js';
import { CompressionCodec, compressPageInto } from './codecs.js';
import { ParquetError } from './errors.js';
import { CREATED_BY, PhysicalType } from './footer.js';
import { ByteSink, encodeLevels, levelBitWidth } from './levels.js';
import { CompactWriter, TType } from './thrift-writer.js';

const ConvertedType = { UTF8: 0, MAP: 1, LIST: 3, DATE: 6, TIME_MICROS: 8, TIMESTAMP_MICROS: 10 } as const;
const Encoding = { PLAIN: 0, RLE: 3 } as const;
const PAGE_DATA = 0;
const MAGIC = Buffer.from('PAR1', 'latin1');
/** Most rows shredded between two page-size checks. */
const MAX_STEP = 1024;
const REQUIRED = 0;
const OPTIONAL = 1;
const REPEATED = 2;
/** Longest min/max kept for string and binary chunks; longer ones are truncated and marked inexact. */
const STATS_PREFIX = 64;

export interface NativeWriteOptions {
  readonly codec: CompressionCodec;
  readonly rowGroupRows: number;
  /** Uncompressed bytes of values after which a page is closed at the next row; default 1 MiB. */
  readonly pageBytes?: number;
  readonly keyValueMetadata: ReadonlyMap<string, string>;
  readonly createdBy?: string;
  /** Expected file size in bytes: the output buffer starts this large, saving regrowth copies. */
  readonly sizeHint?: number;
}

/** Whether every leaf of `schema` has a native encoding (decimals do not yet). */
export function nativeWriterSupports(schema: StructType): boolean {
  const ok = (t: Type): boolean => {
    if (typeof t !== 'string') {
      if (t.type === 'struct') return t.fields.every((f) => ok(f.type));
      if (t.type === 'list') return ok(t.element);
      return ok(t.key) && ok(t.value);
    }
    try {
      return physicalOf(parsePrimitiveType(t)) !== undefined;
    } catch {
      return false;
    }
  };
  return schema.fields.every((f) => ok(f.type));
}

interface Physical {
  readonly type: PhysicalType;
  readonly typeLength?: number;
  readonly converted?: number;
  /** Writes the logical type union's field (inside SchemaElement field 10). */
  readonly logical?: (w: CompactWriter) => void;
}

function timeUnit(w: CompactWriter, unit: 'MICROS' | 'NANOS'): void {
  w.struct(2).struct(unit === 'MICROS' ? 2 : 3).endStruct().endStruct();
}

function physicalOf(p: ParsedPrimitive): Physical | undefined {
  switch (p.kind) {
    case 'boolean':
      return { type: PhysicalType.BOOLEAN };
    case 'int':
      return { type: PhysicalType.INT32 };
    case 'long':
      return { type: PhysicalType.INT64 };
    case 'float':
      return { type: PhysicalType.FLOAT };
    case 'double':
      return { type: PhysicalType.DOUBLE };
    case 'date':
      return { type: PhysicalType.INT32, converted: ConvertedType.DATE, logical: (w) => w.struct(6).endStruct() };
    case 'time':
      return { type: PhysicalType.INT64, converted: ConvertedType.TIME_MICROS, logical: (w) => (w.struct(7).bool(1, false), timeUnit(w, 'MICROS'), w.endStruct()) };
    case 'timestamp':
      return { type: PhysicalType.INT64, logical: (w) => (w.struct(8).bool(1, false), timeUnit(w, 'MICROS'), w.endStruct()) };
    case 'timestamptz':
      return { type: PhysicalType.INT64, converted: ConvertedType.TIMESTAMP_MICROS, logical: (w) => (w.struct(8).bool(1, true), timeUnit(w, 'MICROS'), w.endStruct()) };
    case 'timestamp_ns':
      return { type: PhysicalType.INT64, logical: (w) => (w.struct(8).bool(1, false), timeUnit(w, 'NANOS'), w.endStruct()) };
    case 'timestamptz_ns':
      return { type: PhysicalType.INT64, logical: (w) => (w.struct(8).bool(1, true), timeUnit(w, 'NANOS'), w.endStruct()) };
    case 'string':
      return { type: PhysicalType.BYTE_ARRAY, converted: ConvertedType.UTF8, logical: (w) => w.struct(1).endStruct() };
    case 'binary':
      return { type: PhysicalType.BYTE_ARRAY };
    case 'uuid':
      return { type: PhysicalType.FIXED_LEN_BYTE_ARRAY, typeLength: 16, logical: (w) => w.struct(14).endStruct() };
    case 'fixed':
      return { type: PhysicalType.FIXED_LEN_BYTE_ARRAY, typeLength: p.length };
    default:
      return undefined;
  }
}

/** Compares a[as, ae) with b[bs, be) as unsigned bytes. */
function compareBytes(a: Uint8Array, as: number, ae: number, b: Uint8Array, bs: number, be: number): number {
  const n = Math.min(ae - as, be - bs);
  for (let k = 0; k < n; k++) {
    const d = a[as + k]! - b[bs + k]!;
    if (d !== 0) return d;
  }
  return ae - as - (be - bs);
}

/** One leaf column: its page being filled, the pages of the current chunk, and the chunk's statistics. */
class Leaf {
  readonly maxDef: number;
  readonly maxRep: number;
  readonly phys: Physical;
  readonly iceberg: ParsedPrimitive;
  readonly path: readonly string[];
  // Page being filled.
  defs = new Uint8Array(1024);
  reps = new Uint8Array(1024);
  entries = 0;
  readonly values = new ByteSink(64 * 1024);
  private boolAcc = 0;
  private boolBits = 0;
  // Chunk (row group) state: its pages, header and compressed body each, back to back.
  readonly chunk = new ByteSink(64 * 1024);
  private readonly levels = new ByteSink(4 * 1024);
  chunkCompressed = 0;
  chunkUncompressed = 0;
  chunkValues = 0;
  nullCount = 0;
  // Statistics: numbers for INT32/INT64 (as hi/lo pairs), bytes for the others.
  private hasMinMax = false;
  private minHi = 0;
  private minLo = 0;
  private maxHi = 0;
  private maxLo = 0;
  private minBytes: Buffer | null = null;
  private maxBytes: Buffer | null = null;
  private sawFalse = false;
  private sawTrue = false;

  constructor(path: readonly string[], iceberg: ParsedPrimitive, maxDef: number, maxRep: number) {
    this.path = path;
    this.iceberg = iceberg;
    this.phys = physicalOf(iceberg)!;
    this.maxDef = maxDef;
    this.maxRep = maxRep;
  }

  private grow(n: number): void {
    if (this.entries + n <= this.defs.length) return;
    const size = Math.max(this.defs.length * 2, this.entries + n);
    const d = new Uint8Array(size);
    d.set(this.defs.subarray(0, this.entries));
    this.defs = d;
    const r = new Uint8Array(size);
    r.set(this.reps.subarray(0, this.entries));
    this.reps = r;
  }

  /** An entry with no value (a null at some level): definition level `def` < maxDef. */
  pushNull(rep: number, def: number): void {
    this.grow(1);
    this.defs[this.entries] = def;
    this.reps[this.entries] = rep;
    this.entries++;
    this.nullCount++;
  }

  /** `n` null entries (def < maxDef) at repetition level 0. */
  pushNulls(n: number, def: number): void {
    this.grow(n);
    this.defs.fill(def, this.entries, this.entries + n);
    this.reps.fill(0, this.entries, this.entries + n);
    this.entries += n;
    this.nullCount += n;
  }

  /** Entry for value `i` of `data`, defined (def = maxDef). */
  pushValue(rep: number, data: arrow.Data, i: number): void {
    this.grow(1);
    this.defs[this.entries] = this.maxDef;
    this.reps[this.entries] = rep;
    this.entries++;
    this.encode(data, i, i + 1);
  }

  /** Values [start, end) of `data`, all defined, at repetition level 0 (rows of a non-repeated column). */
  pushValues(data: arrow.Data, start: number, end: number): void {
    const n = end - start;
    this.grow(n);
    this.defs.fill(this.maxDef, this.entries, this.entries + n);
    this.reps.fill(0, this.entries, this.entries + n);
    this.entries += n;
    this.encode(data, start, end);
  }

  private encode(data: arrow.Data, start: number, end: number): void {
    const v = this.values;
    switch (this.phys.type) {
      case PhysicalType.INT32: {
        const src = data.values as Int32Array;
        v.bytes(new Uint8Array(src.buffer, src.byteOffset, src.byteLength), start * 4, end * 4);
        if (end <= start) return;
        let lo = this.hasMinMax ? this.minLo | 0 : src[start]!;
        let hi = this.hasMinMax ? this.maxLo | 0 : src[start]!;
        for (let k = start; k < end; k++) {
          const x = src[k]!;
          if (x < lo) lo = x;
          else if (x > hi) hi = x;
        }
        this.hasMinMax = true;
        this.minHi = lo >> 31;
        this.minLo = lo >>> 0;
        this.maxHi = hi >> 31;
        this.maxLo = hi >>> 0;
        return;
      }
      case PhysicalType.INT64: {
        const src = data.values as BigInt64Array;
        const words = new Int32Array(src.buffer, src.byteOffset, src.length * 2);
        v.bytes(new Uint8Array(src.buffer, src.byteOffset, src.byteLength), start * 8, end * 8);
        if (end <= start) return;
        // Bounds compared as (signed high word, unsigned low word) pairs: no BigInt per value.
        const seed = !this.hasMinMax;
        let minHi = seed ? words[2 * start + 1]! : this.minHi;
        let minLo = seed ? words[2 * start]! >>> 0 : this.minLo;
        let maxHi = seed ? minHi : this.maxHi;
        let maxLo = seed ? minLo : this.maxLo;
        for (let k = start; k < end; k++) {
          const hi = words[2 * k + 1]!;
          const lo = words[2 * k]! >>> 0;
          if (hi < minHi || (hi === minHi && lo < minLo)) {
            minHi = hi;
            minLo = lo;
          }
          if (hi > maxHi || (hi === maxHi && lo > maxLo)) {
            maxHi = hi;
            maxLo = lo;
          }
        }
        this.hasMinMax = true;
        this.minHi = minHi;
        this.minLo = minLo;
        this.maxHi = maxHi;
        this.maxLo = maxLo;
        return;
      }
      case PhysicalType.FLOAT:
      case PhysicalType.DOUBLE: {
        const src = data.values as Float32Array | Float64Array;
        const w = src.BYTES_PER_ELEMENT;
        v.bytes(new Uint8Array(src.buffer, src.byteOffset, src.byteLength), start * w, end * w);
        return;
      }
      case PhysicalType.BOOLEAN: {
        const bits = data.values as Uint8Array;
        for (let k = start; k < end; k++) {
          const j = data.offset + k;
          const b = (bits[j >> 3]! >> (j & 7)) & 1;
          if (b) this.sawTrue = true;
          else this.sawFalse = true;
          this.boolAcc |= b << this.boolBits;
          if (++this.boolBits === 8) {
            v.byte(this.boolAcc);
            this.boolAcc = 0;
            this.boolBits = 0;
          }
        }
        return;
      }
      case PhysicalType.BYTE_ARRAY: {
        const offs = data.valueOffsets as Int32Array;
        const bytes = data.values as Uint8Array;
        const n = end - start;
        if (n <= 0) return;
        const first = offs[start]!;
        const total = offs[end]! - first;
        // The values are contiguous in Arrow: copy them in one call past room for the n length prefixes,
        // then move each down into place (copyWithin: no view per value) and write its length before it.
        v.ensure(4 * n + total);
        const b = v.buf;
        const base = v.pos;
        b.set(bytes.subarray(first, first + total), base + 4 * n);
        for (let k = start; k < end; k++) {
          const s0 = offs[k]!;
          const e0 = offs[k + 1]!;
          const len = e0 - s0;
          const at = base + 4 * (k - start) + (s0 - first);
          b[at] = len & 0xff;
          b[at + 1] = (len >>> 8) & 0xff;
          b[at + 2] = (len >>> 16) & 0xff;
          b[at + 3] = len >>> 24;
          const from = base + 4 * n + (s0 - first);
          if (from !== at + 4 && len > 0) b.copyWithin(at + 4, from, from + len);
          this.statBytes(bytes, s0, e0);
        }
        v.pos = base + 4 * n + total;
        return;
      }
      case PhysicalType.FIXED_LEN_BYTE_ARRAY: {
        const w = this.phys.typeLength!;
        const bytes = data.values as Uint8Array;
        for (let k = start; k < end; k++) {
          v.bytes(bytes, k * w, (k + 1) * w);
          this.statBytes(bytes, k * w, (k + 1) * w);
        }
        return;
      }
      default:
        throw new ParquetError('UNSUPPORTED_TYPE', `no native encoding for Parquet type ${this.phys.type}`);
    }
  }

  private statBytes(src: Uint8Array, s: number, e: number): void {
    const min = this.minBytes;
    if (min === null || compareBytes(src, s, e, min, 0, min.length) < 0) this.minBytes = Buffer.from(src.subarray(s, e));
    const max = this.maxBytes;
    if (max === null || compareBytes(src, s, e, max, 0, max.length) > 0) this.maxBytes = Buffer.from(src.subarray(s, e));
  }

  /** Closes the page being filled (if it has entries), compressing it into the chunk. */
  closePage(codec: CompressionCodec, scratch: ByteSink): void {
    if (this.entries === 0) return;
    if (this.boolBits > 0) {
      this.values.byte(this.boolAcc);
      this.boolAcc = 0;
      this.boolBits = 0;
    }
    const lv = this.levels;
    lv.reset();
    if (this.maxRep > 0) levelsWithLength(this.reps, this.entries, levelBitWidth(this.maxRep), lv);
    if (this.maxDef > 0) levelsWithLength(this.defs, this.entries, levelBitWidth(this.maxDef), lv);
    const uncompressed = lv.pos + this.values.pos;
    scratch.reset();
    const compressed = compressPageInto(codec, [lv.view(), this.values.view()], scratch);
    const h = new CompactWriter(64)
      .beginStruct()
      .i32(1, PAGE_DATA)
      .i32(2, uncompressed)
      .i32(3, compressed)
      .struct(5)
      .i32(1, this.entries)
      .i32(2, Encoding.PLAIN)
      .i32(3, Encoding.RLE)
      .i32(4, Encoding.RLE)
      .endStruct()
      .endStruct()
      .finish();
    this.chunk.bytes(h, 0, h.length);
    this.chunk.bytes(scratch.buf, 0, compressed);
    this.chunkCompressed += h.length + compressed;
    this.chunkUncompressed += h.length + uncompressed;
    this.chunkValues += this.entries;
    this.entries = 0;
    this.values.reset();
  }

  /** The chunk's statistics, captured before the leaf is reset for the next row group. */
  statistics(): ChunkStats {
    let min: Uint8Array | undefined;
    let max: Uint8Array | undefined;
    let minExact = true;
    let maxExact = true;
    switch (this.phys.type) {
      case PhysicalType.INT32:
        if (this.hasMinMax) {
          min = Buffer.alloc(4);
          (min as Buffer).writeInt32LE(this.minLo | 0);
          max = Buffer.alloc(4);
          (max as Buffer).writeInt32LE(this.maxLo | 0);
        }
        break;
      case PhysicalType.INT64:
        if (this.hasMinMax) {
          min = Buffer.alloc(8);
          (min as Buffer).writeUInt32LE(this.minLo, 0);
          (min as Buffer).writeInt32LE(this.minHi, 4);
          max = Buffer.alloc(8);
          (max as Buffer).writeUInt32LE(this.maxLo, 0);
          (max as Buffer).writeInt32LE(this.maxHi, 4);
        }
        break;
      case PhysicalType.BOOLEAN:
        if (this.sawFalse || this.sawTrue) {
          min = Uint8Array.of(this.sawFalse ? 0 : 1);
          max = Uint8Array.of(this.sawTrue ? 1 : 0);
        }
        break;
      case PhysicalType.BYTE_ARRAY:
      case PhysicalType.FIXED_LEN_BYTE_ARRAY:
        if (this.minBytes !== null && this.maxBytes !== null) {
          const type = this.iceberg.kind === 'string' ? 'string' : 'binary';
          min = this.minBytes;
          max = this.maxBytes;
          if (this.phys.type === PhysicalType.BYTE_ARRAY && min.length > STATS_PREFIX) {
            min = truncateLowerBound(type, min, STATS_PREFIX);
            minExact = false;
          }
          if (this.phys.type === PhysicalType.BYTE_ARRAY && max.length > STATS_PREFIX) {
            const up = truncateUpperBound(type, max, STATS_PREFIX);
            if (up !== undefined) {
              max = up;
              maxExact = false;
            }
          }
        }
        break;
      default:
        break;
    }
    return { nullCount: this.nullCount, ...(min !== undefined && max !== undefined ? { min, max, minExact, maxExact } : {}) };
  }

  resetChunk(): void {
    this.chunk.reset();
    this.chunkCompressed = 0;
    this.chunkUncompressed = 0;
    this.chunkValues = 0;
    this.nullCount = 0;
    this.hasMinMax = false;
    this.minBytes = null;
    this.maxBytes = null;
    this.sawFalse = false;
    this.sawTrue = false;
  }
}

interface ChunkStats {
  readonly nullCount: number;
  readonly min?: Uint8Array;
  readonly max?: Uint8Array;
  readonly minExact?: boolean;
  readonly maxExact?: boolean;
}

/** Thrift Statistics (ColumnMetaData field 12). */
function writeStatistics(w: CompactWriter, s: ChunkStats): void {
  w.struct(12).i64(3, s.nullCount);
  if (s.min !== undefined && s.max !== undefined) w.binary(5, s.max).binary(6, s.min).bool(7, s.maxExact ?? true).bool(8, s.minExact ?? true);
  w.endStruct();
}

function levelsWithLength(levels: Uint8Array, n: number, bitWidth: number, out: ByteSink): void {
  const lenAt = out.pos;
  out.u32le(0);
  encodeLevels(levels, n, bitWidth, out);
  out.buf.writeUInt32LE(out.pos - lenAt - 4, lenAt);
}

/** A node of the schema tree, mirroring the Arrow data it shreds. */
type Node =
  | { readonly kind: 'leaf'; readonly optional: boolean; readonly leaf: Leaf; readonly leaves: readonly Leaf[] }
  | { readonly kind: 'struct'; readonly optional: boolean; readonly children: readonly Node[]; readonly leaves: readonly Leaf[] }
  | { readonly kind: 'list'; readonly optional: boolean; readonly repLevel: number; readonly element: Node; readonly leaves: readonly Leaf[]; readonly simple: boolean }
  | { readonly kind: 'map'; readonly optional: boolean; readonly repLevel: number; readonly key: Node; readonly value: Node; readonly leaves: readonly Leaf[] };

interface SchemaBuild {
  readonly elements: ((w: CompactWriter) => void)[];
  readonly leaves: Leaf[];
}

function buildNode(field: { name: string; id: number; required: boolean; type: Type }, path: string[], def: number, rep: number, out: SchemaBuild): Node {
  const optional = !field.required;
  const d = def + (optional ? 1 : 0);
  const repetition = optional ? OPTIONAL : REQUIRED;
  const t = field.type;
  const p = [...path, field.name];
  if (typeof t === 'string') {
    const prim = parsePrimitiveType(t);
    const phys = physicalOf(prim);
    if (phys === undefined) throw new ParquetError('UNSUPPORTED_TYPE', `the native Parquet writer has no encoding for '${t}' (column ${p.join('.')}); write the file with parquet-wasm`);
    out.elements.push((w) => {
      w.beginStruct().i32(1, phys.type);
      if (phys.typeLength !== undefined) w.i32(2, phys.typeLength);
      w.i32(3, repetition).binary(4, field.name);
      if (phys.converted !== undefined) w.i32(6, phys.converted);
      w.i32(9, field.id);
      if (phys.logical) {
        w.struct(10);
        phys.logical(w);
        w.endStruct();
      }
      w.endStruct();
    });
    const leaf = new Leaf(p, prim, d, rep);
    out.leaves.push(leaf);
    return { kind: 'leaf', optional, leaf, leaves: [leaf] };
  }
  const first = out.leaves.length;
  if (t.type === 'struct') {
    out.elements.push((w) => w.beginStruct().i32(3, repetition).binary(4, field.name).i32(5, t.fields.length).i32(9, field.id).endStruct());
    const children = t.fields.map((f: NestedField) => buildNode(f, p, d, rep, out));
    return { kind: 'struct', optional, children, leaves: out.leaves.slice(first) };
  }
  if (t.type === 'list') {
    out.elements.push((w) => w.beginStruct().i32(3, repetition).binary(4, field.name).i32(5, 1).i32(6, ConvertedType.LIST).i32(9, field.id).struct(10).struct(3).endStruct().endStruct().endStruct());
    out.elements.push((w) => w.beginStruct().i32(3, REPEATED).binary(4, 'list').i32(5, 1).endStruct());
    const element = buildNode({ name: 'element', id: t['element-id'], required: t['element-required'], type: t.element }, [...p, 'list'], d + 1, rep + 1, out);
    const leaves = out.leaves.slice(first);
    // Simple: no repetition below the element, so each element gives each leaf exactly one entry.
    return { kind: 'list', optional, repLevel: rep + 1, element, leaves, simple: leaves.every((l) => l.maxRep === rep + 1) };
  }
  out.elements.push((w) => w.beginStruct().i32(3, repetition).binary(4, field.name).i32(5, 1).i32(6, ConvertedType.MAP).i32(9, field.id).struct(10).struct(2).endStruct().endStruct().endStruct());
  out.elements.push((w) => w.beginStruct().i32(3, REPEATED).binary(4, 'key_value').i32(5, 2).endStruct());
  const kv = [...p, 'key_value'];
  const key = buildNode({ name: 'key', id: t['key-id'], required: true, type: t.key }, kv, d + 1, rep + 1, out);
  const value = buildNode({ name: 'value', id: t['value-id'], required: t['value-required'], type: t.value }, kv, d + 1, rep + 1, out);
  return { kind: 'map', optional, repLevel: rep + 1, key, value, leaves: out.leaves.slice(first) };
}

function isValid(data: arrow.Data, i: number): boolean {
  if (data.nullCount === 0) return true;
  const bm = data.nullBitmap;
  // Nulls but no bitmap: arrow-js's all-null column (what writeParquet makes for a missing optional field).
  if (!bm || bm.length === 0) return false;
  const j = data.offset + i;
  return (bm[j >> 3]! & (1 << (j & 7))) !== 0;
}

/** Shreds value `i` of `data` into the leaves under `node` (Dremel record shredding). */
function visit(node: Node, data: arrow.Data, i: number, def: number, rep: number): void {
  if (node.optional) {
    if (!isValid(data, i)) {
      for (const l of node.leaves) l.pushNull(rep, def);
      return;
    }
    def++;
  }
  switch (node.kind) {
    case 'leaf':
      node.leaf.pushValue(rep, data, i);
      return;
    case 'struct':
      for (let c = 0; c < node.children.length; c++) visit(node.children[c]!, data.children[c]!, i, def, rep);
      return;
    case 'list':
    case 'map': {
      const offs = data.valueOffsets as Int32Array;
      const s = offs[i]!;
      const e = offs[i + 1]!;
      if (s === e) {
        for (const l of node.leaves) l.pushNull(rep, def);
        return;
      }
      const child = data.children[0]!;
      for (let k = s; k < e; k++) {
        const r = k === s ? rep : node.repLevel;
        if (node.kind === 'list') visit(node.element, child, k, def + 1, r);
        else {
          visit(node.key, child.children[0]!, k, def + 1, r);
          visit(node.value, child.children[1]!, k, def + 1, r);
        }
      }
      return;
    }
  }
}

/**
 * Shreds rows [start, end) of a column outside any repetition (every entry starts a record, rep 0). Leaves
 * are independent streams, so structs are shredded child by child over the whole range and runs of
 * non-null values go in bulk; lists whose elements hold no further repetition go in bulk per run of
 * non-empty rows. Anything deeper falls back to value-by-value shredding.
 */
function visitRows(node: Node, data: arrow.Data, start: number, end: number, def: number): void {
  if (node.kind === 'map' || (node.kind === 'list' && !node.simple)) {
    for (let i = start; i < end; i++) visit(node, data, i, def, 0);
    return;
  }
  if (node.optional && data.nullCount !== 0) {
    // Runs of valid rows go in bulk; null rows as one run of null entries.
    let i = start;
    while (i < end) {
      let j = i + 1;
      if (!isValid(data, i)) {
        while (j < end && !isValid(data, j)) j++;
        for (const l of node.leaves) l.pushNulls(j - i, def);
      } else {
        while (j < end && isValid(data, j)) j++;
        visitDefined(node, data, i, j, def + 1);
      }
      i = j;
    }
    return;
  }
  visitDefined(node, data, start, end, node.optional ? def + 1 : def);
}

/** Rows [start, end) of a node whose own value is present in each of them (`def` already counts it). */
function visitDefined(node: Node, data: arrow.Data, start: number, end: number, def: number): void {
  switch (node.kind) {
    case 'leaf':
      node.leaf.pushValues(data, start, end);
      return;
    case 'struct':
      for (let c = 0; c < node.children.length; c++) visitRows(node.children[c]!, data.children[c]!, start, end, def);
      return;
    case 'list': {
      const offs = data.valueOffsets as Int32Array;
      const child = data.children[0]!;
      let i = start;
      while (i < end) {
        if (offs[i] === offs[i + 1]) {
          // An empty list: one entry per leaf, defined down to the list itself.
          for (const l of node.leaves) l.pushNulls(1, def);
          i++;
          continue;
        }
        let j = i + 1;
        while (j < end && offs[j] !== offs[j + 1]) j++;
        const s = offs[i]!;
        const e = offs[j]!;
        const marks = node.leaves.map((l) => l.entries);
        visitRows(node.element, child, s, e, def + 1);
        // Each element gave every leaf exactly one entry; all but each row's first repeat the list.
        node.leaves.forEach((l, k) => {
          const base = marks[k]!;
          l.reps.fill(node.repLevel, base, base + (e - s));
          for (let r = i; r < j; r++) l.reps[base + offs[r]! - s] = 0;
        });
        i = j;
      }
      return;
    }
    case 'map':
      throw new ParquetError('WRITE_FAILED', 'maps are shredded row by row');
  }
}

/**
 * Streams Arrow batches into a Parquet file held in memory. Call `write` with batches conforming to the
 * schema (field order as in the Iceberg schema), then `finish`.
 */
export class NativeParquetWriter {
  private readonly roots: Node[];
  private readonly leaves: Leaf[];
  private readonly elements: ((w: CompactWriter) => void)[];
  private readonly out: ByteSink;
  private rowsInGroup = 0;
  private totalRows = 0;
  private readonly groups: ((w: CompactWriter) => void)[] = [];
  private readonly scratch = new ByteSink(1 << 20);
  private readonly pageBytes: number;
  private step = MAX_STEP;

  constructor(
    private readonly schema: StructType,
    private readonly options: NativeWriteOptions,
  ) {
    const build: SchemaBuild = { elements: [], leaves: [] };
    this.roots = schema.fields.map((f) => buildNode(f, [], 0, 0, build));
    this.leaves = build.leaves;
    this.elements = build.elements;
    this.pageBytes = options.pageBytes ?? 1 << 20;
    if (!(options.rowGroupRows > 0)) throw new ParquetError('WRITE_FAILED', `rowGroupRows must be positive, got ${options.rowGroupRows}`);
    const want = Math.max(1024, Math.min(options.sizeHint ?? 1 << 20, 2 ** 31 - 1));
    this.out = new ByteSink(0);
    this.out.buf = takeSpare(want) ?? Buffer.allocUnsafe(want);
    this.out.bytes(MAGIC, 0, 4);
  }

  /** Adds the rows of `batch` (its top-level children in schema order). */
  write(batch: arrow.RecordBatch): void {
    const cols = batch.data.children;
    let row = 0;
    while (row < batch.numRows) {
      const take = Math.min(batch.numRows - row, this.options.rowGroupRows - this.rowsInGroup);
      // Rows in steps, so pages close near their size target at a row boundary. The step adapts to the
      // data: large values (Kafka allows ~1 MB) shrink it, so a page is never many times its target.
      for (let s = row; s < row + take; ) {
        const e = Math.min(row + take, s + this.step);
        let before = 0;
        for (const l of this.leaves) before += l.values.pos;
        for (let c = 0; c < this.roots.length; c++) visitRows(this.roots[c]!, cols[c]!, s, e, 0);
        let added = -before;
        for (const l of this.leaves) {
          added += l.values.pos;
          if (l.values.pos >= this.pageBytes) l.closePage(this.options.codec, this.scratch);
        }
        if (added > this.pageBytes / 4) this.step = Math.max(1, Math.floor(this.step / 2));
        else if (added < this.pageBytes / 16 && this.step < MAX_STEP) this.step *= 2;
        s = e;
      }
      row += take;
      this.rowsInGroup += take;
      if (this.rowsInGroup === this.options.rowGroupRows) this.flushGroup();
    }
  }

  private flushGroup(): void {
    if (this.rowsInGroup === 0) return;
    const groupStart = this.out.pos;
    const chunks: { leaf: Leaf; start: number; compressed: number; uncompressed: number; values: number; stats: ChunkStats }[] = [];
    let total = 0;
    let totalCompressed = 0;
    for (const l of this.leaves) {
      l.closePage(this.options.codec, this.scratch);
      const start = this.out.pos;
      this.out.bytes(l.chunk.buf, 0, l.chunk.pos);
      chunks.push({ leaf: l, start, compressed: l.chunkCompressed, uncompressed: l.chunkUncompressed, values: l.chunkValues, stats: l.statistics() });
      total += l.chunkUncompressed;
      totalCompressed += l.chunkCompressed;
      l.resetChunk();
    }
    const numRows = this.rowsInGroup;
    const ordinal = this.groups.length;
    const codec = this.options.codec;
    this.groups.push((w) => {
      w.beginStruct().list(1, TType.STRUCT, chunks.length);
      for (const c of chunks) {
        w.beginStruct().i64(2, c.start).struct(3).i32(1, c.leaf.phys.type).list(2, TType.I32, 2).elemI32(Encoding.PLAIN).elemI32(Encoding.RLE);
        w.list(3, TType.BINARY, c.leaf.path.length);
        for (const s of c.leaf.path) w.elemBinary(s);
        w.i32(4, codec).i64(5, c.values).i64(6, c.uncompressed).i64(7, c.compressed).i64(9, c.start);
        writeStatistics(w, c.stats);
        w.endStruct().endStruct();
      }
      w.i64(2, total).i64(3, numRows).i64(5, groupStart).i64(6, totalCompressed).i16(7, ordinal).endStruct();
    });
    this.totalRows += numRows;
    this.rowsInGroup = 0;
  }

  /**
   * Writes the footer and returns the whole file. `release()` hands its memory to the next writer: call it
   * only once nothing uses the bytes any more (e.g. after the upload has completed), never otherwise.
   */
  finish(): { bytes: Buffer; release: () => void } {
    this.flushGroup();
    const w = new CompactWriter(4096);
    w.beginStruct().i32(1, 1).list(2, TType.STRUCT, this.elements.length + 1);
    w.beginStruct().binary(4, 'schema').i32(5, this.schema.fields.length).endStruct();
    for (const e of this.elements) e(w);
    w.i64(3, this.totalRows).list(4, TType.STRUCT, this.groups.length);
    for (const g of this.groups) g(w);
    const kv = this.options.keyValueMetadata;
    if (kv.size > 0) {
      w.list(5, TType.STRUCT, kv.size);
      for (const [k, v] of kv) w.beginStruct().binary(1, k).binary(2, v).endStruct();
    }
    w.binary(6, this.options.createdBy ?? CREATED_BY);
    // column_orders: TypeDefinedOrder for every leaf, so readers trust min_value/max_value.
    w.list(7, TType.STRUCT, this.leaves.length);
    for (let k = 0; k < this.leaves.length; k++) w.beginStruct().struct(1).endStruct().endStruct();
    const meta = w.endStruct().finish();
    const out = this.out;
    out.bytes(meta, 0, meta.length);
    out.u32le(meta.length);
    out.bytes(MAGIC, 0, 4);
    const arena = out.buf;
    let released = false;
    return {
      bytes: out.view(),
      release: () => {
        if (released) return;
        released = true;
        giveSpare(arena);
      },
    };
  }
}

/**
 * One spare output buffer, handed from a finished file whose bytes were released (uploaded) to the next
 * writer: a data file is tens of MiB, and touching that much fresh memory costs more here than copying it
 * (shared/measurements.md). Files whose bytes are never released are simply collected.
 */
let spare: Buffer | null = null;

function takeSpare(size: number): Buffer | null {
  if (spare === null || spare.length < size) return null;
  const b = spare;
  spare = null;
  return b;
}

function giveSpare(b: Buffer): void {
  if (spare === null || b.length > spare.length) spare = b;
}
