/**
 * Aborted transactional records of a converted segment, hidden from table readers: the single copy keeps
 * them in the data files (a read_uncommitted Kafka consumer reads them back from there, byte for byte, and
 * read_committed consumers drop them with the broker's aborted-transaction list), and a position delete file
 * per data file names their rows, committed in the same snapshot as the data file.
 *
 * A data batch belongs to an aborted transaction when it is transactional, its producer id is the
 * transaction's and its base offset lies in [firstOffset, abort marker) (Kafka's read_committed rule; a
 * producer has at most one open transaction per partition, so every such batch is that transaction's). Its
 * rows are [firstRow, firstRow + recordsCount) of the index's data file (rows are in offset order, see
 * ../offset-index/format.ts). Control batches have no rows.
 *
 *   const deletes = await writeAbortedDeletes(io, tableLocation, converted, aborted);
 *   // deletes: DataFile[] (content = position deletes), named `<data file>-aborted-txns.parquet`
 */
import type { DataFile } from '../../iceberg/data-file.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { writePositionDeletes, type PositionDeleteRange } from '../../iceberg/position-deletes.js';
import { decodeSegmentIndex, type SegmentIndex } from '../offset-index/format.js';
import { resolveLocation } from '../offset-index/location.js';
import { TieringError, type AbortedTransaction } from './api.js';

/** Marks a delete file that hides aborted transactional rows (DeleteRecords' are `-deletes-below-`, hides `-hidden-`). */
export const ABORTED_MARK = '-aborted-txns';

/** Batch attribute bits (record batch v2). */
const TRANSACTIONAL = 0x10;
const CONTROL = 0x20;

/** Where the position deletes over the aborted rows of `dataFile` go: beside it, so a retried copy rewrites the same object. */
export function abortedFileLocation(dataFile: string): string {
  return `${dataFile.replace(/\.parquet$/, '')}${ABORTED_MARK}.parquet`;
}

/** Whether `deleteFile` hides aborted transactional rows (it is kept as long as its data file is). */
export function isAbortedDeletes(deleteFile: string): boolean {
  return deleteFile.endsWith(`${ABORTED_MARK}.parquet`);
}

/** Row ranges of the index's data file holding records of `aborted` transactions, ascending and merged. */
export function abortedRows(index: SegmentIndex, aborted: readonly AbortedTransaction[]): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  if (aborted.length === 0) return out;
  for (const b of index.batches) {
    if (b.stored !== null || (b.attributes & TRANSACTIONAL) === 0 || (b.attributes & CONTROL) !== 0 || b.recordsCount === 0) continue;
    const base = Number(b.baseOffset);
    if (!aborted.some((a) => a.producerId === b.producerId && a.firstOffset <= base && base < a.lastOffset)) continue;
    const last = out[out.length - 1];
    if (last !== undefined && last.end === b.firstRow) last.end = b.firstRow + b.recordsCount;
    else out.push({ start: b.firstRow, end: b.firstRow + b.recordsCount });
  }
  const end = out[out.length - 1]?.end ?? 0;
  if (end > index.rowCount) {
    throw new TieringError('CORRUPT_MANIFEST', `offset index of partition ${index.partition} at ${index.baseOffset} counts ${index.rowCount} rows but its batches end at row ${end}; re-tier the partition`);
  }
  return out;
}

/**
 * Writes (does not commit) one position delete file per data file of a converted segment that holds rows
 * of `aborted` transactions. `dataFiles` are the segment's data files (their partition tuples go into the
 * delete files), `indexFiles` its offset-index objects. Returns the delete files, in data file order.
 */
export async function writeAbortedDeletes(
  io: FileIO,
  tableLocation: string,
  segment: { readonly dataFiles: readonly DataFile[]; readonly indexFiles: readonly string[] },
  aborted: readonly AbortedTransaction[],
): Promise<DataFile[]> {
  if (aborted.length === 0 || segment.dataFiles.length === 0) return [];
  const byPath = new Map(segment.dataFiles.map((f) => [f.file_path, f]));
  const deletes: DataFile[] = [];
  for (const location of segment.indexFiles) {
    const index = decodeSegmentIndex(await io.get(location));
    if (index.dataFile === null) continue;
    const rows = abortedRows(index, aborted);
    if (rows.length === 0) continue;
    const path = resolveLocation(tableLocation, index.dataFile.path);
    const data = byPath.get(path);
    if (data === undefined) {
      throw new TieringError('CORRUPT_MANIFEST', `offset index ${location} names data file ${path}, which the conversion did not write; re-tier the segment`);
    }
    const ranges: PositionDeleteRange[] = rows.map((r) => ({ path, start: BigInt(r.start), end: BigInt(r.end) }));
    deletes.push(await writePositionDeletes(io, abortedFileLocation(path), ranges, { partition: data.partition }));
  }
  return deletes;
}
