/**
 * The JSON Schema value codec (draft-07, 2019-09 and 2020-12 keywords, as the registry accepts them).
 *
 * Mapping (the README's "Type mapping" table):
 * - object with `properties` → struct, fields in the schema's property order, `required` as listed;
 *   an object with no properties and an `additionalProperties` schema → map<string, T>; `allOf` of objects
 *   merges their properties; a top-level schema that is not an object becomes one field named `value`.
 * - array with an `items` schema → list; integer → long; number → double; boolean → boolean;
 *   string → string, with `format` date → date, date-time → timestamptz, time → time, uuid → uuid;
 *   `enum`/`const` of strings → string, of integers → long (a null among the values makes it optional).
 * - `type: [T, "null"]`, and `oneOf`/`anyOf` with a `null` branch and one other → T, optional.
 *   Other `oneOf`/`anyOf` (and `type` lists of several types) → struct<option0..optionN>, every field
 *   optional, one per non-null branch in order; a value goes to the first branch it fits (by the mapped
 *   types, not full validation), the other options are null.
 * - a schema that does not constrain the value's type (`true`, `{}`, an object with neither properties nor
 *   an `additionalProperties` schema, an array without `items`, mixed enums) → string holding the value
 *   as compact JSON text (a JSON null as the text "null"; SQL null when the property is absent).
 * - `$ref` to `#/definitions/…`, `#/$defs/…` (any JSON pointer in the same document) and to references (by
 *   their name, optionally with a `#/pointer`) resolve; a cycle of `$ref`s → UNSUPPORTED_SCHEMA naming it.
 *
 * decode = JSON.parse, then a check that the value fits the mapped types (a required property missing, a
 * string where a number is due, an integer beyond ±2^53 which JSON.parse cannot read exactly, a date-time
 * that does not parse → CORRUPT_PAYLOAD). encode = compact JSON text with the properties in the schema's
 * order; a null in the row is written as `null` where the property's schema allows null and left out where
 * it does not: what JSON.stringify gives for an object built in that order, so what Confluent's
 * JsonSerializer writes for it. Payloads written otherwise (spaces, another key order, extra properties,
 * an absent nullable property, an explicit `null` for a property whose schema has no null, `1.0` for 1, escapes
 * JSON.stringify does not use, integer-like map keys, which a JS object reorders, dates in another
 * spelling) decode fine but re-encode to other bytes, so conversion keeps their raw bytes.
 */
import { TypedValueError, type MappedField, type MappedType, type Row, type ValueCodec, type WriterSchema } from './api.js';
import { formatDate, formatDateTime, formatTime, parseDate, parseDateTime, parseTime } from './temporal-text.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

interface Node {
  readonly type: MappedType;
  readonly nullable: boolean;
  /** The parsed JSON value (never undefined) → Row value; throws CORRUPT_PAYLOAD when it does not fit. */
  toRow(v: Json, at: string): unknown;
  /** Whether a parsed JSON value fits (for choosing a oneOf branch). */
  fits(v: Json): boolean;
  /** Appends the Row value's JSON text. */
  write(v: unknown, out: string[]): void;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function corrupt(why: string): TypedValueError {
  return new TypedValueError('CORRUPT_PAYLOAD', `the payload is not a value of the JSON Schema: ${why}`);
}

function unsupported(why: string): TypedValueError {
  return new TypedValueError('UNSUPPORTED_SCHEMA', `${why}; Floe keeps this topic's values as binary (use the table mode key_value), or change the schema`);
}

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function parseJson(text: string, what: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw new TypedValueError('INVALID_SCHEMA', `${what} is not valid JSON (${(err as Error).message})`, { cause: err });
  }
}

/** A schema with the document it is in (for resolving `#/...` pointers) and a name for messages. */
interface Located {
  readonly schema: Json;
  readonly doc: Json;
  readonly docName: string;
  readonly pointer: string;
}

class Mapper {
  private readonly docs = new Map<string, Json>();
  private readonly stack: string[] = [];

  constructor(
    private readonly root: Json,
    references: readonly { readonly name: string; readonly schema: string }[],
  ) {
    for (const ref of references) this.docs.set(ref.name, parseJson(ref.schema, `reference '${ref.name}'`));
  }

  top(): { fields: MappedField[]; node: Node; wrapped: boolean } {
    const node = this.map({ schema: this.root, doc: this.root, docName: 'the schema', pointer: '#' });
    if (!node.nullable && typeof node.type === 'object' && node.type.type === 'struct') return { fields: [...node.type.fields], node, wrapped: false };
    return { fields: [{ name: 'value', required: !node.nullable, type: node.type }], node, wrapped: true };
  }

  private resolve(ref: string, from: Located): Located {
    const hash = ref.indexOf('#');
    const base = hash < 0 ? ref : ref.slice(0, hash);
    const pointer = hash < 0 ? '' : ref.slice(hash + 1);
    let doc = from.doc;
    let docName = from.docName;
    if (base !== '') {
      const found = this.docs.get(base) ?? [...this.docs.entries()].find(([name]) => base.endsWith(`/${name}`) || name.endsWith(`/${base}`))?.[1];
      if (found === undefined) throw new TypedValueError('INVALID_SCHEMA', `$ref '${ref}' at ${from.docName} ${from.pointer} names '${base}', which no reference of the schema is`);
      doc = found;
      docName = `reference '${base}'`;
    }
    let target: Json | undefined = doc;
    for (const raw of pointer.split('/').slice(1)) {
      const part = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
      target = isObject(target) ? target[part] : Array.isArray(target) ? target[Number(part)] : undefined;
    }
    if (target === undefined) throw new TypedValueError('INVALID_SCHEMA', `$ref '${ref}' at ${from.docName} ${from.pointer} points at nothing`);
    return { schema: target, doc, docName, pointer: `#${pointer}` };
  }

  map(at: Located): Node {
    const s = at.schema;
    if (s === true || (isObject(s) && Object.keys(s).every((k) => IGNORED.has(k)))) return jsonText(false);
    if (!isObject(s)) throw unsupported(`${at.docName} ${at.pointer} is the schema false (no value fits), which no column can hold`);
    if (typeof s['$ref'] === 'string') {
      const target = this.resolve(s['$ref'], at);
      const key = `${target.docName} ${target.pointer}`;
      if (this.stack.includes(key)) throw unsupported(`the JSON Schema is recursive: $ref '${s['$ref']}' (${key}) contains itself (${[...this.stack.slice(this.stack.indexOf(key)), key].join(' → ')}), and an Iceberg schema cannot nest without end`);
      this.stack.push(key);
      try {
        return this.map(target);
      } finally {
        this.stack.pop();
      }
    }
    const child = (schema: Json, suffix: string): Located => ({ ...at, schema, pointer: `${at.pointer}/${suffix}` });
    for (const keyword of ['oneOf', 'anyOf'] as const) {
      const branches = s[keyword];
      if (Array.isArray(branches)) return this.union(branches.map((b, i) => child(b, `${keyword}/${i}`)), at);
    }
    if (Array.isArray(s['allOf'])) return this.allOf(s, at);
    if (Array.isArray(s['enum']) || 'const' in s) return enumNode(Array.isArray(s['enum']) ? s['enum'] : [s['const'] as Json]);
    let type = s['type'];
    if (type === undefined) type = isObject(s['properties']) || s['additionalProperties'] !== undefined ? 'object' : s['items'] !== undefined ? 'array' : undefined;
    if (type === undefined) return jsonText(false);
    if (Array.isArray(type)) {
      if (type.length === 1) type = type[0] as Json;
      else return this.union(type.map((t) => ({ ...at, schema: { ...s, type: t } })), at);
    }
    switch (type) {
      case 'null':
        throw unsupported(`${at.docName} ${at.pointer} has the type null alone, which no Iceberg type holds`);
      case 'boolean':
        return primitive('boolean', (v) => typeof v === 'boolean');
      case 'integer':
        return integerNode();
      case 'number':
        return primitive('double', (v) => typeof v === 'number');
      case 'string':
        return stringNode(typeof s['format'] === 'string' ? s['format'] : undefined);
      case 'array':
        return isObject(s['items']) || s['items'] === true ? listNode(this.map(child(s['items'], 'items'))) : jsonText(false);
      case 'object':
        return this.objectNode(s, at, child);
      default:
        throw new TypedValueError('INVALID_SCHEMA', `${at.docName} ${at.pointer} has the type ${JSON.stringify(type)}, which JSON Schema does not define`);
    }
  }

  private objectNode(s: JsonObject, at: Located, child: (schema: Json, suffix: string) => Located): Node {
    const props = isObject(s['properties']) ? s['properties'] : undefined;
    const additional = s['additionalProperties'];
    if (props === undefined || Object.keys(props).length === 0) {
      if (isObject(additional) && Object.keys(additional).some((k) => !IGNORED.has(k))) return mapNode(this.map(child(additional, 'additionalProperties')));
      return jsonText(false);
    }
    const required = new Set(Array.isArray(s['required']) ? s['required'].filter((r): r is string => typeof r === 'string') : []);
    const parts = Object.entries(props).map(([name, schema]) => ({ name, required: required.has(name), node: this.map(child(schema, `properties/${name}`)) }));
    return structNode(parts);
  }

  private allOf(s: JsonObject, at: Located): Node {
    const all = s['allOf'] as Json[];
    const rest = Object.fromEntries(Object.entries(s).filter(([k]) => k !== 'allOf'));
    const pieces = [...(Object.keys(rest).some((k) => !IGNORED.has(k)) ? [rest] : []), ...all.map((b) => (isObject(b) && typeof b['$ref'] === 'string' ? this.resolve(b['$ref'], at).schema : b))];
    if (pieces.length === 1) return this.map({ ...at, schema: pieces[0] as Json, pointer: `${at.pointer}/allOf/0` });
    if (!pieces.every((p) => isObject(p) && (p['type'] === 'object' || (p['type'] === undefined && isObject(p['properties']))))) {
      throw unsupported(`${at.docName} ${at.pointer} has an allOf of schemas that are not all objects, which Floe does not map`);
    }
    const properties: JsonObject = {};
    const required: Json[] = [];
    for (const p of pieces as JsonObject[]) {
      Object.assign(properties, isObject(p['properties']) ? p['properties'] : {});
      if (Array.isArray(p['required'])) required.push(...p['required']);
    }
    return this.map({ ...at, schema: { type: 'object', properties, required } });
  }

  private union(branches: Located[], at: Located): Node {
    const isNull = (b: Located) => isObject(b.schema) && b.schema['type'] === 'null' && Object.keys(b.schema).every((k) => k === 'type' || IGNORED.has(k));
    const hasNull = branches.some(isNull);
    const others = branches.filter((b) => !isNull(b)).map((b) => this.map(b));
    if (others.length === 0) throw unsupported(`${at.docName} ${at.pointer} allows only null, which no Iceberg type holds`);
    if (others.length === 1) return optional(others[0] as Node, hasNull);
    return optional(unionNode(others), hasNull);
  }
}

/** Annotation keywords that do not constrain the type. */
const IGNORED = new Set(['$schema', '$id', 'id', '$comment', 'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', 'definitions', '$defs', 'connect.index', 'connect.type', 'connect.name', 'connect.parameters', 'connect.version']);

function optional(node: Node, nullable: boolean): Node {
  if (!nullable) return node;
  return {
    type: node.type,
    nullable: true,
    toRow: (v, at) => (v === null ? null : node.toRow(v, at)),
    fits: (v) => v === null || node.fits(v),
    write: (v, out) => (v === null || v === undefined ? out.push('null') : node.write(v, out)),
  };
}

function primitive(type: string, fits: (v: Json) => boolean): Node {
  return {
    type,
    nullable: false,
    fits,
    toRow: (v, at) => {
      if (!fits(v)) throw corrupt(`${at} is ${describe(v)}, not a ${type}`);
      return v;
    },
    write: (v, out) => {
      if (!fits(v as Json)) throw corrupt(`the row holds ${describe(v)} for a ${type}`);
      out.push(JSON.stringify(v));
    },
  };
}

function integerNode(): Node {
  const fits = (v: Json) => typeof v === 'number' && Number.isInteger(v);
  return {
    type: 'long',
    nullable: false,
    fits,
    toRow: (v, at) => {
      if (!fits(v)) throw corrupt(`${at} is ${describe(v)}, not an integer`);
      if (!Number.isSafeInteger(v)) throw corrupt(`${at} is an integer beyond ±2^53, which JSON.parse cannot read exactly`);
      return BigInt(v as number);
    },
    write: (v, out) => {
      if (typeof v !== 'bigint') throw corrupt(`the row holds ${describe(v)} for a long`);
      out.push(v.toString());
    },
  };
}

function stringNode(format: string | undefined): Node {
  const textual = <T>(type: string, parse: (s: string) => T | undefined, format: (v: T) => string, check: (v: unknown) => boolean): Node => ({
    type,
    nullable: false,
    fits: (v) => typeof v === 'string' && parse(v) !== undefined,
    toRow: (v, at) => {
      const parsed = typeof v === 'string' ? parse(v) : undefined;
      if (parsed === undefined) throw corrupt(`${at} is ${describe(v)}, not a ${type} string`);
      return parsed;
    },
    write: (v, out) => {
      if (!check(v)) throw corrupt(`the row holds ${describe(v)} for a ${type}`);
      out.push(JSON.stringify(format(v as T)));
    },
  });
  switch (format) {
    case 'date':
      return textual('date', parseDate, formatDate, (v) => typeof v === 'number');
    case 'date-time':
      return textual('timestamptz', parseDateTime, formatDateTime, (v) => typeof v === 'bigint');
    case 'time':
      return textual('time', parseTime, formatTime, (v) => typeof v === 'bigint');
    case 'uuid':
      return textual('uuid', (s) => (UUID.test(s) ? s.toLowerCase() : undefined), (s: string) => s, (v) => typeof v === 'string' && UUID.test(v));
    default:
      return primitive('string', (v) => typeof v === 'string');
  }
}

/** An enum (or const) by its values' type; a null among them makes it optional. */
function enumNode(values: readonly Json[]): Node {
  const nullable = values.includes(null);
  const others = values.filter((v) => v !== null);
  if (others.length > 0 && others.every((v) => typeof v === 'string')) return optional(primitive('string', (v) => typeof v === 'string'), nullable);
  if (others.length > 0 && others.every((v) => typeof v === 'number' && Number.isInteger(v))) return optional(integerNode(), nullable);
  return optional(jsonText(false), nullable);
}

/**
 * Any JSON value as its compact text; a JSON null is the text "null" (SQL null is an absent property), unless
 * `nullable` (an enum listing null), where it is SQL null.
 */
function jsonText(nullable: boolean): Node {
  const node: Node = {
    type: 'string',
    nullable: false,
    fits: () => true,
    toRow: (v) => JSON.stringify(v),
    write: (v, out) => {
      if (typeof v !== 'string') throw corrupt(`the row holds ${describe(v)} for a JSON text column`);
      try {
        out.push(JSON.stringify(JSON.parse(v)));
      } catch {
        throw corrupt('the row holds text that is not JSON for a JSON text column');
      }
    },
  };
  return optional(node, nullable);
}

function listNode(el: Node): Node {
  return {
    type: { type: 'list', element: el.type, elementRequired: !el.nullable },
    nullable: false,
    fits: (v) => Array.isArray(v) && v.every((x) => el.fits(x)),
    toRow: (v, at) => {
      if (!Array.isArray(v)) throw corrupt(`${at} is ${describe(v)}, not an array`);
      return v.map((x, i) => el.toRow(x, `${at}[${i}]`));
    },
    write: (v, out) => {
      if (!Array.isArray(v)) throw corrupt(`the row holds ${describe(v)} for a list`);
      out.push('[');
      v.forEach((x: unknown, i: number) => {
        if (i > 0) out.push(',');
        el.write(x ?? null, out);
      });
      out.push(']');
    },
  };
}

function mapNode(val: Node): Node {
  return {
    type: { type: 'map', key: 'string', value: val.type, valueRequired: !val.nullable },
    nullable: false,
    fits: (v) => isObject(v) && Object.values(v).every((x) => val.fits(x)),
    toRow: (v, at) => {
      if (!isObject(v)) throw corrupt(`${at} is ${describe(v)}, not an object`);
      return Object.entries(v).map(([k, x]) => [k, val.toRow(x, `${at}.${k}`)]);
    },
    write: (v, out) => {
      if (!Array.isArray(v)) throw corrupt(`the row holds ${describe(v)} for a map`);
      out.push('{');
      v.forEach((pair: unknown, i: number) => {
        if (!Array.isArray(pair) || typeof pair[0] !== 'string') throw corrupt('a map entry is not a [string, value] pair');
        if (i > 0) out.push(',');
        out.push(JSON.stringify(pair[0]), ':');
        val.write(pair[1] ?? null, out);
      });
      out.push('}');
    },
  };
}

function structNode(parts: readonly { name: string; required: boolean; node: Node }[]): Node {
  const fields: MappedField[] = parts.map((p) => ({ name: p.name, required: p.required && !p.node.nullable, type: p.node.type }));
  return {
    type: { type: 'struct', fields },
    nullable: false,
    fits: (v) => isObject(v) && parts.every((p) => (v[p.name] === undefined ? !p.required : p.node.fits(v[p.name] as Json))),
    toRow: (v, at) => {
      if (!isObject(v)) throw corrupt(`${at} is ${describe(v)}, not an object`);
      const out: Record<string, unknown> = {};
      for (const p of parts) {
        const x = v[p.name];
        if (x === undefined) {
          if (p.required) throw corrupt(`${at} lacks the required property ${p.name}`);
          out[p.name] = null;
        } else out[p.name] = p.node.toRow(x, `${at}.${p.name}`);
      }
      return out;
    },
    write: (v, out) => {
      if (v === null || typeof v !== 'object') throw corrupt(`the row holds ${describe(v)} for a struct`);
      const row = v as Record<string, unknown>;
      out.push('{');
      let first = true;
      for (const p of parts) {
        const x = row[p.name] ?? null;
        // Null: written as `null` where the property's schema allows null (producers set it explicitly),
        // left out where it does not (the property was absent).
        if (x === null && !p.required && !p.node.nullable) continue;
        if (!first) out.push(',');
        first = false;
        out.push(JSON.stringify(p.name), ':');
        if (x === null && !p.node.nullable) throw corrupt(`the row lacks the required property ${p.name}`);
        p.node.write(x, out);
      }
      out.push('}');
    },
  };
}

function unionNode(options: readonly Node[]): Node {
  const fields: MappedField[] = options.map((o, i) => ({ name: `option${i}`, required: false, type: o.type }));
  return {
    type: { type: 'struct', fields },
    nullable: false,
    fits: (v) => options.some((o) => o.fits(v)),
    toRow: (v, at) => {
      const i = options.findIndex((o) => o.fits(v));
      if (i < 0) throw corrupt(`${at} is ${describe(v)}, which fits none of the oneOf/anyOf branches`);
      const out: Record<string, unknown> = {};
      options.forEach((o, j) => (out[`option${j}`] = j === i ? o.toRow(v, at) : null));
      return out;
    },
    write: (v, out) => {
      const row = (v ?? {}) as Record<string, unknown>;
      const i = options.findIndex((_, j) => row[`option${j}`] !== null && row[`option${j}`] !== undefined);
      if (i < 0) throw corrupt('the row holds no option of a oneOf/anyOf');
      (options[i] as Node).write(row[`option${i}`], out);
    },
  };
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${JSON.stringify(typeof v === 'bigint' ? v.toString() : v)?.slice(0, 40)}`;
}

/** Compiles a JSON Schema writer schema; throws INVALID_SCHEMA or UNSUPPORTED_SCHEMA. */
export function compileJsonCodec(writer: WriterSchema): ValueCodec {
  const root = parseJson(writer.schema, 'the schema');
  const { fields, node, wrapped } = new Mapper(root, writer.references).top();
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  return {
    writer,
    fields,
    decode(payload: Uint8Array): Row {
      let value: Json;
      try {
        // Buffer's decoding is the fast one; only a text with U+FFFD in it may be invalid UTF-8 (check that).
        const text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
        value = JSON.parse(text.includes('\uFFFD') ? utf8.decode(payload) : text) as Json;
      } catch (err) {
        throw corrupt(`it is not UTF-8 JSON text (${(err as Error).message})`);
      }
      const row = node.toRow(value, 'the value');
      return wrapped ? { value: row } : (row as Row);
    },
    encode(row: Row): Uint8Array {
      const out: string[] = [];
      node.write(wrapped ? (row['value'] ?? null) : row, out);
      return Buffer.from(out.join(''), 'utf8');
    },
  };
}
