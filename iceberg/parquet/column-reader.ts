/**
 * A native Parquet column-chunk reader: decodes the column chunks of chosen row groups from bytes already in
 * memory (one range read covering them), without parquet-wasm and without building Arrow or per-value
 * objects. Per leaf column it returns definition levels, repetition levels and the non-null values:
 *
 * - INT32 → Int32Array;
 * - INT64 → Int32Array of little-endian (low, high) pairs (`int64At` turns one into a number, exact for
 *   safe integers; a BigInt per value would cost an allocation);
 * - BYTE_ARRAY → one contiguous Buffer with value i at [starts[i], ends[i]), no per-value Buffer. PLAIN
 *   values are not copied out of their pages: the buffer is the decompressed page itself when a column's
 *   values come from one page (or the read span itself, for uncompressed pages), else the pages
 *   concatenated; dictionary-encoded values are materialised.
 *
 * Supported: DataPage v1 and v2, dictionary pages with PLAIN_DICTIONARY / RLE_DICTIONARY data, PLAIN values,
 * RLE/bit-packed hybrid levels, and the codecs of `codecs.ts` (ZSTD, SNAPPY, GZIP, UNCOMPRESSED). Anything
 * else (DELTA_* or BYTE_STREAM_SPLIT encodings, LZ4/BROTLI/LZO, BOOLEAN/FLOAT/DOUBLE/INT96/FIXED columns,
 * BIT_PACKED levels) throws ParquetError UNSUPPORTED_TYPE, so a caller can fall back to parquet-wasm.
 * Every length, count and offset read from the file is checked against the bytes it points into: corrupt
 * input throws ParquetError INVALID_PARQUET saying what is wrong, never reads out of range or loops.
 */
import { codecSupported, decompressPage, type PageBufferSource } from './codecs.js';
import { ParquetError } from './errors.js';
import { PhysicalType, type ParquetColumnChunk, type ParquetFooter, type ParquetLeafColumn, type Repetition } from './footer.js';
import { DATA_PAGE, DATA_PAGE_V2, DICTIONARY_PAGE, PLAIN, PLAIN_DICTIONARY, RLE, RLE_DICTIONARY, bitWidthOf, decodeHybrid, invalid, pageHeader, u32le, type PageHeader } from './page-format.js';

/** Non-null values of a decoded column. */
export type ColumnValues =
  | { readonly kind: 'int32'; readonly data: Int32Array }
  /** Two int32 per value: low then high 32 bits (little-endian order, as stored). */
  | { readonly kind: 'int64'; readonly data: Int32Array }
  /** Value i is `data[starts[i] .. ends[i])` (values need not be adjacent). */
  | { readonly kind: 'bytes'; readonly data: Buffer; readonly starts: Int32Array; readonly ends: Int32Array };

/** Levels of a leaf column, from the schema. */
export interface LeafLevels {
  readonly maxDefinitionLevel: number;
  readonly maxRepetitionLevel: number;
  /** Repetition of each element on the leaf's path (root excluded), outermost first. */
  readonly pathRepetition: readonly Repetition[];
  /** Definition level reached once each element of the path is present (same order as pathRepetition). */
  readonly pathDefinitionLevels: readonly number[];
}

export interface DecodedColumn extends LeafLevels {
  readonly leafIndex: number;
  readonly leaf: ParquetLeafColumn;
  /** Level entries: one per row for a column outside lists, else one per list element or empty/null list. */
  readonly numLevels: number;
  readonly numRows: number;
  /** Definition level of each entry; null when the column is required all the way (every entry defined). */
  readonly definitionLevels: Uint8Array | null;
  /** Repetition level of each entry; null outside lists (every entry starts a row). */
  readonly repetitionLevels: Uint8Array | null;
  /** Non-null values: as many as entries whose definition level is the maximum. */
  readonly numValues: number;
  readonly values: ColumnValues;
}

const ENCODING_NAMES = ['PLAIN', 'GROUP_VAR_INT', 'PLAIN_DICTIONARY', 'RLE', 'BIT_PACKED', 'DELTA_BINARY_PACKED', 'DELTA_LENGTH_BYTE_ARRAY', 'DELTA_BYTE_ARRAY', 'RLE_DICTIONARY', 'BYTE_STREAM_SPLIT'];
const TYPE_NAMES = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY'];

/** Level entries decoded in one call at most (2^28): bounds the arrays a footer can make us allocate. */
export const MAX_LEVELS_PER_READ = 1 << 28;
/** Largest buffer allocated up front for the kept pages of one column read; past it, a buffer per page. */
const MAX_ARENA_BYTES = 64 * 1024 * 1024;
/** Largest byte-array column output: offsets are int32. */
const MAX_BYTES_OUTPUT = 0x7fffffff;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The number held by an INT64 value as a (low, high) pair at index `i`; exact for safe integers. */
export function int64At(pairs: Int32Array, i: number): number {
  return pairs[2 * i + 1]! * 4294967296 + (pairs[2 * i]! >>> 0);
}

/** Whether the INT64 value at `i` is a safe integer (|v| < 2^53), so `int64At` is exact. */
export function int64IsSafe(pairs: Int32Array, i: number): boolean {
  const hi = pairs[2 * i + 1]!;
  return hi >= -0x200000 && hi < 0x200000;
}

/**
 * Decompressed pages whose bytes are copied out before the next page (dictionaries, levels, fixed-width
 * values) go into this one reused buffer rather than fresh memory. Reading is synchronous, so no two reads
 * share it at once.
 */
let scratchPage = Buffer.allocUnsafeSlow(0);
/** Pages larger than this are decompressed into fresh memory, so one huge page does not stay allocated. */
const MAX_SCRATCH_BYTES = 16 * 1024 * 1024;
const scratch: PageBufferSource = (n) => {
  if (n > MAX_SCRATCH_BYTES) return Buffer.allocUnsafe(n);
  if (scratchPage.length < n) scratchPage = Buffer.allocUnsafeSlow(Math.min(MAX_SCRATCH_BYTES, Math.max(n, 2 * scratchPage.length)));
  return scratchPage;
};

/** Options of `readColumnChunks`. */
export interface ReadColumnOptions {
  /**
   * Where decompressed pages that the result keeps go (PLAIN BYTE_ARRAY values stay in their pages): the
   * caller owns those buffers and must not reuse one while the result is in use. Default: fresh memory.
   */
  readonly pageBuffers?: PageBufferSource;
}

const levelsCache = new WeakMap<ParquetFooter, LeafLevels[]>();

/** Levels of every leaf of the footer's schema, in leaf order. */
export function leafLevels(footer: ParquetFooter): readonly LeafLevels[] {
  const cached = levelsCache.get(footer);
  if (cached) return cached;
  const out: LeafLevels[] = [];
  const schema = footer.schema;
  let i = 1;
  const walk = (reps: Repetition[], defs: number[], def: number, rep: number): void => {
    const el = schema[i++];
    if (!el) throw new ParquetError('INVALID_PARQUET', 'Corrupt Parquet schema: fewer elements than num_children promises');
    const r = el.repetition ?? 'REQUIRED';
    const d = def + (r === 'REQUIRED' ? 0 : 1);
    const rr = rep + (r === 'REPEATED' ? 1 : 0);
    const pr = [...reps, r];
    const pd = [...defs, d];
    if (el.numChildren === 0) {
      out.push({ maxDefinitionLevel: d, maxRepetitionLevel: rr, pathRepetition: pr, pathDefinitionLevels: pd });
      return;
    }
    for (let c = 0; c < el.numChildren; c++) walk(pr, pd, d, rr);
  };
  const root = schema[0];
  if (root) for (let c = 0; c < root.numChildren; c++) walk([], [], 0, 0);
  if (out.length !== footer.leaves.length) throw new ParquetError('INVALID_PARQUET', `Corrupt Parquet schema: ${out.length} leaves by levels, ${footer.leaves.length} by paths`);
  levelsCache.set(footer, out);
  return out;
}

/** The index of the leaf column carrying Iceberg field id `fieldId`, or -1. */
export function findLeafByFieldId(footer: ParquetFooter, fieldId: number): number {
  return footer.leaves.findIndex((l) => l.fieldId === fieldId);
}

function unsupported(where: string, what: string): never {
  throw new ParquetError('UNSUPPORTED_TYPE', `${where}: ${what} is not supported by the native column reader; read the file with parquet-wasm (readParquetTable)`);
}

type Dictionary = { kind: 'fixed'; data: Int32Array; size: number } | { kind: 'bytes'; data: Uint8Array; offsets: Int32Array; size: number };

/** Accumulates one leaf column's levels and values over its chunks in several row groups. */
class ColumnBuilder {
  readonly def: Uint8Array | null;
  readonly rep: Uint8Array | null;
  levels = 0;
  values = 0;
  rows = 0;
  /** INT32: 1, INT64: 2 int32 slots per value; 0 for BYTE_ARRAY. */
  readonly width: number;
  ints: Int32Array | null = null;
  /** BYTE_ARRAY: the buffers values point into (decompressed pages, materialised dictionary values), and their total length. */
  readonly segments: Uint8Array[] = [];
  segmentBytes = 0;
  starts: Int32Array | null = null;
  ends: Int32Array | null = null;
  /** Dictionary indexes of one page. */
  private scratch = new Int32Array(0);
  /**
   * BYTE_ARRAY: the kept (PLAIN) pages of this read are decompressed one after another into this buffer,
   * so their values are contiguous and the result is a view of it rather than a concatenated copy.
   */
  private arena: Buffer | null = null;
  private arenaUsed = 0;

  constructor(
    readonly leafIndex: number,
    readonly leaf: ParquetLeafColumn,
    readonly levelInfo: LeafLevels,
    readonly physicalType: number,
    totalLevels: number,
    /** Bytes the arena needs at most: the chunks' total uncompressed size (page headers included), plus one. */
    private readonly arenaBytes = 0,
  ) {
    this.def = levelInfo.maxDefinitionLevel > 0 ? new Uint8Array(totalLevels) : null;
    this.rep = levelInfo.maxRepetitionLevel > 0 ? new Uint8Array(totalLevels) : null;
    this.width = physicalType === PhysicalType.INT32 ? 1 : physicalType === PhysicalType.INT64 ? 2 : 0;
    if (this.width > 0) this.ints = new Int32Array(totalLevels * this.width);
    else {
      this.starts = new Int32Array(totalLevels);
      this.ends = new Int32Array(totalLevels);
    }
  }

  /** Where a page whose values are kept is decompressed (`kept` supplies memory, else fresh). */
  pageBuffer(n: number, kept: PageBufferSource | undefined): Buffer {
    if (this.arena === null && n <= this.arenaBytes && this.arenaBytes <= MAX_ARENA_BYTES) {
      this.arena = kept ? kept(this.arenaBytes) : Buffer.allocUnsafeSlow(this.arenaBytes);
    }
    // A page that does not fit (a footer understating sizes) gets its own buffer.
    if (this.arena !== null && n <= this.arena.length - this.arenaUsed) return this.arena.subarray(this.arenaUsed);
    return kept ? kept(n) : Buffer.allocUnsafe(n);
  }

  /** Adds a buffer values point into; returns where it starts in the concatenation. */
  addSegment(buf: Uint8Array, where: string): number {
    const base = this.segmentBytes;
    if (base + buf.length > MAX_BYTES_OUTPUT) unsupported(where, `more than ${MAX_BYTES_OUTPUT} bytes of values in one read`);
    const arena = this.arena;
    if (arena !== null && buf.buffer === arena.buffer && buf.byteOffset === arena.byteOffset + this.arenaUsed) this.arenaUsed += buf.length;
    const last = this.segments.length - 1;
    const prev = this.segments[last];
    if (prev !== undefined && prev.buffer === buf.buffer && prev.byteOffset + prev.length === buf.byteOffset) {
      // Adjacent in memory (pages decompressed one after another): one segment, so no copy in data().
      this.segments[last] = new Uint8Array(buf.buffer, prev.byteOffset, prev.length + buf.length);
    } else this.segments.push(buf);
    this.segmentBytes += buf.length;
    return base;
  }

  indexes(n: number): Int32Array {
    if (this.scratch.length < n) this.scratch = new Int32Array(Math.max(n, this.scratch.length * 2));
    return this.scratch;
  }

  private data(): Buffer {
    const segs = this.segments;
    if (segs.length === 0) return Buffer.alloc(0);
    if (segs.length === 1) return Buffer.from(segs[0]!.buffer, segs[0]!.byteOffset, segs[0]!.byteLength);
    return Buffer.concat(segs, this.segmentBytes);
  }

  result(): DecodedColumn {
    const values: ColumnValues =
      this.width === 1
        ? { kind: 'int32', data: this.ints!.subarray(0, this.values) }
        : this.width === 2
          ? { kind: 'int64', data: this.ints!.subarray(0, 2 * this.values) }
          : { kind: 'bytes', data: this.data(), starts: this.starts!.subarray(0, this.values), ends: this.ends!.subarray(0, this.values) };
    return {
      ...this.levelInfo,
      leafIndex: this.leafIndex,
      leaf: this.leaf,
      numLevels: this.levels,
      numRows: this.rows,
      definitionLevels: this.def,
      repetitionLevels: this.rep,
      numValues: this.values,
      values,
    };
  }
}

/** Copies PLAIN fixed-width values (4 bytes each) of one page into the builder. */
function plainFixed(col: ColumnBuilder, page: Uint8Array, pos: number, end: number, n: number, where: string): void {
  const bytes = n * col.width * 4;
  if (bytes > end - pos) invalid(where, `${n} PLAIN ${TYPE_NAMES[col.physicalType]} values need ${bytes} bytes, the page has ${end - pos}`);
  const ints = col.ints!;
  const at = col.values * col.width;
  if (LITTLE_ENDIAN) {
    new Uint8Array(ints.buffer, ints.byteOffset + at * 4, bytes).set(page.subarray(pos, pos + bytes));
  } else {
    const dv = new DataView(page.buffer, page.byteOffset + pos, bytes);
    for (let k = 0; k < n * col.width; k++) ints[at + k] = dv.getInt32(4 * k, true);
  }
}

/** Records where the PLAIN byte-array values (4-byte length, bytes) of one page are; the page is kept. */
function plainBytes(col: ColumnBuilder, page: Uint8Array, pos: number, end: number, n: number, where: string): void {
  if (n === 0) return;
  const base = col.addSegment(page, where);
  const starts = col.starts!;
  const ends = col.ends!;
  let p = pos;
  for (let k = 0, v = col.values; k < n; k++, v++) {
    if (end - p < 4) invalid(where, `PLAIN BYTE_ARRAY value ${k} of ${n}: length cut off`);
    const len = u32le(page, p);
    p += 4;
    if (len > end - p) invalid(where, `PLAIN BYTE_ARRAY value ${k} of ${n} claims ${len} bytes, ${end - p} left in the page`);
    starts[v] = base + p;
    p += len;
    ends[v] = base + p;
  }
}

function readDictionary(physicalType: number, page: Uint8Array, n: number, where: string): Dictionary {
  if (physicalType === PhysicalType.BYTE_ARRAY) {
    // Each value is a 4-byte length and its bytes; n itself is checked by the loop (4 bytes per value).
    const starts: number[] = [];
    const offsets: number[] = [0];
    let p = 0;
    let total = 0;
    for (let k = 0; k < n; k++) {
      if (page.length - p < 4) invalid(where, `dictionary value ${k} of ${n}: length cut off`);
      const len = u32le(page, p);
      p += 4;
      if (len > page.length - p) invalid(where, `dictionary value ${k} of ${n} claims ${len} bytes, ${page.length - p} left`);
      starts.push(p);
      total += len;
      offsets.push(total);
      p += len;
    }
    // Packed so that value k is data[offsets[k], offsets[k + 1]).
    const data = new Uint8Array(total);
    for (let k = 0; k < n; k++) data.set(page.subarray(starts[k]!, starts[k]! + offsets[k + 1]! - offsets[k]!), offsets[k]!);
    return { kind: 'bytes', data, offsets: Int32Array.from(offsets), size: n };
  }
  const width = physicalType === PhysicalType.INT64 ? 2 : 1;
  const bytes = n * width * 4;
  if (bytes > page.length) invalid(where, `dictionary of ${n} ${TYPE_NAMES[physicalType]} values needs ${bytes} bytes, the page has ${page.length}`);
  const data = new Int32Array(n * width);
  if (LITTLE_ENDIAN) new Uint8Array(data.buffer).set(page.subarray(0, bytes));
  else {
    const dv = new DataView(page.buffer, page.byteOffset, bytes);
    for (let k = 0; k < n * width; k++) data[k] = dv.getInt32(4 * k, true);
  }
  return { kind: 'fixed', data, size: n };
}

/** Materialises `n` dictionary-encoded values whose indexes are idx[0, n). */
function fromDictionary(col: ColumnBuilder, dict: Dictionary, idx: Int32Array, n: number, where: string): void {
  for (let k = 0; k < n; k++) if (idx[k]! >= dict.size) invalid(where, `dictionary index ${idx[k]} past the ${dict.size} dictionary values`);
  if (dict.kind === 'fixed') {
    const ints = col.ints!;
    const src = dict.data;
    if (col.width === 1) {
      for (let k = 0, at = col.values; k < n; k++) ints[at + k] = src[idx[k]!]!;
    } else {
      for (let k = 0, at = 2 * col.values; k < n; k++) {
        const s = 2 * idx[k]!;
        ints[at + 2 * k] = src[s]!;
        ints[at + 2 * k + 1] = src[s + 1]!;
      }
    }
    return;
  }
  const dOff = dict.offsets;
  let total = 0;
  for (let k = 0; k < n; k++) total += dOff[idx[k]! + 1]! - dOff[idx[k]!]!;
  if (total > MAX_BYTES_OUTPUT) unsupported(where, `more than ${MAX_BYTES_OUTPUT} bytes of values in one read`);
  const data = Buffer.allocUnsafe(total);
  const base = col.addSegment(data, where);
  const src = dict.data;
  const starts = col.starts!;
  const ends = col.ends!;
  let d = 0;
  for (let k = 0, v = col.values; k < n; k++, v++) {
    const s = dOff[idx[k]!]!;
    const e = dOff[idx[k]! + 1]!;
    starts[v] = base + d;
    if (e - s < 32) for (let b = s; b < e; b++) data[d++] = src[b]!;
    else {
      data.set(src.subarray(s, e), d);
      d += e - s;
    }
    ends[v] = base + d;
  }
}

/** Decodes the levels and values of one data page (its body already split from the header). */
function dataPage(col: ColumnBuilder, h: PageHeader, raw: Uint8Array, codec: number, dict: Dictionary | null, where: string, kept: PageBufferSource | undefined): void {
  const n = h.numValues;
  // PLAIN byte-array values stay in their page (the result points into it); everything else is copied out.
  const into: PageBufferSource = col.width === 0 && h.encoding === PLAIN ? (m) => col.pageBuffer(m, kept) : scratch;
  const { maxDefinitionLevel: maxDef, maxRepetitionLevel: maxRep } = col.levelInfo;
  let page: Uint8Array;
  let pos: number;
  if (h.type === DATA_PAGE) {
    page = decompressPage(codec, raw, h.uncompressedSize, into);
    pos = 0;
    const levels = (kind: string, encoding: number, max: number, out: Uint8Array): void => {
      if (encoding !== RLE) unsupported(where, `${kind} levels in ${ENCODING_NAMES[encoding] ?? `encoding ${encoding}`}`);
      if (page.length - pos < 4) invalid(where, `${kind} levels length cut off`);
      const len = u32le(page, pos);
      pos += 4;
      if (len > page.length - pos) invalid(where, `${kind} levels claim ${len} bytes, ${page.length - pos} left in the page`);
      decodeHybrid(page, pos, pos + len, bitWidthOf(max), out, col.levels, n, max, `${where}, ${kind} levels`);
      pos += len;
    };
    if (maxRep > 0) levels('repetition', h.repEncoding, maxRep, col.rep!);
    if (maxDef > 0) levels('definition', h.defEncoding, maxDef, col.def!);
  } else {
    // v2: levels first, never compressed; then the values, compressed when is_compressed says so.
    const lv = h.repLength + h.defLength;
    if (maxRep > 0) decodeHybrid(raw, 0, h.repLength, bitWidthOf(maxRep), col.rep!, col.levels, n, maxRep, `${where}, repetition levels`);
    else if (h.repLength !== 0) invalid(where, `repetition levels of ${h.repLength} bytes in a column that has none`);
    if (maxDef > 0) decodeHybrid(raw, h.repLength, lv, bitWidthOf(maxDef), col.def!, col.levels, n, maxDef, `${where}, definition levels`);
    else if (h.defLength !== 0) invalid(where, `definition levels of ${h.defLength} bytes in a column that has none`);
    const body = raw.subarray(lv);
    const size = h.uncompressedSize - lv;
    page = h.isCompressed ? decompressPage(codec, body, size, into) : body;
    if (page.length !== size) invalid(where, `values section holds ${page.length} bytes where the header says ${size}`);
    pos = 0;
  }
  // Entries whose definition level is the maximum carry a value; count rows (entries at repetition 0).
  let present = n;
  if (col.def) {
    present = 0;
    const def = col.def;
    for (let k = col.levels, e = col.levels + n; k < e; k++) if (def[k] === maxDef) present++;
  }
  if (col.rep) {
    const rep = col.rep;
    if (n > 0 && col.levels === 0 && rep[0] !== 0) invalid(where, 'the first entry of the column continues a row');
    for (let k = col.levels, e = col.levels + n; k < e; k++) if (rep[k] === 0) col.rows++;
  } else col.rows += n;
  const end = page.length;
  if (h.encoding === PLAIN) {
    if (col.width > 0) plainFixed(col, page, pos, end, present, where);
    else plainBytes(col, page, pos, end, present, where);
  } else if (h.encoding === PLAIN_DICTIONARY || h.encoding === RLE_DICTIONARY) {
    if (!dict) invalid(where, 'dictionary-encoded page without a dictionary page before it');
    if (present > 0) {
      if (pos >= end) invalid(where, 'dictionary index bit width missing');
      const bw = page[pos++]!;
      if (bw > 32) invalid(where, `dictionary index bit width ${bw}`);
      const idx = col.indexes(present);
      decodeHybrid(page, pos, end, bw, idx, 0, present, 0x7fffffff, `${where}, dictionary indexes`);
      fromDictionary(col, dict, idx, present, where);
    }
  } else {
    unsupported(where, `values in ${ENCODING_NAMES[h.encoding] ?? `encoding ${h.encoding}`}`);
  }
  col.levels += n;
  col.values += present;
}

function chunkWhere(leaf: ParquetLeafColumn, rg: number): string {
  return `column ${leaf.path.join('.')} of row group ${rg}`;
}

/** Decodes one column chunk's pages into the builder. */
function readChunk(col: ColumnBuilder, chunk: ParquetColumnChunk, rg: number, rgRows: number, span: Uint8Array, spanStart: number, kept: PageBufferSource | undefined): void {
  const where = chunkWhere(col.leaf, rg);
  const start = Number(chunk.startOffset) - spanStart;
  const size = Number(chunk.totalCompressedSize);
  if (!(start >= 0 && size >= 0 && start + size <= span.length)) {
    invalid(where, `column chunk at file bytes ${chunk.startOffset}+${chunk.totalCompressedSize} lies outside the bytes read (${spanStart}+${span.length})`);
  }
  const end = start + size;
  const want = Number(chunk.numValues);
  const levelsBefore = col.levels;
  const rowsBefore = col.rows;
  let dict: Dictionary | null = null;
  let pos = start;
  let sawData = false;
  while (col.levels - levelsBefore < want) {
    if (pos >= end) invalid(where, `chunk ends after ${col.levels - levelsBefore} of its ${want} values`);
    const pageWhere = `${where}, page at file byte ${spanStart + pos}`;
    const h = pageHeader(span, pos, end, pageWhere);
    const bodyStart = pos + h.headerLength;
    if (h.compressedSize > end - bodyStart) invalid(pageWhere, `page of ${h.compressedSize} bytes runs past the end of its column chunk (${end - bodyStart} bytes left)`);
    const raw = span.subarray(bodyStart, bodyStart + h.compressedSize);
    pos = bodyStart + h.compressedSize;
    if (h.type === DICTIONARY_PAGE) {
      if (sawData || dict) invalid(pageWhere, 'a dictionary page after the chunk already started');
      if (h.encoding !== PLAIN && h.encoding !== PLAIN_DICTIONARY) unsupported(pageWhere, `dictionary in ${ENCODING_NAMES[h.encoding] ?? `encoding ${h.encoding}`}`);
      dict = readDictionary(col.physicalType, decompressPage(chunk.codec, raw, h.uncompressedSize, scratch), h.numValues, pageWhere);
    } else if (h.type === DATA_PAGE || h.type === DATA_PAGE_V2) {
      sawData = true;
      if (h.numValues > want - (col.levels - levelsBefore)) invalid(pageWhere, `page holds ${h.numValues} values, more than the ${want - (col.levels - levelsBefore)} left of the chunk`);
      dataPage(col, h, raw, chunk.codec, dict, pageWhere, kept);
    }
    // Index pages and unknown page types are skipped.
  }
  if (col.rows - rowsBefore !== rgRows) invalid(where, `holds ${col.rows - rowsBefore} rows, the row group has ${rgRows}`);
}

/**
 * Decodes the leaf columns `leafIndexes` of row groups `rowGroups` (ascending, as they lie in the file),
 * concatenated in that order, from `span`: the file's bytes starting at file offset `spanStart`, which must
 * hold every one of those column chunks.
 */
export function readColumnChunks(footer: ParquetFooter, span: Uint8Array, spanStart: number, rowGroups: readonly number[], leafIndexes: readonly number[], options: ReadColumnOptions = {}): DecodedColumn[] {
  const kept = options.pageBuffers;
  const levels = leafLevels(footer);
  const groups = rowGroups.map((g) => {
    const rg = footer.rowGroups[g];
    if (!rg) throw new ParquetError('INVALID_PARQUET', `Parquet file has ${footer.rowGroups.length} row groups; row group ${g} does not exist`);
    if (rg.columns.length !== footer.leaves.length) invalid(`row group ${g}`, `${rg.columns.length} column chunks for ${footer.leaves.length} leaf columns`);
    return rg;
  });
  return leafIndexes.map((li) => {
    const leaf = footer.leaves[li];
    if (!leaf) throw new ParquetError('INVALID_PARQUET', `Parquet schema has ${footer.leaves.length} leaf columns; leaf ${li} does not exist`);
    const type = leaf.element.physicalType;
    const where = `column ${leaf.path.join('.')}`;
    if (type !== PhysicalType.INT32 && type !== PhysicalType.INT64 && type !== PhysicalType.BYTE_ARRAY) unsupported(where, `physical type ${TYPE_NAMES[type ?? -1] ?? type}`);
    const info = levels[li]!;
    if (info.maxDefinitionLevel > 255 || info.maxRepetitionLevel > 255) unsupported(where, 'nesting deeper than 255 levels');
    let total = 0;
    let uncompressed = 1;
    groups.forEach((rg, k) => {
      const c = rg.columns[li]!;
      const w = chunkWhere(leaf, rowGroups[k]!);
      if (c.physicalType !== type) invalid(w, `chunk type ${TYPE_NAMES[c.physicalType] ?? c.physicalType} differs from the schema's ${TYPE_NAMES[type]}`);
      if (c.path.join('.') !== leaf.path.join('.')) invalid(w, `chunk path ${c.path.join('.')} differs from the schema's`);
      if (!codecSupported(c.codec)) unsupported(w, `compression codec ${c.codec}`);
      if (c.numValues < 0n || c.totalCompressedSize < 0n) invalid(w, 'negative value count or size');
      total += Number(c.numValues);
      uncompressed += Number(c.totalUncompressedSize);
    });
    if (total > MAX_LEVELS_PER_READ) unsupported(where, `${total} values in one read (more than ${MAX_LEVELS_PER_READ}); read fewer row groups at a time`);
    const col = new ColumnBuilder(li, leaf, info, type, total, type === PhysicalType.BYTE_ARRAY && uncompressed > 0 ? uncompressed : 0);
    groups.forEach((rg, k) => readChunk(col, rg.columns[li]!, rowGroups[k]!, Number(rg.numRows), span, spanStart, kept));
    return col.result();
  });
}
