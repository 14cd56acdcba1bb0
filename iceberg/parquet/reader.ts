/**
 * Reading Iceberg data files back: the footer alone (from a whole file or by range reads, for planning and
 * for serving single row groups), and selected row groups and columns as an Arrow table (parquet-wasm
 * decodes, arrow-js-ffi copies the result out of wasm memory without an IPC round trip).
 */
import type * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { parseTable } from 'arrow-js-ffi';
import { ParquetError } from './errors.js';
import { footerSizeFromTail, parseFileMetaData, parseParquetFooter, type ParquetFooter } from './footer.js';

export { parseParquetFooter };

/** Reads `length` bytes at `offset` of the file (e.g. `FileIO.getRange` bound to a location). */
export type RangeReader = (offset: number, length: number) => Promise<Uint8Array>;

/** Bytes fetched first from the end of a file; most footers fit, saving a second request. */
export const FOOTER_PREFETCH_BYTES = 64 * 1024;

/** Reads and parses the footer of a file of `fileSize` bytes with at most two range reads. */
export async function readParquetFooter(read: RangeReader, fileSize: number): Promise<ParquetFooter> {
  if (fileSize < 12) throw new ParquetError('INVALID_PARQUET', `A Parquet file has at least 12 bytes; this one has ${fileSize}`);
  const first = Math.min(fileSize, FOOTER_PREFETCH_BYTES);
  let tail = await read(fileSize - first, first);
  const size = footerSizeFromTail(tail);
  if (size > fileSize) throw new ParquetError('INVALID_PARQUET', `Parquet footer claims ${size} bytes in a ${fileSize}-byte file; the file is corrupt`);
  if (size > tail.length) tail = await read(fileSize - size, size);
  return parseFileMetaData(tail.subarray(tail.length - size, tail.length - 8));
}

export interface ParquetReadOptions {
  /** Row group indexes to read; default all. */
  readonly rowGroups?: readonly number[];
  /** Top-level column names to read; default all. */
  readonly columns?: readonly string[];
  /** Rows per Arrow record batch; default 64k. */
  readonly batchSize?: number;
}

/** Decodes a Parquet file (whole bytes) into an Arrow table; field ids stay in the fields' metadata. */
export function readParquetTable(file: Uint8Array, options: ParquetReadOptions = {}): arrow.Table {
  let wasmTable: pq.Table;
  try {
    wasmTable = pq.readParquet(file, {
      batchSize: options.batchSize ?? 64 * 1024,
      ...(options.rowGroups ? { rowGroups: [...options.rowGroups] } : {}),
      ...(options.columns ? { columns: [...options.columns] } : {}),
    });
  } catch (err) {
    throw new ParquetError('INVALID_PARQUET', `Cannot decode Parquet file: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const ffi = wasmTable.intoFFI();
  let table: arrow.Table;
  try {
    table = parseTable(pq.wasmMemory().buffer, ffi.arrayAddrs(), ffi.schemaAddr(), true);
  } finally {
    ffi.free();
  }
  // parquet-wasm's synchronous reader decodes every column whatever `columns` says; project here.
  if (options.columns) {
    const missing = options.columns.filter((c) => !table.schema.fields.some((f) => f.name === c));
    if (missing.length > 0) throw new ParquetError('TYPE_MISMATCH', `Parquet file has no column ${missing.map((c) => `'${c}'`).join(', ')}; check the table schema`);
    if (table.schema.fields.length !== options.columns.length) table = table.select(options.columns as string[]);
  }
  return table;
}
