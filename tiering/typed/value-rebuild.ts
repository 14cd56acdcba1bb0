/**
 * Kafka fetches from typed data files: a record whose `value` column is null but whose
 * `kafka.value_schema_id` is set had its value checked, at conversion, to come back byte for byte from its
 * typed columns. `TypedFileValues` rebuilds it from them: the file's footer names the writer schemas its rows
 * used (`floe.value.writers`, see value-typer.ts), so this needs nothing but the file, whatever the registry
 * holds later. Typed columns wider than their writer's type (a column promoted from int to long) are read
 * back as the writer's type. Typed keys are rebuilt the same way from the `key` struct column, with the
 * writers the footer names under `floe.key.writers`, where `kafka.key` is null and `kafka.key_schema_id` set.
 */
import type * as arrow from 'apache-arrow';
import type { NestedField, Schema } from '../../iceberg/schema.js';
import type { MappedType, Row, ValueCodec } from './api.js';
import { TypedValueError } from './api.js';
import { readValue } from './arrow-columns.js';
import { compileValueCodec } from './codec.js';
import { columnName, keyColumn } from './table-layout.js';
import { KEY_WRITERS_KEY, WRITERS_KEY, type FileWriter } from './value-typer.js';
import { encodeWirePrefix } from './wire-format.js';

/** A value read in its column's type, as its writer's type. */
function asWriter(v: unknown, t: MappedType): unknown {
  if (v === null || v === undefined) return null;
  if (typeof t === 'string') {
    if ((t === 'int' || t === 'date') && typeof v === 'bigint') return Number(v);
    return v;
  }
  switch (t.type) {
    case 'struct': {
      const src = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const f of t.fields) out[f.name] = asWriter(src[f.name], f.type);
      return out;
    }
    case 'list':
      return (v as unknown[]).map((e) => asWriter(e, t.element));
    case 'map':
      return (v as [unknown, unknown][]).map(([k, x]) => [asWriter(k, t.key), asWriter(x, t.value)]);
  }
}

interface Writer {
  readonly info: FileWriter;
  codec?: ValueCodec;
  prefix?: Uint8Array;
}

export class TypedFileValues {
  private readonly writers = new Map<number, Writer>();

  private constructor(
    writers: readonly FileWriter[],
    /** Where a writer field's values are: the child of `source(root)` at `index`. */
    private readonly columns: ReadonlyMap<string, { index: number; field: NestedField }>,
    private readonly source: (root: arrow.Data) => arrow.Data,
  ) {
    for (const w of writers) this.writers.set(w.id, { info: w });
  }

  /** The typed values of a data file from its footer's key-value metadata; null for a key_value file. */
  static fromFooter(kv: ReadonlyMap<string, string>): TypedFileValues | null {
    const writers = kv.get(WRITERS_KEY);
    const schema = kv.get('iceberg.schema');
    if (writers === undefined || schema === undefined) return null;
    const columns = new Map<string, { index: number; field: NestedField }>();
    // Root children of the file: kafka, value, then the typed columns in schema order (a value field's column
    // is named by columnName).
    (JSON.parse(schema) as Schema).fields.forEach((f, index) => {
      if (index >= 2) columns.set(f.name, { index, field: f });
    });
    return new TypedFileValues(JSON.parse(writers) as FileWriter[], columns, (root) => root);
  }

  /** The typed keys of a data file from its footer; null when its keys were not typed. */
  static keysFromFooter(kv: ReadonlyMap<string, string>): TypedFileValues | null {
    const writers = kv.get(KEY_WRITERS_KEY);
    const text = kv.get('iceberg.schema');
    if (writers === undefined || text === undefined) return null;
    const schema = JSON.parse(text) as Schema;
    const key = keyColumn(schema);
    const at = key === undefined ? -1 : schema.fields.indexOf(key);
    const columns = new Map<string, { index: number; field: NestedField }>();
    if (key !== undefined && typeof key.type !== 'string' && key.type.type === 'struct') {
      // A key field's column is the struct's field of the same name (no renaming inside a struct).
      key.type.fields.forEach((f, index) => columns.set(columnName(f.name), { index, field: f }));
    }
    return new TypedFileValues(JSON.parse(writers) as FileWriter[], columns, (root) => root.children[at]!);
  }

  /** The exact value of row `i` of a chunk (`root`: the chunk's struct data), typed with schema `schemaId`. */
  rebuild(root: arrow.Data, i: number, schemaId: number): Buffer {
    const w = this.writers.get(schemaId);
    if (w === undefined) throw new TypedValueError('INVALID_SCHEMA', `row ${i} was typed with schema id ${schemaId}, which its data file's footer does not name; the file is damaged`);
    w.codec ??= compileValueCodec(
      { id: w.info.id, schemaType: w.info.schemaType, schema: w.info.schema, references: w.info.references },
      w.info.schemaType === 'PROTOBUF' ? { messageIndexes: w.info.messageIndexes } : {},
    );
    w.prefix ??= w.info.prefixed ? encodeWirePrefix(w.info.id, w.info.schemaType, w.info.messageIndexes) : new Uint8Array(0);
    const src = this.source(root);
    const row: Record<string, unknown> = {};
    for (const f of w.codec.fields) {
      const c = this.columns.get(columnName(f.name));
      row[f.name] = c === undefined ? null : asWriter(readValue(src.children[c.index]!, c.field.type, i), f.type);
    }
    const payload = w.codec.encode(row as Row);
    const out = Buffer.allocUnsafe(w.prefix.length + payload.length);
    out.set(w.prefix, 0);
    out.set(payload, w.prefix.length);
    return out;
  }
}
