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
import { decodeSegmentIndex, type IndexedBatch, type SegmentIndex } from '../../offset-index/format.js';
import { resolveLocation } from '../../offset-index/location.js';
import { TieringError } from '../api.js';
import type { SegmentEntry } from '../partition-manifest.js';
import type { SegmentCodec } from '../segment-codec.js';
import { readColumnRows } from './column-rows.js';

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
  /** The value is null (a tombstone). */
  readonly tombstone: boolean;
  /** The record's value bytes (null for a tombstone). */
  readonly value: Buffer | null;
  readonly file: string;
  readonly row: number;
  /** With id columns (readSegmentRows' `probes`): what the row's columns say. Absent without id columns. */
  readonly columns?: RowColumns;
}

/** Bytes asked of the codec per read: batches come back whole, so this only bounds memory. */
const READ_BYTES = 8 << 20;

/** One data file of a segment: its offset index and the rows its segment's delete files hide. */
interface SegmentDataFile {
  readonly location: string;
  readonly index: SegmentIndex;
  readonly file: string;
  readonly gone: ReadonlySet<number> | undefined;
}

/**
 * Calls `each` for every data file of `segment` (through its offset index, in offset order) and returns the
 * rows the segment's delete files hide, by data file.
 */
async function eachDataFile(ctx: SegmentRowsContext, segment: SegmentEntry, each: (f: SegmentDataFile) => Promise<void>): Promise<Map<string, Set<number>>> {
  const hidden = await hiddenRows(ctx.io, segment.deleteFiles ?? []);
  for (const location of segment.indexFiles) {
    const index = decodeSegmentIndex(await ctx.io.get(location));
    if (index.dataFile === null) continue;
    const file = resolveLocation(ctx.tableLocation, index.dataFile.path);
    await each({ location, index, file, gone: hidden.get(file) });
  }
  return hidden;
}

/**
 * Visits the rows of `segment` that table readers see, in offset order, rebuilt as Kafka records, and
 * returns the rows its delete files hide, by data file.
 */
export function readSegmentRows(ctx: SegmentRowsContext, partition: number, segment: SegmentEntry, visit: (row: KeyedRow) => void, probes?: RowColumnProbes): Promise<Map<string, Set<number>>> {
  return eachDataFile(ctx, segment, async ({ location, index, file, gone }) => {
    const columns = probes === undefined ? undefined : await rowColumns(ctx.io, file, probes);
    const batches = new Map<bigint, IndexedBatch>();
    for (const b of index.batches) if (b.stored === null && b.recordsCount > 0) batches.set(b.baseOffset, b);
    let next = Number(index.baseOffset);
    const last = Number(index.lastOffset);
    while (next <= last) {
      // Uncompressed, and past the codec's batch cache: these reads are not Kafka fetches and must not evict theirs.
      const r = await ctx.codec.readSegment({ io: ctx.io, partition, baseOffset: segment.baseOffset, lastOffset: segment.lastOffset, dataFiles: segment.dataFiles, indexFiles: [location], fetchOffset: next, maxBytes: READ_BYTES, minOneBatch: true, compression: 'none' });
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
          const r: KeyedRow = { key: rec.key, offset: Number(batch.baseOffset) + rec.offsetDelta, tombstone: rec.value === null, value: rec.value, file, row };
          visit(columns === undefined ? r : { ...r, columns: columns[row] ?? { id: null } });
        });
      }
      next = r.nextOffset;
    }
  });
}

/**
 * The same rows as readSegmentRows, for a `key_value` table: read from the data files' offset, key and
 * value columns (column-rows.ts) instead of rebuilt Kafka batches.
 */
export function readSegmentColumnRows(ctx: SegmentRowsContext, segment: SegmentEntry, visit: (row: KeyedRow) => void): Promise<Map<string, Set<number>>> {
  return eachDataFile(ctx, segment, async ({ file, gone }) => {
    const cols = await readColumnRows(ctx.io, file);
    for (let row = 0; row < cols.rows; row++) {
      if (gone?.has(row)) continue;
      const value = cols.value(row);
      visit({ key: cols.key(row), offset: cols.offset(row), tombstone: value === null, value, file, row });
    }
  });
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

/**
 * A column of the table a row is read from: the paths (column name, then struct field names) it may be at;
 * the first that holds a value wins (a Debezium table's id is in `after`, and in `before` for a delete).
 */
export type ColumnPaths = readonly (readonly string[])[];

/** Columns of typed tables the upsert table reads a row's identity, operation and order from. */
export interface RowColumnProbes {
  /** The id columns (`iceberg.upsert.id.columns`). */
  readonly id: readonly ColumnPaths[];
  /** Debezium's `op` column; read when the table has it. */
  readonly op?: ColumnPaths;
  /** The ordering field's column (`iceberg.upsert.order.field`); read when the table has it. */
  readonly order?: ColumnPaths;
}

/** What the columns say of one row. */
export interface RowColumns {
  /** The id columns' values as one string; null when one has no value (an untyped row). */
  readonly id: string | null;
  /** The op column's value, when the table has one. */
  readonly op?: string | null;
  /** The order column's value (NaN when null or not numeric), when the table has one. */
  readonly order?: number;
}

/**
 * What the probed columns hold for every row of a data file. Throws when the file has none of an id
 * column's paths; op and order columns the file lacks are left out.
 */
export async function rowColumns(io: FileIO, file: string, probes: RowColumnProbes): Promise<RowColumns[]> {
  const all = [...probes.id, ...(probes.op ? [probes.op] : []), ...(probes.order ? [probes.order] : [])];
  const table = readParquetTable(await io.get(file), { columns: [...new Set(all.flatMap((c) => c.map((p) => p[0] as string)))] });
  const find = (candidates: ColumnPaths) =>
    candidates.flatMap((path) => {
      let v = table.getChild(path[0] as string);
      for (const name of path.slice(1)) v = v?.getChild(name) ?? null;
      return v === null || v === undefined ? [] : [v];
    });
  const ids = probes.id.map((candidates) => {
    const found = find(candidates);
    if (found.length === 0) throw new TieringError('INVALID_CONFIG', `iceberg.upsert.id.columns names ${candidates.map((p) => p.join('.')).join(' or ')}, which data file ${file} does not have; name columns of the table (a typed table's value fields, or key.<field> for a typed key)`);
    return found;
  });
  const op = probes.op ? find(probes.op) : [];
  const order = probes.order ? find(probes.order) : [];
  const first = (vectors: readonly { get(i: number): unknown }[], i: number): unknown => {
    for (const v of vectors) {
      const x = v.get(i);
      if (x !== null && x !== undefined) return x;
    }
    return null;
  };
  const out: RowColumns[] = new Array(table.numRows);
  for (let i = 0; i < table.numRows; i++) {
    const values = ids.map((vectors) => first(vectors, i));
    const id = values.some((x) => x === null) ? null : JSON.stringify(values.map((x) => (typeof x === 'bigint' ? `${x}n` : x instanceof Uint8Array ? `b64:${Buffer.from(x).toString('base64')}` : x instanceof Date ? x.getTime() : x)));
    const o = order.length > 0 ? first(order, i) : undefined;
    out[i] = {
      id,
      ...(op.length > 0 ? { op: ((x) => (x === null ? null : String(x)))(first(op, i)) } : {}),
      ...(o !== undefined ? { order: o === null ? NaN : Number(o) } : {}),
    };
  }
  return out;
}
