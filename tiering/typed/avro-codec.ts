/**
 * The Avro value codec: avsc parses the schema (with its references) and reads and writes Avro binary; this
 * file maps the avsc types to Iceberg types and converts avsc's values to the Row conventions of ./api.ts.
 *
 * Mapping (the README's "Type mapping" table):
 * - record → struct (a top-level record's fields are the value's fields; any other top-level type becomes a
 *   single field named `value`); array → list; map → map<string, V>; enum → string (the symbol);
 *   fixed → fixed[L]; bytes → binary; int/long/float/double/boolean/string as themselves; a field of type
 *   `null` alone has no Iceberg type: UNSUPPORTED_SCHEMA.
 * - unions: `["null", T]` in either order → T, optional. Other unions follow Iceberg's own convention for
 *   complex unions (Iceberg's Java Avro SchemaToType.union): struct<tag int (required), field0..fieldN
 *   (optional)>, one `fieldI` per non-null branch in the union's order; `tag` is the index of the branch
 *   among the non-null branches (so `fieldTAG` holds the value, the other fieldI are null); a union that also
 *   has `null` makes the struct optional, null when the value is null.
 * - logical types: decimal (bytes or fixed, precision ≤ 38) → decimal(P,S), its value the unscaled bigint;
 *   date → date; time-millis, time-micros → time (microseconds); timestamp-millis/-micros → timestamptz;
 *   local-timestamp-millis/-micros → timestamp (microseconds); uuid (string or fixed(16)) → uuid. An invalid
 *   logical type is ignored as the Avro spec says (decimal with precision > 38 too: its bytes stay binary or
 *   fixed); other logical types (duration, timestamp-nanos, ...) map as their underlying type.
 * - recursive named types → UNSUPPORTED_SCHEMA naming the type.
 *
 * Round trip: Avro binary has one encoding per value for a given schema, except map and array blocks (Java
 * and avsc write one block per map or array, which avsc re-writes), so `encode(decode(p))` equals `p` for
 * what Confluent's serializers write. What does not re-encode exactly (so conversion keeps raw bytes): blocks
 * split otherwise or with byte counts, maps with repeated or integer-like keys (a JS object reorders those),
 * strings that are not valid UTF-8, uuid strings not in lowercase canonical form, non-minimal `bytes`
 * decimals. A uuid string that is not a UUID at all is CORRUPT_PAYLOAD (it has no uuid value).
 */
import avro from 'avsc';
import { TypedValueError, type MappedField, type MappedType, type Row, type ValueCodec, type WriterSchema } from './api.js';
import { bigIntToBytes, bytesToBigInt } from './decimal-bytes.js';

/** The parts of an avsc Type this file reads. */
interface AvscType {
  readonly typeName: string;
  readonly name?: string;
  readonly branchName?: string;
  readonly fields?: readonly { readonly name: string; readonly type: AvscType; readonly doc?: string }[];
  readonly symbols?: readonly string[];
  readonly size?: number;
  readonly itemsType?: AvscType;
  readonly valuesType?: AvscType;
  readonly types?: readonly AvscType[];
  readonly underlyingType?: AvscType;
  readonly logical?: LogicalAttrs;
  fromBuffer(buf: Buffer): unknown;
  toBuffer(value: unknown): Buffer;
}

interface LogicalAttrs {
  readonly logicalType: string;
  readonly precision?: number;
  readonly scale?: number;
}

/** One mapped type with its value conversions (avsc value ↔ Row value). */
interface Node {
  readonly type: MappedType;
  readonly required: boolean;
  toRow(value: unknown): unknown;
  fromRow(value: unknown): unknown;
}

const MAX_DECIMAL_PRECISION = 38;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** avsc's long as a bigint (avsc's own long is a JS number and refuses values beyond 2^53). */
const BIGINT_LONG = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(0),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(BigInt.asIntN(64, n), 0);
    return buf;
  },
  fromJSON: (json: unknown) => BigInt(json as number),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

/**
 * The logical types this codec maps, kept as avsc logical types only to carry their attributes (values pass
 * through unchanged). A constructor that throws makes avsc ignore the logical type, as the spec says for
 * invalid ones.
 */
class AnnotatedLogicalType extends avro.types.LogicalType {
  readonly logical: LogicalAttrs;
  constructor(schema: avro.Schema, opts?: unknown) {
    super(schema, opts);
    const attrs = schema as unknown as LogicalAttrs;
    const under = (this as unknown as { underlyingType: AvscType }).underlyingType;
    if (!logicalFits(attrs, under)) throw new Error(`invalid logical type ${attrs.logicalType}`);
    this.logical = { logicalType: attrs.logicalType, precision: attrs.precision, scale: attrs.scale ?? 0 };
  }
  protected override _fromValue(value: unknown): unknown {
    return value;
  }
  protected override _toValue(value: unknown): unknown {
    return value;
  }
  protected override _resolve(type: avro.Type): ((v: unknown) => unknown) | undefined {
    return type.typeName === this.typeName ? (v: unknown) => v : undefined;
  }
}

const LOGICAL_TYPES = Object.fromEntries(
  ['decimal', 'date', 'time-millis', 'time-micros', 'timestamp-millis', 'timestamp-micros', 'local-timestamp-millis', 'local-timestamp-micros', 'uuid'].map((n) => [n, AnnotatedLogicalType]),
) as unknown as Record<string, new (schema: avro.Schema, opts?: unknown) => avro.types.LogicalType>;

function logicalFits(attrs: LogicalAttrs, under: AvscType): boolean {
  const t = under.typeName;
  switch (attrs.logicalType) {
    case 'decimal': {
      const p = attrs.precision;
      const s = attrs.scale ?? 0;
      if (!Number.isInteger(p) || (p as number) < 1 || (p as number) > MAX_DECIMAL_PRECISION || !Number.isInteger(s) || s < 0 || s > (p as number)) return false;
      if (t === 'bytes') return true;
      return t === 'fixed' && (p as number) <= Math.floor(Math.log10(2) * (8 * (under.size as number) - 1));
    }
    case 'date':
    case 'time-millis':
      return t === 'int';
    case 'uuid':
      return t === 'string' || (t === 'fixed' && under.size === 16);
    default:
      return isLong(under);
  }
}

const LONG_LOGICAL_TYPES = new Set(['time-micros', 'timestamp-millis', 'timestamp-micros', 'local-timestamp-millis', 'local-timestamp-micros']);

/**
 * Makes every Avro long a BIGINT_LONG, also `{"type": "long"}` objects and the underlying type of long
 * logical types (avsc builds those itself, bypassing the registry). A long logical type's schema object is
 * seen twice: first for the logical type (left to avsc), then for its underlying long.
 */
function bigintLongHook(): (schema: unknown) => avro.Type | undefined {
  const logicalSeen = new WeakSet<object>();
  return (schema) => {
    if (schema === 'long') return BIGINT_LONG as unknown as avro.Type;
    if (schema === null || typeof schema !== 'object' || (schema as { type?: unknown }).type !== 'long') return undefined;
    const logical = (schema as { logicalType?: unknown }).logicalType;
    if (typeof logical === 'string' && LONG_LOGICAL_TYPES.has(logical) && !logicalSeen.has(schema)) {
      logicalSeen.add(schema);
      return undefined;
    }
    return BIGINT_LONG as unknown as avro.Type;
  };
}

function isLong(t: AvscType): boolean {
  return t.typeName === 'long' || t.typeName === 'abstract:long';
}

/** Compiles an Avro writer schema; throws INVALID_SCHEMA or UNSUPPORTED_SCHEMA. */
export function compileAvroCodec(writer: WriterSchema): ValueCodec {
  const registry: Record<string, avro.Type> = { long: BIGINT_LONG as unknown as avro.Type };
  const options = { registry, wrapUnions: true, logicalTypes: LOGICAL_TYPES, typeHook: bigintLongHook() } as unknown as Partial<avro.ForSchemaOptions>;
  for (const ref of writer.references) parseType(ref.schema, options, `reference '${ref.name}'`);
  const root = parseType(writer.schema, options, 'the schema');
  let fields: MappedField[];
  let decodeRow: (value: unknown) => Row;
  let encodeRow: (row: Row) => unknown;
  if (root.typeName === 'record') {
    const struct = mapRecord(root, []);
    fields = struct.fields;
    decodeRow = (v) => struct.toRow(v) as Row;
    encodeRow = (row) => struct.fromRow(row);
  } else {
    const node = mapType(root, [], 'value');
    fields = [{ name: 'value', required: node.required, type: node.type }];
    decodeRow = (v) => ({ value: node.toRow(v) });
    encodeRow = (row) => node.fromRow(row['value'] ?? null);
  }
  return {
    writer,
    fields,
    decode(payload: Uint8Array): Row {
      let value: unknown;
      try {
        value = root.fromBuffer(asBuffer(payload));
      } catch (err) {
        throw new TypedValueError('CORRUPT_PAYLOAD', `the payload is not Avro binary of schema ${writer.id} (${(err as Error).message})`, { cause: err });
      }
      return decodeRow(value);
    },
    encode(row: Row): Uint8Array {
      try {
        return root.toBuffer(encodeRow(row));
      } catch (err) {
        if (err instanceof TypedValueError) throw err;
        throw new TypedValueError('CORRUPT_PAYLOAD', `the row is not a value of Avro schema ${writer.id} (${(err as Error).message})`, { cause: err });
      }
    },
  };
}

function parseType(text: string, options: Partial<avro.ForSchemaOptions>, what: string): AvscType {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TypedValueError('INVALID_SCHEMA', `${what} is not valid JSON (${(err as Error).message})`, { cause: err });
  }
  try {
    return avro.Type.forSchema(json as avro.Schema, options) as unknown as AvscType;
  } catch (err) {
    throw new TypedValueError('INVALID_SCHEMA', `${what} is not a valid Avro schema, or names a type no reference defines (${(err as Error).message})`, { cause: err });
  }
}

/** avsc reads bytes as Buffer views of the payload: the row gets its own plain Uint8Array (as Protobuf's). */
function copyBytes(v: unknown): Uint8Array {
  return new Uint8Array(v as Buffer);
}

function bufferOf(at: string): (v: unknown) => Buffer {
  return (v) => {
    if (!(v instanceof Uint8Array)) throw corrupt(`${at}: expected bytes (a Uint8Array), got ${describe(v)}`);
    return asBuffer(v);
  };
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function unsupported(why: string): TypedValueError {
  return new TypedValueError('UNSUPPORTED_SCHEMA', `${why}; Floe keeps this topic's values as binary (use the table mode key_value), or change the schema`);
}

function corrupt(why: string): TypedValueError {
  return new TypedValueError('CORRUPT_PAYLOAD', why);
}

interface StructNode extends Node {
  readonly fields: MappedField[];
}

/** `stack`: the named types being mapped (a type inside itself is recursion). */
function mapRecord(t: AvscType, stack: readonly AvscType[]): StructNode {
  if (stack.includes(t)) throw unsupported(`the Avro type ${t.name} is recursive (it contains itself through ${[...stack.slice(stack.indexOf(t)), t].map((s) => s.name).join(' → ')}), and an Iceberg schema cannot nest without end`);
  const inner = [...stack, t];
  const parts = (t.fields ?? []).map((f) => ({ name: f.name, doc: f.doc, node: mapType(f.type, inner, `${t.name}.${f.name}`) }));
  const fields: MappedField[] = parts.map((p) => ({ name: p.name, required: p.node.required, type: p.node.type, ...(p.doc !== undefined ? { doc: p.doc } : {}) }));
  return {
    type: { type: 'struct', fields },
    required: true,
    fields,
    toRow(value) {
      const rec = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const p of parts) out[p.name] = p.node.toRow(rec[p.name]);
      return out;
    },
    fromRow(value) {
      if (value === null || typeof value !== 'object') throw corrupt(`${t.name}: expected a struct, got ${describe(value)}`);
      const row = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const p of parts) out[p.name] = p.node.fromRow(row[p.name] ?? null);
      return out;
    },
  };
}

const identity = (v: unknown): unknown => v;

function leaf(type: MappedType, toRow: (v: unknown) => unknown = identity, fromRow: (v: unknown) => unknown = identity): Node {
  return { type, required: true, toRow, fromRow };
}

function mapType(t: AvscType, stack: readonly AvscType[], at: string): Node {
  if (t.logical !== undefined) return mapLogical(t, t.logical, at);
  switch (t.typeName) {
    case 'null':
      throw unsupported(`${at} has the Avro type null alone, which no Iceberg type holds`);
    case 'boolean':
    case 'int':
    case 'float':
    case 'double':
    case 'string':
      return leaf(t.typeName);
    case 'long':
    case 'abstract:long':
      return leaf('long');
    case 'bytes':
      return leaf('binary', copyBytes, bufferOf(at));
    case 'fixed':
      return leaf(`fixed[${t.size}]`, copyBytes, bufferOf(at));
    case 'enum':
      return leaf('string');
    case 'record':
      return mapRecord(t, stack);
    case 'array': {
      const el = mapType(t.itemsType as AvscType, stack, `${at}[]`);
      return {
        type: { type: 'list', element: el.type, elementRequired: el.required },
        required: true,
        toRow: (v) => (v as unknown[]).map((x) => el.toRow(x)),
        fromRow: (v) => {
          if (!Array.isArray(v)) throw corrupt(`${at}: expected a list, got ${describe(v)}`);
          return v.map((x: unknown) => el.fromRow(x ?? null));
        },
      };
    }
    case 'map': {
      const val = mapType(t.valuesType as AvscType, stack, `${at}{}`);
      return {
        type: { type: 'map', key: 'string', value: val.type, valueRequired: val.required },
        required: true,
        toRow: (v) => Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, val.toRow(x)]),
        fromRow: (v) => {
          if (!Array.isArray(v)) throw corrupt(`${at}: expected a map as [key, value] pairs, got ${describe(v)}`);
          const out: Record<string, unknown> = {};
          for (const pair of v as unknown[]) {
            if (!Array.isArray(pair) || typeof pair[0] !== 'string') throw corrupt(`${at}: a map entry is not a [string, value] pair`);
            Object.defineProperty(out, pair[0], { value: val.fromRow(pair[1] ?? null), enumerable: true, writable: true, configurable: true });
          }
          return out;
        },
      };
    }
    case 'union:wrapped':
      return mapUnion(t, stack, at);
    default:
      throw unsupported(`${at} has the Avro type ${t.typeName}, which Floe does not map`);
  }
}

function mapUnion(t: AvscType, stack: readonly AvscType[], at: string): Node {
  const branches = t.types ?? [];
  const hasNull = branches.some((b) => b.typeName === 'null');
  const others = branches.map((b, index) => ({ b, index })).filter((x) => x.b.typeName !== 'null');
  if (others.length === 0) throw unsupported(`${at} is a union of null alone, which no Iceberg type holds`);
  const nodes = others.map((o, i) => ({ node: mapType(o.b, stack, others.length === 1 ? at : `${at}.field${i}`), name: branchName(o.b) }));
  const byName = new Map(nodes.map((n, i) => [n.name, i]));
  const unwrapBranch = (v: unknown): { i: number; value: unknown } => {
    const key = Object.keys(v as object)[0] as string;
    return { i: byName.get(key) as number, value: (v as Record<string, unknown>)[key] };
  };
  if (nodes.length === 1) {
    const only = nodes[0] as { node: Node; name: string };
    return {
      type: only.node.type,
      required: !hasNull,
      toRow: (v) => (v === null ? null : only.node.toRow(unwrapBranch(v).value)),
      fromRow: (v) => {
        if (v === null || v === undefined) {
          if (!hasNull) throw corrupt(`${at} is required, got null`);
          return null;
        }
        return { [only.name]: only.node.fromRow(v) };
      },
    };
  }
  const fields: MappedField[] = [
    { name: 'tag', required: true, type: 'int' },
    ...nodes.map((n, i) => ({ name: `field${i}`, required: false, type: n.node.type })),
  ];
  return {
    type: { type: 'struct', fields },
    required: !hasNull,
    toRow: (v) => {
      if (v === null) return null;
      const { i, value } = unwrapBranch(v);
      const out: Record<string, unknown> = { tag: i };
      nodes.forEach((n, j) => (out[`field${j}`] = j === i ? n.node.toRow(value) : null));
      return out;
    },
    fromRow: (v) => {
      if (v === null || v === undefined) {
        if (!hasNull) throw corrupt(`${at} is required, got null`);
        return null;
      }
      const row = v as Record<string, unknown>;
      const tag = row['tag'];
      const chosen = typeof tag === 'number' ? nodes[tag] : undefined;
      if (chosen === undefined) throw corrupt(`${at}: the union tag ${String(tag)} names no branch (0..${nodes.length - 1})`);
      return { [chosen.name]: chosen.node.fromRow(row[`field${tag as number}`] ?? null) };
    },
  };
}

/** The key avsc's wrapped unions use for a branch: a named type's full name, else the (underlying) type name. */
function branchName(t: AvscType): string {
  return t.branchName ?? t.name ?? t.typeName;
}

function mapLogical(t: AvscType, logical: LogicalAttrs, at: string): Node {
  const under = t.underlyingType as AvscType;
  switch (logical.logicalType) {
    case 'decimal': {
      const size = under.typeName === 'fixed' ? under.size : undefined;
      return leaf(
        `decimal(${logical.precision},${logical.scale ?? 0})`,
        (v) => bytesToBigInt(v as Buffer),
        (v) => {
          const bytes = typeof v === 'bigint' ? bigIntToBytes(v, size) : undefined;
          if (bytes === undefined) throw corrupt(`${at}: ${describe(v)} is not an unscaled decimal that fits`);
          return asBuffer(bytes);
        },
      );
    }
    case 'date':
      return leaf('date');
    case 'time-millis':
      return leaf('time', (v) => BigInt(v as number) * 1000n, (v) => Number(bigintOf(v, at) / 1000n));
    case 'time-micros':
      return leaf('time');
    case 'timestamp-millis':
    case 'local-timestamp-millis':
      return leaf(logical.logicalType === 'timestamp-millis' ? 'timestamptz' : 'timestamp', (v) => (v as bigint) * 1000n, (v) => bigintOf(v, at) / 1000n);
    case 'timestamp-micros':
      return leaf('timestamptz');
    case 'local-timestamp-micros':
      return leaf('timestamp');
    case 'uuid':
      if (under.typeName === 'fixed') {
        return leaf(
          'uuid',
          (v) => {
            const hex = (v as Buffer).toString('hex');
            return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
          },
          (v) => {
            if (typeof v !== 'string' || !UUID.test(v)) throw corrupt(`${at}: ${describe(v)} is not a UUID`);
            return Buffer.from(v.replaceAll('-', ''), 'hex');
          },
        );
      }
      return leaf(
        'uuid',
        (v) => {
          if (!UUID.test(v as string)) throw corrupt(`${at}: the uuid field holds '${String(v).slice(0, 40)}', which is not a UUID`);
          return (v as string).toLowerCase();
        },
        identity,
      );
    default:
      return mapType(under, [], at);
  }
}

function bigintOf(v: unknown, at: string): bigint {
  if (typeof v !== 'bigint') throw corrupt(`${at}: expected a bigint, got ${describe(v)}`);
  return v;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'bigint' ? `${v}n` : typeof v === 'object' ? 'an object' : `${typeof v} ${String(v).slice(0, 40)}`;
}
