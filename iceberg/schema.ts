/**
 * Iceberg schemas, named and shaped after the spec's JSON serialization (Iceberg spec, "Schemas and Data
 * Types" and Appendix C), so that the in-memory model and the stored JSON line up one to one.
 */

import { isJsonObject } from './json.js';
import {
  IcebergError,
  canPromote,
  formatPrimitiveType,
  minFormatVersion,
  parsePrimitiveType,
  samePrimitive,
  type ParsedPrimitive,
} from './types.js';

/** Primitive types in their spec spelling, e.g. `'long'`, `'timestamptz'`, `'decimal(10,2)'`, `'fixed[16]'`. */
export type PrimitiveType = string;

export interface NestedField {
  readonly id: number;
  readonly name: string;
  readonly required: boolean;
  readonly type: Type;
  readonly doc?: string;
  readonly 'initial-default'?: unknown;
  readonly 'write-default'?: unknown;
}

export interface StructType {
  readonly type: 'struct';
  readonly fields: readonly NestedField[];
}

export interface ListType {
  readonly type: 'list';
  readonly 'element-id': number;
  readonly element: Type;
  readonly 'element-required': boolean;
}

export interface MapType {
  readonly type: 'map';
  readonly 'key-id': number;
  readonly key: Type;
  readonly 'value-id': number;
  readonly value: Type;
  readonly 'value-required': boolean;
}

export type Type = PrimitiveType | StructType | ListType | MapType;

export interface Schema extends StructType {
  readonly 'schema-id': number;
  readonly 'identifier-field-ids'?: readonly number[];
}

// ---------------------------------------------------------------------------------------------------------
// Behaviour: parsing, validation, lookup, fresh ids, evolution.


/** Field ids above this are reserved for metadata columns (spec, "Reserved Field IDs"). */
export const MAX_FIELD_ID = 2147483447;

export function isPrimitive(t: Type): t is PrimitiveType {
  return typeof t === 'string';
}

/** A field of a schema seen from the index: the field itself plus where it sits. */
export interface IndexedField {
  readonly id: number;
  /** Full dotted name, e.g. `kafka.headers.element.key`; list elements are `element`, maps `key`/`value`. */
  readonly name: string;
  readonly type: Type;
  readonly required: boolean;
  /** Id of the enclosing struct field, list or map (undefined for top-level columns). */
  readonly parentId: number | undefined;
  /** True when the field sits inside a list or map (so it cannot be partitioned on or be an identifier). */
  readonly inRepeated: boolean;
  /** True when an enclosing struct is optional. */
  readonly inOptional: boolean;
  readonly field: NestedField | undefined;
}

function fail(message: string): never {
  throw new IcebergError('INVALID_SCHEMA', message);
}

/** Every field of the schema (nested ones too), in depth-first order, keyed by id. */
export function indexById(schema: StructType): Map<number, IndexedField> {
  const out = new Map<number, IndexedField>();
  const add = (f: IndexedField): void => {
    if (out.has(f.id)) {
      fail(`Duplicate field id ${f.id}: '${out.get(f.id)?.name}' and '${f.name}'; every field id must be unique in a schema`);
    }
    out.set(f.id, f);
  };
  const visit = (t: Type, prefix: string, parentId: number | undefined, inRepeated: boolean, inOptional: boolean): void => {
    if (isPrimitive(t)) return;
    const p = prefix ? `${prefix}.` : '';
    if (t.type === 'struct') {
      for (const f of t.fields) {
        add({ id: f.id, name: p + f.name, type: f.type, required: f.required, parentId, inRepeated, inOptional, field: f });
        visit(f.type, p + f.name, f.id, inRepeated, inOptional || !f.required);
      }
    } else if (t.type === 'list') {
      const id = t['element-id'];
      add({ id, name: `${p}element`, type: t.element, required: t['element-required'], parentId, inRepeated: true, inOptional, field: undefined });
      visit(t.element, `${p}element`, id, true, inOptional || !t['element-required']);
    } else {
      add({ id: t['key-id'], name: `${p}key`, type: t.key, required: true, parentId, inRepeated: true, inOptional, field: undefined });
      visit(t.key, `${p}key`, t['key-id'], true, inOptional);
      const vid = t['value-id'];
      add({ id: vid, name: `${p}value`, type: t.value, required: t['value-required'], parentId, inRepeated: true, inOptional, field: undefined });
      visit(t.value, `${p}value`, vid, true, inOptional || !t['value-required']);
    }
  };
  visit(schema, '', undefined, false, false);
  return out;
}

/** Full dotted name -> field id, for every field (nested too). */
export function indexByName(schema: StructType): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of indexById(schema).values()) out.set(f.name, f.id);
  return out;
}

export function findField(schema: StructType, id: number): IndexedField | undefined {
  return indexById(schema).get(id);
}

/** Looks a field up by its full dotted name (`'kafka.offset'`), case-sensitively. */
export function findFieldByName(schema: StructType, name: string): IndexedField | undefined {
  const id = indexByName(schema).get(name);
  return id === undefined ? undefined : indexById(schema).get(id);
}

/** The highest field id used anywhere in the type (0 for a type without fields). */
export function highestFieldId(t: Type): number {
  let max = 0;
  const visit = (x: Type): void => {
    if (isPrimitive(x)) return;
    if (x.type === 'struct') {
      for (const f of x.fields) {
        max = Math.max(max, f.id);
        visit(f.type);
      }
    } else if (x.type === 'list') {
      max = Math.max(max, x['element-id']);
      visit(x.element);
    } else {
      max = Math.max(max, x['key-id'], x['value-id']);
      visit(x.key);
      visit(x.value);
    }
  };
  visit(t);
  return max;
}

/**
 * Validates a schema: positive unique ids below the reserved range, unique names within each struct,
 * well-formed primitive types allowed in `formatVersion`, map keys required, and identifier fields that
 * exist and are required primitives outside lists, maps and optional structs (spec, "Identifier Field IDs").
 */
export function validateSchema(schema: Schema, formatVersion = 2): void {
  if (!Number.isInteger(schema['schema-id']) || schema['schema-id'] < 0) {
    fail(`schema-id must be a non-negative integer, got ${String(schema['schema-id'])}`);
  }
  const byId = indexById(schema);
  for (const f of byId.values()) {
    if (!Number.isInteger(f.id) || f.id < 0 || f.id > MAX_FIELD_ID) {
      fail(`Field '${f.name}' has id ${f.id}; field ids must be integers between 0 and ${MAX_FIELD_ID}`);
    }
    if (isPrimitive(f.type)) {
      const p = parsePrimitiveType(f.type);
      if (minFormatVersion(p) > formatVersion) {
        fail(`Field '${f.name}' has type '${f.type}', which needs format-version ${minFormatVersion(p)}; this table is v${formatVersion}`);
      }
    }
  }
  const checkNames = (t: Type, where: string): void => {
    if (isPrimitive(t)) return;
    if (t.type === 'struct') {
      const seen = new Set<string>();
      for (const f of t.fields) {
        if (typeof f.name !== 'string' || f.name === '') fail(`Field ${f.id} in ${where} has an empty name`);
        if (seen.has(f.name)) fail(`Duplicate field name '${f.name}' in ${where}; names must be unique within a struct`);
        seen.add(f.name);
        checkNames(f.type, `'${f.name}'`);
      }
    } else if (t.type === 'list') checkNames(t.element, `${where} element`);
    else {
      checkNames(t.key, `${where} key`);
      checkNames(t.value, `${where} value`);
    }
  };
  checkNames(schema, 'the schema');
  for (const id of schema['identifier-field-ids'] ?? []) {
    const f = byId.get(id);
    if (!f) fail(`identifier-field-ids names field ${id}, which is not in schema ${schema['schema-id']}`);
    if (!isPrimitive(f.type)) fail(`Identifier field '${f.name}' must be a primitive, not a ${f.type.type}`);
    const kind = parsePrimitiveType(f.type).kind;
    if (kind === 'float' || kind === 'double') fail(`Identifier field '${f.name}' cannot be ${kind}`);
    if (!f.required) fail(`Identifier field '${f.name}' must be required`);
    if (f.inRepeated) fail(`Identifier field '${f.name}' cannot be nested in a list or map`);
    if (f.inOptional) fail(`Identifier field '${f.name}' cannot be nested in an optional struct`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// JSON

function need(o: Record<string, unknown>, key: string, what: string): unknown {
  if (!(key in o) || o[key] === undefined) fail(`${what} is missing required field '${key}'`);
  return o[key];
}

function int(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(`${what} must be an integer, got ${JSON.stringify(String(v))}`);
  return v;
}

function bool(v: unknown, what: string): boolean {
  if (typeof v !== 'boolean') fail(`${what} must be true or false`);
  return v;
}

/** Parses a type from its JSON form; primitive spellings are canonicalized (`decimal(9, 2)` -> `decimal(9,2)`). */
export function parseType(json: unknown, where = 'type'): Type {
  if (typeof json === 'string') {
    try {
      return formatPrimitiveType(parsePrimitiveType(json));
    } catch (e) {
      if (e instanceof IcebergError) fail(`${where}: ${e.message}`);
      throw e;
    }
  }
  if (!isJsonObject(json)) fail(`${where} must be a type name or a struct/list/map object`);
  const kind = json.type;
  if (kind === 'struct') return parseStruct(json, where);
  if (kind === 'list') {
    return {
      type: 'list',
      'element-id': int(need(json, 'element-id', where), `${where}.element-id`),
      element: parseType(need(json, 'element', where), `${where}.element`),
      'element-required': bool(need(json, 'element-required', where), `${where}.element-required`),
    };
  }
  if (kind === 'map') {
    return {
      type: 'map',
      'key-id': int(need(json, 'key-id', where), `${where}.key-id`),
      key: parseType(need(json, 'key', where), `${where}.key`),
      'value-id': int(need(json, 'value-id', where), `${where}.value-id`),
      value: parseType(need(json, 'value', where), `${where}.value`),
      'value-required': bool(need(json, 'value-required', where), `${where}.value-required`),
    };
  }
  return fail(`${where} has unknown nested type ${JSON.stringify(String(kind))}; expected struct, list or map`);
}

function parseStruct(json: Record<string, unknown>, where: string): StructType {
  const fields = need(json, 'fields', where);
  if (!Array.isArray(fields)) fail(`${where}.fields must be a list`);
  return {
    type: 'struct',
    fields: fields.map((f: unknown, i): NestedField => {
      const w = `${where}.fields[${i}]`;
      if (!isJsonObject(f)) fail(`${w} must be an object`);
      const name = need(f, 'name', w);
      if (typeof name !== 'string') fail(`${w}.name must be a string`);
      const out: { -readonly [K in keyof NestedField]: NestedField[K] } = {
        id: int(need(f, 'id', w), `${w}.id`),
        name,
        required: bool(need(f, 'required', w), `${w}.required`),
        type: parseType(need(f, 'type', w), `field '${name}'`),
      };
      if (f.doc !== undefined) {
        if (typeof f.doc !== 'string') fail(`${w}.doc must be a string`);
        out.doc = f.doc;
      }
      if (f['initial-default'] !== undefined) out['initial-default'] = f['initial-default'];
      if (f['write-default'] !== undefined) out['write-default'] = f['write-default'];
      return out;
    }),
  };
}

/** Parses and validates a schema from its JSON form (spec Appendix C). Throws IcebergError 'INVALID_SCHEMA'. */
export function parseSchema(json: unknown, formatVersion = 2): Schema {
  if (!isJsonObject(json)) fail('A schema must be a JSON object');
  if (json.type !== 'struct') fail(`A schema must have "type": "struct", got ${JSON.stringify(String(json.type))}`);
  const struct = parseStruct(json, 'schema');
  const ids = json['identifier-field-ids'];
  const schemaId = json['schema-id'] === undefined ? 0 : int(json['schema-id'], 'schema-id');
  let schema: Schema = { type: 'struct', 'schema-id': schemaId, fields: struct.fields };
  if (ids !== undefined) {
    if (!Array.isArray(ids)) fail('identifier-field-ids must be a list of field ids');
    schema = { ...schema, 'identifier-field-ids': ids.map((x: unknown) => int(x, 'identifier-field-ids entry')) };
  }
  validateSchema(schema, formatVersion);
  return schema;
}

/** The JSON form of a schema, keys in the spec's order. Types are already spec-shaped, so this copies. */
export function schemaToJson(schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = { type: 'struct', 'schema-id': schema['schema-id'] };
  if (schema['identifier-field-ids'] !== undefined) out['identifier-field-ids'] = [...schema['identifier-field-ids']];
  out.fields = schema.fields.map(fieldToJson);
  return out;
}

function fieldToJson(f: NestedField): Record<string, unknown> {
  const out: Record<string, unknown> = { id: f.id, name: f.name, required: f.required, type: typeToJson(f.type) };
  if (f.doc !== undefined) out.doc = f.doc;
  if (f['initial-default'] !== undefined) out['initial-default'] = f['initial-default'];
  if (f['write-default'] !== undefined) out['write-default'] = f['write-default'];
  return out;
}

export function typeToJson(t: Type): unknown {
  if (isPrimitive(t)) return t;
  if (t.type === 'struct') return { type: 'struct', fields: t.fields.map(fieldToJson) };
  if (t.type === 'list') {
    return { type: 'list', 'element-id': t['element-id'], element: typeToJson(t.element), 'element-required': t['element-required'] };
  }
  return {
    type: 'map',
    'key-id': t['key-id'],
    key: typeToJson(t.key),
    'value-id': t['value-id'],
    value: typeToJson(t.value),
    'value-required': t['value-required'],
  };
}

/** A short human-readable form of a type, e.g. `struct<1: a: required long, ...>` / `list<string>`. */
export function typeToString(t: Type): string {
  if (isPrimitive(t)) return t;
  if (t.type === 'struct') {
    return `struct<${t.fields.map((f) => `${f.id}: ${f.name}: ${f.required ? 'required' : 'optional'} ${typeToString(f.type)}`).join(', ')}>`;
  }
  if (t.type === 'list') return `list<${typeToString(t.element)}>`;
  return `map<${typeToString(t.key)}, ${typeToString(t.value)}>`;
}

// ---------------------------------------------------------------------------------------------------------
// Fresh ids

/**
 * Gives every field of `schema` a fresh id from `nextId` (called once per field), the way the reference
 * implementation does it: the fields of a struct get consecutive ids first, then their children. Identifier
 * field ids are remapped. Used when a table is created, so that ids start at 1 whatever the caller sent.
 */
export function assignFreshIds(schema: Schema, nextId: () => number, schemaId = schema['schema-id']): Schema {
  const mapping = new Map<number, number>();
  const fresh = (old: number): number => {
    const id = nextId();
    mapping.set(old, id);
    return id;
  };
  const visit = (t: Type): Type => {
    if (isPrimitive(t)) return t;
    if (t.type === 'struct') {
      const ids = t.fields.map((f) => fresh(f.id));
      return { type: 'struct', fields: t.fields.map((f, i) => ({ ...f, id: ids[i] ?? f.id, type: visit(f.type) })) };
    }
    if (t.type === 'list') {
      const elementId = fresh(t['element-id']);
      return { ...t, 'element-id': elementId, element: visit(t.element) };
    }
    const keyId = fresh(t['key-id']);
    const valueId = fresh(t['value-id']);
    return { ...t, 'key-id': keyId, 'value-id': valueId, key: visit(t.key), value: visit(t.value) };
  };
  const struct = visit(schema) as StructType;
  const out: Schema = { type: 'struct', 'schema-id': schemaId, fields: struct.fields };
  const ids = schema['identifier-field-ids'];
  if (ids === undefined) return out;
  return {
    ...out,
    'identifier-field-ids': ids.map((id) => {
      const m = mapping.get(id);
      if (m === undefined) fail(`identifier-field-ids names field ${id}, which is not in the schema`);
      return m;
    }),
  };
}

/** Fresh ids counting up from `lastColumnId + 1`; returns the new schema and the new last column id. */
export function assignFreshSchemaIds(schema: Schema, lastColumnId = 0, schemaId = schema['schema-id']): { schema: Schema; lastColumnId: number } {
  let last = lastColumnId;
  const out = assignFreshIds(schema, () => ++last, schemaId);
  return { schema: out, lastColumnId: last };
}

/** Two schemas have the same columns (ids, names, types, requiredness, docs, defaults, identifier ids). */
export function sameSchemaStructure(a: Schema, b: Schema): boolean {
  const strip = (s: Schema): string => JSON.stringify({ ...schemaToJson(s), 'schema-id': 0 });
  return strip(a) === strip(b);
}

// ---------------------------------------------------------------------------------------------------------
// Evolution

export type EvolutionCheck = { readonly ok: true } | { readonly ok: false; readonly reasons: readonly string[] };

/**
 * Whether `next` is a valid evolution of `prev` (spec, "Schema Evolution"), matching fields by id:
 * renaming, reordering and dropping are fine; a kept field may go required->optional and may have its primitive
 * type promoted (see `canPromote`), but must keep its kind (struct/list/map/primitive) and its parent; a new
 * field must be optional unless it has an `initial-default` (v3). Returns every reason it is not.
 */
export function checkSchemaEvolution(prev: Schema, next: Schema, formatVersion = 2): EvolutionCheck {
  const reasons: string[] = [];
  const before = indexById(prev);
  const after = indexById(next);
  for (const [id, b] of after) {
    const a = before.get(id);
    if (!a) {
      // A field inside a newly added struct is new too, so only the outermost new field is checked.
      const parentIsNew = b.parentId !== undefined && !before.has(b.parentId);
      if (!parentIsNew && b.required && b.field?.['initial-default'] === undefined) {
        reasons.push(`new field '${b.name}' (id ${id}) is required without an initial-default; existing rows would have no value`);
      }
      continue;
    }
    if (a.parentId !== b.parentId) {
      reasons.push(`field ${id} moved from '${a.name}' to '${b.name}'; fields cannot move between structs`);
    }
    if (!a.required && b.required) reasons.push(`field '${b.name}' (id ${id}) changed from optional to required`);
    const kindA = isPrimitive(a.type) ? 'primitive' : a.type.type;
    const kindB = isPrimitive(b.type) ? 'primitive' : b.type.type;
    if (kindA !== kindB) {
      reasons.push(`field '${b.name}' (id ${id}) changed from ${kindA} to ${kindB}`);
      continue;
    }
    if (isPrimitive(a.type) && isPrimitive(b.type)) {
      const pa: ParsedPrimitive = parsePrimitiveType(a.type);
      const pb: ParsedPrimitive = parsePrimitiveType(b.type);
      if (!samePrimitive(pa, pb) && !canPromote(pa, pb, formatVersion)) {
        reasons.push(`field '${b.name}' (id ${id}) cannot be promoted from ${a.type} to ${b.type} in format v${formatVersion}`);
      }
    }
  }
  return reasons.length === 0 ? { ok: true } : { ok: false, reasons };
}
