/**
 * The parquet-wasm path, for files the native reader does not support: row access to the Arrow table it
 * decodes (`Columns`, `RowCursor`) and records sections encoded from those rows (`recordsSection`).
 */
import type * as arrow from 'apache-arrow';
import { encodeRecords, type RecordHeader, type RecordInput } from '../../protocol/record-batch/records.js';
import type { IndexedBatch } from '../offset-index/format.js';
import { TieringConvertError } from './errors.js';
import type { TypedFileValues } from '../typed/value-rebuild.js';
import { KEY_SCHEMA_ID_COLUMN, VALUE_SCHEMA_ID_COLUMN } from '../typed/table-layout.js';

/** Typed views of one Arrow chunk's columns. */
class Columns {
  readonly rows: number;
  private readonly kafka: arrow.Data;
  private readonly value: arrow.Data;
  private readonly root: arrow.Data;
  /** kafka.value_schema_id and kafka.key_schema_id, in typed files that have them. */
  private readonly valueSchemaId: arrow.Data | undefined;
  private readonly keySchemaId: arrow.Data | undefined;
  constructor(
    batch: arrow.RecordBatch,
    private readonly typed: TypedFileValues | null,
    private readonly typedKeys: TypedFileValues | null,
  ) {
    this.rows = batch.numRows;
    this.root = batch.data;
    this.kafka = batch.data.children[0]!;
    this.value = batch.data.children[1]!;
    const names = (batch.schema.fields[0]!.type as arrow.Struct).children.map((f) => f.name);
    const child = (name: string) => (names.indexOf(name) >= 0 ? this.kafka.children[names.indexOf(name)] : undefined);
    this.valueSchemaId = child(VALUE_SCHEMA_ID_COLUMN);
    this.keySchemaId = child(KEY_SCHEMA_ID_COLUMN);
  }
  private k(i: number): arrow.Data {
    return this.kafka.children[i]!;
  }
  static valid(d: arrow.Data, i: number): boolean {
    if (d.nullCount === 0 || !d.nullBitmap || d.nullBitmap.length === 0) return true;
    const j = d.offset + i;
    return (d.nullBitmap[j >> 3]! & (1 << (j & 7))) !== 0;
  }
  static bin(d: arrow.Data, i: number): Buffer | null {
    if (!Columns.valid(d, i)) return null;
    const offs = d.valueOffsets as Int32Array;
    const s = offs[d.offset + i]!;
    const e = offs[d.offset + i + 1]!;
    const v = d.values as Uint8Array;
    return Buffer.from(v.buffer, v.byteOffset + s, e - s);
  }
  static i64(d: arrow.Data, i: number): number {
    return Number((d.values as BigInt64Array)[d.offset + i]!);
  }
  static i32(d: arrow.Data, i: number): number {
    return (d.values as Int32Array)[d.offset + i]!;
  }
  offset(i: number): number {
    return Columns.i64(this.k(1), i);
  }
  timestampMicros(i: number): number {
    return Columns.i64(this.k(2), i);
  }
  key(i: number): Buffer | null {
    const k = Columns.bin(this.k(4), i);
    if (k !== null || this.typedKeys === null) return k;
    // Typed keys: kafka.key_schema_id set means the key is in the key column.
    const id = this.keySchemaId;
    return id !== undefined && Columns.valid(id, i) ? this.typedKeys.rebuild(this.root, i, Columns.i32(id, i)) : null;
  }
  headers(i: number): RecordHeader[] {
    const list = this.k(5);
    if (!Columns.valid(list, i)) return [];
    const offs = list.valueOffsets as Int32Array;
    const s = offs[list.offset + i]!;
    const e = offs[list.offset + i + 1]!;
    if (s === e) return [];
    const elems = list.children[0]!;
    const keys = elems.children[0]!;
    const values = elems.children[1]!;
    const out: RecordHeader[] = [];
    for (let h = s; h < e; h++) {
      const kb = Columns.bin(keys, elems.offset + h)!;
      out.push({ key: kb.toString('utf8'), value: Columns.bin(values, elems.offset + h) });
    }
    return out;
  }
  recordAttributes(i: number): number {
    const d = this.k(7);
    return Columns.valid(d, i) ? Columns.i32(d, i) : 0;
  }
  timestampDelta(i: number): number | null {
    const d = this.k(8);
    return Columns.valid(d, i) ? Columns.i64(d, i) : null;
  }
  raw(i: number): Buffer | null {
    return Columns.bin(this.k(9), i);
  }
  val(i: number): Buffer | null {
    const v = Columns.bin(this.value, i);
    if (v !== null || this.typed === null) return v;
    // A typed file: kafka.value_schema_id set means the value is in the typed columns.
    const id = this.valueSchemaId;
    return id !== undefined && Columns.valid(id, i) ? this.typed.rebuild(this.root, i, Columns.i32(id, i)) : null;
  }
}

/** Row access across the chunks of a decoded table, for rows read in increasing order. */
export class RowCursor {
  private chunk = 0;
  private chunkStart = 0;
  private readonly cols: Columns[];
  constructor(table: arrow.Table, typed: TypedFileValues | null = null, typedKeys: TypedFileValues | null = null) {
    this.cols = table.batches.map((b) => new Columns(b, typed, typedKeys));
  }
  at(row: number): [Columns, number] {
    for (;;) {
      const c = this.cols[this.chunk];
      if (!c) throw new TieringConvertError('INDEX_MISMATCH', `row ${row} is past the rows read from the data file; the index does not match its data file`);
      if (row < this.chunkStart + c.rows) return [c, row - this.chunkStart];
      this.chunkStart += c.rows;
      this.chunk++;
    }
  }
}

/** The records section of a data batch from its rows, byte-identical to the original's. */
export function recordsSection(b: IndexedBatch, cursor: RowCursor, rowBase: number): Buffer {
  const parts: Buffer[] = [];
  let run: RecordInput[] = [];
  const baseOffset = Number(b.baseOffset);
  const baseTs = Number(b.baseTimestamp);
  for (let r = 0; r < b.recordsCount; r++) {
    const [c, i] = cursor.at(b.firstRow + r - rowBase);
    const raw = c.raw(i);
    if (raw !== null) {
      if (run.length > 0) parts.push(encodeRecords(run));
      run = [];
      parts.push(raw);
      continue;
    }
    const offset = c.offset(i);
    const delta = c.timestampDelta(i) ?? Math.round(c.timestampMicros(i) / 1000) - baseTs;
    run.push({ attributes: c.recordAttributes(i), timestampDelta: delta, offsetDelta: offset - baseOffset, key: c.key(i), value: c.val(i), headers: c.headers(i) });
  }
  if (run.length > 0) parts.push(encodeRecords(run));
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}
