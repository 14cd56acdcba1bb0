/**
 * Offset lookups in segment indexes: offset -> (index, batch, row group). All binary searches; offsets may
 * have gaps (compaction, DeleteRecords, control records), so "the batch for offset o" is the first batch
 * whose last offset is at least o, as Kafka's own fetch returns the batch containing (or following) o.
 */
import type { IndexedBatch, IndexedRowGroup, SegmentIndex } from './format.js';

export function batchLastOffset(b: IndexedBatch): bigint {
  return b.baseOffset + BigInt(b.lastOffsetDelta);
}

/** Index of the first batch whose last offset is >= offset, or -1 when offset is past the index. */
export function findBatch(index: SegmentIndex, offset: bigint): number {
  const bs = index.batches;
  let lo = 0;
  let hi = bs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (batchLastOffset(bs[mid]!) < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo < bs.length ? lo : -1;
}

/** Index of the row group holding data-file row `row`, or -1. */
export function findRowGroupByRow(rowGroups: readonly IndexedRowGroup[], row: number): number {
  let lo = 0;
  let hi = rowGroups.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const rg = rowGroups[mid]!;
    if (row < rg.firstRow) hi = mid - 1;
    else if (row >= rg.firstRow + rg.numRows) lo = mid + 1;
    else return mid;
  }
  return -1;
}

export interface OffsetLocation {
  readonly batch: number;
  /** Row group of the batch's first row, or -1 for batches without rows. */
  readonly rowGroup: number;
}

/** Where `offset` lives in this index: its batch (the one containing or following it) and row group. */
export function locateOffset(index: SegmentIndex, offset: bigint): OffsetLocation | undefined {
  const batch = findBatch(index, offset);
  if (batch < 0) return undefined;
  const b = index.batches[batch]!;
  const rowGroup = b.stored === null && b.recordsCount > 0 ? findRowGroupByRow(index.rowGroups, b.firstRow) : -1;
  return { batch, rowGroup };
}

/**
 * Of a partition's indexes sorted by base offset, the position of the one that serves `offset`: the first
 * whose last offset is >= offset (so an offset inside a gap between two files goes to the next one). -1
 * past the end.
 */
export function findIndex(indexes: readonly Pick<SegmentIndex, 'baseOffset' | 'lastOffset'>[], offset: bigint): number {
  let lo = 0;
  let hi = indexes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (indexes[mid]!.lastOffset < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo < indexes.length ? lo : -1;
}
