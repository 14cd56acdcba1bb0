/**
 * A closed log segment (whole v2 batches, as stored) becomes Parquet data files of the topic table plus,
 * for each, its segment-to-offset index (../offset-index/format.ts).
 *
 * - Streaming and bounded: the segment is read in windows of about one data file (`SegmentSource`), and
 *   batches are decoded one at a time into Arrow chunks of `chunkRows` rows, which the Parquet writer pulls
 *   as it goes; a data file is closed at a batch boundary once it holds `targetFileBytes` of log bytes, and
 *   the caller receives it (async generator) before the next begins. Memory is one window (the file's log
 *   bytes, plus one batch) plus one file's output plus one row group inside the writer, whatever the
 *   segment's size.
 * - Cooperative: conversion runs on the broker's event loop, beside produce and fetch, so it gives the loop a
 *   turn after every Arrow chunk (at most `chunkRows` rows or CHUNK_PAYLOAD_BYTES of payload, a few
 *   milliseconds of work) instead of holding it for a whole data file (a 64 MiB file is most of a second).
 * - Row groups are ordered by offset and hold about `targetRowGroupBytes` of keys, values and headers (the
 *   row count is set per file from a sample of its first batches), so a fetch reads about that much.
 * - Only data records become rows. Control batches and batches left without records by compaction are kept
 *   whole in the index. (Aborted transactional data is still converted to rows here; hiding it from Iceberg
 *   readers with positional deletes is the commit layer's job once the aborted ranges are known.)
 * - Fidelity is checked for every record, in the one walk that reads it: re-encoding its decoded fields
 *   (what fetch from Parquet does) gives back its stored bytes exactly when every varint is minimal and every
 *   header key is valid UTF-8. Records that would not come back identical (a header key that is not UTF-8,
 *   a non-minimal varint, a timestamp out of microsecond range) keep their exact bytes in `kafka.raw_record`.
 *   test/tiering/convert checks this verdict against a real re-encode for crafted records.
 * - File names derive from partition and offsets only (../offset-index/location.ts): a retry overwrites.
 */
import type * as arrow from 'apache-arrow';
import { writeParquet, type ParquetCompression, type ParquetWriteResult } from '../../iceberg/parquet/writer.js';
import { ATTR_CONTROL, ATTR_TIMESTAMP_TYPE_LOG_APPEND, BATCH_HEADER_SIZE, BATCH_LOG_OVERHEAD, BATCH_OFFSETS, readBatchHeader } from '../../protocol/record-batch/header.js';
import { nextBatch, type BatchBounds } from '../../protocol/record-batch/batches.js';
import { checkBatchBounds } from '../../protocol/record-batch/record-batch.js';
import type { DecompressScratch } from '../../protocol/record-batch/compression.js';
import { setImmediate } from 'node:timers/promises';
import { VarintError, type Cursor } from '../../protocol/varint.js';
import { TopicRowBuilder, type RecordRanges, type RowBatchFields } from './columns.js';
import { TieringConvertError } from './errors.js';
import { decodeBatch, fileValues, hasRows, openBatch, readRecord, type RecordFields } from './segment-records.js';
import { TOPIC_SCHEMA } from './schema.js';
import { INDEX_VERSION, encodeSegmentIndex, type IndexedBatch, type IndexedRowGroup, type SegmentIndex } from '../offset-index/format.js';
import { dataFilePath, indexPath } from '../offset-index/location.js';
import type { RecordTypers } from '../typed/record-typers.js';
import { KEY_EXACT, LayoutChangedError, TypedRows, VALUE_EXACT, type DeadLetter, type TypedCounts } from '../typed/typed-rows.js';
import { KEY_WRITERS_KEY, WRITERS_KEY } from '../typed/value-typer.js';

export interface ConvertOptions {
  readonly partition: number;
  /** Close a data file at the first batch boundary after this many log bytes; default 64 MiB. */
  readonly targetFileBytes?: number;
  /** Key, value and header bytes per row group; default 1 MiB (what one fetch reads). */
  readonly targetRowGroupBytes?: number;
  /** Upper bound on rows per row group; default 131,072. */
  readonly maxRowGroupRows?: number;
  /** Rows per Arrow chunk handed to the Parquet writer; default 16,384. */
  readonly chunkRows?: number;
  /** Parquet page compression; default zstd. */
  readonly compression?: ParquetCompression;
  /** Check every batch's CRC while reading the segment (default true). */
  readonly verifyCrc?: boolean;
  /** Tag added to every file name after its offsets (compaction's outputs; see ../offset-index/location.ts). */
  readonly nameTag?: string;
  /** Types values and keys into columns (the schema table modes, ../typed/); absent: `key_value`. */
  readonly typed?: RecordTypers;
}

/** What typing did to one file's values (schema modes only). */
export interface TypedFileResult {
  readonly counts: TypedCounts;
  readonly deadLetters: readonly DeadLetter[];
}

export interface ConvertedFile {
  /** Data file path relative to the table location; null when the range holds no data records. */
  readonly dataPath: string | null;
  /** Offset index path relative to the table location. */
  readonly indexPath: string;
  /** The Parquet file with its footer, Iceberg metrics and split offsets; null with dataPath. */
  readonly parquet: ParquetWriteResult | null;
  readonly index: SegmentIndex;
  readonly indexBytes: Buffer;
  /** Log bytes (original batch sizes) this file covers. */
  readonly logBytes: number;
  /** Schema modes: the typing's counts and dead letters. */
  readonly typed?: TypedFileResult;
}

/** Times a file is started again because the table layout evolved meanwhile, before giving up. */
const MAX_LAYOUT_RESTARTS = 16;

export const DEFAULT_TARGET_FILE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_TARGET_ROW_GROUP_BYTES = 1024 * 1024;
export const DEFAULT_MAX_ROW_GROUP_ROWS = 128 * 1024;
export const DEFAULT_CHUNK_ROWS = 16 * 1024;
/**
 * Keys, values and headers per Arrow chunk at most: building and writing one takes a few milliseconds, the
 * longest the converter keeps the event loop to itself.
 */
export const CHUNK_PAYLOAD_BYTES = 1024 * 1024;

const MAX_SAFE_MICROS_MS = Math.floor(Number.MAX_SAFE_INTEGER / 1000);

function positive(name: string, v: number | undefined, dflt: number): number {
  const x = v ?? dflt;
  if (!Number.isSafeInteger(x) || x <= 0) throw new TieringConvertError('INVALID_OPTION', `${name} must be a positive integer, got ${String(v)}`);
  return x;
}

function safe(v: bigint, what: string, at: number): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) {
    throw new TieringConvertError('INVALID_SEGMENT', `${what} ${v} of the batch at byte ${at} is beyond 2^53; Floe cannot tier it (the typed columns need safe integers)`);
  }
  return n;
}

/** A closed segment's bytes, read in order a window at a time (a `.log` file, or a buffer in memory). */
export interface SegmentSource {
  /** The segment's length in bytes. */
  readonly size: number;
  /** Reads up to `length` bytes at `position` into `target` from `offset`; resolves to the count read (0 at the end). */
  read(target: Buffer, offset: number, length: number, position: number): Promise<number>;
}

/**
 * The part of the segment in memory: file bytes [start, start + len) at buf[0, len). Bytes before the
 * batch being converted are dropped, and each read fills the buffer, so one file's worth is read at once.
 * A buffer source is its own window and is never copied.
 */
class SegmentWindow {
  start = 0;
  len: number;

  constructor(
    private readonly source: SegmentSource | null,
    public buf: Buffer,
    readonly size: number,
  ) {
    this.len = source === null ? size : 0;
  }

  /** Makes file bytes [from, to) readable, keeping nothing before `from`; false if the segment ends first. */
  async ensure(from: number, to: number): Promise<boolean> {
    const end = this.start + this.len;
    if (from >= this.start && to <= end) return true;
    if (this.source === null || to > this.size || from < this.start || from > end) return to <= end && from >= this.start;
    if (from > this.start) {
      this.buf.copyWithin(0, from - this.start, this.len);
      this.len -= from - this.start;
      this.start = from;
    }
    if (to - this.start > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(to - this.start, Math.min(this.size - this.start, this.buf.length * 2)));
      this.buf.copy(grown, 0, 0, this.len);
      this.buf = grown;
    }
    // Read ahead as far as the buffer goes: the next batches are wanted next.
    const want = Math.min(this.buf.length, this.size - this.start);
    while (this.len < want) {
      const n = await this.source.read(this.buf, this.len, want - this.len, this.start + this.len);
      if (n === 0) break;
      this.len += n;
    }
    return this.start + this.len >= to;
  }
}

/**
 * The next batch of a segment at segment byte `pos` (bounds in segment bytes), checked to be whole, v2 and after
 * `prevLast`. The window keeps `keepFrom` onwards: the batches of the file being gathered.
 */
async function nextSegmentBatch(win: SegmentWindow, keepFrom: number, pos: number, prevLast: bigint): Promise<BatchBounds> {
  const ends = () => new TieringConvertError('INVALID_SEGMENT', `segment ends inside a batch at byte ${pos}; only closed segments of whole batches can be tiered`);
  if (!(await win.ensure(keepFrom, Math.min(win.size, pos + BATCH_HEADER_SIZE)))) throw ends();
  let end = win.size;
  if (win.size - pos >= BATCH_OFFSETS.batchLength + 4) {
    const declared = pos + BATCH_LOG_OVERHEAD + win.buf.readInt32BE(pos - win.start + BATCH_OFFSETS.batchLength);
    if (declared > pos && declared <= win.size) end = declared;
  }
  if (!(await win.ensure(keepFrom, end))) throw ends();
  // The batch alone (the window may have moved), so the checks' messages count from its first byte.
  const rel = pos - win.start;
  const view = win.buf.subarray(rel, end - win.start);
  let b: BatchBounds | null;
  try {
    checkBatchBounds(view, 0);
    b = nextBatch(view, 0);
  } catch (cause) {
    throw new TieringConvertError('INVALID_SEGMENT', `segment batch at byte ${pos} is unreadable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
  if (b === null) throw ends();
  if (b.baseOffset <= prevLast || b.lastOffset < b.baseOffset) {
    throw new TieringConvertError('INVALID_SEGMENT', `batch at byte ${pos} covers offsets ${b.baseOffset}..${b.lastOffset}, not after ${prevLast}; the segment is out of order`);
  }
  return { ...b, start: pos, end: pos + (b.end - b.start) };
}

/** Rows per row group for a file: the target payload divided by the payload per record of a sample. */
function rowGroupRowsFor(segment: Buffer, batches: readonly BatchBounds[], targetBytes: number, maxRows: number, verifyCrc: boolean, base: number): number {
  let rows = 0;
  let bytes = 0;
  for (const b of batches) {
    if (!hasRows(segment, b)) continue;
    const d = decodeBatch(segment, b, verifyCrc, base);
    for (const r of d.records) {
      bytes += (r.key?.length ?? 0) + (r.value?.length ?? 0);
      for (const h of r.headers) bytes += h.key.length + (h.value?.length ?? 0);
    }
    rows += d.records.length;
    if (rows >= 256 || bytes >= targetBytes) break;
  }
  if (rows === 0) return maxRows;
  const perRow = Math.max(1, bytes / rows);
  return Math.max(1, Math.min(maxRows, Math.round(targetBytes / perRow)));
}

/** The default first window: one data file's log bytes plus room for the batch that crosses the target. */
function windowBytes(size: number, targetFileBytes: number): number {
  return Math.max(1, Math.min(size, targetFileBytes + (1 << 20)));
}

/**
 * Converts a closed segment into data files and their offset indexes, one file at a time. The caller
 * uploads each file (data, then index) before pulling the next, which bounds memory to one file. A
 * `SegmentSource` is read a window at a time into `window.buf` (allocated when null, replaced by a larger
 * one when a file's batches need more), so a caller can hand the same memory to segment after segment; a
 * Buffer is used in place.
 */
export async function* convertSegment(segment: Buffer | SegmentSource, options: ConvertOptions, window: { buf: Buffer | null } = { buf: null }): AsyncGenerator<ConvertedFile, void, void> {
  const partition = options.partition;
  if (!Number.isInteger(partition) || partition < 0) throw new TieringConvertError('INVALID_OPTION', `partition must be a non-negative integer, got ${partition}`);
  const targetFileBytes = positive('targetFileBytes', options.targetFileBytes, DEFAULT_TARGET_FILE_BYTES);
  const targetRowGroupBytes = positive('targetRowGroupBytes', options.targetRowGroupBytes, DEFAULT_TARGET_ROW_GROUP_BYTES);
  const maxRowGroupRows = positive('maxRowGroupRows', options.maxRowGroupRows, DEFAULT_MAX_ROW_GROUP_ROWS);
  const chunkRows = positive('chunkRows', options.chunkRows, DEFAULT_CHUNK_ROWS);
  const verifyCrc = options.verifyCrc ?? true;
  const win = Buffer.isBuffer(segment)
    ? new SegmentWindow(null, segment, segment.length)
    : new SegmentWindow(segment, window.buf ?? Buffer.allocUnsafe(windowBytes(segment.size, targetFileBytes)), segment.size);
  let pos = 0;
  let prevLast = -1n;
  while (pos < win.size) {
    const fileStart = pos;
    const group: BatchBounds[] = [];
    let logBytes = 0;
    while (pos < win.size && (group.length === 0 || logBytes < targetFileBytes)) {
      const b = await nextSegmentBatch(win, fileStart, pos, prevLast);
      group.push(b);
      prevLast = b.lastOffset;
      logBytes += b.end - b.start;
      pos += b.end - b.start;
    }
    // The window starts at or before the file's first batch and holds all of them; bounds become window bytes.
    if (!Buffer.isBuffer(segment)) window.buf = win.buf;
    const bytes = win.buf.subarray(0, win.len);
    if (win.start > 0) for (const [k, b] of group.entries()) group[k] = { ...b, start: b.start - win.start, end: b.end - win.start };
    const fileOptions: FileOptions = {
      partition,
      rowGroupRows: rowGroupRowsFor(bytes, group, targetRowGroupBytes, maxRowGroupRows, verifyCrc, win.start),
      chunkRows,
      compression: options.compression ?? 'zstd',
      verifyCrc,
      base: win.start,
      ...(options.nameTag !== undefined ? { nameTag: options.nameTag } : {}),
      ...(options.typed !== undefined ? { typed: options.typed } : {}),
    };
    for (let attempt = 0; ; attempt++) {
      try {
        yield await convertFile(bytes, group, logBytes, fileOptions);
        break;
      } catch (err) {
        // A writer schema seen for the first time evolved the layout: write the file again with it.
        if (!(err instanceof LayoutChangedError) || attempt >= MAX_LAYOUT_RESTARTS) throw err;
      }
    }
  }
}

interface FileOptions {
  readonly partition: number;
  readonly rowGroupRows: number;
  readonly chunkRows: number;
  readonly compression: ParquetCompression;
  readonly verifyCrc: boolean;
  /** Segment byte of segment[0] (the window's start), for error messages. */
  readonly base: number;
  readonly nameTag?: string;
  readonly typed?: RecordTypers;
}

async function convertFile(segment: Buffer, group: readonly BatchBounds[], logBytes: number, o: FileOptions): Promise<ConvertedFile> {
  const first = group[0]!;
  const last = group[group.length - 1]!;
  const batches: IndexedBatch[] = [];
  // First and last offset of each row group, recorded as rows are emitted (the writer cuts every N rows).
  const rgFirst: number[] = [];
  const rgLast: number[] = [];
  let rows = 0;
  let lastRowOffset = -1;
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = -1n;
  // Buffers reused across chunks: the writer encodes each chunk before pulling the next.
  const builder = new TopicRowBuilder(Math.min(o.chunkRows, 4096), 1 << 20, true);
  const rec: RecordRanges = { keyStart: 0, keyLen: -1, valueStart: 0, valueLen: -1, headerCount: 0, headers: new Int32Array(64), rawStart: 0, rawLen: -1, badKeys: [] };
  const f: RecordFields = { attributes: 0, timestampDelta: 0, offsetDelta: 0 };
  const cur: Cursor = { pos: 0 };
  // Records sections are decompressed into one reused buffer: the builder copies what it keeps.
  const scratch: DecompressScratch = { buf: Buffer.allocUnsafe(256 * 1024) };
  const typed = o.typed ? new TypedRows(o.typed) : null;
  if (typed) {
    for (const v of fileValues(segment, group, o.base)) typed.scan(v);
    if (typed.typesKeys) for (const k of fileValues(segment, group, o.base, 'key')) typed.scanKey(k);
    typed.start();
  }
  const flush = (): arrow.RecordBatch => (typed ? typed.wrap(builder.flush()) : builder.flush());

  // A chunk is handed to the writer at `chunkRows` rows or CHUNK_PAYLOAD_BYTES of keys, values and headers,
  // whichever comes first, and the event loop gets a turn before the next one is built (see the module
  // comment): conversion shares the broker's thread with produce and fetch.
  async function* chunks(): AsyncGenerator<arrow.RecordBatch, void, void> {
    for (const chunk of build()) {
      yield chunk;
      await setImmediate();
    }
  }

  // The record walk stays in a plain generator: V8 optimises its loop better than an async generator's.
  function* build(): Generator<arrow.RecordBatch, void, void> {
    for (const b of group) {
      const size = b.end - b.start;
      const h = readBatchHeader(segment, b.start);
      if (h.maxTimestamp > maxTs) maxTs = h.maxTimestamp;
      const isControl = (h.attributes & ATTR_CONTROL) !== 0;
      const indexed = {
        baseOffset: h.baseOffset,
        lastOffsetDelta: h.lastOffsetDelta,
        recordsCount: h.recordsCount,
        attributes: h.attributes,
        partitionLeaderEpoch: h.partitionLeaderEpoch,
        baseTimestamp: h.baseTimestamp,
        maxTimestamp: h.maxTimestamp,
        producerId: h.producerId,
        producerEpoch: h.producerEpoch,
        baseSequence: h.baseSequence,
        firstRow: rows,
        originalSize: size,
      };
      if (isControl || h.recordsCount === 0) {
        const stored = Buffer.from(segment.subarray(b.start, b.end));
        batches.push({ ...indexed, recordsBytes: size - BATCH_HEADER_SIZE, stored });
        continue;
      }
      const d = openBatch(segment, b, o.verifyCrc, scratch, o.base);
      // The builder copies keys, values and headers out of a plain Uint8Array view: Buffer's subarray (a
      // FastBuffer made through its species) costs ~2x Uint8Array's per value.
      const bytes = new Uint8Array(d.data.buffer, d.data.byteOffset, d.data.length);
      batches.push({ ...indexed, recordsBytes: d.data.length, stored: null });
      const logAppend = (h.attributes & ATTR_TIMESTAMP_TYPE_LOG_APPEND) !== 0;
      const baseOffset = safe(h.baseOffset, 'base offset', o.base + b.start);
      const baseTs = safe(h.baseTimestamp, 'base timestamp', o.base + b.start);
      const maxTsN = safe(h.maxTimestamp, 'max timestamp', o.base + b.start);
      const fields: RowBatchFields = {
        baseOffset,
        lastOffsetDelta: h.lastOffsetDelta,
        partitionLeaderEpoch: h.partitionLeaderEpoch,
        attributes: h.attributes,
        baseTimestamp: baseTs,
        maxTimestamp: maxTsN,
        producerId: safe(h.producerId, 'producer id', o.base + b.start),
        producerEpoch: h.producerEpoch,
        baseSequence: h.baseSequence,
        recordsCount: h.recordsCount,
      };
      builder.beginBatch(o.partition, logAppend ? 1 : 0, fields);
      cur.pos = 0;
      for (let r = 0; r < h.recordsCount; r++) {
        try {
          readRecord(d.data, cur, r, rec, f);
        } catch (cause) {
          if (cause instanceof TieringConvertError) throw new TieringConvertError('INVALID_SEGMENT', `batch at byte ${o.base + b.start} (offset ${b.baseOffset}): ${cause.message}`, { cause });
          if (cause instanceof VarintError) throw new TieringConvertError('INVALID_SEGMENT', `batch at byte ${o.base + b.start} (offset ${b.baseOffset}), record ${r}: ${cause.message}`, { cause });
          throw cause;
        }
        let visible = logAppend ? maxTsN : baseTs + f.timestampDelta;
        if (!(Math.abs(visible) <= MAX_SAFE_MICROS_MS)) {
          // Not representable as timestamptz microseconds: clamp the column, keep the record's bytes.
          rec.rawLen = cur.pos - rec.rawStart;
          visible = Math.sign(visible) * MAX_SAFE_MICROS_MS;
        }
        if (visible < minTs) minTs = visible;
        const offset = baseOffset + f.offsetDelta;
        const inGroup = rows % o.rowGroupRows;
        if (inGroup === 0) rgFirst.push(offset);
        if (inGroup === o.rowGroupRows - 1) rgLast.push(offset);
        // Schema modes: a value or key its typed columns rebuild exactly is not stored as bytes.
        if (typed) {
          const exact = typed.record(d.data, rec, o.partition, offset, visible);
          if (exact & VALUE_EXACT) rec.valueLen = -1;
          if (exact & KEY_EXACT) rec.keyLen = -1;
        }
        builder.addRecord(offset, visible * 1000, bytes, rec, f.attributes, logAppend ? f.timestampDelta : null);
        lastRowOffset = offset;
        rows++;
        if (builder.rows >= o.chunkRows || builder.payloadBytes >= CHUNK_PAYLOAD_BYTES) yield flush();
      }
      if (cur.pos !== d.data.length) {
        throw new TieringConvertError('INVALID_SEGMENT', `batch at byte ${o.base + b.start} (offset ${b.baseOffset}) declares ${h.recordsCount} records but ${d.data.length - cur.pos} bytes follow the last one`);
      }
    }
    if (builder.rows > 0) yield flush();
  }

  const baseOffset = first.baseOffset;
  const lastOffset = last.lastOffset;
  let dataRows = false;
  for (let i = 0; i < group.length && !dataRows; i++) dataRows = hasRows(segment, group[i]!);
  let parquet: ParquetWriteResult | null = null;
  let dataPath: string | null = null;
  if (dataRows) {
    dataPath = dataFilePath(o.partition, baseOffset, lastOffset, o.nameTag);
    const kv = new Map([
      ['floe.kafka.partition', String(o.partition)],
      ['floe.kafka.base-offset', baseOffset.toString()],
      ['floe.kafka.last-offset', lastOffset.toString()],
    ]);
    // The file is about the size of the log it holds (producers compress too); a hint, not a limit.
    const schema = typed ? typed.schema : TOPIC_SCHEMA;
    if (typed) {
      kv.set(WRITERS_KEY, JSON.stringify(typed.writers()));
      if (typed.typesKeys) kv.set(KEY_WRITERS_KEY, JSON.stringify(typed.keyWriters()));
    }
    parquet = await writeParquet(schema, chunks(), { compression: o.compression, rowGroupRows: o.rowGroupRows, keyValueMetadata: kv, sizeHint: logBytes + (1 << 20) });
  } else {
    for await (const _ of chunks()) void _;
  }
  if (rgLast.length < rgFirst.length) rgLast.push(lastRowOffset);

  const rowGroups: IndexedRowGroup[] = [];
  if (parquet) {
    const rgs = parquet.footer.rowGroups;
    if (rgs.length !== rgFirst.length) {
      throw new TieringConvertError('INDEX_MISMATCH', `the Parquet writer made ${rgs.length} row groups where ${rgFirst.length} of ${o.rowGroupRows} rows were expected; the writer's row-group policy changed`);
    }
    let firstRow = 0;
    // A loop, not a per-file closure: V8 may drop a dead closure's optimized code at a full GC.
    for (let k = 0; k < rgs.length; k++) {
      const rg = rgs[k]!;
      let start = Number.POSITIVE_INFINITY;
      let end = 0;
      for (const c of rg.columns) {
        const s = Number(c.startOffset);
        if (s < start) start = s;
        const e = s + Number(c.totalCompressedSize);
        if (e > end) end = e;
      }
      const numRows = Number(rg.numRows);
      const expected = k < rgs.length - 1 ? o.rowGroupRows : rows - firstRow;
      if (numRows !== expected) {
        throw new TieringConvertError('INDEX_MISMATCH', `row group ${k} has ${numRows} rows, expected ${expected}; the writer's row-group policy changed`);
      }
      rowGroups.push({ firstRow, numRows, firstOffset: BigInt(rgFirst[k]!), lastOffset: BigInt(rgLast[k]!), byteStart: start, byteLength: end - start });
      firstRow += numRows;
    }
  }
  const index: SegmentIndex = {
    version: INDEX_VERSION,
    partition: o.partition,
    baseOffset,
    lastOffset,
    minTimestamp: rows > 0 ? BigInt(minTs) : -1n,
    maxTimestamp: maxTs,
    rowCount: rows,
    dataFile:
      parquet && dataPath
        ? { path: dataPath, size: parquet.bytes.length, footerOffset: parquet.bytes.length - 8 - parquet.footer.metadataLength, footerLength: parquet.footer.metadataLength }
        : null,
    rowGroups,
    batches,
  };
  return {
    dataPath,
    indexPath: indexPath(o.partition, baseOffset, lastOffset, o.nameTag),
    parquet,
    index,
    indexBytes: encodeSegmentIndex(index),
    logBytes,
    ...(typed ? { typed: { counts: typed.counts, deadLetters: typed.deadLetters } } : {}),
  };
}
