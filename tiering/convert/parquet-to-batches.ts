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
 * Caches: parsed footers (`FooterCache`) and rebuilt batches (`BatchCache`), both under byte budgets.
 */
import type * as arrow from 'apache-arrow';
import { LRUCache } from 'lru-cache';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { readParquetTable } from '../../iceberg/parquet/reader.js';
import { ATTR_COMPRESSION_MASK, BATCH_HEADER_SIZE, BATCH_LOG_OVERHEAD, BATCH_OFFSETS } from '../../protocol/record-batch/header.js';
import { compress, compressionOf } from '../../protocol/record-batch/compression.js';
import { writeBatchCrc } from '../../protocol/record-batch/crc.js';
import { MAGIC_V2 } from '../../protocol/record-batch/record-batch.js';
import { encodeRecords, type RecordHeader, type RecordInput } from '../../protocol/record-batch/records.js';
import { TieringConvertError } from './errors.js';
import { decodeFooterTree, footerTreeCost, sliceParquetFile, type ThriftStructNode } from './parquet-slice.js';
import type { IndexedBatch, SegmentIndex } from '../offset-index/format.js';
import { findBatch, findRowGroupByRow } from '../offset-index/lookup.js';
import { ByteBudgetCache } from '../offset-index/cache.js';
import { resolveLocation } from '../offset-index/location.js';

export type RebuildCompression = 'none' | 'original';

/** A cache of parsed Parquet footers, keyed by data file location. */
export type FooterCache = ByteBudgetCache<ThriftStructNode>;

export function createFooterCache(maxBytes: number): FooterCache {
  // The cost is charged from the encoded length recorded at load time.
  return new ByteBudgetCache<ThriftStructNode>({ maxBytes, sizeOf: (t) => footerCosts.get(t) ?? 4096 });
}
const footerCosts = new WeakMap<ThriftStructNode, number>();

/**
 * Rebuilt batches kept in memory under a byte budget (lru-cache `maxSize`), so repeated reads of one remote
 * range (several consumers, re-reads after a rebalance) skip the range read, the Parquet decode and the
 * record encoding. Keyed by data file location, batch base offset and compression mode; the files are
 * immutable once written (deterministic names: a retry writes the same bytes), so entries never go stale.
 */
export class BatchCache {
  private readonly lru: LRUCache<string, Buffer>;
  hits = 0;
  misses = 0;
  constructor(readonly maxBytes: number) {
    // A batch larger than the whole budget is not kept (lru-cache refuses it); the rest evict oldest first.
    this.lru = new LRUCache<string, Buffer>({ maxSize: Math.max(1, maxBytes), sizeCalculation: (b) => Math.max(1, b.length + BATCH_ENTRY_OVERHEAD) });
  }
  static key(location: string, b: IndexedBatch, compression: RebuildCompression): string {
    return `${location}@${b.baseOffset}/${compression}`;
  }
  get(key: string): Buffer | undefined {
    const v = this.lru.get(key);
    if (v === undefined) this.misses++;
    else this.hits++;
    return v;
  }
  /** Whether `key` is cached, without counting a hit or refreshing it. */
  peek(key: string): boolean {
    return this.lru.has(key);
  }
  set(key: string, batch: Buffer): void {
    if (this.maxBytes > 0) this.lru.set(key, batch);
  }
  /** Bytes charged against the budget (batch bytes plus a fixed per-entry overhead). */
  get bytes(): number {
    return this.lru.calculatedSize;
  }
  get size(): number {
    return this.lru.size;
  }
  clear(): void {
    this.lru.clear();
  }
}
/** What one cache entry costs beyond its bytes (key string, Buffer object, LRU slots), roughly. */
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
}

export interface RemoteFetchResult {
  /** Concatenated record batches, ready for a Fetch response's `records`. */
  readonly records: Buffer;
  readonly batchCount: number;
  /** The offset after the last batch returned (where the next fetch continues); fetchOffset if none. */
  readonly nextOffset: bigint;
  /** Bytes read from object storage for data (the footer excluded). */
  readonly bytesRead: number;
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

async function loadFooter(io: FileIO, location: string, index: SegmentIndex, cache: FooterCache | undefined): Promise<ThriftStructNode> {
  const df = index.dataFile!;
  const load = async (): Promise<ThriftStructNode> => {
    const meta = await io.getRange(location, df.footerOffset, df.footerLength);
    if (meta.length !== df.footerLength) {
      throw new TieringConvertError('INDEX_MISMATCH', `data file ${location} is shorter than its index says (footer at ${df.footerOffset}+${df.footerLength}); re-tier the segment`);
    }
    const tree = decodeFooterTree(meta);
    footerCosts.set(tree, footerTreeCost(meta.length));
    return tree;
  };
  return cache ? cache.get(location, load) : load();
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
  buf.writeBigInt64BE(b.baseOffset, BATCH_OFFSETS.baseOffset);
  buf.writeInt32BE(buf.length - BATCH_LOG_OVERHEAD, BATCH_OFFSETS.batchLength);
  buf.writeInt32BE(b.partitionLeaderEpoch, BATCH_OFFSETS.partitionLeaderEpoch);
  buf.writeInt8(MAGIC_V2, BATCH_OFFSETS.magic);
  buf.writeInt16BE(attributes, BATCH_OFFSETS.attributes);
  buf.writeInt32BE(b.lastOffsetDelta, BATCH_OFFSETS.lastOffsetDelta);
  buf.writeBigInt64BE(b.baseTimestamp, BATCH_OFFSETS.baseTimestamp);
  buf.writeBigInt64BE(b.maxTimestamp, BATCH_OFFSETS.maxTimestamp);
  buf.writeBigInt64BE(b.producerId, BATCH_OFFSETS.producerId);
  buf.writeInt16BE(b.producerEpoch, BATCH_OFFSETS.producerEpoch);
  buf.writeInt32BE(b.baseSequence, BATCH_OFFSETS.baseSequence);
  buf.writeInt32BE(b.recordsCount, BATCH_OFFSETS.recordsCount);
  body.copy(buf, BATCH_HEADER_SIZE);
  writeBatchCrc(buf, 0);
  return buf;
}

/**
 * Rebuilds the batches a Kafka fetch at `fetchOffset` gets from this tiered file: the batch containing (or
 * following) the offset and those after it, within maxBytes (the first whole whatever its size).
 */
export async function fetchFromParquet(req: RemoteFetchRequest): Promise<RemoteFetchResult> {
  const compression = req.compression ?? 'none';
  const { index } = req;
  const { first, end } = planFetch(index, req.fetchOffset, req.maxBytes, compression);
  if (end <= first) return { records: Buffer.alloc(0), batchCount: 0, nextOffset: req.fetchOffset, bytesRead: 0 };
  const batches = index.batches.slice(first, end);
  const df = index.dataFile;
  const location = df === null ? null : resolveLocation(req.tableLocation, df.path);
  const cache = location !== null ? req.batches : undefined;
  // Batches found in the cache; only the others are read and rebuilt.
  const cached: (Buffer | undefined)[] = cache ? batches.map((b) => (b.stored === null && b.recordsCount > 0 ? cache.get(BatchCache.key(location!, b, compression)) : undefined)) : [];
  const dataBatches = batches.filter((b, i) => b.stored === null && b.recordsCount > 0 && cached[i] === undefined);
  let cursor: RowCursor | null = null;
  let rowBase = 0;
  let rowEnd = 0;
  let bytesRead = 0;
  if (dataBatches.length > 0) {
    if (df === null || location === null) throw new TieringConvertError('INDEX_MISMATCH', `index of offsets ${index.baseOffset}..${index.lastOffset} has data batches but no data file; rebuild the index`);
    const firstRow = dataBatches[0]!.firstRow;
    const lastB = dataBatches[dataBatches.length - 1]!;
    const lastRow = lastB.firstRow + lastB.recordsCount - 1;
    const rgA = findRowGroupByRow(index.rowGroups, firstRow);
    const rgB = findRowGroupByRow(index.rowGroups, lastRow);
    if (rgA < 0 || rgB < 0) throw new TieringConvertError('INDEX_MISMATCH', `rows ${firstRow}..${lastRow} are in no row group of the index; rebuild the index`);
    const a = index.rowGroups[rgA]!;
    const z = index.rowGroups[rgB]!;
    const [footer, span] = await Promise.all([
      loadFooter(req.io, location, index, req.footers),
      req.io.getRange(location, a.byteStart, z.byteStart + z.byteLength - a.byteStart),
    ]);
    bytesRead = span.length;
    const table = readParquetTable(sliceParquetFile(footer, rgA, rgB, span, a.byteStart), { batchSize: 1 << 20 });
    cursor = new RowCursor(table);
    rowBase = a.firstRow;
    rowEnd = z.firstRow + z.numRows;
  }
  const out: Buffer[] = [];
  for (let i = 0; i < batches.length; i++) {
    const b = batches[i]!;
    if (b.stored !== null) {
      out.push(b.stored);
      continue;
    }
    if (b.recordsCount === 0) continue;
    const hit = cached[i];
    if (hit !== undefined) {
      out.push(hit);
      continue;
    }
    const section = recordsSection(b, cursor!, rowBase);
    if (section.length !== b.recordsBytes) {
      throw new TieringConvertError('INDEX_MISMATCH', `batch at offset ${b.baseOffset} rebuilt to ${section.length} bytes of records, the index recorded ${b.recordsBytes}; the data file does not match its index`);
    }
    const rebuilt = assembleBatch(b, section, compression);
    if (cache) cache.set(BatchCache.key(location!, b, compression), rebuilt);
    out.push(rebuilt);
  }
  // Read-ahead: the batches after this fetch whose rows are all in the row groups just decoded go to the
  // cache too, so a consumer reading on does not decode the same row group again on its next fetch.
  if (cache && cursor !== null && location !== null) {
    for (let j = end; j < index.batches.length; j++) {
      const b = index.batches[j]!;
      if (b.stored !== null || b.recordsCount === 0) continue;
      if (b.firstRow + b.recordsCount > rowEnd) break;
      const key = BatchCache.key(location, b, compression);
      if (cache.peek(key)) continue;
      const section = recordsSection(b, cursor, rowBase);
      if (section.length !== b.recordsBytes) break;
      cache.set(key, assembleBatch(b, section, compression));
    }
  }
  const lastBatch = batches[batches.length - 1]!;
  return {
    // Cached buffers are shared between fetches: hand out a copy, so a caller that writes into its
    // response (or keeps it) cannot change what the next fetch gets.
    records: out.length === 1 && !cache ? out[0]! : Buffer.concat(out),
    batchCount: out.length,
    nextOffset: lastBatch.baseOffset + BigInt(lastBatch.lastOffsetDelta) + 1n,
    bytesRead,
  };
}
