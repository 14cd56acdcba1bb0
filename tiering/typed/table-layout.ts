/**
 * The schema of a typed topic table and how it follows the value's schema versions.
 *
 * Layout: the `key_value` schema (../convert/schema.ts: the `kafka` struct and `value`), plus
 * `kafka.value_schema_id` (the registry id a row's typed columns were decoded with) and one top-level column
 * per field of the value. `value` then holds a record's exact bytes only where the typed columns cannot
 * rebuild them (and for records that are not typed at all); it is null for the others. A value field named
 * `kafka`, `value` or `key` becomes the column `kafka_`, `value_` or `key_`.
 *
 * Typed keys (`iceberg.key.mode`) add `kafka.key_schema_id` and one top-level struct column `key` holding the
 * key's fields (a key whose schema is not a record is its single field `value`, as for values); `kafka.key`
 * then holds a key's bytes only where `key` cannot rebuild them. The `key` struct evolves as the value's
 * columns do.
 *
 * Field ids are stable: a field keeps its column (and id) from version to version by name, new fields get
 * fresh ids above the table's last column id, and a dropped field's column stays (later rows hold null).
 * Every typed column is optional, so any version's rows fit. `accept` evolves the layout in place for a
 * writer schema Iceberg can express (added, dropped or reordered fields; int to long, float to double,
 * wider decimal precision) and refuses one it cannot (another type), with a reason. The conversion writes
 * data files with `schema()`, and the commit that adds them sets that schema on the table.
 */
import type { ListType, MapType, NestedField, Schema, StructType, Type } from '../../iceberg/schema.js';
import { parsePrimitiveType } from '../../iceberg/types.js';
import { FIELD_IDS, LAST_COLUMN_ID, TOPIC_SCHEMA } from '../convert/schema.js';
import type { MappedField, MappedType } from './api.js';

export const VALUE_SCHEMA_ID_COLUMN = 'value_schema_id';
export const KEY_SCHEMA_ID_COLUMN = 'key_schema_id';
/** The top-level struct column of typed keys. */
export const KEY_COLUMN = 'key';
const RESERVED = new Set(['kafka', 'value', KEY_COLUMN]);

/** The table column of a top-level value field. */
export function columnName(field: string): string {
  return RESERVED.has(field) ? `${field}_` : field;
}

/** The value field a top-level typed column holds. */
export function fieldOfColumn(column: string): string {
  return column.endsWith('_') && RESERVED.has(column.slice(0, -1)) ? column.slice(0, -1) : column;
}

export type Acceptance = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** The typed value columns of a table schema: top-level fields other than `kafka`, `value` and `key`. */
export function typedColumns(schema: StructType): NestedField[] {
  return schema.fields.filter((f) => f.id !== FIELD_IDS.kafka && f.id !== FIELD_IDS.value && f.name !== KEY_COLUMN);
}

/** The typed key column of a table schema, undefined when keys were never typed. */
export function keyColumn(schema: StructType): NestedField | undefined {
  return schema.fields.find((f) => f.name === KEY_COLUMN && f.id !== FIELD_IDS.kafka && f.id !== FIELD_IDS.value);
}

/** The id of `kafka.<name>` (value_schema_id, key_schema_id) in a schema, undefined when the table lacks it. */
function kafkaFieldId(schema: StructType, name: string): number | undefined {
  const kafka = schema.fields.find((f) => f.id === FIELD_IDS.kafka);
  if (!kafka || typeof kafka.type === 'string' || kafka.type.type !== 'struct') return undefined;
  return kafka.type.fields.find((f) => f.name === name)?.id;
}

function maxId(t: Type): number {
  if (typeof t === 'string') return 0;
  switch (t.type) {
    case 'struct':
      return Math.max(0, ...t.fields.map((f) => Math.max(f.id, maxId(f.type))));
    case 'list':
      return Math.max(t['element-id'], maxId(t.element));
    case 'map':
      return Math.max(t['key-id'], t['value-id'], maxId(t.key), maxId(t.value));
  }
}

function show(t: Type | MappedType): string {
  if (typeof t === 'string') return t;
  switch (t.type) {
    case 'struct':
      return 'struct';
    case 'list':
      return 'list';
    case 'map':
      return 'map';
  }
}

/** How a column of primitive `table` can hold a writer's primitive `writer`: the (possibly widened) type, or undefined. */
function primitiveUnion(table: string, writer: string): string | undefined {
  if (table === writer) return table;
  const a = parsePrimitiveType(table);
  const b = parsePrimitiveType(writer);
  const wider = (x: string, y: string) => (table === x && writer === y) || (table === y && writer === x);
  if (wider('int', 'long')) return 'long';
  if (wider('float', 'double')) return 'double';
  if (a.kind === 'decimal' && b.kind === 'decimal' && a.scale === b.scale) return a.precision >= b.precision ? table : writer;
  return undefined;
}

const NESTED = new Set(['struct', 'list', 'map']);

function fieldIds(t: Type, out: Map<number, string>): Map<number, string> {
  if (typeof t === 'string') return out;
  switch (t.type) {
    case 'struct':
      for (const f of t.fields) {
        out.set(f.id, typeof f.type === 'string' ? f.type : f.type.type);
        fieldIds(f.type, out);
      }
      return out;
    case 'list':
      out.set(t['element-id'], typeof t.element === 'string' ? t.element : t.element.type);
      return fieldIds(t.element, out);
    case 'map':
      out.set(t['key-id'], typeof t.key === 'string' ? t.key : t.key.type);
      out.set(t['value-id'], typeof t.value === 'string' ? t.value : t.value.type);
      return fieldIds(t.value, fieldIds(t.key, out));
  }
}

/** Whether `layout` holds every field of `table` (same id, same type): the table has no field of another writer. */
export function schemaHolds(layout: StructType, table: StructType): boolean {
  const have = fieldIds(layout, new Map());
  for (const [id, type] of fieldIds(table, new Map())) {
    const t = have.get(id);
    // A primitive the layout widened (int to long) since the table's schema is still the layout's field.
    if (t === undefined) return false;
    if (t !== type && (NESTED.has(t) || NESTED.has(type) || primitiveUnion(type, t) !== t)) return false;
  }
  return true;
}

export class TypedLayout {
  private columns: NestedField[];
  private key: NestedField | undefined;
  private nextId: number;
  private kafka: NestedField;
  /** Bumped by every change; `landed` records the version a commit put on the table. */
  version = 0;
  private committedVersion = 0;

  private constructor(base: Schema, lastColumnId: number) {
    this.columns = typedColumns(base);
    this.key = keyColumn(base);
    this.nextId = Math.max(lastColumnId, maxId(base)) + 1;
    this.kafka = base.fields.find((f) => f.id === FIELD_IDS.kafka)!;
    if (kafkaFieldId(base, VALUE_SCHEMA_ID_COLUMN) === undefined) {
      this.addKafkaField(VALUE_SCHEMA_ID_COLUMN, 'Registry id of the schema the typed columns were decoded with; null when value holds the record whole');
    }
  }

  /** The layout of a table with `schema` (a `key_value` schema becomes typed: kafka.value_schema_id is added). */
  static of(schema: Schema, lastColumnId: number = LAST_COLUMN_ID): TypedLayout {
    return new TypedLayout(schema, lastColumnId);
  }

  private addKafkaField(name: string, doc: string): void {
    const t = this.kafka.type as StructType;
    this.kafka = { ...this.kafka, type: { type: 'struct', fields: [...t.fields, { id: this.nextId++, name, required: false, type: 'int', doc }] } };
    this.changedNow();
  }

  /** Typed keys from now on: adds `kafka.key_schema_id` when the table lacks it (the `key` column comes with the first key schema). */
  typeKeys(): void {
    const t = this.kafka.type as StructType;
    if (t.fields.some((f) => f.name === KEY_SCHEMA_ID_COLUMN)) return;
    this.addKafkaField(KEY_SCHEMA_ID_COLUMN, 'Registry id of the schema the key column was decoded with; null when kafka.key holds the key whole');
  }

  /** True when the layout holds changes the table does not have yet (the next commit must set `schema()`). */
  get changed(): boolean {
    return this.version !== this.committedVersion;
  }

  /** A commit that set the schema of layout version `version` landed. */
  landed(version: number): void {
    if (version > this.committedVersion) this.committedVersion = version;
  }

  get lastColumnId(): number {
    return this.nextId - 1;
  }

  /** The table schema of the layout now (its schema id is the catalog's to assign: 0 here). */
  schema(): Schema {
    const value = TOPIC_SCHEMA.fields.find((f) => f.id === FIELD_IDS.value)!;
    return { type: 'struct', 'schema-id': 0, fields: [this.kafka, value, ...(this.key ? [this.key] : []), ...this.columns] };
  }

  /**
   * Makes the `key` column hold keys of a writer schema with these top-level fields (see `accept`): the
   * column is created for the first key schema and evolves with later ones.
   */
  acceptKey(fields: readonly MappedField[]): Acceptance {
    return this.evolving(() => {
      const writer: MappedType = { type: 'struct', fields };
      if (this.key === undefined) {
        this.key = { id: this.nextId++, name: KEY_COLUMN, required: false, type: this.fresh(writer), doc: 'The record key, typed with its registry schema' };
        this.changedNow();
        return;
      }
      const type = this.mergeType(this.key.type, writer, KEY_COLUMN);
      if (type !== this.key.type) {
        this.key = { ...this.key, type };
        this.changedNow();
      }
    });
  }

  /** Runs an evolution step; a Refusal undoes the ids it took and becomes the answer. */
  private evolving(step: () => void): Acceptance {
    const before = this.nextId;
    try {
      step();
      return { ok: true };
    } catch (err) {
      this.nextId = before;
      if (err instanceof Refusal) return { ok: false, reason: err.message };
      throw err;
    }
  }

  /**
   * Makes the layout hold values of a writer schema with these top-level fields: evolves it (see the module
   * comment) or says why Iceberg cannot. Nothing changes when it refuses.
   */
  accept(fields: readonly MappedField[]): Acceptance {
    const names = new Set<string>();
    for (const f of fields) {
      const c = columnName(f.name);
      if (names.has(c)) return { ok: false, reason: `fields ${f.name} and ${c} would share the column ${c}` };
      names.add(c);
    }
    return this.evolving(() => {
      const next = this.mergeFields(this.columns, fields.map((f) => ({ ...f, name: columnName(f.name) })), '');
      if (next !== this.columns) {
        this.columns = next;
        this.changedNow();
      }
    });
  }

  private changedNow(): void {
    this.version++;
  }

  /** The merged field list (the same array when nothing changes). */
  private mergeFields(table: NestedField[], writer: readonly MappedField[], path: string): NestedField[] {
    let out = table;
    for (const w of writer) {
      const at = out.findIndex((f) => f.name === w.name);
      const where = path === '' ? w.name : `${path}.${w.name}`;
      if (at < 0) {
        out = [...out, { id: this.nextId++, name: w.name, required: false, type: this.fresh(w.type), ...(w.doc !== undefined ? { doc: w.doc } : {}) }];
        continue;
      }
      const current = out[at]!;
      const type = this.mergeType(current.type, w.type, where);
      if (type !== current.type) {
        out = [...out];
        out[at] = { ...current, type };
      }
    }
    return out;
  }

  private mergeType(table: Type, writer: MappedType, where: string): Type {
    if (typeof table === 'string' || typeof writer === 'string') {
      if (typeof table === 'string' && typeof writer === 'string') {
        const u = primitiveUnion(table, writer);
        if (u === undefined) throw new Refusal(`${where} changes from ${table} to ${writer}, which Iceberg cannot promote`);
        return u;
      }
      throw new Refusal(`${where} changes from ${show(table)} to ${show(writer)}`);
    }
    if (table.type === 'struct' && writer.type === 'struct') {
      const fields = this.mergeFields(table.fields as NestedField[], writer.fields, where);
      return fields === table.fields ? table : { type: 'struct', fields };
    }
    if (table.type === 'list' && writer.type === 'list') {
      const element = this.mergeType(table.element, writer.element, `${where}.element`);
      return element === table.element ? table : { ...table, element };
    }
    if (table.type === 'map' && writer.type === 'map') {
      const key = this.mergeType(table.key, writer.key, `${where}.key`);
      if (key !== table.key) throw new Refusal(`${where}: map keys change from ${show(table.key)} to ${show(writer.key)}; Iceberg cannot change a map's key type`);
      const value = this.mergeType(table.value, writer.value, `${where}.value`);
      return value === table.value ? table : { ...table, value };
    }
    throw new Refusal(`${where} changes from ${show(table)} to ${show(writer)}`);
  }

  /** A writer type as a table type with fresh ids, every field optional. */
  private fresh(t: MappedType): Type {
    if (typeof t === 'string') return t;
    switch (t.type) {
      case 'struct':
        return { type: 'struct', fields: t.fields.map((f) => ({ id: this.nextId++, name: f.name, required: false, type: this.fresh(f.type), ...(f.doc !== undefined ? { doc: f.doc } : {}) })) };
      case 'list': {
        const id = this.nextId++;
        return { type: 'list', 'element-id': id, element: this.fresh(t.element), 'element-required': false } satisfies ListType;
      }
      case 'map': {
        const keyId = this.nextId++;
        const valueId = this.nextId++;
        return { type: 'map', 'key-id': keyId, key: this.fresh(t.key), 'value-id': valueId, value: this.fresh(t.value), 'value-required': false } satisfies MapType;
      }
    }
  }
}

class Refusal extends Error {}
