/**
 * Hiding a segment's rows below an offset from table readers, for DeleteRecords and for a log start that cuts
 * through a segment (topic-retention.ts, commit-segments.ts): whole data files below the offset leave the
 * segment, and a data file the offset cuts through gets a position delete file over its first rows
 * (iceberg/position-deletes.ts), named from the data file and the offset so that a retry rewrites the same
 * object. The offset index gives each batch's first row without reading data; only a batch straddling the
 * offset is read.
 */
import { decodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import type { DataFile, PartitionData } from '../../iceberg/data-file.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { writePositionDeletes } from '../../iceberg/position-deletes.js';
import { decodeSegmentIndex, type SegmentIndex } from '../offset-index/format.js';
import { padOffset, resolveLocation } from '../offset-index/location.js';
import { TieringError } from './api.js';
import type { SegmentEntry } from './partition-manifest.js';
import type { SegmentCodec } from './segment-codec.js';

/** The topic's table these functions work on. */
export interface RowsContext {
  readonly topic: string;
  readonly io: FileIO;
  readonly codec: SegmentCodec;
  readonly tableLocation: string;
}

/**
 * Where the position deletes of `dataFile` below `offset` go: beside it, named from it and the offset, so a
 * retried DeleteRecords (or commit) rewrites the same object instead of adding a second delete file.
 */
export function deleteFileLocation(dataFile: string, offset: number): string {
  return `${dataFile.replace(/\.parquet$/, '')}-deletes-below-${padOffset(BigInt(offset))}.parquet`;
}

/**
 * Hides the rows of `segment` below `offset` from table readers. A data file wholly below `offset` leaves
 * the segment (its index too: Kafka never reads below the log start), and the caller removes it from the
 * table in the same commit and deletes its objects after. A data file `offset` cuts through gets a position
 * delete file over its rows [0, k), k being its first row at or after `offset` (rows are in offset order;
 * the offset index gives each batch's first row, and a batch that straddles `offset` is read to count its
 * records below it), written (not committed) under a name made of the data file and `offset`. Returns the
 * delete files, the segment without the files below `offset`, and the data and index files it lost.
 */
export async function hideBelow(
  ctx: RowsContext,
  partition: number,
  segment: SegmentEntry,
  offset: number,
  partitions: ReadonlyMap<string, PartitionData>,
): Promise<{ deletes: DataFile[]; entry: SegmentEntry; removedData: string[]; removedIndexes: string[] }> {
  const deletes: DataFile[] = [];
  const removedData: string[] = [];
  const removedIndexes: string[] = [];
  for (const location of segment.indexFiles) {
    const index = decodeSegmentIndex(await ctx.io.get(location));
    if (index.baseOffset >= BigInt(offset)) break;
    const path = index.dataFile === null ? null : resolveLocation(ctx.tableLocation, index.dataFile.path);
    if (path !== null && !segment.dataFiles.includes(path)) {
      throw new TieringError('CORRUPT_MANIFEST', `${ctx.topic}-${partition}: offset index ${location} names data file ${path}, which is not a data file of segment ${segment.baseOffset}..${segment.lastOffset}; re-tier the partition`);
    }
    // The segment itself reaches `offset`, so its last index is never wholly below it.
    if (index.lastOffset < BigInt(offset) && location !== segment.indexFiles[segment.indexFiles.length - 1]) {
      removedIndexes.push(location);
      if (path !== null) removedData.push(path);
      continue;
    }
    if (path === null) continue;
    const k = await rowsBelow(ctx, partition, segment, location, index, offset);
    if (k === 0) continue;
    const tuple = partitions.get(path);
    if (tuple === undefined) {
      throw new TieringError('CORRUPT_MANIFEST', `${ctx.topic}-${partition}: offset index ${location} names data file ${path}, which is not a live data file of segment ${segment.baseOffset}..${segment.lastOffset}; re-tier the partition`);
    }
    deletes.push(await writePositionDeletes(ctx.io, deleteFileLocation(path, offset), [{ path, start: 0n, end: BigInt(k) }], { partition: tuple }));
  }
  const entry: SegmentEntry = { ...segment, dataFiles: segment.dataFiles.filter((f) => !removedData.includes(f)), indexFiles: segment.indexFiles.filter((f) => !removedIndexes.includes(f)) };
  return { deletes, entry, removedData, removedIndexes };
}

/** Rows of the index's data file whose offsets are below `offset`. */
export async function rowsBelow(ctx: RowsContext, partition: number, segment: SegmentEntry, indexLocation: string, index: SegmentIndex, offset: number): Promise<number> {
  const x = BigInt(offset);
  let k = 0;
  for (const b of index.batches) {
    if (b.stored !== null) continue; // control (or emptied) batches have no rows
    if (b.baseOffset + BigInt(b.lastOffsetDelta) < x) {
      k = b.firstRow + b.recordsCount;
      continue;
    }
    if (b.baseOffset < x) {
      // The batch holding `offset` (Kafka returns it whole): its records below `offset` are deleted too.
      const r = await ctx.codec.readSegment({ io: ctx.io, partition, baseOffset: segment.baseOffset, lastOffset: segment.lastOffset, dataFiles: segment.dataFiles, indexFiles: [indexLocation], fetchOffset: offset, maxBytes: 1, minOneBatch: true });
      const batch = r.records.length > 0 ? decodeRecordBatch(r.records, 0, { verifyCrc: false }) : undefined;
      if (batch === undefined || batch.baseOffset !== b.baseOffset || batch.records.length !== b.recordsCount) {
        throw new TieringError('CORRUPT_MANIFEST', `${ctx.topic}-${partition}: reading the batch at ${b.baseOffset} of ${indexLocation} did not return it; re-tier the partition`);
      }
      k = b.firstRow + batch.records.filter((rec) => b.baseOffset + BigInt(rec.offsetDelta) < x).length;
    }
    break;
  }
  if (k > index.rowCount) throw new TieringError('CORRUPT_MANIFEST', `${ctx.topic}-${partition}: offset index ${indexLocation} counts ${index.rowCount} rows but its batches end at row ${k}; re-tier the partition`);
  return k;
}
