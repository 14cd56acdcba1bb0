/**
 * One leaf column of the native writer (`Leaf`): values PLAIN-encoded into the page being filled, pages
 * closed with RLE levels and compressed into the column chunk, and the chunk's statistics (`ChunkStats`,
 * written by `writeStatistics`).
 */
import type * as arrow from 'apache-arrow';
import type { ParsedPrimitive } from '../types.js';
import { CompressionCodec, compressPageInto } from './codecs.js';
import { ByteBounds } from './byte-bounds.js';
import { ParquetError } from './errors.js';
import { PhysicalType } from './footer.js';
import { ByteSink, encodeLevels, levelBitWidth } from './levels.js';
import { CompactWriter } from './thrift-writer.js';
import { physicalOf, type Physical } from './physical-types.js';

export const Encoding = { PLAIN: 0, RLE: 3 } as const;
const PAGE_DATA = 0;
/**
 * Bytes kept free in front of a page's values for its levels, so the page body (levels, then values) is one
 * buffer without moving the values: the levels of a column without repetition are a few RLE runs. Levels
 * that do not fit (bit-packed runs of a repeated column) move the values along instead.
 */
const LEVELS_ROOM = 256;

/** One leaf column: its page being filled, the pages of the current chunk, and the chunk's statistics. */
export class Leaf {
  readonly maxDef: number;
  readonly maxRep: number;
  readonly phys: Physical;
  readonly iceberg: ParsedPrimitive;
  readonly path: readonly string[];
  // Page being filled.
  defs = new Uint8Array(1024);
  reps = new Uint8Array(1024);
  entries = 0;
  /** The page's PLAIN values, from `valuesStart` (room for the levels before them). */
  readonly values = new ByteSink(64 * 1024);
  readonly valuesStart: number;
  private boolAcc = 0;
  private boolBits = 0;
  // Chunk (row group) state: its pages, header and compressed body each, back to back.
  readonly chunk = new ByteSink(64 * 1024);
  private readonly levels = new ByteSink(4 * 1024);
  chunkCompressed = 0;
  /** Compressed / uncompressed size of the column's last page: the guess for the next one's header. */
  private lastRatio = 0.5;
  chunkUncompressed = 0;
  chunkValues = 0;
  nullCount = 0;
  // Statistics: numbers for INT32/INT64 (as hi/lo pairs), bytes for the others (byte-bounds.ts).
  private hasMinMax = false;
  private minHi = 0;
  private minLo = 0;
  private maxHi = 0;
  private maxLo = 0;
  private readonly bytesBounds: ByteBounds | null;
  private sawFalse = false;
  private sawTrue = false;

  constructor(path: readonly string[], iceberg: ParsedPrimitive, maxDef: number, maxRep: number) {
    this.path = path;
    this.iceberg = iceberg;
    this.phys = physicalOf(iceberg)!;
    this.maxDef = maxDef;
    this.maxRep = maxRep;
    this.valuesStart = maxDef > 0 || maxRep > 0 ? LEVELS_ROOM : 0;
    this.values.pos = this.valuesStart;
    const kind = iceberg.kind === 'string' ? 'string' : 'binary';
    if (this.phys.type === PhysicalType.BYTE_ARRAY) this.bytesBounds = new ByteBounds(kind, true);
    else if (this.phys.type === PhysicalType.FIXED_LEN_BYTE_ARRAY) this.bytesBounds = new ByteBounds(kind, false, this.phys.typeLength!);
    else this.bytesBounds = null;
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
        const bounds = this.bytesBounds!;
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
          if (from !== at + 4 && len > 0) {
            // Short values (keys, header values) move faster in a loop than through a native call.
            if (len <= 24) for (let i = 0; i < len; i++) b[at + 4 + i] = b[from + i]!;
            else b.copyWithin(at + 4, from, from + len);
          }
          bounds.add(bytes, s0, e0);
        }
        v.pos = base + 4 * n + total;
        bounds.settle();
        return;
      }
      case PhysicalType.FIXED_LEN_BYTE_ARRAY: {
        const w = this.phys.typeLength!;
        const bytes = data.values as Uint8Array;
        for (let k = start; k < end; k++) {
          v.bytes(bytes, k * w, (k + 1) * w);
          this.bytesBounds!.add(bytes, k * w, (k + 1) * w);
        }
        this.bytesBounds!.settle();
        return;
      }
      default:
        throw new ParquetError('UNSUPPORTED_TYPE', `no native encoding for Parquet type ${this.phys.type}`);
    }
  }

  /** Closes the page being filled (if it has entries), compressing it into the chunk. */
  closePage(codec: CompressionCodec): void {
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
    // The page body (levels, then values) in one buffer, as compressPageInto wants it: the levels go in
    // the room before the values, or the values move along when they do not fit.
    const v = this.values;
    let from = this.valuesStart - lv.pos;
    if (from < 0) {
      v.ensure(-from);
      v.buf.copyWithin(lv.pos, this.valuesStart, v.pos);
      v.pos -= from;
      from = 0;
    }
    v.buf.set(lv.buf.subarray(0, lv.pos), from);
    const uncompressed = v.pos - from;
    // Compressed straight into the chunk, after room for the page header sized for the compressed length
    // this column's last page suggests; a header of another length moves the page along (small pages).
    const chunk = this.chunk;
    const start = chunk.pos;
    const room = pageHeader(uncompressed, Math.ceil(uncompressed * this.lastRatio), this.entries).length;
    chunk.ensure(room);
    chunk.pos = start + room;
    const compressed = compressPageInto(codec, v.buf.subarray(from, v.pos), chunk);
    const h = pageHeader(uncompressed, compressed, this.entries);
    if (h.length !== room) {
      if (h.length > room) chunk.ensure(h.length - room);
      chunk.buf.copyWithin(start + h.length, start + room, start + room + compressed);
    }
    chunk.buf.set(h, start);
    chunk.pos = start + h.length + compressed;
    this.lastRatio = uncompressed > 0 ? compressed / uncompressed : 1;
    this.chunkCompressed += h.length + compressed;
    this.chunkUncompressed += h.length + uncompressed;
    this.chunkValues += this.entries;
    this.entries = 0;
    this.values.pos = this.valuesStart;
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
      {
        const lo = this.bytesBounds!.lower();
        const hi = this.bytesBounds!.upper();
        if (lo !== undefined && hi !== undefined) {
          min = lo.bytes;
          minExact = lo.exact;
          max = hi.bytes;
          maxExact = hi.exact;
        }
        break;
      }
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
    this.bytesBounds?.reset();
    this.sawFalse = false;
    this.sawTrue = false;
  }
}

export interface ChunkStats {
  readonly nullCount: number;
  readonly min?: Uint8Array;
  readonly max?: Uint8Array;
  readonly minExact?: boolean;
  readonly maxExact?: boolean;
}

/** Thrift Statistics (ColumnMetaData field 12). */
export function writeStatistics(w: CompactWriter, s: ChunkStats): void {
  w.struct(12).i64(3, s.nullCount);
  if (s.min !== undefined && s.max !== undefined) w.binary(5, s.max).binary(6, s.min).bool(7, s.maxExact ?? true).bool(8, s.minExact ?? true);
  w.endStruct();
}

/** A DataPage v1 header (parquet.thrift PageHeader) for PLAIN values with RLE levels. */
function pageHeader(uncompressed: number, compressed: number, entries: number): Buffer {
  return new CompactWriter(64)
    .beginStruct()
    .i32(1, PAGE_DATA)
    .i32(2, uncompressed)
    .i32(3, compressed)
    .struct(5)
    .i32(1, entries)
    .i32(2, Encoding.PLAIN)
    .i32(3, Encoding.RLE)
    .i32(4, Encoding.RLE)
    .endStruct()
    .endStruct()
    .finish();
}

function levelsWithLength(levels: Uint8Array, n: number, bitWidth: number, out: ByteSink): void {
  const lenAt = out.pos;
  out.u32le(0);
  encodeLevels(levels, n, bitWidth, out);
  out.buf.writeUInt32LE(out.pos - lenAt - 4, lenAt);
}
