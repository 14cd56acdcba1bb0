/**
 * Native row decoding: the leaf columns a records section is rebuilt from (`nativeLeaves`), their row groups
 * decoded by the native column reader (iceberg/parquet/column-reader.ts) into typed arrays (`decodeNative`,
 * `NativeRows`), and the lifetime of those rows (`releaseRows`: their page buffers go back to a pool).
 */
import { findLeafByFieldId, leafLevels, readColumnChunks, type DecodedColumn } from '../../iceberg/parquet/column-reader.js';
import { ParquetError } from '../../iceberg/parquet/errors.js';
import { PhysicalType, type ParquetFooter } from '../../iceberg/parquet/footer.js';
import { TieringConvertError } from './errors.js';
import { FIELD_IDS } from './schema.js';
import { PageBufferPool } from './page-buffer-pool.js';

/** The leaf columns a records section is rebuilt from, located by field id, with their types checked. */
export interface NativeLeaves {
  readonly footer: ParquetFooter;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: number;
  readonly headerKey: number;
  readonly headerValue: number;
  readonly recordAttributes: number;
  readonly timestampDelta: number;
  readonly rawRecord: number;
  readonly value: number;
}

export function nativeLeaves(footer: ParquetFooter): NativeLeaves {
  const levels = leafLevels(footer);
  const leaf = (name: string, id: number, type: PhysicalType, repeated: boolean): number => {
    const i = findLeafByFieldId(footer, id);
    if (i < 0) throw new ParquetError('UNSUPPORTED_TYPE', `data file has no column with field id ${id} (${name})`);
    const l = footer.leaves[i]!;
    const rep = levels[i]!.maxRepetitionLevel;
    if (l.element.physicalType !== type || rep !== (repeated ? 1 : 0)) {
      throw new ParquetError('UNSUPPORTED_TYPE', `column ${l.path.join('.')} (${name}) has physical type ${l.element.physicalType} and ${rep} repetition levels, not the topic schema's`);
    }
    return i;
  };
  const { INT32, INT64, BYTE_ARRAY } = PhysicalType;
  return {
    footer,
    offset: leaf('offset', FIELD_IDS.offset, INT64, false),
    timestamp: leaf('timestamp', FIELD_IDS.timestamp, INT64, false),
    key: leaf('key', FIELD_IDS.key, BYTE_ARRAY, false),
    headerKey: leaf('header key', FIELD_IDS.headerKey, BYTE_ARRAY, true),
    headerValue: leaf('header value', FIELD_IDS.headerValue, BYTE_ARRAY, true),
    recordAttributes: leaf('record_attributes', FIELD_IDS.recordAttributes, INT32, false),
    timestampDelta: leaf('timestamp_delta', FIELD_IDS.timestampDelta, INT64, false),
    rawRecord: leaf('raw_record', FIELD_IDS.rawRecord, BYTE_ARRAY, false),
    value: leaf('value', FIELD_IDS.value, BYTE_ARRAY, false),
  };
}

/** Byte-array values: value i is data[starts[i], ends[i]). */
interface Bytes {
  readonly data: Buffer;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
}

/**
 * The decoded rows of some row groups, as typed arrays: per optional column a row -> value index map (-1
 * for null; null map when the column has no nulls by schema), INT64 values as (low, high) int32 pairs.
 */
export interface NativeRows {
  readonly rows: number;
  /** Holders of these rows (see releaseRows); their pooled page buffers are reused once none is left. */
  refs: number;
  /** Pooled buffers the byte-array values may point into. */
  pages: Buffer[];
  /** Memory held (value buffers and arrays), for the decoded row group budget. */
  readonly bytes: number;
  readonly offset: Int32Array;
  readonly offsetAt: Int32Array | null;
  readonly timestamp: Int32Array;
  readonly timestampAt: Int32Array | null;
  readonly key: Bytes;
  readonly keyAt: Int32Array | null;
  readonly value: Bytes;
  readonly valueAt: Int32Array | null;
  readonly raw: Bytes;
  readonly rawAt: Int32Array | null;
  readonly attributes: Int32Array;
  readonly attributesAt: Int32Array | null;
  readonly timestampDelta: Int32Array;
  readonly timestampDeltaAt: Int32Array | null;
  /** Headers of row r are elements [headerStart[r], headerStart[r + 1]); header key k is hKey value k. */
  readonly headerStart: Int32Array;
  readonly hKey: Bytes;
  readonly hValue: Bytes;
  readonly hValueAt: Int32Array;
}

/** The decoded rows of one row group, starting at row `firstRow` of the data file. */
export interface NativePart {
  readonly firstRow: number;
  readonly rows: NativeRows;
}

/** Where decoded pages take their buffers from, and where releaseRows returns them. */
const pagePool = new PageBufferPool(16 * 1024 * 1024);

/**
 * Drops one reference on decoded rows: the fetch that decoded or took them from the cache holds one until
 * it has written its batches, and the decoded row group cache one while they are in it. The last one
 * returns their page buffers to the pool.
 */
export function releaseRows(rows: NativeRows): void {
  if (--rows.refs !== 0) return;
  const pages = rows.pages;
  rows.pages = [];
  for (const buf of pages) pagePool.give(buf);
}

/** Throws INDEX_MISMATCH: `what` shows that the data file does not match its index. */
export function mismatch(what: string): never {
  throw new TieringConvertError('INDEX_MISMATCH', `${what}; the data file does not match its index, re-tier the segment`);
}

/** Row -> value index of a column outside lists (-1 for null); null when every row has a value. */
function valueIndex(c: DecodedColumn, rows: number): Int32Array | null {
  if (c.numRows !== rows || c.repetitionLevels !== null) mismatch(`column ${c.leaf.path.join('.')} has ${c.numRows} rows where ${rows} were expected`);
  const def = c.definitionLevels;
  if (def === null) return null;
  const at = new Int32Array(rows);
  const max = c.maxDefinitionLevel;
  let v = 0;
  for (let r = 0; r < rows; r++) at[r] = def[r] === max ? v++ : -1;
  return at;
}

function bytesOf(c: DecodedColumn): Bytes {
  if (c.values.kind !== 'bytes') throw new ParquetError('UNSUPPORTED_TYPE', `column ${c.leaf.path.join('.')} is not binary`);
  return c.values;
}

function intsOf(c: DecodedColumn): Int32Array {
  if (c.values.kind === 'bytes') throw new ParquetError('UNSUPPORTED_TYPE', `column ${c.leaf.path.join('.')} is not an integer`);
  return c.values.data;
}

/** Element presence: the definition level of the repeated (list) level of a column inside a list. */
function elementLevel(c: DecodedColumn): number {
  const i = c.pathRepetition.indexOf('REPEATED');
  return c.pathDefinitionLevels[i]!;
}

/** Decodes the columns a records section needs from row groups [first, last] with the native reader. */
export function decodeNative(leaves: NativeLeaves, span: Uint8Array, spanStart: number, first: number, last: number): NativeRows {
  const groups: number[] = [];
  for (let g = first; g <= last; g++) groups.push(g);
  const ids = [leaves.offset, leaves.timestamp, leaves.key, leaves.value, leaves.rawRecord, leaves.recordAttributes, leaves.timestampDelta, leaves.headerKey, leaves.headerValue];
  const pages: Buffer[] = [];
  const pageBuffers = (n: number): Buffer => {
    const buf = pagePool.take(n);
    pages.push(buf);
    return buf;
  };
  const [offset, timestamp, key, value, raw, attributes, tsDelta, hk, hv] = readColumnChunks(leaves.footer, span, spanStart, groups, ids, { pageBuffers }) as [DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn, DecodedColumn];
  const rows = offset.numRows;
  // Headers: one level entry per list element, or one for a null or empty list.
  if (hk.numLevels !== hv.numLevels) mismatch(`header keys have ${hk.numLevels} entries, header values ${hv.numLevels}`);
  const headerStart = new Int32Array(rows + 1);
  const hValueAt = new Int32Array(hk.numValues);
  const kDef = hk.definitionLevels!;
  const vDef = hv.definitionLevels!;
  const rep = hk.repetitionLevels!;
  const kElem = elementLevel(hk);
  const vElem = elementLevel(hv);
  const kMax = hk.maxDefinitionLevel;
  const vMax = hv.maxDefinitionLevel;
  let row = -1;
  let elements = 0;
  let vv = 0;
  for (let i = 0; i < hk.numLevels; i++) {
    if (rep[i] === 0) {
      if (++row >= rows) mismatch(`headers column has more than the ${rows} rows of the others`);
      headerStart[row] = elements;
    }
    const kd = kDef[i]!;
    if (kd < kElem) {
      if (vDef[i]! >= vElem) mismatch('header key and value columns disagree on which headers exist');
      continue;
    }
    if (kd !== kMax) mismatch(`a header without a key in row ${row}`);
    if (vDef[i]! < vElem) mismatch('header key and value columns disagree on which headers exist');
    hValueAt[elements++] = vDef[i] === vMax ? vv++ : -1;
  }
  if (row + 1 !== rows) mismatch(`headers column has ${row + 1} rows where the others have ${rows}`);
  headerStart[rows] = elements;
  // Byte-array values are views of whole decompressed pages, or of the read span for uncompressed pages:
  // charge the memory they keep alive (a span shared by several row groups is charged to each).
  let bytes = 0;
  for (const c of [offset, timestamp, key, value, raw, attributes, tsDelta, hk, hv]) {
    bytes += c.values.kind === 'bytes' ? c.values.data.buffer.byteLength + 8 * c.numValues : c.values.data.byteLength;
  }
  bytes += 4 * (rows * 7 + hValueAt.length);
  return {
    rows,
    refs: 1,
    pages,
    bytes,
    offset: intsOf(offset),
    offsetAt: valueIndex(offset, rows),
    timestamp: intsOf(timestamp),
    timestampAt: valueIndex(timestamp, rows),
    key: bytesOf(key),
    keyAt: valueIndex(key, rows),
    value: bytesOf(value),
    valueAt: valueIndex(value, rows),
    raw: bytesOf(raw),
    rawAt: valueIndex(raw, rows),
    attributes: intsOf(attributes),
    attributesAt: valueIndex(attributes, rows),
    timestampDelta: intsOf(tsDelta),
    timestampDeltaAt: valueIndex(tsDelta, rows),
    headerStart,
    hKey: bytesOf(hk),
    hValue: bytesOf(hv),
    hValueAt,
  };
}
