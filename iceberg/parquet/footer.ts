/**
 * The Parquet footer (FileMetaData, parquet.thrift), read without the data pages: schema with field ids,
 * row groups, column chunk offsets and sizes, and column statistics. Used for Iceberg metrics, split
 * offsets, and range reads of single row groups.
 */
import { ParquetError } from './errors.js';
import { decodeThriftStruct, type ThriftStruct, type ThriftValue } from './thrift.js';

/**
 * The footer's `created_by`, in the form parquet-mr's VersionParser reads (`<application> version <semver>
 * (build <hash>)`): Spark's and Hive's Parquet reader (parquet-mr) ignores the min/max statistics of every
 * binary column of a file whose `created_by` it cannot parse (CorruptStatistics, PARQUET-251), so a bare
 * `floe` cost their row-group filtering on keys and values, and logged a stack trace per file.
 */
export const CREATED_BY = 'floe version 0.1.0';

/** Parquet physical types (parquet.thrift `Type`). */
export const PhysicalType = {
  BOOLEAN: 0,
  INT32: 1,
  INT64: 2,
  INT96: 3,
  FLOAT: 4,
  DOUBLE: 5,
  BYTE_ARRAY: 6,
  FIXED_LEN_BYTE_ARRAY: 7,
} as const;
export type PhysicalType = (typeof PhysicalType)[keyof typeof PhysicalType];

export type Repetition = 'REQUIRED' | 'OPTIONAL' | 'REPEATED';

export interface ParquetSchemaElement {
  readonly name: string;
  readonly physicalType?: PhysicalType;
  readonly typeLength?: number;
  readonly repetition?: Repetition;
  readonly numChildren: number;
  readonly convertedType?: number;
  readonly scale?: number;
  readonly precision?: number;
  readonly fieldId?: number;
}

export interface ParquetStatistics {
  readonly nullCount?: bigint;
  readonly distinctCount?: bigint;
  /** Min/max in the column's physical encoding (plain encoding, little-endian numbers). */
  readonly minValue?: Uint8Array;
  readonly maxValue?: Uint8Array;
  readonly isMinValueExact?: boolean;
  readonly isMaxValueExact?: boolean;
}

/** A leaf column of the Parquet schema. */
export interface ParquetLeafColumn {
  /** Path of group and field names, e.g. `['kafka', 'headers', 'list', 'element', 'key']`. */
  readonly path: readonly string[];
  readonly fieldId?: number;
  readonly element: ParquetSchemaElement;
  /** Field ids of every ancestor group, outermost first (the leaf's own id excluded). */
  readonly ancestorFieldIds: readonly number[];
  /** True when the leaf sits inside a repeated group (a list or map). */
  readonly repeated: boolean;
}

export interface ParquetColumnChunk {
  readonly path: readonly string[];
  readonly physicalType: PhysicalType;
  readonly codec: number;
  readonly numValues: bigint;
  readonly totalCompressedSize: bigint;
  readonly totalUncompressedSize: bigint;
  readonly dataPageOffset: bigint;
  readonly dictionaryPageOffset?: bigint;
  /** The first byte of the chunk: the dictionary page if any, else the first data page. */
  readonly startOffset: bigint;
  readonly statistics?: ParquetStatistics;
}

export interface ParquetRowGroup {
  readonly numRows: bigint;
  readonly totalByteSize: bigint;
  /** Compressed bytes of all chunks (from the chunks when the writer left the field out). */
  readonly totalCompressedSize: bigint;
  /** First byte of the row group: where a reader seeks (Iceberg `split_offsets`). */
  readonly startOffset: bigint;
  readonly columns: readonly ParquetColumnChunk[];
}

export interface ParquetFooter {
  readonly version: number;
  readonly numRows: bigint;
  readonly createdBy?: string;
  readonly keyValueMetadata: ReadonlyMap<string, string>;
  readonly schema: readonly ParquetSchemaElement[];
  readonly leaves: readonly ParquetLeafColumn[];
  readonly rowGroups: readonly ParquetRowGroup[];
  /** Length of the thrift-encoded FileMetaData (the 4 bytes before the trailing `PAR1`). */
  readonly metadataLength: number;
}

const MAGIC = 'PAR1';
const decoder = new TextDecoder('utf-8', { fatal: false });

/** The number of bytes at the end of a file that hold the footer: metadata, its length and the magic. */
export function footerSizeFromTail(tail: Uint8Array): number {
  if (tail.length < 8) throw new ParquetError('INVALID_PARQUET', 'A Parquet tail needs at least 8 bytes');
  const t = tail.subarray(tail.length - 8);
  if (decoder.decode(t.subarray(4)) !== MAGIC) {
    throw new ParquetError('INVALID_PARQUET', 'Not a Parquet file: trailing magic PAR1 missing; the file is truncated or of another format');
  }
  const len = new DataView(t.buffer, t.byteOffset, 8).getUint32(0, true);
  return len + 8;
}

/** Parses the footer of a whole Parquet file (or of any suffix of it that holds the full footer). */
export function parseParquetFooter(file: Uint8Array): ParquetFooter {
  const size = footerSizeFromTail(file);
  if (size > file.length) {
    throw new ParquetError('INVALID_PARQUET', `Parquet footer needs ${size} bytes but only ${file.length} were given; read a larger tail`);
  }
  const meta = file.subarray(file.length - size, file.length - 8);
  return parseFileMetaData(meta);
}

/** Parses thrift-encoded FileMetaData bytes. */
export function parseFileMetaData(meta: Uint8Array): ParquetFooter {
  const s = decodeThriftStruct(meta);
  // Loops, not per-call closures, here and below: a footer is parsed for every data file written, and V8
  // may drop a dead closure's optimized code at a full GC, so such closures were compiled over and over.
  const schema: ParquetSchemaElement[] = [];
  for (const e of list(s, 2)) schema.push(schemaElement(asStruct(e)));
  const leaves = leafColumns(schema);
  const rowGroups: ParquetRowGroup[] = [];
  for (const rg of list(s, 4)) rowGroups.push(rowGroup(asStruct(rg)));
  const kv = new Map<string, string>();
  for (const e of list(s, 5)) {
    const entry = asStruct(e);
    const key = entry.get(1);
    const value = entry.get(2);
    if (key instanceof Uint8Array) kv.set(decoder.decode(key), value instanceof Uint8Array ? decoder.decode(value) : '');
  }
  const createdBy = s.get(6);
  return {
    version: num(s, 1) ?? 0,
    numRows: big(s, 3) ?? 0n,
    ...(createdBy instanceof Uint8Array ? { createdBy: decoder.decode(createdBy) } : {}),
    keyValueMetadata: kv,
    schema,
    leaves,
    rowGroups,
    metadataLength: meta.length,
  };
}

function asStruct(v: ThriftValue | undefined): ThriftStruct {
  if (!(v instanceof Map)) throw new ParquetError('INVALID_PARQUET', 'Corrupt Parquet footer: expected a struct');
  return v;
}

function list(s: ThriftStruct, id: number): ThriftValue[] {
  const v = s.get(id);
  return Array.isArray(v) ? v : [];
}

function num(s: ThriftStruct, id: number): number | undefined {
  const v = s.get(id);
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
}

function big(s: ThriftStruct, id: number): bigint | undefined {
  const v = s.get(id);
  return typeof v === 'bigint' ? v : typeof v === 'number' ? BigInt(v) : undefined;
}

function bytes(s: ThriftStruct, id: number): Uint8Array | undefined {
  const v = s.get(id);
  return v instanceof Uint8Array ? v : undefined;
}

function bool(s: ThriftStruct, id: number): boolean | undefined {
  const v = s.get(id);
  return typeof v === 'boolean' ? v : undefined;
}

const REPETITIONS: readonly Repetition[] = ['REQUIRED', 'OPTIONAL', 'REPEATED'];

function opt<K extends string, V>(k: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [k]: v }) as { [P in K]?: V };
}

function schemaElement(s: ThriftStruct): ParquetSchemaElement {
  const name = bytes(s, 4);
  const type = num(s, 1);
  const rep = num(s, 3);
  return {
    name: name ? decoder.decode(name) : '',
    numChildren: num(s, 5) ?? 0,
    ...opt('physicalType', type as PhysicalType | undefined),
    ...opt('typeLength', num(s, 2)),
    ...opt('repetition', rep === undefined ? undefined : REPETITIONS[rep]),
    ...opt('convertedType', num(s, 6)),
    ...opt('scale', num(s, 7)),
    ...opt('precision', num(s, 8)),
    ...opt('fieldId', num(s, 9)),
  };
}

function leafColumns(schema: readonly ParquetSchemaElement[]): ParquetLeafColumn[] {
  const leaves: ParquetLeafColumn[] = [];
  let i = 1; // element 0 is the root
  const walk = (path: string[], ancestors: number[], repeated: boolean): void => {
    const el = schema[i++];
    if (!el) throw new ParquetError('INVALID_PARQUET', 'Corrupt Parquet schema: fewer elements than num_children promises');
    const p = [...path, el.name];
    const rep = repeated || el.repetition === 'REPEATED';
    if (el.numChildren === 0) {
      leaves.push({ path: p, element: el, ancestorFieldIds: ancestors, repeated: rep, ...(el.fieldId !== undefined ? { fieldId: el.fieldId } : {}) });
      return;
    }
    const anc = el.fieldId !== undefined ? [...ancestors, el.fieldId] : ancestors;
    for (let c = 0; c < el.numChildren; c++) walk(p, anc, rep);
  };
  const root = schema[0];
  if (!root) return leaves;
  for (let c = 0; c < root.numChildren; c++) walk([], [], false);
  return leaves;
}

function statistics(s: ThriftStruct): ParquetStatistics {
  const out: { -readonly [K in keyof ParquetStatistics]: ParquetStatistics[K] } = {};
  const nullCount = big(s, 3);
  if (nullCount !== undefined) out.nullCount = nullCount;
  const distinct = big(s, 4);
  if (distinct !== undefined) out.distinctCount = distinct;
  const max = bytes(s, 5);
  if (max) out.maxValue = max;
  const min = bytes(s, 6);
  if (min) out.minValue = min;
  const maxExact = bool(s, 7);
  if (maxExact !== undefined) out.isMaxValueExact = maxExact;
  const minExact = bool(s, 8);
  if (minExact !== undefined) out.isMinValueExact = minExact;
  return out;
}

function columnChunk(s: ThriftStruct): ParquetColumnChunk {
  const md = s.get(3);
  if (!(md instanceof Map)) {
    throw new ParquetError('INVALID_PARQUET', 'Parquet column chunk without inline metadata is not supported; rewrite the file with a standard writer');
  }
  const dataPageOffset = big(md, 9) ?? 0n;
  const dict = big(md, 11);
  const stats = md.get(12);
  // Some writers store dictionary_page_offset = 0 to mean "none"; a dictionary never starts at byte 0.
  const dictionaryPageOffset = dict !== undefined && dict > 0n ? dict : undefined;
  return {
    path: columnPath(list(md, 3)),
    physicalType: (num(md, 1) ?? 0) as PhysicalType,
    codec: num(md, 4) ?? 0,
    numValues: big(md, 5) ?? 0n,
    totalUncompressedSize: big(md, 6) ?? 0n,
    totalCompressedSize: big(md, 7) ?? 0n,
    dataPageOffset,
    ...(dictionaryPageOffset !== undefined ? { dictionaryPageOffset } : {}),
    startOffset: dictionaryPageOffset !== undefined && dictionaryPageOffset < dataPageOffset ? dictionaryPageOffset : dataPageOffset,
    ...(stats instanceof Map ? { statistics: statistics(stats) } : {}),
  };
}

function columnPath(parts: readonly ThriftValue[]): string[] {
  const path: string[] = [];
  for (const p of parts) path.push(p instanceof Uint8Array ? decoder.decode(p) : '');
  return path;
}

function rowGroup(s: ThriftStruct): ParquetRowGroup {
  const columns: ParquetColumnChunk[] = [];
  let chunkSum = 0n;
  let startOffset: bigint | undefined;
  for (const c of list(s, 1)) {
    const chunk = columnChunk(asStruct(c));
    columns.push(chunk);
    chunkSum += chunk.totalCompressedSize;
    if (startOffset === undefined || chunk.startOffset < startOffset) startOffset = chunk.startOffset;
  }
  return {
    numRows: big(s, 3) ?? 0n,
    totalByteSize: big(s, 2) ?? 0n,
    totalCompressedSize: big(s, 6) ?? chunkSum,
    startOffset: startOffset ?? big(s, 5) ?? 0n,
    columns,
  };
}
