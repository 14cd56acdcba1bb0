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
 * (iceberg/parquet/column-reader.ts) into typed arrays (native-rows.ts), and each batch's records section is
 * written straight into the batch's buffer (its size is known from the index) with varints computed from the
 * column values: no per-record objects, header keys copied as bytes (native-records.ts). Files the native
 * reader does not support (encodings or codecs of other writers: UNSUPPORTED_TYPE) fall back to
 * parquet-wasm, an Arrow table and `encodeRecords` (arrow-records.ts); both paths give the same bytes.
 *
 * Caches: parsed footers with the last decoded row group of each reader (`FooterCache`, footer-cache.ts), and
 * the responses of recent fetches, batch by batch (`BatchCache`, batch-cache.ts), all under byte budgets.
 *
 * This module owns the fetch itself: its request and result, which batches it returns (fetch-plan.ts), the
 * choice of decoder for its row groups, and writing the response (batch-assembly.ts for the batch headers).
 */
import type { FileIO } from '../../iceberg/io/file-io.js';
import { readParquetTable } from '../../iceberg/parquet/reader.js';
import { ParquetError } from '../../iceberg/parquet/errors.js';
import { BATCH_HEADER_SIZE } from '../../protocol/record-batch/header.js';
import { TieringConvertError } from './errors.js';
import { sliceParquetFile } from './parquet-slice.js';
import type { IndexedBatch, SegmentIndex } from '../offset-index/format.js';
import { findRowGroupByRow } from '../offset-index/lookup.js';
import { resolveLocation } from '../offset-index/location.js';
import { assembleBatch, type RebuildCompression } from './batch-assembly.js';
import { BatchCache } from './batch-cache.js';
import { planFetch } from './fetch-plan.js';
import { loadFooter, type FooterCache } from './footer-cache.js';
import { decodeNative, mismatch, releaseRows, type NativePart } from './native-rows.js';
import { nativeBatch, rebuiltUncompressed, writeNativeBatchAt } from './native-records.js';
import { recordsSection, RowCursor } from './arrow-records.js';

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
  return { decoded: { kind: 'parquet-wasm', cursor: new RowCursor(table, footer.typed, footer.typedKeys) }, bytesRead };
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
