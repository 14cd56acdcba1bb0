/**
 * The typed side of one data file's conversion: the conversion's record walk hands each record to
 * `TypedRows.record` (which types its value and its key and says whether the `value` and `kafka.key` columns
 * may be null), and each Arrow chunk of the `key_value` layout to `TypedRows.wrap`, which adds
 * `kafka.value_schema_id`, `kafka.key_schema_id` and the typed columns for the same rows.
 *
 * The layout may evolve while a file is converted (a writer schema seen for the first time): the file's
 * schema is fixed when its writer starts, so `record` throws `LayoutChangedError` and the conversion starts
 * the file again with the evolved layout (once per new schema version, not per record).
 */
import * as arrow from 'apache-arrow';
import type { Schema, StructType } from '../../iceberg/schema.js';
import { icebergToArrowSchema } from '../../iceberg/parquet/arrow-schema.js';
import type { Row } from './api.js';
import { buildColumn } from './arrow-columns.js';
import type { RecordTypers } from './record-typers.js';
import { fieldOfColumn, KEY_SCHEMA_ID_COLUMN, keyColumn, VALUE_SCHEMA_ID_COLUMN } from './table-layout.js';
import type { DeadLetterReason, FileTyping, FileWriter, TypedOutcome } from './value-typer.js';

/** A record that could not be typed, with what the dead-letter table keeps of it. */
export interface DeadLetter {
  readonly partition: number;
  readonly offset: number;
  /** Milliseconds since the epoch (what Kafka consumers see). */
  readonly timestampMs: number;
  readonly key: Buffer | null;
  /** Null for a tombstone whose key could not be typed. */
  readonly value: Buffer | null;
  readonly headers: readonly { readonly key: Buffer; readonly value: Buffer | null }[];
  readonly reason: DeadLetterReason;
  /** What was wrong; a key's problem starts with `key: `. */
  readonly message: string;
  readonly schemaId: number | null;
}

/** `TypedRows.record`'s answer: which of the record's parts its typed columns rebuild exactly. */
export const VALUE_EXACT = 1;
export const KEY_EXACT = 2;

/** Counts of one file's values (a record with a key that cannot be typed counts as dead), for metrics. */
export interface TypedCounts {
  /** Typed, and rebuilt exactly from the typed columns (no raw bytes kept). */
  exact: number;
  /** Typed, with the raw bytes kept beside the typed columns (they do not rebuild exactly). */
  rawKept: number;
  dead: number;
  /** Null values (tombstones). */
  nulls: number;
}

export class LayoutChangedError extends Error {}

/** Byte ranges of a record's key, value and headers in its batch's records section (../convert/columns.ts). */
export interface RecordView {
  readonly keyStart: number;
  readonly keyLen: number;
  readonly valueStart: number;
  readonly valueLen: number;
  readonly headerCount: number;
  readonly headers: Int32Array;
}

function copy(data: Uint8Array, start: number, len: number): Buffer | null {
  return len < 0 ? null : Buffer.from(data.subarray(start, start + len));
}

export class TypedRows {
  /** The file's schema, fixed by `start`. */
  schema!: Schema;
  private arrowSchema!: arrow.Schema;
  private version = -1;
  private readonly values: FileTyping | undefined;
  private readonly keys: FileTyping | undefined;
  private rows: (Row | null)[] = [];
  private ids: (number | null)[] = [];
  private keyRows: (Row | null)[] = [];
  private keyIds: (number | null)[] = [];
  readonly deadLetters: DeadLetter[] = [];
  readonly counts: TypedCounts = { exact: 0, rawKept: 0, dead: 0, nulls: 0 };

  constructor(private readonly typers: RecordTypers) {
    this.values = typers.value?.beginFile();
    this.keys = typers.key?.beginFile();
  }

  /** Whether the file's keys are typed (the pre-scan then hands them to `scanKey`). */
  get typesKeys(): boolean {
    return this.keys !== undefined;
  }

  /** Registers the writer a value of the file names, before `start` (see FileTyping.scan). */
  scan(value: Uint8Array): void {
    this.values?.scan(value);
  }

  /** Registers the writer a key of the file names, before `start`. */
  scanKey(key: Uint8Array): void {
    this.keys?.scan(key);
  }

  /** Fixes the file's schema: the layout as the scan left it. */
  start(): void {
    this.version = this.typers.layout.version;
    this.schema = this.typers.layout.schema();
    this.arrowSchema = icebergToArrowSchema(this.schema);
  }

  private typePart(typing: FileTyping | undefined, data: Uint8Array, start: number, len: number): TypedOutcome | null {
    if (typing === undefined || len < 0) return null;
    const out = typing.type(data.subarray(start, start + len));
    if (this.typers.layout.version !== this.version) throw new LayoutChangedError('the table layout evolved during the conversion of this file');
    return out;
  }

  /**
   * Types one record's value and key; returns VALUE_EXACT and KEY_EXACT (bits) for the parts its typed
   * columns rebuild exactly (the conversion then stores no bytes for them).
   */
  record(data: Uint8Array, r: RecordView, partition: number, offset: number, timestampMs: number): number {
    if (r.valueLen < 0) this.counts.nulls++;
    const value = this.typePart(this.values, data, r.valueStart, r.valueLen);
    const key = this.typePart(this.keys, data, r.keyStart, r.keyLen);
    let exact = 0;
    if (value?.kind === 'typed') {
      this.rows.push(value.row);
      this.ids.push(value.schemaId);
      if (value.exact) {
        this.counts.exact++;
        exact |= VALUE_EXACT;
      } else this.counts.rawKept++;
    } else {
      this.rows.push(null);
      this.ids.push(null);
    }
    if (key?.kind === 'typed') {
      this.keyRows.push(key.row);
      this.keyIds.push(key.schemaId);
      if (key.exact) exact |= KEY_EXACT;
    } else {
      this.keyRows.push(null);
      this.keyIds.push(null);
    }
    const dead = value?.kind === 'dead' ? value : key?.kind === 'dead' ? { ...key, message: `key: ${key.message}` } : null;
    if (dead !== null) {
      this.counts.dead++;
      if (this.typers.invalidRecordAction === 'dlq_table') {
        const headers: { key: Buffer; value: Buffer | null }[] = [];
        for (let h = 0; h < r.headerCount; h++) headers.push({ key: copy(data, r.headers[4 * h]!, r.headers[4 * h + 1]!)!, value: copy(data, r.headers[4 * h + 2]!, r.headers[4 * h + 3]!) });
        const message = value?.kind === 'dead' && key?.kind === 'dead' ? `${dead.message}; key: ${key.message}` : dead.message;
        this.deadLetters.push({
          partition,
          offset,
          timestampMs,
          key: copy(data, r.keyStart, r.keyLen),
          value: copy(data, r.valueStart, r.valueLen),
          headers,
          reason: dead.reason,
          message,
          schemaId: dead.schemaId,
        });
      }
    }
    return exact;
  }

  /** The chunk `batch` (rows of the key_value layout) with the typed columns of the same rows added. */
  wrap(batch: arrow.RecordBatch): arrow.RecordBatch {
    const n = batch.numRows;
    if (n !== this.rows.length) throw new Error(`typed rows out of step: ${this.rows.length} typed for ${n} rows`);
    const [kafka, value] = batch.data.children as [arrow.Data, arrow.Data];
    const kafkaType = this.schema.fields[0]!.type as StructType;
    const kafkaArrow = this.arrowSchema.fields[0]!.type as arrow.Struct;
    // The kafka struct's fields past the key_value ones: value_schema_id, then key_schema_id once keys are typed.
    const extra = kafkaType.fields.slice(kafka.children.length).map((f) => {
      if (f.name === VALUE_SCHEMA_ID_COLUMN) return buildColumn(f.type, this.ids);
      if (f.name === KEY_SCHEMA_ID_COLUMN) return buildColumn(f.type, this.keyIds);
      throw new Error(`the typed layout's kafka struct has a field ${f.name} the conversion does not fill`);
    });
    const kafkaData = arrow.makeData({ type: kafkaArrow, length: n, nullCount: 0, children: [...kafka.children, ...extra] });
    const keyField = keyColumn(this.schema);
    const columns = this.schema.fields.slice(2).map((c) => {
      if (c === keyField) return buildColumn(c.type, this.keyRows);
      const name = fieldOfColumn(c.name);
      return buildColumn(c.type, this.rows.map((r) => (r === null ? null : r[name])));
    });
    const root = arrow.makeData({ type: new arrow.Struct(this.arrowSchema.fields), length: n, nullCount: 0, children: [kafkaData as arrow.Data, value, ...columns] });
    this.rows = [];
    this.ids = [];
    this.keyRows = [];
    this.keyIds = [];
    return new arrow.RecordBatch(this.arrowSchema, root);
  }

  /** The writers this file's typed values used (for its footer). */
  writers(): FileWriter[] {
    return this.values?.writers() ?? [];
  }

  /** The writers this file's typed keys used (for its footer). */
  keyWriters(): FileWriter[] {
    return this.keys?.writers() ?? [];
  }
}
