/**
 * The rows of one committed segment as table readers of the topic's table see them, each with its Kafka key,
 * offset and row position: what the `_latest` upsert table (latest-table.ts) needs to know which row of
 * which data file holds the newest record of a key.
 *
 * Records come back through the codec's Kafka read path (so typed keys are rebuilt to their Kafka bytes),
 * one data file at a time through its offset index, whose batch entries give each batch's first row (rows
 * are in offset order, control batches have none). Rows the topic's table hides with position deletes
 * (aborted or still undecided transactions, DeleteRecords, an operator's hide) are reported in `hidden`,
 * not visited: for table readers they do not exist.
 *
 *   const hidden = await readSegmentRows(ctx, partition, segment, (r) => keys.push(r));
 */
import { decodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { readParquetTable } from '../../../iceberg/parquet/reader.js';
import { decodeSegmentIndex, type IndexedBatch } from '../../offset-index/format.js';
import { resolveLocation } from '../../offset-index/location.js';
import { TieringError } from '../api.js';
import type { SegmentEntry } from '../partition-manifest.js';
import type { SegmentCodec } from '../segment-codec.js';

/** The topic's table the rows are read from. */
export interface SegmentRowsContext {
  readonly topic: string;
  readonly io: FileIO;
  readonly codec: SegmentCodec;
  readonly tableLocation: string;
}

/** One row of a data file, as the record it holds. */
export interface KeyedRow {
  /** Kafka key bytes; null for a record without a key. */
  readonly key: Buffer | null;
  readonly offset: number;
  /** Kafka timestamp (ms). */
  readonly timestamp: number;
  /** The value is null (a tombstone). */
  readonly tombstone: boolean;
  /** The record's value bytes (null for a tombstone). */
  readonly value: Buffer | null;
  readonly file: string;
  readonly row: number;
}

/** Bytes asked of the codec per read: batches come back whole, so this only bounds memory. */
const READ_BYTES = 8 << 20;

/**
 * Visits the rows of `segment` that table readers see, in offset order, and returns the rows its delete
 * files hide, by data file.
 */
export async function readSegmentRows(ctx: SegmentRowsContext, partition: number, segment: SegmentEntry, visit: (row: KeyedRow) => void): Promise<Map<string, Set<number>>> {
  const hidden = await hiddenRows(ctx.io, segment.deleteFiles ?? []);
  for (const location of segment.indexFiles) {
    const index = decodeSegmentIndex(await ctx.io.get(location));
    if (index.dataFile === null) continue;
    const file = resolveLocation(ctx.tableLocation, index.dataFile.path);
    const gone = hidden.get(file);
    const batches = new Map<bigint, IndexedBatch>();
    for (const b of index.batches) if (b.stored === null && b.recordsCount > 0) batches.set(b.baseOffset, b);
    let next = Number(index.baseOffset);
    const last = Number(index.lastOffset);
    while (next <= last) {
      const r = await ctx.codec.readSegment({ io: ctx.io, partition, baseOffset: segment.baseOffset, lastOffset: segment.lastOffset, dataFiles: segment.dataFiles, indexFiles: [location], fetchOffset: next, maxBytes: READ_BYTES, minOneBatch: true });
      if (r.records.length === 0 || r.nextOffset <= next) break;
      for (let pos = 0; pos < r.records.length; ) {
        const batch = decodeRecordBatch(r.records, pos, { verifyCrc: false });
        pos += batch.sizeInBytes;
        const entry = batches.get(batch.baseOffset);
        if (entry === undefined) continue; // control batches have no rows
        if (batch.records.length !== entry.recordsCount) {
          throw new TieringError('CORRUPT_MANIFEST', `${ctx.topic}-${partition}: the batch at ${batch.baseOffset} of ${location} came back with ${batch.records.length} records, its index says ${entry.recordsCount}; re-tier the partition`);
        }
        batch.records.forEach((rec, i) => {
          const row = entry.firstRow + i;
          if (gone?.has(row)) return;
          visit({ key: rec.key, offset: Number(batch.baseOffset) + rec.offsetDelta, timestamp: Number(batch.baseTimestamp) + rec.timestampDelta, tombstone: rec.value === null, value: rec.value, file, row });
        });
      }
      next = r.nextOffset;
    }
  }
  return hidden;
}

/** Rows hidden by position delete files, by data file path. */
export async function hiddenRows(io: FileIO, deleteFiles: readonly string[]): Promise<Map<string, Set<number>>> {
  const out = new Map<string, Set<number>>();
  for (const location of deleteFiles) {
    const table = readParquetTable(await io.get(location), { columns: ['file_path', 'pos'] });
    const paths = table.getChild('file_path');
    const positions = table.getChild('pos');
    if (paths === null || positions === null) throw new TieringError('CORRUPT_MANIFEST', `position delete file ${location} has no file_path and pos columns; re-tier the partition`);
    for (let i = 0; i < table.numRows; i++) {
      const path = String(paths.get(i));
      let set = out.get(path);
      if (set === undefined) out.set(path, (set = new Set()));
      set.add(Number(positions.get(i)));
    }
  }
  return out;
}
