/**
 * Transactional records of a segment that table readers must not see, hidden with position deletes: the
 * single copy keeps them in the data files (a read_uncommitted Kafka consumer reads them back from there,
 * byte for byte, and read_committed consumers drop the aborted ones with the broker's aborted list), and one
 * position delete file per data file names their rows, committed in the same snapshot as the data file.
 *
 * - Aborted transactions' rows: `<data file>-aborted-txns.parquet`, final.
 * - While a transaction that wrote into the segment is open: `<data file>-open-txns.parquet` over the rows
 *   of aborted AND of open transactions (a transaction's records wait for its end, nothing else does). The
 *   first commit of the topic (any partition, or none: the plugin commits only to settle when nothing else
 *   is due) after the last stable offset has passed the segment (every transaction in it is decided)
 *   replaces that file by the final one (or by none) in the same snapshot (txn-settlement.ts, which every
 *   commit of the topic runs); a segment not committed yet is settled in the commit that adds it. Until
 *   then the segment is "undecided"; compaction leaves it alone (it has deletes).
 *
 * A data batch belongs to an aborted transaction when it is transactional, its producer id is the
 * transaction's and its base offset lies in [firstOffset, abort marker) (Kafka's read_committed rule; a
 * producer has at most one open transaction per partition, so every such batch is that transaction's). Its
 * rows are [firstRow, firstRow + recordsCount) of the index's data file (rows are in offset order, see
 * ../offset-index/format.ts). Control batches have no rows. A batch of an open transaction is one of its
 * producer at or after the transaction's first offset.
 *
 *   const { deletes, undecided } = await writeTxnDeletes(io, tableLocation, converted, txns);
 */
import type { DataFile } from '../../iceberg/data-file.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { writePositionDeletes, type PositionDeleteRange } from '../../iceberg/position-deletes.js';
import { decodeSegmentIndex, type SegmentIndex } from '../offset-index/format.js';
import { resolveLocation } from '../offset-index/location.js';
import { TieringError, type AbortedTransaction, type OpenTransaction, type PartitionTransactions } from './api.js';

/** Marks a delete file that hides aborted transactional rows (DeleteRecords' are `-deletes-below-`, hides `-hidden-`). */
export const ABORTED_MARK = '-aborted-txns';
/** Marks one that also hides the rows of transactions open when it was written (replaced once they end). */
export const OPEN_MARK = '-open-txns';

/** Batch attribute bits (record batch v2). */
const TRANSACTIONAL = 0x10;
const CONTROL = 0x20;

/**
 * Where the position deletes over the transactional rows of `dataFile` go: beside it, named by whether they
 * include rows of open transactions, so a retried copy (or settlement) rewrites the same object.
 */
export function txnDeletesLocation(dataFile: string, undecided: boolean): string {
  return `${dataFile.replace(/\.parquet$/, '')}${undecided ? OPEN_MARK : ABORTED_MARK}.parquet`;
}

/** Whether `deleteFile` hides transactional rows, aborted or undecided (it is kept as long as its data file is). */
export function isTxnDeletes(deleteFile: string): boolean {
  return deleteFile.endsWith(`${ABORTED_MARK}.parquet`) || deleteFile.endsWith(`${OPEN_MARK}.parquet`);
}

/** Whether `deleteFile` also hides rows of transactions that were open when it was written. */
export function isUndecidedDeletes(deleteFile: string): boolean {
  return deleteFile.endsWith(`${OPEN_MARK}.parquet`);
}

/**
 * Row ranges of the index's data file holding records of `aborted` transactions, or of `open` ones,
 * ascending and merged.
 */
export function txnRows(index: SegmentIndex, aborted: readonly AbortedTransaction[], open: readonly OpenTransaction[] = []): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  if (aborted.length === 0 && open.length === 0) return out;
  for (const b of index.batches) {
    if (b.stored !== null || (b.attributes & TRANSACTIONAL) === 0 || (b.attributes & CONTROL) !== 0 || b.recordsCount === 0) continue;
    const base = Number(b.baseOffset);
    const isAborted = aborted.some((a) => a.producerId === b.producerId && a.firstOffset <= base && base < a.lastOffset);
    if (!isAborted && !open.some((t) => t.producerId === b.producerId && t.firstOffset <= base)) continue;
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
 * Writes (does not commit) one position delete file per data file of a segment that holds rows of aborted
 * transactions, or of open ones when the segment reaches the last stable offset (`undecided`: then the
 * files are the `-open-txns` kind, to be settled later). `dataFiles` give each data file's partition tuple,
 * `indexFiles` are the segment's offset-index objects. Returns the delete files, in data file order.
 */
export async function writeTxnDeletes(
  io: FileIO,
  tableLocation: string,
  segment: { readonly lastOffset: number; readonly dataFiles: readonly Pick<DataFile, 'file_path' | 'partition'>[]; readonly indexFiles: readonly string[] },
  txns: PartitionTransactions | undefined,
): Promise<{ deletes: DataFile[]; undecided: boolean }> {
  const undecided = txns !== undefined && txns.lastStableOffset <= segment.lastOffset;
  const aborted = txns?.aborted ?? [];
  const open = undecided ? (txns?.open ?? []) : [];
  if ((aborted.length === 0 && open.length === 0) || segment.dataFiles.length === 0) return { deletes: [], undecided: false };
  const byPath = new Map(segment.dataFiles.map((f) => [f.file_path, f]));
  const planned: { path: string; ranges: PositionDeleteRange[]; partition: DataFile['partition'] }[] = [];
  let hidesOpen = false;
  for (const location of segment.indexFiles) {
    const index = decodeSegmentIndex(await io.get(location));
    if (index.dataFile === null) continue;
    const rows = txnRows(index, aborted, open);
    if (rows.length === 0) continue;
    if (txnRows(index, [], open).length > 0) hidesOpen = true;
    const path = resolveLocation(tableLocation, index.dataFile.path);
    const data = byPath.get(path);
    if (data === undefined) {
      throw new TieringError('CORRUPT_MANIFEST', `offset index ${location} names data file ${path}, which the conversion did not write; re-tier the segment`);
    }
    const ranges: PositionDeleteRange[] = rows.map((r) => ({ path, start: BigInt(r.start), end: BigInt(r.end) }));
    planned.push({ path, ranges, partition: data.partition });
  }
  // Named by what they hide: the `-open-txns` kind only when some row waits for an open transaction.
  const deletes: DataFile[] = [];
  for (const d of planned) deletes.push(await writePositionDeletes(io, txnDeletesLocation(d.path, hidesOpen), d.ranges, { partition: d.partition }));
  return { deletes, undecided: hidesOpen };
}
