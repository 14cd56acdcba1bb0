/**
 * The typed side of one data file's conversion: the conversion's record walk hands each record to
 * `TypedRows.record` (which types its value and says whether the `value` column may be null), and each
 * Arrow chunk of the `key_value` layout to `TypedRows.wrap`, which adds `kafka.value_schema_id` and the
 * typed columns for the same rows.
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
import { fieldOfColumn, typedColumns } from './table-layout.js';
import type { DeadLetterReason, FileTyping, FileWriter, ValueTyper } from './value-typer.js';

/** A record that could not be typed, with what the dead-letter table keeps of it. */
export interface DeadLetter {
  readonly partition: number;
  readonly offset: number;
  /** Milliseconds since the epoch (what Kafka consumers see). */
  readonly timestampMs: number;
  readonly key: Buffer | null;
  readonly value: Buffer;
  readonly headers: readonly { readonly key: Buffer; readonly value: Buffer | null }[];
  readonly reason: DeadLetterReason;
  readonly message: string;
  readonly schemaId: number | null;
}

/** Counts of one file's values, for metrics. */
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
  private readonly typing: FileTyping;
  private rows: (Row | null)[] = [];
  private ids: (number | null)[] = [];
  readonly deadLetters: DeadLetter[] = [];
  readonly counts: TypedCounts = { exact: 0, rawKept: 0, dead: 0, nulls: 0 };

  constructor(private readonly typer: ValueTyper) {
    this.typing = typer.beginFile();
  }

  /** Registers the writer a value of the file names, before `start` (see FileTyping.scan). */
  scan(value: Uint8Array): void {
    this.typing.scan(value);
  }

  /** Fixes the file's schema: the layout as the scan left it. */
  start(): void {
    this.version = this.typer.layout.version;
    this.schema = this.typer.layout.schema();
    this.arrowSchema = icebergToArrowSchema(this.schema);
  }

  /**
   * Types one record's value; returns true when the typed columns rebuild it exactly (the conversion then
   * stores no `value` bytes for it).
   */
  record(data: Uint8Array, r: RecordView, partition: number, offset: number, timestampMs: number): boolean {
    if (r.valueLen < 0) {
      this.rows.push(null);
      this.ids.push(null);
      this.counts.nulls++;
      return false;
    }
    const out = this.typing.type(data.subarray(r.valueStart, r.valueStart + r.valueLen));
    if (this.typer.layout.version !== this.version) throw new LayoutChangedError('the table layout evolved during the conversion of this file');
    if (out.kind === 'dead') {
      this.rows.push(null);
      this.ids.push(null);
      this.counts.dead++;
      if (this.typer.settings.invalidRecordAction === 'dlq_table') {
        const headers: { key: Buffer; value: Buffer | null }[] = [];
        for (let h = 0; h < r.headerCount; h++) headers.push({ key: copy(data, r.headers[4 * h]!, r.headers[4 * h + 1]!)!, value: copy(data, r.headers[4 * h + 2]!, r.headers[4 * h + 3]!) });
        this.deadLetters.push({
          partition,
          offset,
          timestampMs,
          key: copy(data, r.keyStart, r.keyLen),
          value: copy(data, r.valueStart, r.valueLen)!,
          headers,
          reason: out.reason,
          message: out.message,
          schemaId: out.schemaId,
        });
      }
      return false;
    }
    this.rows.push(out.row);
    this.ids.push(out.schemaId);
    if (out.exact) this.counts.exact++;
    else this.counts.rawKept++;
    return out.exact;
  }

  /** The chunk `batch` (rows of the key_value layout) with the typed columns of the same rows added. */
  wrap(batch: arrow.RecordBatch): arrow.RecordBatch {
    const n = batch.numRows;
    if (n !== this.rows.length) throw new Error(`typed rows out of step: ${this.rows.length} typed for ${n} rows`);
    const [kafka, value] = batch.data.children as [arrow.Data, arrow.Data];
    const kafkaField = this.schema.fields[0]!;
    const kafkaArrow = this.arrowSchema.fields[0]!.type as arrow.Struct;
    const idType = (kafkaField.type as StructType).fields.at(-1)!.type;
    const kafkaData = arrow.makeData({ type: kafkaArrow, length: n, nullCount: 0, children: [...kafka.children, buildColumn(idType, this.ids)] });
    const columns = typedColumns(this.schema).map((c) => {
      const name = fieldOfColumn(c.name);
      return buildColumn(c.type, this.rows.map((r) => (r === null ? null : r[name])));
    });
    const root = arrow.makeData({ type: new arrow.Struct(this.arrowSchema.fields), length: n, nullCount: 0, children: [kafkaData as arrow.Data, value, ...columns] });
    this.rows = [];
    this.ids = [];
    return new arrow.RecordBatch(this.arrowSchema, root);
  }

  /** The writers this file's typed rows used (for its footer). */
  writers(): FileWriter[] {
    return this.typing.writers();
  }
}
