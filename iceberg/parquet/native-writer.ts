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
 *
 * This module owns the file: its row groups, footer and output buffer. The parts it is built from:
 * `physical-types.ts` (how each Iceberg type is stored), `shredding.ts` (the schema tree and record
 * shredding) and `column-writer.ts` (each leaf column's pages, chunk and statistics).
 */
import type * as arrow from 'apache-arrow';
import type { StructType, Type } from '../schema.js';
import { parsePrimitiveType } from '../types.js';
import { CompressionCodec } from './codecs.js';
import { ParquetError } from './errors.js';
import { CREATED_BY } from './footer.js';
import { ByteSink } from './levels.js';
import { CompactWriter, TType } from './thrift-writer.js';
import { physicalOf } from './physical-types.js';
import { Encoding, writeStatistics, type ChunkStats, type Leaf } from './column-writer.js';
import { buildNode, visitRows, type Node, type SchemaBuild } from './shredding.js';

const MAGIC = Buffer.from('PAR1', 'latin1');
/** Most rows shredded between two page-size checks. */
const MAX_STEP = 1024;

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
  private readonly groups: RowGroupMeta[] = [];
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
          if (l.values.pos - l.valuesStart >= this.pageBytes) l.closePage(this.options.codec);
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
    const chunks: ChunkMeta[] = [];
    let total = 0;
    let totalCompressed = 0;
    for (const l of this.leaves) {
      l.closePage(this.options.codec);
      const start = this.out.pos;
      this.out.bytes(l.chunk.buf, 0, l.chunk.pos);
      chunks.push({ leaf: l, start, compressed: l.chunkCompressed, uncompressed: l.chunkUncompressed, values: l.chunkValues, stats: l.statistics() });
      total += l.chunkUncompressed;
      totalCompressed += l.chunkCompressed;
      l.resetChunk();
    }
    const numRows = this.rowsInGroup;
    this.groups.push({ chunks, total, numRows, groupStart, totalCompressed, ordinal: this.groups.length });
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
    for (const g of this.groups) writeRowGroup(w, g, this.options.codec);
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

/** A column chunk written, for the footer. */
interface ChunkMeta {
  readonly leaf: Leaf;
  readonly start: number;
  readonly compressed: number;
  readonly uncompressed: number;
  readonly values: number;
  readonly stats: ChunkStats;
}

/** A row group written, for the footer. */
interface RowGroupMeta {
  readonly chunks: readonly ChunkMeta[];
  readonly total: number;
  readonly numRows: number;
  readonly groupStart: number;
  readonly totalCompressed: number;
  readonly ordinal: number;
}

/**
 * A row group's RowGroup struct in the footer. A module-level function rather than a closure per row group:
 * V8 may drop a dead closure's optimized code at a full GC, so those were compiled again and again.
 */
function writeRowGroup(w: CompactWriter, g: RowGroupMeta, codec: CompressionCodec): void {
  w.beginStruct().list(1, TType.STRUCT, g.chunks.length);
  for (const c of g.chunks) {
    w.beginStruct().i64(2, c.start).struct(3).i32(1, c.leaf.phys.type).list(2, TType.I32, 2).elemI32(Encoding.PLAIN).elemI32(Encoding.RLE);
    w.list(3, TType.BINARY, c.leaf.path.length);
    for (const s of c.leaf.path) w.elemBinary(s);
    w.i32(4, codec).i64(5, c.values).i64(6, c.uncompressed).i64(7, c.compressed).i64(9, c.start);
    writeStatistics(w, c.stats);
    w.endStruct().endStruct();
  }
  w.i64(2, g.total).i64(3, g.numRows).i64(5, g.groupStart).i64(6, g.totalCompressed).i16(7, g.ordinal).endStruct();
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
