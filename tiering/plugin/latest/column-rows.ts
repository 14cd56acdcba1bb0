/**
 * The rows of a `key_value` topic table's data file read straight from its columns: `kafka.offset`,
 * `kafka.key` and `value`, decoded by the native column reader, without rebuilding Kafka batches. The upsert
 * table (latest-table.ts) uses it for tables without typed columns, where those columns are what table
 * readers see of every row; typed tables go through segment-rows.ts (the Kafka read path rebuilds typed keys
 * and values).
 */
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { findLeafByFieldId, int64At, readColumnChunks, type DecodedColumn } from '../../../iceberg/parquet/column-reader.js';
import { parseParquetFooter } from '../../../iceberg/parquet/footer.js';
import { FIELD_IDS } from '../../convert/schema.js';
import { TieringError } from '../api.js';

export interface ColumnRows {
  readonly rows: number;
  offset(row: number): number;
  key(row: number): Buffer | null;
  value(row: number): Buffer | null;
}

/** Non-null value index of each row of an optional column (-1 for null), or null when no row is null. */
function valueIndex(c: DecodedColumn): Int32Array | null {
  const defs = c.definitionLevels;
  if (defs === null) return null;
  const at = new Int32Array(c.numLevels);
  let v = 0;
  for (let i = 0; i < c.numLevels; i++) at[i] = defs[i] === c.maxDefinitionLevel ? v++ : -1;
  return at;
}

function bytesAt(c: DecodedColumn, at: Int32Array | null, row: number): Buffer | null {
  const i = at === null ? row : (at[row] as number);
  if (i < 0 || c.values.kind !== 'bytes') return null;
  return c.values.data.subarray(c.values.starts[i], c.values.ends[i]);
}

/** Reads the offset, key and value columns of every row of `file`. */
export async function readColumnRows(io: FileIO, file: string): Promise<ColumnRows> {
  const bytes = await io.get(file);
  const footer = parseParquetFooter(bytes);
  const leaves = [FIELD_IDS.offset, FIELD_IDS.key, FIELD_IDS.value].map((id) => {
    const i = findLeafByFieldId(footer, id);
    if (i < 0) throw new TieringError('CORRUPT_MANIFEST', `data file ${file} has no column with field id ${id}; it is not a key_value topic table's file`);
    return i;
  });
  const groups = footer.rowGroups.map((_, g) => g);
  const [offset, key, value] = readColumnChunks(footer, bytes, 0, groups, leaves) as [DecodedColumn, DecodedColumn, DecodedColumn];
  if (offset.values.kind !== 'int64' || key.numLevels !== offset.numLevels || value.numLevels !== offset.numLevels) {
    throw new TieringError('CORRUPT_MANIFEST', `data file ${file}: its offset, key and value columns do not have one entry per row; re-tier the partition`);
  }
  const offsets = offset.values.data;
  const offsetAt = valueIndex(offset);
  const keyAt = valueIndex(key);
  const valueAt = valueIndex(value);
  return {
    rows: offset.numRows,
    offset: (row) => int64At(offsets, offsetAt === null ? row : (offsetAt[row] as number)),
    key: (row) => bytesAt(key, keyAt, row),
    value: (row) => bytesAt(value, valueAt, row),
  };
}
