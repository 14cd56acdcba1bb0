/**
 * Fetch from Parquet: rebuilds the original record batches of an offset range from a tiered data file and
 * its offset index, reading only the row groups needed (one range read of their column chunks, plus the
 * footer once, cached).
 *
 * What comes back: every batch with its stored base offset, lastOffsetDelta (gaps kept, never renumbered),
 * partition leader epoch, timestamps and timestamp type, transactional/control bits, producer id, epoch and
 * base sequence; its records section byte-identical to the original's (decompressed) records; a valid CRC.
 * Control batches come back as the bytes that were stored.
 *
 * Compression choice: by default (`compression: 'none'`) rebuilt batches are sent uncompressed (codec bits
 * cleared, CRC recomputed). Consumers decode exactly the same records either way, uncompressed batches of
 * originally uncompressed data are byte-identical to the log, the size of each batch is known from the
 * index before any data is read (so max.bytes is honoured exactly), and re-compressing would cost CPU on
 * every cold fetch (gzip at ~125 MB/s would cap remote reads). `compression: 'original'` re-compresses with
 * the batch's own codec for links where bandwidth matters more; the compressed bytes then differ from the
 * producer's (other compressor settings) but the records and CRC validity do not.
 *
 * Decoding: the row groups a fetch needs are decoded by the native column reader
 * (iceberg/parquet/column-reader.ts) into typed arrays, and each batch's records section is written straight
 * into the batch's buffer (its size is known from the index) with varints computed from the column values:
 * no per-record objects, header keys copied as bytes. Files the native reader does not support (encodings
 * or codecs of other writers: UNSUPPORTED_TYPE) fall back to parquet-wasm, an Arrow table and
 * `encodeRecords`; both paths give the same bytes.
 *
 * Caches: parsed footers with the last decoded row group of each reader (`FooterCache`), and the responses
 * of recent fetches, batch by batch (`BatchCache`), all under byte budgets.
 */
import type * as arrow from 'apache-arrow';
import { LRUCache } from 'lru-cache';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { readParquetTable } from '../../iceberg/parquet/reader.js';
import { findLeafByFieldId, int64At, leafLevels, readColumnChunks, type DecodedColumn } from '../../iceberg/parquet/column-reader.js';
import { ParquetError } from '../../iceberg/parquet/errors.js';
import { parseFileMetaData, PhysicalType, type ParquetFooter } from '../../iceberg/parquet/footer.js';
import { ATTR_COMPRESSION_MASK, BATCH_HEADER_SIZE, BATCH_LOG_OVERHEAD, BATCH_OFFSETS } from '../../protocol/record-batch/header.js';
import { compress, compressionOf } from '../../protocol/record-batch/compression.js';
import { writeBatchCrc } from '../../protocol/record-batch/crc.js';
import { MAGIC_V2 } from '../../protocol/record-batch/record-batch.js';
import { encodeRecords, type RecordHeader, type RecordInput } from '../../protocol/record-batch/records.js';
import { sizeOfVarint, sizeOfVarlongNumber, writeVarint, writeVarlongNumber } from '../../protocol/varint.js';
import { TieringConvertError } from './errors.js';
import { FIELD_IDS } from './schema.js';
import { decodeFooterTree, footerTreeCost, sliceParquetFile, type ThriftStructNode } from './parquet-slice.js';
import type { IndexedBatch, SegmentIndex } from '../offset-index/format.js';
import { findBatch, findRowGroupByRow } from '../offset-index/lookup.js';
import { ByteBudgetCache } from '../offset-index/cache.js';
import { resolveLocation } from '../offset-index/location.js';

export type RebuildCompression = 'none' | 'original';

/**
 * A data file's footer as loaded once per file: the typed Thrift tree (for slicing, the parquet-wasm path),
 * the parsed footer and the leaf columns the native reader decodes (null when the file cannot be read
 * natively: a footer this code does not parse, or columns of other types; the fallback path is used).
 */
export interface LoadedFooter {
  readonly tree: ThriftStructNode;
  readonly native: NativeLeaves | null;
  /** Why `native` is null, for diagnostics. */
  readonly nativeUnavailable?: string;
  /** Set once the native reader reported UNSUPPORTED_TYPE for this file, so later fetches skip it. */
  nativeFailed?: string;
}

/** Bytes of natively decoded row groups a footer cache keeps by default (see FooterCache.rowGroups). */
export const DEFAULT_DECODED_ROW_GROUP_BYTES = 16 * 1024 * 1024;

/**
 * A cache of loaded Parquet footers, keyed by data file location, with natively decoded row groups beside it
 * under their own byte budget: the row group each fetch ended in, since a consumer reading forward starts
 * its next fetch there (fetches and row groups are both about 1 MiB), so without it every row group would be
 * range-read and decoded twice. One entry per reader in the middle of a file; the budget bounds how many.
 */
export class FooterCache extends ByteBudgetCache<LoadedFooter> {
  readonly rowGroups: LRUCache<string, NativeRows> | null;
  constructor(maxBytes: number, decodedRowGroupBytes: number) {
    // The cost is charged from the encoded length recorded at load time.
    super({ maxBytes, sizeOf: (t) => footerCosts.get(t) ?? 4096 });
    // An entry holds a reference on its rows (see releaseRows), dropped when it leaves the cache.
    this.rowGroups =
      decodedRowGroupBytes > 0 ? new LRUCache<string, NativeRows>({ maxSize: decodedRowGroupBytes, sizeCalculation: (r) => Math.max(1, r.bytes), dispose: (r) => releaseRows(r) }) : null;
  }
}

/**
 * Reused buffers: for the decompressed pages that decoded row groups keep (byte-array values stay in their
 * pages), and for the batch cache's copies of responses. Writing into fresh memory page-faults, and on this
 * kind of machine that costs more than zstd itself (about 2.5x slower per page), so buffers no longer in use
 * come back here. Only buffers of our own (allocUnsafeSlow, never Node's shared pool slab) are kept, up to
 * `maxFree` bytes.
 */
class PageBufferPool {
  private readonly free: Buffer[] = [];
  private freeBytes = 0;
  constructor(private readonly maxFree: number) {}
  /** A buffer of at least n bytes: the smallest free one no more than twice as large, else a new one. */
  take(n: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const len = this.free[i]!.length;
      if (len >= n && len <= 2 * n + 65536 && (best < 0 || len < this.free[best]!.length)) best = i;
    }
    if (best >= 0) {
      const buf = this.free[best]!;
      this.free[best] = this.free[this.free.length - 1]!;
      this.free.pop();
      this.freeBytes -= buf.length;
      return buf;
    }
    // Rounded up so pages of slightly different sizes can use each other's buffers.
    return Buffer.allocUnsafeSlow(n <= 65536 ? n : Math.ceil((n * 1.0625) / 65536) * 65536);
  }
  give(buf: Buffer): void {
    if (buf.length > this.maxFree) return;
    while (this.free.length > 0 && this.freeBytes + buf.length > this.maxFree) this.freeBytes -= this.free.shift()!.length;
    this.free.push(buf);
    this.freeBytes += buf.length;
  }
}
const pagePool = new PageBufferPool(16 * 1024 * 1024);

/**
 * Drops one reference on decoded rows: the fetch that decoded or took them from the cache holds one until
 * it has written its batches, and the decoded row group cache one while they are in it. The last one
 * returns their page buffers to the pool.
 */
function releaseRows(rows: NativeRows): void {
  if (--rows.refs !== 0) return;
  const pages = rows.pages;
  rows.pages = [];
  for (const buf of pages) pagePool.give(buf);
}

export function createFooterCache(maxBytes: number, decodedRowGroupBytes = DEFAULT_DECODED_ROW_GROUP_BYTES): FooterCache {
  return new FooterCache(maxBytes, decodedRowGroupBytes);
}
const footerCosts = new WeakMap<LoadedFooter, number>();

/**
 * Rebuilt batches kept in memory under a byte budget, so repeated reads of one remote range (several
 * consumers, re-reads after a rebalance) skip the range read, the Parquet decode and the record encoding.
 *
 * The unit kept is a fetch's whole response (a chunk: the cache's own copy, one allocation), with each of its
 * data batches findable by key (data file location, batch base offset, compression mode) as a view into it.
 * A fetch whose batches are all cached is served by copying those views out, whichever fetches cached them;
 * callers get their own buffer, so writing into a response cannot change what the next fetch gets. Chunks
 * are evicted least recently used first (lru-cache `maxSize` over chunk bytes), taking their batches with
 * them. The files are immutable once written (deterministic names: a retry writes the same bytes), so
 * entries never go stale.
 *
 * A response is kept only once one of its batches is asked for a second time (admission on the second
 * request, by key, remembered for a bounded number of keys): a reader moving forward never asks twice (each
 * fetch starts after the last one's batches; the decoded row group kept beside the footers spares it a
 * second decode), so a one-pass scan of history neither pays for copies nobody reads nor evicts the ranges
 * other consumers are re-reading.
 */
export class BatchCache {
  private readonly chunks: LRUCache<number, CachedChunk>;
  private readonly views = new Map<string, { readonly chunk: CachedChunk; readonly start: number; readonly end: number }>();
  private nextChunk = 0;
  /** Keys of batches fetched once and not kept (admission on the second request). */
  private readonly seen: LRUCache<string, true>;
  /** Responses not kept because none of their batches had been asked for before. */
  declined = 0;
  /**
   * Memory of evicted chunks for the next ones: responses are of similar sizes, and fresh memory costs a
   * page fault per page on first write, which here made keeping a copy cost more than the copy itself.
   */
  private readonly pool = new PageBufferPool(16 * 1024 * 1024);
  hits = 0;
  misses = 0;
  constructor(readonly maxBytes: number) {
    // A chunk larger than the whole budget is not kept (lru-cache refuses it); the rest evict oldest first.
    this.seen = new LRUCache<string, true>({ max: Math.min(1 << 16, Math.max(1024, Math.floor(maxBytes / 4096))) });
    this.chunks = new LRUCache<number, CachedChunk>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (c) => Math.max(1, c.memory.length + BATCH_ENTRY_OVERHEAD * c.keys.length),
      dispose: (c) => {
        for (const key of c.keys) if (this.views.get(key)?.chunk === c) this.views.delete(key);
        // No view of it is held outside this class between calls: the memory can take the next response.
        this.pool.give(c.memory);
      },
    });
  }
  static key(location: string, b: IndexedBatch, compression: RebuildCompression): string {
    return `${location}@${b.baseOffset}/${compression}`;
  }
  /** A cached batch (a view into its chunk: copy before handing it out), counting a hit or a miss. */
  get(key: string): Buffer | undefined {
    const v = this.views.get(key);
    // Refresh the chunk's recency; it may have just been evicted by an insertion.
    if (v === undefined || this.chunks.get(v.chunk.id) !== v.chunk) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    return v.chunk.bytes.subarray(v.start, v.end);
  }
  /**
   * Keeps a copy of `records` (a fetch's response) with the batches at `at` ([key, start, end) within it)
   * findable, if one of them was fetched before; otherwise only remembers their keys. Nothing is kept when
   * the budget is 0 or the copy alone exceeds it.
   */
  keep(records: Buffer, at: readonly (readonly [key: string, start: number, end: number])[]): void {
    if (this.maxBytes <= 0 || at.length === 0 || records.length + BATCH_ENTRY_OVERHEAD * at.length > this.maxBytes) return;
    if (!at.some(([key]) => this.seen.has(key))) {
      for (const [key] of at) this.seen.set(key, true);
      this.declined++;
      return;
    }
    const memory = this.pool.take(records.length);
    const bytes = memory.subarray(0, records.length);
    records.copy(bytes);
    const chunk: CachedChunk = { id: this.nextChunk++, bytes, memory, keys: at.map(([key]) => key) };
    this.chunks.set(chunk.id, chunk);
    // lru-cache refuses an entry larger than the budget (the pooled memory may be larger than the response).
    if (this.chunks.peek(chunk.id) !== chunk) {
      this.pool.give(memory);
      return;
    }
    for (const [key, start, end] of at) this.views.set(key, { chunk, start, end });
  }
  /** Bytes charged against the budget (chunk bytes plus a fixed per-batch overhead). */
  get bytes(): number {
    return this.chunks.calculatedSize;
  }
  /** Batches findable in the cache. */
  get size(): number {
    return this.views.size;
  }
  clear(): void {
    this.chunks.clear();
    this.seen.clear();
  }
}

interface CachedChunk {
  readonly id: number;
  /** The response, at the start of `memory` (a pooled buffer, possibly larger). */
  readonly bytes: Buffer;
  readonly memory: Buffer;
  /** The batch keys that pointed into this chunk when it was kept (later chunks may have taken some). */
  readonly keys: readonly string[];
}

/** What one cached batch costs beyond its bytes (key string, map entry, view), roughly. */
const BATCH_ENTRY_OVERHEAD = 256;

export function createBatchCache(maxBytes: number): BatchCache {
  return new BatchCache(maxBytes);
}

export interface RemoteFetchRequest {
  readonly io: FileIO;
  readonly tableLocation: string;
  readonly index: SegmentIndex;
  readonly fetchOffset: bigint;
  /** Stop before a batch that would take the response past this many bytes; the first batch is always whole. */
  readonly maxBytes: number;
  readonly footers?: FooterCache;
  /** Rebuilt batches served from memory when present, and kept there after a read. */
  readonly batches?: BatchCache;
  /** Default 'none' (see the module comment). */
  readonly compression?: RebuildCompression;
  /**
   * How row groups are decoded: 'auto' (default) uses the native column reader and falls back to
   * parquet-wasm for files it does not support (other writers' encodings or codecs); 'native' and
   * 'parquet-wasm' force one path (tests and benchmarks compare them).
   */
  readonly decoder?: RowDecoder;
  /**
   * Whether natively decoded row groups are taken from and kept in `footers` (default true): a consumer
   * reading forward then decodes each row group once (see FooterCache).
   */
  readonly reuseDecodedRowGroups?: boolean;
}

export type RowDecoder = 'auto' | 'native' | 'parquet-wasm';

export interface RemoteFetchResult {
  /** Concatenated record batches, ready for a Fetch response's `records`. */
  readonly records: Buffer;
  readonly batchCount: number;
  /** The offset after the last batch returned (where the next fetch continues); fetchOffset if none. */
  readonly nextOffset: bigint;
  /** Bytes read from object storage for data (the footer excluded). */
  readonly bytesRead: number;
  /** Which decoder rebuilt the batches; null when nothing was decoded (all cached or stored). */
  readonly decodedWith: 'native' | 'parquet-wasm' | null;
}

/** Size of a rebuilt batch before reading it (exact for 'none'; the original size for 'original'). */
export function plannedSize(b: IndexedBatch, compression: RebuildCompression): number {
  if (b.stored !== null) return b.stored.length;
  return compression === 'none' || (b.attributes & ATTR_COMPRESSION_MASK) === 0 ? BATCH_HEADER_SIZE + b.recordsBytes : b.originalSize;
}

/** The batches [first, end) of the index a fetch at `fetchOffset` returns within `maxBytes`. */
export function planFetch(index: SegmentIndex, fetchOffset: bigint, maxBytes: number, compression: RebuildCompression = 'none'): { first: number; end: number } {
  const first = findBatch(index, fetchOffset);
  if (first < 0) return { first: 0, end: 0 };
  let end = first;
  let total = 0;
  while (end < index.batches.length) {
    const size = plannedSize(index.batches[end]!, compression);
    if (end > first && total + size > maxBytes) break;
    total += size;
    end++;
  }
  return { first, end };
}

async function loadFooter(io: FileIO, location: string, index: SegmentIndex, cache: FooterCache | undefined): Promise<LoadedFooter> {
  const df = index.dataFile!;
  const load = async (): Promise<LoadedFooter> => {
    const meta = await io.getRange(location, df.footerOffset, df.footerLength);
    if (meta.length !== df.footerLength) {
      throw new TieringConvertError('INDEX_MISMATCH', `data file ${location} is shorter than its index says (footer at ${df.footerOffset}+${df.footerLength}); re-tier the segment`);
    }
    const tree = decodeFooterTree(meta);
    let loaded: LoadedFooter;
    try {
      loaded = { tree, native: nativeLeaves(parseFileMetaData(meta)) };
    } catch (err) {
      if (!(err instanceof ParquetError)) throw err;
      loaded = { tree, native: null, nativeUnavailable: err.message };
    }
    // Two parsed forms of the footer: charge both.
    footerCosts.set(loaded, 2 * footerTreeCost(meta.length));
    return loaded;
  };
  return cache ? cache.get(location, load) : load();
}

/** The leaf columns a records section is rebuilt from, located by field id, with their types checked. */
export interface NativeLeaves {
  readonly footer: ParquetFooter;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: number;
  readonly headerKey: number;
  readonly headerValue: number;
  readonly recordAttributes: number;
  readonly timestampDelta: number;
  readonly rawRecord: number;
  readonly value: number;
}

function nativeLeaves(footer: ParquetFooter): NativeLeaves {
  const levels = leafLevels(footer);
  const leaf = (name: string, id: number, type: PhysicalType, repeated: boolean): number => {
    const i = findLeafByFieldId(footer, id);
    if (i < 0) throw new ParquetError('UNSUPPORTED_TYPE', `data file has no column with field id ${id} (${name})`);
    const l = footer.leaves[i]!;
    const rep = levels[i]!.maxRepetitionLevel;
    if (l.element.physicalType !== type || rep !== (repeated ? 1 : 0)) {
      throw new ParquetError('UNSUPPORTED_TYPE', `column ${l.path.join('.')} (${name}) has physical type ${l.element.physicalType} and ${rep} repetition levels, not the topic schema's`);
    }
    return i;
  };
  const { INT32, INT64, BYTE_ARRAY } = PhysicalType;
  return {
    footer,
    offset: leaf('offset', FIELD_IDS.offset, INT64, false),
    timestamp: leaf('timestamp', FIELD_IDS.timestamp, INT64, false),
    key: leaf('key', FIELD_IDS.key, BYTE_ARRAY, false),
    headerKey: leaf('header key', FIELD_IDS.headerKey, BYTE_ARRAY, true),
    headerValue: leaf('header value', FIELD_IDS.headerValue, BYTE_ARRAY, true),
    recordAttributes: leaf('record_attributes', FIELD_IDS.recordAttributes, INT32, false),
    timestampDelta: leaf('timestamp_delta', FIELD_IDS.timestampDelta, INT64, false),
    rawRecord: leaf('raw_record', FIELD_IDS.rawRecord, BYTE_ARRAY, false),
    value: leaf('value', FIELD_IDS.value, BYTE_ARRAY, false),
  };
}

/** Byte-array values: value i is data[starts[i], ends[i]). */
interface Bytes {
  readonly data: Buffer;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
}

/**
 * The decoded rows of some row groups, as typed arrays: per optional column a row -> value index map (-1
 * for null; null map when the column has no nulls by schema), INT64 values as (low, high) int32 pairs.
 */
interface NativeRows {
  readonly rows: number;
  /** Holders of these rows (see releaseRows); their pooled page buffers are reused once none is left. */
  refs: number;
  /** Pooled buffers the byte-array values may point into. */
  pages: Buffer[];
  /** Memory held (value buffers and arrays), for the decoded row group budget. */
  readonly bytes: number;
  readonly offset: Int32Array;
  readonly offsetAt: Int32Array | null;
  readonly timestamp: Int32Array;
  readonly timestampAt: Int32Array | null;
  readonly key: Bytes;
  readonly keyAt: Int32Array | null;
  readonly value: Bytes;
  readonly valueAt: Int32Array | null;
  readonly raw: Bytes;
  readonly rawAt: Int32Array | null;
  readonly attributes: Int32Array;
  readonly attributesAt: Int32Array | null;
  readonly timestampDelta: Int32Array;
  readonly timestampDeltaAt: Int32Array | null;
  /** Headers of row r are elements [headerStart[r], headerStart[r + 1]); header key k is hKey value k. */
  readonly headerStart: Int32Array;
  readonly hKey: Bytes;
  readonly hValue: Bytes;
  readonly hValueAt: Int32Array;
}

function mismatch(what: string): never {
  throw new TieringConvertError('INDEX_MISMATCH', `${what}; the data file does not match its index, re-tier the segment`);
}

/** Row -> value index of a column outside lists (-1 for null); null when every row has a value. */
function valueIndex(c: DecodedColumn, rows: number): Int32Array | null {
  if (c.numRows !== rows || c.repetitionLevels !== null) mismatch(`column ${c.leaf.path.join('.')} has ${c.numRows} rows where ${rows} were expected`);
  const def = c.definitionLevels;
  if (def === null) return null;
  const at = new Int32Array(rows);
  const max = c.maxDefinitionLevel;
  let v = 0;
  for (let r = 0; r < rows; r++) at[r] = def[r] === max ? v++ : -1;
  return at;
}

function bytesOf(c: DecodedColumn): Bytes {
  if (c.values.kind !== 'bytes') throw new ParquetError('UNSUPPORTED_TYPE', `column ${c.leaf.path.join('.')} is not binary`);
  return c.values;
}

function intsOf(c: DecodedColumn): Int32Array {
  if (c.values.kind === 'bytes') throw new ParquetError('UNSUPPORTED_TYPE', `column ${c.leaf.path.join('.')} is not an integer`);
  return c.values.data;
}

/** Element presence: the definition level of the repeated (list) level of a column inside a list. */
function elementLevel(c: DecodedColumn): number {
  const i = c.pathRepetition.indexOf('REPEATED');
  return c.pathDefinitionLevels[i]!;
}

/** Decodes the columns a records section needs from row groups [first, last] with the native reader. */
function decodeNative(leaves: NativeLeaves, span: Uint8Array, spanStart: number, first: number, last: number): NativeRows {
  const groups: number[] = [];
  for (let g = first; g <= last; g++) groups.push(g);
  const ids = [leaves.offset, leaves.timestamp, leaves.key, leaves.value, leaves.rawRecord, leaves.recordAttributes, leaves.timestampDelta, leaves.headerKey, leaves.headerValue];
  const pages: Buffer[] = [];
  const pageBuffers = (n: number): Buffer => {
    const buf = pagePool.take(n);
    pages.push(buf);
    return buf;
  };
  const [offset, timestamp, key, value, raw, attributes, tsDelta, hk, hv] = readColumnChunks(leaves.footer, span, spanStart, groups, ids, { pageBuffers }) as [DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn];
  const rows = offset.numRows;
  // Headers: one level entry per list element, or one for a null or empty list.
  if (hk.numLevels !== hv.numLevels) mismatch(`header keys have ${hk.numLevels} entries, header values ${hv.numLevels}`);
  const headerStart = new Int32Array(rows + 1);
  const hValueAt = new Int32Array(hk.numValues);
  const kDef = hk.definitionLevels!;
  const vDef = hv.definitionLevels!;
  const rep = hk.repetitionLevels!;
  const kElem = elementLevel(hk);
  const vElem = elementLevel(hv);
  const kMax = hk.maxDefinitionLevel;
  const vMax = hv.maxDefinitionLevel;
  let row = -1;
  let elements = 0;
  let vv = 0;
  for (let i = 0; i < hk.numLevels; i++) {
    if (rep[i] === 0) {
      if (++row >= rows) mismatch(`headers column has more than the ${rows} rows of the others`);
      headerStart[row] = elements;
    }
    const kd = kDef[i]!;
    if (kd < kElem) {
      if (vDef[i]! >= vElem) mismatch('header key and value columns disagree on which headers exist');
      continue;
    }
    if (kd !== kMax) mismatch(`a header without a key in row ${row}`);
    if (vDef[i]! < vElem) mismatch('header key and value columns disagree on which headers exist');
    hValueAt[elements++] = vDef[i] === vMax ? vv++ : -1;
  }
  if (row + 1 !== rows) mismatch(`headers column has ${row + 1} rows where the others have ${rows}`);
  headerStart[rows] = elements;
  // Byte-array values are views of whole decompressed pages, or of the read span for uncompressed pages:
  // charge the memory they keep alive (a span shared by several row groups is charged to each).
  let bytes = 0;
  for (const c of [offset, timestamp, key, value, raw, attributes, tsDelta, hk, hv]) {
    bytes += c.values.kind === 'bytes' ? c.values.data.buffer.byteLength + 8 * c.numValues : c.values.data.byteLength;
  }
  bytes += 4 * (rows * 7 + hValueAt.length);
  return {
    rows,
    refs: 1,
    pages,
    bytes,
    offset: intsOf(offset),
    offsetAt: valueIndex(offset, rows),
    timestamp: intsOf(timestamp),
    timestampAt: valueIndex(timestamp, rows),
    key: bytesOf(key),
    keyAt: valueIndex(key, rows),
    value: bytesOf(value),
    valueAt: valueIndex(value, rows),
    raw: bytesOf(raw),
    rawAt: valueIndex(raw, rows),
    attributes: intsOf(attributes),
    attributesAt: valueIndex(attributes, rows),
    timestampDelta: intsOf(tsDelta),
    timestampDeltaAt: valueIndex(tsDelta, rows),
    headerStart,
    hKey: bytesOf(hk),
    hValue: bytesOf(hv),
    hValueAt,
  };
}

/** Copies src[s, e) to dst at d; a byte loop for short values, where the native copy's call costs more. */
function copyBytes(src: Buffer, s: number, e: number, dst: Buffer, d: number): void {
  if (e - s < 48) {
    for (let i = s; i < e; i++) dst[d++] = src[i]!;
  } else src.copy(dst, d, s, e);
}

function int64Safe(pairs: Int32Array, i: number, what: string): number {
  const hi = pairs[2 * i + 1]!;
  if (hi < -0x200000 || hi >= 0x200000) mismatch(`${what} ${hi} * 2^32 is beyond 2^53`);
  return int64At(pairs, i);
}

/** The decoded rows of one row group, starting at row `firstRow` of the data file. */
interface NativePart {
  readonly firstRow: number;
  readonly rows: NativeRows;
}

/**
 * Writes batch `b`'s records section into out[start, start + b.recordsBytes) from decoded row groups,
 * byte-identical to the original's: raw_record bytes when present, else the record encoded from the typed
 * columns. Throws INDEX_MISMATCH unless it is exactly that long.
 */
function writeRecordsSection(parts: readonly NativePart[], b: IndexedBatch, out: Buffer, start: number): void {
  const end = start + b.recordsBytes;
  let p = start;
  let row = b.firstRow;
  const stop = b.firstRow + b.recordsCount;
  // A batch may straddle row groups: write the rows of each part in turn.
  for (const part of parts) {
    if (row >= stop) break;
    const partEnd = part.firstRow + part.rows.rows;
    if (row >= partEnd) continue;
    if (row < part.firstRow) break;
    const to = Math.min(stop, partEnd);
    p = writeRows(part.rows, row - part.firstRow, to - row, b, out, p, end);
    row = to;
  }
  if (row !== stop) mismatch(`rows ${b.firstRow}..${stop - 1} are not all in the row groups read`);
  if (p !== end) mismatch(`batch at offset ${b.baseOffset} rebuilt to ${p - start} bytes of records, the index recorded ${b.recordsBytes}`);
}

/** Writes `count` records from row `first` of `n` at out[p...] (not past `end`); returns the position after them. */
function writeRows(n: NativeRows, first: number, count: number, b: IndexedBatch, out: Buffer, start: number, end: number): number {
  const baseOffset = Number(b.baseOffset);
  const baseTs = Number(b.baseTimestamp);
  const { offset, offsetAt, timestamp, timestampAt, key, keyAt, value, valueAt, raw, rawAt, attributes, attributesAt, timestampDelta, timestampDeltaAt, headerStart, hKey, hValue, hValueAt } = n;
  const over = (): never => mismatch(`batch at offset ${b.baseOffset} rebuilds to more than the ${b.recordsBytes} bytes of records its index recorded`);
  let p = start;
  for (let row = first, last = first + count; row < last; row++) {
    const ri = rawAt === null ? row : rawAt[row]!;
    if (ri >= 0) {
      const s = raw.starts[ri]!;
      const e = raw.ends[ri]!;
      if (p + (e - s) > end) over();
      copyBytes(raw.data, s, e, out, p);
      p += e - s;
      continue;
    }
    const oi = offsetAt === null ? row : offsetAt[row]!;
    const offsetDelta = int64Safe(offset, oi, 'offset') - baseOffset;
    const di = timestampDeltaAt === null ? row : timestampDeltaAt[row]!;
    let tsDelta: number;
    if (di >= 0) tsDelta = int64Safe(timestampDelta, di, 'timestamp_delta');
    else {
      const ti = timestampAt === null ? row : timestampAt[row]!;
      tsDelta = Math.round(int64Safe(timestamp, ti, 'timestamp') / 1000) - baseTs;
    }
    const ai = attributesAt === null ? row : attributesAt[row]!;
    const attrs = ai >= 0 ? attributes[ai]! & 0xff : 0;
    const ki = keyAt === null ? row : keyAt[row]!;
    const ks = ki >= 0 ? key.starts[ki]! : 0;
    const kl = ki >= 0 ? key.ends[ki]! - ks : -1;
    const vi = valueAt === null ? row : valueAt[row]!;
    const vs = vi >= 0 ? value.starts[vi]! : 0;
    const vl = vi >= 0 ? value.ends[vi]! - vs : -1;
    const h0 = headerStart[row]!;
    const h1 = headerStart[row + 1]!;
    let body = 1 + sizeOfVarlongNumber(tsDelta) + sizeOfVarint(offsetDelta) + sizeOfVarint(kl) + (kl > 0 ? kl : 0) + sizeOfVarint(vl) + (vl > 0 ? vl : 0) + sizeOfVarint(h1 - h0);
    for (let h = h0; h < h1; h++) {
      const hkl = hKey.ends[h]! - hKey.starts[h]!;
      const hvi = hValueAt[h]!;
      const hvl = hvi >= 0 ? hValue.ends[hvi]! - hValue.starts[hvi]! : -1;
      body += sizeOfVarint(hkl) + hkl + sizeOfVarint(hvl) + (hvl > 0 ? hvl : 0);
    }
    if (p + sizeOfVarint(body) + body > end) over();
    p = writeVarint(out, p, body);
    out[p++] = attrs;
    p = writeVarlongNumber(out, p, tsDelta);
    p = writeVarint(out, p, offsetDelta);
    p = writeVarint(out, p, kl);
    if (kl > 0) {
      copyBytes(key.data, ks, ks + kl, out, p);
      p += kl;
    }
    p = writeVarint(out, p, vl);
    if (vl > 0) {
      copyBytes(value.data, vs, vs + vl, out, p);
      p += vl;
    }
    p = writeVarint(out, p, h1 - h0);
    for (let h = h0; h < h1; h++) {
      const hs = hKey.starts[h]!;
      const hkl = hKey.ends[h]! - hs;
      p = writeVarint(out, p, hkl);
      copyBytes(hKey.data, hs, hs + hkl, out, p);
      p += hkl;
      const hvi = hValueAt[h]!;
      if (hvi < 0) p = writeVarint(out, p, -1);
      else {
        const vs2 = hValue.starts[hvi]!;
        const hvl = hValue.ends[hvi]! - vs2;
        p = writeVarint(out, p, hvl);
        copyBytes(hValue.data, vs2, vs2 + hvl, out, p);
        p += hvl;
      }
    }
  }
  return p;
}

/** Whether batch `b` is rebuilt uncompressed (so exactly 61 + recordsBytes long). */
function rebuiltUncompressed(b: IndexedBatch, compression: RebuildCompression): boolean {
  return compression === 'none' || (b.attributes & ATTR_COMPRESSION_MASK) === 0;
}

/** A batch rebuilt from natively decoded rows: the records written in place behind the header. */
function nativeBatch(parts: readonly NativePart[], b: IndexedBatch, compression: RebuildCompression): Buffer {
  if (!rebuiltUncompressed(b, compression)) {
    const section = Buffer.allocUnsafe(b.recordsBytes);
    writeRecordsSection(parts, b, section, 0);
    return assembleBatch(b, section, compression);
  }
  const buf = Buffer.allocUnsafe(BATCH_HEADER_SIZE + b.recordsBytes);
  writeNativeBatchAt(parts, b, buf, 0);
  return buf;
}

/** Writes uncompressed batch `b` (61 + recordsBytes bytes) at buf[at...]: records, then header and CRC. */
function writeNativeBatchAt(parts: readonly NativePart[], b: IndexedBatch, buf: Buffer, at: number): void {
  writeRecordsSection(parts, b, buf, at + BATCH_HEADER_SIZE);
  writeBatchHeader(buf, at, BATCH_HEADER_SIZE + b.recordsBytes, b, b.attributes & ~ATTR_COMPRESSION_MASK);
}

/** Typed views of one Arrow chunk's columns. */
class Columns {
  readonly rows: number;
  private readonly kafka: arrow.Data;
  private readonly value: arrow.Data;
  constructor(batch: arrow.RecordBatch) {
    this.rows = batch.numRows;
    this.kafka = batch.data.children[0]!;
    this.value = batch.data.children[1]!;
  }
  private k(i: number): arrow.Data {
    return this.kafka.children[i]!;
  }
  static valid(d: arrow.Data, i: number): boolean {
    if (d.nullCount === 0 || !d.nullBitmap || d.nullBitmap.length === 0) return true;
    const j = d.offset + i;
    return (d.nullBitmap[j >> 3]! & (1 << (j & 7))) !== 0;
  }
  static bin(d: arrow.Data, i: number): Buffer | null {
    if (!Columns.valid(d, i)) return null;
    const offs = d.valueOffsets as Int32Array;
    const s = offs[d.offset + i]!;
    const e = offs[d.offset + i + 1]!;
    const v = d.values as Uint8Array;
    return Buffer.from(v.buffer, v.byteOffset + s, e - s);
  }
  static i64(d: arrow.Data, i: number): number {
    return Number((d.values as BigInt64Array)[d.offset + i]!);
  }
  static i32(d: arrow.Data, i: number): number {
    return (d.values as Int32Array)[d.offset + i]!;
  }
  offset(i: number): number {
    return Columns.i64(this.k(1), i);
  }
  timestampMicros(i: number): number {
    return Columns.i64(this.k(2), i);
  }
  key(i: number): Buffer | null {
    return Columns.bin(this.k(4), i);
  }
  headers(i: number): RecordHeader[] {
    const list = this.k(5);
    if (!Columns.valid(list, i)) return [];
    const offs = list.valueOffsets as Int32Array;
    const s = offs[list.offset + i]!;
    const e = offs[list.offset + i + 1]!;
    if (s === e) return [];
    const elems = list.children[0]!;
    const keys = elems.children[0]!;
    const values = elems.children[1]!;
    const out: RecordHeader[] = [];
    for (let h = s; h < e; h++) {
      const kb = Columns.bin(keys, elems.offset + h)!;
      out.push({ key: kb.toString('utf8'), value: Columns.bin(values, elems.offset + h) });
    }
    return out;
  }
  recordAttributes(i: number): number {
    const d = this.k(7);
    return Columns.valid(d, i) ? Columns.i32(d, i) : 0;
  }
  timestampDelta(i: number): number | null {
    const d = this.k(8);
    return Columns.valid(d, i) ? Columns.i64(d, i) : null;
  }
  raw(i: number): Buffer | null {
    return Columns.bin(this.k(9), i);
  }
  val(i: number): Buffer | null {
    return Columns.bin(this.value, i);
  }
}

/** Row access across the chunks of a decoded table, for rows read in increasing order. */
class RowCursor {
  private chunk = 0;
  private chunkStart = 0;
  private readonly cols: Columns[];
  constructor(table: arrow.Table) {
    this.cols = table.batches.map((b) => new Columns(b));
  }
  at(row: number): [Columns, number] {
    for (;;) {
      const c = this.cols[this.chunk];
      if (!c) throw new TieringConvertError('INDEX_MISMATCH', `row ${row} is past the rows read from the data file; the index does not match its data file`);
      if (row < this.chunkStart + c.rows) return [c, row - this.chunkStart];
      this.chunkStart += c.rows;
      this.chunk++;
    }
  }
}

/** The records section of a data batch from its rows, byte-identical to the original's. */
function recordsSection(b: IndexedBatch, cursor: RowCursor, rowBase: number): Buffer {
  const parts: Buffer[] = [];
  let run: RecordInput[] = [];
  const baseOffset = Number(b.baseOffset);
  const baseTs = Number(b.baseTimestamp);
  for (let r = 0; r < b.recordsCount; r++) {
    const [c, i] = cursor.at(b.firstRow + r - rowBase);
    const raw = c.raw(i);
    if (raw !== null) {
      if (run.length > 0) parts.push(encodeRecords(run));
      run = [];
      parts.push(raw);
      continue;
    }
    const offset = c.offset(i);
    const delta = c.timestampDelta(i) ?? Math.round(c.timestampMicros(i) / 1000) - baseTs;
    run.push({ attributes: c.recordAttributes(i), timestampDelta: delta, offsetDelta: offset - baseOffset, key: c.key(i), value: c.val(i), headers: c.headers(i) });
  }
  if (run.length > 0) parts.push(encodeRecords(run));
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** Writes a v2 batch from the index's header fields and a records section; returns it with a valid CRC. */
export function assembleBatch(b: IndexedBatch, section: Buffer, compression: RebuildCompression): Buffer {
  const codec = compressionOf(b.attributes);
  const keep = compression === 'original' && codec !== 'none';
  const body = keep ? compress(codec, section) : section;
  const attributes = keep ? b.attributes : b.attributes & ~ATTR_COMPRESSION_MASK;
  const buf = Buffer.allocUnsafe(BATCH_HEADER_SIZE + body.length);
  body.copy(buf, BATCH_HEADER_SIZE);
  writeBatchHeader(buf, 0, buf.length, b, attributes);
  return buf;
}

/** Fills the 61-byte v2 header of the `size`-byte batch at buf[at...] (records already behind it) and sets the CRC. */
function writeBatchHeader(buf: Buffer, at: number, size: number, b: IndexedBatch, attributes: number): void {
  buf.writeBigInt64BE(b.baseOffset, at + BATCH_OFFSETS.baseOffset);
  buf.writeInt32BE(size - BATCH_LOG_OVERHEAD, at + BATCH_OFFSETS.batchLength);
  buf.writeInt32BE(b.partitionLeaderEpoch, at + BATCH_OFFSETS.partitionLeaderEpoch);
  buf.writeInt8(MAGIC_V2, at + BATCH_OFFSETS.magic);
  buf.writeInt16BE(attributes, at + BATCH_OFFSETS.attributes);
  buf.writeInt32BE(b.lastOffsetDelta, at + BATCH_OFFSETS.lastOffsetDelta);
  buf.writeBigInt64BE(b.baseTimestamp, at + BATCH_OFFSETS.baseTimestamp);
  buf.writeBigInt64BE(b.maxTimestamp, at + BATCH_OFFSETS.maxTimestamp);
  buf.writeBigInt64BE(b.producerId, at + BATCH_OFFSETS.producerId);
  buf.writeInt16BE(b.producerEpoch, at + BATCH_OFFSETS.producerEpoch);
  buf.writeInt32BE(b.baseSequence, at + BATCH_OFFSETS.baseSequence);
  buf.writeInt32BE(b.recordsCount, at + BATCH_OFFSETS.recordsCount);
  writeBatchCrc(buf, at);
}

/** The batches of decoded row groups: natively decoded rows, or the parquet-wasm table's rows. */
type DecodedRows = { readonly kind: 'native'; readonly parts: readonly NativePart[] } | { readonly kind: 'parquet-wasm'; readonly cursor: RowCursor };

/** Rebuilds data batch `b` from decoded rows; throws INDEX_MISMATCH when its records are not recordsBytes long. */
function rebuildBatch(d: DecodedRows, b: IndexedBatch, rowBase: number, compression: RebuildCompression): Buffer {
  if (d.kind === 'native') return nativeBatch(d.parts, b, compression);
  const section = recordsSection(b, d.cursor, rowBase);
  if (section.length !== b.recordsBytes) {
    throw new TieringConvertError('INDEX_MISMATCH', `batch at offset ${b.baseOffset} rebuilt to ${section.length} bytes of records, the index recorded ${b.recordsBytes}; the data file does not match its index`);
  }
  return assembleBatch(b, section, compression);
}

/**
 * Row groups [rgA, rgB] of a fetch, decoded: natively unless the request or the file says otherwise, using
 * and filling the footer cache's decoded row groups, range-reading only the row groups not found there; on
 * UNSUPPORTED_TYPE from the native reader (encodings or codecs of other writers) with parquet-wasm, and the
 * file is remembered as such. Returns the rows and the data bytes read.
 */
async function decodeRowGroups(req: RemoteFetchRequest, location: string, rgA: number, rgB: number): Promise<{ decoded: DecodedRows; bytesRead: number }> {
  const { index } = req;
  const decoder = req.decoder ?? 'auto';
  const groups = index.rowGroups;
  const read = (x: number, y: number): Promise<Buffer> => req.io.getRange(location, groups[x]!.byteStart, groups[y]!.byteStart + groups[y]!.byteLength - groups[x]!.byteStart);
  const memo = decoder !== 'parquet-wasm' && req.reuseDecodedRowGroups !== false ? (req.footers?.rowGroups ?? null) : null;
  const key = (g: number): string => `${location}#${g}`;
  const parts: (NativePart | undefined)[] = [];
  let m0 = -1;
  let m1 = -1;
  for (let g = rgA; g <= rgB; g++) {
    const hit = memo?.get(key(g));
    parts.push(hit && { firstRow: groups[g]!.firstRow, rows: hit });
    // This fetch holds the rows until it has written its batches (fetchFromParquet releases them).
    if (hit) hit.refs++;
    // Only the row group a fetch ends in is kept: the reader has moved past the others, and short-lived
    // entries keep memory (and garbage collection) low.
    if (hit && g < rgB) memo!.delete(key(g));
    if (!hit) {
      if (m0 < 0) m0 = g;
      m1 = g;
    }
  }
  if (m0 < 0) return { decoded: { kind: 'native', parts: parts as NativePart[] }, bytesRead: 0 };
  const [footer, span] = await Promise.all([loadFooter(req.io, location, index, req.footers), read(m0, m1)]);
  let bytesRead = span.length;
  if (decoder !== 'parquet-wasm') {
    const reason = footer.native === null ? (footer.nativeUnavailable ?? 'footer unreadable') : footer.nativeFailed;
    if (reason === undefined) {
      try {
        for (let g = m0; g <= m1; g++) {
          if (parts[g - rgA] !== undefined) continue;
          const rows = decodeNative(footer.native!, span, groups[m0]!.byteStart, g, g);
          if (rows.rows !== groups[g]!.numRows) mismatch(`row group ${g} holds ${rows.rows} rows, the index says ${groups[g]!.numRows}`);
          if (g === rgB && memo) {
            // The cache's reference; lru-cache does not keep an entry larger than its whole budget.
            rows.refs++;
            memo.set(key(g), rows);
            if (memo.peek(key(g)) !== rows) rows.refs--;
          }
          parts[g - rgA] = { firstRow: groups[g]!.firstRow, rows };
        }
        return { decoded: { kind: 'native', parts: parts as NativePart[] }, bytesRead };
      } catch (err) {
        if (!(err instanceof ParquetError && err.code === 'UNSUPPORTED_TYPE') || decoder === 'native') throw err;
        footer.nativeFailed = err.message;
      }
    } else if (decoder === 'native') {
      throw new ParquetError('UNSUPPORTED_TYPE', `the native column reader cannot read this data file: ${reason}`);
    }
  }
  let full = span;
  if (m0 !== rgA || m1 !== rgB) {
    full = await read(rgA, rgB);
    bytesRead += full.length;
  }
  const table = readParquetTable(sliceParquetFile(footer.tree, rgA, rgB, full, groups[rgA]!.byteStart), { batchSize: 1 << 20 });
  return { decoded: { kind: 'parquet-wasm', cursor: new RowCursor(table) }, bytesRead };
}

/**
 * Rebuilds the batches a Kafka fetch at `fetchOffset` gets from this tiered file: the batch containing (or
 * following) the offset and those after it, within maxBytes (the first whole whatever its size).
 */
export async function fetchFromParquet(req: RemoteFetchRequest): Promise<RemoteFetchResult> {
  const compression = req.compression ?? 'none';
  const { index } = req;
  const { first, end } = planFetch(index, req.fetchOffset, req.maxBytes, compression);
  if (end <= first) return { records: Buffer.alloc(0), batchCount: 0, nextOffset: req.fetchOffset, bytesRead: 0, decodedWith: null };
  const batches = index.batches.slice(first, end);
  const lastBatch = batches[batches.length - 1]!;
  const nextOffset = lastBatch.baseOffset + BigInt(lastBatch.lastOffsetDelta) + 1n;
  const df = index.dataFile;
  const location = df === null ? null : resolveLocation(req.tableLocation, df.path);
  const cache = location !== null && req.batches !== undefined && req.batches.maxBytes > 0 ? req.batches : undefined;
  const isData = (b: IndexedBatch): boolean => b.stored === null && b.recordsCount > 0;
  const dataBatches = batches.filter(isData);
  if (cache && dataBatches.length > 0) {
    // Served from memory only when every data batch is there; otherwise the fetch is rebuilt whole.
    const parts: Buffer[] = [];
    let missing = false;
    for (const b of batches) {
      if (b.stored !== null) parts.push(b.stored);
      else if (b.recordsCount > 0) {
        const hit = cache.get(BatchCache.key(location!, b, compression));
        if (hit === undefined) missing = true;
        else parts.push(hit);
      }
    }
    if (!missing) return { records: Buffer.concat(parts), batchCount: parts.length, nextOffset, bytesRead: 0, decodedWith: null };
  }
  let decoded: DecodedRows | null = null;
  let rowBase = 0;
  let bytesRead = 0;
  if (dataBatches.length > 0) {
    if (df === null || location === null) throw new TieringConvertError('INDEX_MISMATCH', `index of offsets ${index.baseOffset}..${index.lastOffset} has data batches but no data file; rebuild the index`);
    const firstRow = dataBatches[0]!.firstRow;
    const lastB = dataBatches[dataBatches.length - 1]!;
    const lastRow = lastB.firstRow + lastB.recordsCount - 1;
    const rgA = findRowGroupByRow(index.rowGroups, firstRow);
    const rgB = findRowGroupByRow(index.rowGroups, lastRow);
    if (rgA < 0 || rgB < 0) throw new TieringConvertError('INDEX_MISMATCH', `rows ${firstRow}..${lastRow} are in no row group of the index; rebuild the index`);
    ({ decoded, bytesRead } = await decodeRowGroups(req, location, rgA, rgB));
    rowBase = index.rowGroups[rgA]!.firstRow;
  }
  try {
    // Where each data batch sits in the response, for the batch cache.
    const at: [string, number, number][] = [];
    let records: Buffer;
    let count = 0;
    if (decoded !== null && decoded.kind === 'native' && batches.every((b) => b.stored !== null || rebuiltUncompressed(b, compression))) {
      // Natively rebuilt uncompressed batches are written straight into the response.
      let total = 0;
      for (const b of batches) {
        if (b.stored === null && b.recordsCount === 0) continue;
        total += b.stored !== null ? b.stored.length : BATCH_HEADER_SIZE + b.recordsBytes;
        count++;
      }
      records = Buffer.allocUnsafe(total);
      let p = 0;
      for (const b of batches) {
        if (b.stored !== null) p += b.stored.copy(records, p);
        else if (b.recordsCount > 0) {
          writeNativeBatchAt(decoded.parts, b, records, p);
          if (cache) at.push([BatchCache.key(location!, b, compression), p, p + BATCH_HEADER_SIZE + b.recordsBytes]);
          p += BATCH_HEADER_SIZE + b.recordsBytes;
        }
      }
    } else {
      const out: Buffer[] = [];
      let p = 0;
      for (const b of batches) {
        if (b.stored === null && b.recordsCount === 0) continue;
        const batch = b.stored ?? rebuildBatch(decoded!, b, rowBase, compression);
        if (cache && b.stored === null) at.push([BatchCache.key(location!, b, compression), p, p + batch.length]);
        out.push(batch);
        p += batch.length;
      }
      count = out.length;
      records = out.length === 1 ? out[0]! : Buffer.concat(out, p);
      // A control batch alone is the index's own buffer: hand out a copy.
      if (out.length === 1 && batches.some((b) => b.stored === records)) records = Buffer.from(records);
    }
    if (cache) cache.keep(records, at);
    return { records, batchCount: count, nextOffset, bytesRead, decodedWith: decoded === null ? null : decoded.kind };
  } finally {
    // The decoded rows are no longer needed by this fetch: everything above copied out of them.
    if (decoded !== null && decoded.kind === 'native') for (const part of decoded.parts) releaseRows(part.rows);
  }
}
