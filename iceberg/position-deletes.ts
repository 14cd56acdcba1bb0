/**
 * Position delete files (Iceberg spec v2, "Position Delete Files"): Parquet files of `(file_path, pos)` rows,
 * sorted by file_path then pos, each hiding one row of a data file from table readers. The data file itself
 * is not touched, so any other reader of its bytes (Floe's Kafka fetch path) still sees every row.
 *
 * Deletes are given as half-open row ranges `[start, end)` per data file, because the callers hide runs of
 * rows (the rows below a Kafka log start, the rows of an aborted transaction). Rows are generated in slices,
 * so hiding millions of rows costs one slice of memory, not the whole column.
 *
 * Metrics are the reference implementation's for position deletes: record_count, and full (untruncated)
 * lower/upper bounds of `file_path` and `pos`, which readers use to skip delete files that cannot apply to a
 * data file; `referenced_data_file` is set when every row names one data file.
 *
 *   const del = await writePositionDeletes(io, location, [{ path: dataFile.file_path, start: 0n, end: 42n }], { partition });
 *   await table.commit(table.newRowDelta().addDeleteFile(del));
 */
import * as arrow from 'apache-arrow';
import type { FileIO } from './io/file-io.js';
import { DataFileContent, parquetDataFile, type DataFile, type PartitionData } from './data-file.js';
import { toSingleValue } from './metrics.js';
import { writeParquet, type ParquetWriteOptions } from './parquet/writer.js';
import type { StructType } from './schema.js';
import { IcebergError } from './types.js';

/** Reserved field ids of position delete files (spec, "Reserved Field IDs"). */
export const DELETE_FILE_PATH_ID = 2147483546;
export const DELETE_POS_ID = 2147483545;

export const POSITION_DELETE_SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: DELETE_FILE_PATH_ID, name: 'file_path', required: true, type: 'string' },
    { id: DELETE_POS_ID, name: 'pos', required: true, type: 'long' },
  ],
};

/** One deleted row. */
export interface PositionDelete {
  /** The data file's `file_path`, exactly as in its manifest entry. */
  readonly path: string;
  /** 0-based row position in that file. */
  readonly pos: bigint;
}

/** Rows `[start, end)` of one data file. */
export interface PositionDeleteRange {
  /** The data file's `file_path`, exactly as in its manifest entry. */
  readonly path: string;
  readonly start: bigint;
  readonly end: bigint;
}

export interface PositionDeleteWriteOptions extends Omit<ParquetWriteOptions, 'truncateLength'> {
  /** The partition tuple of the data files the deletes apply to (a delete file applies within its partition). */
  readonly partition?: PartitionData;
}

/** Rows generated per Arrow batch. */
const SLICE_ROWS = 64 * 1024;

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Sorts ranges by path then start, merges touching or overlapping ranges of one path, and drops empty ones.
 * Throws INVALID_UPDATE for a negative or reversed range.
 */
export function normalizeRanges(ranges: readonly PositionDeleteRange[]): PositionDeleteRange[] {
  for (const r of ranges) {
    if (r.path === '') throw new IcebergError('INVALID_UPDATE', 'A position delete needs the data file path; give the file_path of its manifest entry');
    if (r.start < 0n || r.end < r.start) throw new IcebergError('INVALID_UPDATE', `Position delete range [${r.start}, ${r.end}) of ${r.path} is not a range of row positions; give 0 <= start <= end`);
  }
  const sorted = ranges.filter((r) => r.end > r.start).sort((a, b) => compareStrings(a.path, b.path) || (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: PositionDeleteRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && last.path === r.path && r.start <= last.end) {
      if (r.end > last.end) out[out.length - 1] = { path: last.path, start: last.start, end: r.end };
    } else {
      out.push({ path: r.path, start: r.start, end: r.end });
    }
  }
  return out;
}

/** Single positions as ranges of one row each. */
export function positionsToRanges(deletes: readonly PositionDelete[]): PositionDeleteRange[] {
  return deletes.map((d) => ({ path: d.path, start: d.pos, end: d.pos + 1n }));
}

/** A Utf8 vector of `n` copies of `value`, built directly from one repeated byte buffer. */
function repeatedUtf8(value: Uint8Array, n: number): arrow.Data<arrow.Utf8> {
  const offsets = new Int32Array(n + 1);
  for (let i = 1; i <= n; i++) offsets[i] = i * value.length;
  const bytes = new Uint8Array(value.length * n);
  for (let i = 0; i < n; i++) bytes.set(value, i * value.length);
  return arrow.makeData({ type: new arrow.Utf8(), length: n, nullCount: 0, valueOffsets: offsets, data: bytes });
}

/** Arrow batches of `(file_path, pos)` rows for normalized ranges, at most SLICE_ROWS rows each. */
function* deleteBatches(ranges: readonly PositionDeleteRange[]): Generator<arrow.RecordBatch> {
  const schema = new arrow.Schema([new arrow.Field('file_path', new arrow.Utf8(), false), new arrow.Field('pos', new arrow.Int64(), false)]);
  const encoder = new TextEncoder();
  for (const r of ranges) {
    const path = encoder.encode(r.path);
    for (let from = r.start; from < r.end; ) {
      const n = Number(r.end - from < BigInt(SLICE_ROWS) ? r.end - from : BigInt(SLICE_ROWS));
      const pos = new BigInt64Array(n);
      for (let i = 0; i < n; i++) pos[i] = from + BigInt(i);
      const children = [repeatedUtf8(path, n), arrow.makeData({ type: new arrow.Int64(), length: n, nullCount: 0, data: pos })];
      yield new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children }));
      from += BigInt(n);
    }
  }
}

/**
 * Writes a position delete file at `location` (overwriting: give a deterministic name so a retry rewrites
 * the same object) and returns its DeleteFile, not yet committed. Ranges may come in any order; they are
 * sorted and merged. Throws INVALID_UPDATE when no row is deleted.
 */
export async function writePositionDeletes(io: FileIO, location: string, ranges: readonly PositionDeleteRange[], options: PositionDeleteWriteOptions = {}): Promise<DataFile> {
  const rows = normalizeRanges(ranges);
  if (rows.length === 0) throw new IcebergError('INVALID_UPDATE', 'A position delete file needs at least one row; skip the delete file when nothing is deleted');
  const { partition, ...parquet } = options;
  const written = await writeParquet(POSITION_DELETE_SCHEMA, deleteBatches(rows), { dictionary: 'on', ...parquet });
  await io.put(location, Buffer.from(written.bytes.buffer, written.bytes.byteOffset, written.bytes.byteLength));
  const first = rows[0] as PositionDeleteRange;
  const last = rows[rows.length - 1] as PositionDeleteRange;
  let minPos = first.start;
  let maxPos = first.end - 1n;
  for (const r of rows) {
    if (r.start < minPos) minPos = r.start;
    if (r.end - 1n > maxPos) maxPos = r.end - 1n;
  }
  // Full bounds, as the reference writer keeps for position deletes: a truncated path would not let a reader
  // tell which data files a delete file can apply to.
  const lower = new Map(written.metrics.lower_bounds);
  const upper = new Map(written.metrics.upper_bounds);
  lower.set(DELETE_FILE_PATH_ID, toSingleValue('string', first.path));
  upper.set(DELETE_FILE_PATH_ID, toSingleValue('string', last.path));
  lower.set(DELETE_POS_ID, toSingleValue('long', minPos));
  upper.set(DELETE_POS_ID, toSingleValue('long', maxPos));
  const count = rows.reduce((n, r) => n + (r.end - r.start), 0n);
  if (count !== written.metrics.record_count) {
    throw new IcebergError('INVALID_UPDATE', `Position delete file ${location} holds ${written.metrics.record_count} rows, expected ${count}; the Parquet writer lost rows, do not commit this file`);
  }
  return parquetDataFile({
    file_path: location,
    content: DataFileContent.POSITION_DELETES,
    partition: partition ?? {},
    metrics: { ...written.metrics, lower_bounds: lower, upper_bounds: upper },
    split_offsets: written.splitOffsets,
    referenced_data_file: first.path === last.path ? first.path : null,
  });
}
