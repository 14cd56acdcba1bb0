/**
 * The Protobuf value codec: protobufjs parses the schema (./protobuf-schema.ts); this file reads and writes
 * the wire format itself (./protobuf-wire.ts), so 64-bit values are exact bigints, unknown enum numbers are
 * kept, and the encoding is the canonical one protoc, protobuf-es and protobufjs write.
 *
 * Mapping (the README's "Type mapping" table):
 * - int32, sint32, sfixed32 → int; uint32, fixed32 → long (no int holds 2^31..2^32-1); int64, sint64,
 *   sfixed64 → long; uint64, fixed64 → decimal(20,0) (exact: a long would show values ≥ 2^63 as negative);
 *   float, double, bool, string as themselves; bytes → binary.
 * - enum → string: the value's name; a number the enum does not define is kept as its decimal digits
 *   ("7"), which no enum name can be, so it still re-encodes exactly.
 * - message → struct, its fields in field-number order; a message with no fields (google.protobuf.Empty) → boolean, true when present;
 *   repeated → list (elements required); map<K,V> → map (values required; an entry without a value holds the
 *   value's default).
 * - presence: proto3 fields without `optional` are required columns holding the default (0, "", false, the
 *   enum's 0 value) when absent on the wire; proto3 `optional`, proto2 optional, message fields and oneof
 *   members are optional (null when absent). A oneof becomes its member fields, each optional; at most one
 *   is non-null.
 * - well-known types: Timestamp → timestamptz, Duration → long (microseconds), both truncating nanoseconds
 *   to microseconds; the wrappers (Int32Value, StringValue, ...) → the optional scalar as above;
 *   Struct, Value, ListValue → string holding the value as JSON (Protobuf's JSON mapping); Any →
 *   struct<type_url string, value binary> (like any other message); FieldMask etc. → struct.
 * - groups (proto2) and recursive messages → UNSUPPORTED_SCHEMA, naming the message.
 *
 * Round trip: encode writes fields in field-number order, proto3 defaults omitted, proto3 repeated scalars
 * packed (proto2 when [packed=true]), map entries with key and value. Payloads written otherwise (fields in
 * another order, unknown fields, a default written explicitly, unpacked where packed is canonical, bools
 * other than 0/1, repeated singular fields, nanoseconds below a microsecond, Struct keys a JS object
 * reorders) decode fine but re-encode to other bytes, so conversion keeps their raw bytes.
 */
import protobuf from 'protobufjs';
import { TypedValueError, type MappedField, type Row, type ValueCodec, type WriterSchema } from './api.js';
import { loadProtobuf, messageAt } from './protobuf-schema.js';
import { WIRE_FIXED32, WIRE_FIXED64, WIRE_LEN, WIRE_VARINT, WireReader, WireWriter } from './protobuf-wire.js';
import { corrupt, delimitedKind, type Kind } from './protobuf-kind.js';
import { STRUCT_KINDS } from './protobuf-struct.js';

interface FieldPlan {
  readonly name: string;
  readonly id: number;
  readonly label: 'implicit' | 'explicit' | 'repeated' | 'map';
  readonly kind: Kind;
  readonly packed: boolean;
  /** The mapped column is required: proto3 fields without presence, proto2 `required`, lists and maps. */
  readonly required: boolean;
  readonly key?: Kind;
}

interface MessagePlan {
  readonly name: string;
  readonly fields: readonly FieldPlan[];
  readonly byId: ReadonlyMap<number, FieldPlan>;
  readonly mapped: MappedField[];
}

function unsupported(why: string): TypedValueError {
  return new TypedValueError('UNSUPPORTED_SCHEMA', `${why}; Floe keeps this topic's values as binary (use the table mode key_value), or change the schema`);
}

/** Compiles a Protobuf writer schema for the message `messageIndexes` names (default [0], the first). */
export function compileProtobufCodec(writer: WriterSchema, messageIndexes: readonly number[] = [0]): ValueCodec {
  const loaded = loadProtobuf(writer);
  const type = messageAt(loaded, messageIndexes);
  const plan = planMessage(type, []);
  return {
    writer,
    message: type.fullName.replace(/^\./, ''),
    fields: plan.mapped,
    decode(payload: Uint8Array): Row {
      return decodeMessage(plan, new WireReader(payload, 0, payload.length));
    },
    encode(row: Row): Uint8Array {
      const w = new WireWriter();
      encodeMessage(plan, row, w);
      return w.finish();
    },
  };
}

function planMessage(type: protobuf.Type, stack: readonly protobuf.Type[]): MessagePlan {
  const name = type.fullName.replace(/^\./, '');
  if (stack.includes(type)) {
    const cycle = [...stack.slice(stack.indexOf(type)), type].map((t) => t.fullName.replace(/^\./, ''));
    throw unsupported(`the Protobuf message ${name} is recursive (${cycle.join(' → ')}), and an Iceberg schema cannot nest without end`);
  }
  const inner = [...stack, type];
  // Field-number order, for encoding and for the columns (the descriptor form, as protobufjs loads it, moves
  // oneof members behind the other fields, so declaration order would differ between the two forms).
  const fields = [...type.fieldsArray].sort((a, b) => a.id - b.id).map((f) => planField(f, name, inner));
  const mapped: MappedField[] = fields.map((p) => {
    if (p.label === 'repeated') return { name: p.name, required: true, type: { type: 'list', element: p.kind.type, elementRequired: true } };
    if (p.label === 'map') return { name: p.name, required: true, type: { type: 'map', key: (p.key as Kind).type, value: p.kind.type, valueRequired: true } };
    return { name: p.name, required: p.required, type: p.kind.type };
  });
  return { name, fields, byId: new Map(fields.map((f) => [f.id, f])), mapped };
}

function planField(f: protobuf.Field, message: string, stack: readonly protobuf.Type[]): FieldPlan {
  const at = `${message}.${f.name}`;
  if (f.delimited) throw unsupported(`${at} is a group (delimited encoding), which Floe does not map`);
  if (f.map) {
    const key = scalarKind((f as unknown as protobuf.MapField).keyType, at);
    return { name: f.name, id: f.id, label: 'map', kind: kindOf(f, stack, at), key, packed: false, required: true };
  }
  const kind = kindOf(f, stack, at);
  if (f.repeated) return { name: f.name, id: f.id, label: 'repeated', kind, packed: kind.packable && f.packed, required: true };
  const implicit = !f.hasPresence && !(f.resolvedType instanceof protobuf.Type);
  return { name: f.name, id: f.id, label: implicit ? 'implicit' : 'explicit', kind, packed: false, required: implicit || f.required };
}

function kindOf(f: protobuf.Field, stack: readonly protobuf.Type[], at: string): Kind {
  const resolved = f.resolvedType;
  if (resolved instanceof protobuf.Enum) return enumKind(resolved);
  if (resolved instanceof protobuf.Type) return messageKind(resolved, stack);
  return scalarKind(f.type, at);
}

const SCALARS: Readonly<Record<string, Kind>> = Object.freeze({
  double: scalar('double', WIRE_FIXED64, 0, (r) => r.double(), (w, v) => w.double(v as number)),
  float: scalar('float', WIRE_FIXED32, 0, (r) => r.float(), (w, v) => w.float(v as number)),
  int32: scalar('int', WIRE_VARINT, 0, (r) => (r.varint(), r.lo | 0), (w, v) => w.int32(v as number)),
  sint32: scalar('int', WIRE_VARINT, 0, (r) => (r.varint(), (r.lo >>> 1) ^ -(r.lo & 1)), (w, v) => w.uint32((((v as number) << 1) ^ ((v as number) >> 31)) >>> 0)),
  sfixed32: scalar('int', WIRE_FIXED32, 0, (r) => r.fixed32() | 0, (w, v) => w.fixed32(v as number)),
  uint32: scalar('long', WIRE_VARINT, 0n, (r) => (r.varint(), BigInt(r.lo)), (w, v) => w.uint32(Number(v as bigint))),
  fixed32: scalar('long', WIRE_FIXED32, 0n, (r) => BigInt(r.fixed32()), (w, v) => w.fixed32(Number(v as bigint))),
  int64: scalar('long', WIRE_VARINT, 0n, (r) => (r.varint(), r.s64()), (w, v) => w.u64(v as bigint)),
  sint64: scalar('long', WIRE_VARINT, 0n, (r) => (r.varint(), unzigzag(r.u64())), (w, v) => w.u64(zigzag(v as bigint))),
  sfixed64: scalar('long', WIRE_FIXED64, 0n, (r) => BigInt.asIntN(64, r.fixed64()), (w, v) => w.fixed64(v as bigint)),
  uint64: scalar('decimal(20,0)', WIRE_VARINT, 0n, (r) => (r.varint(), r.u64()), (w, v) => w.u64(v as bigint)),
  fixed64: scalar('decimal(20,0)', WIRE_FIXED64, 0n, (r) => r.fixed64(), (w, v) => w.fixed64(v as bigint)),
  bool: scalar('boolean', WIRE_VARINT, false, (r) => (r.varint(), r.lo !== 0 || r.hi !== 0), (w, v) => w.uint32(v ? 1 : 0)),
  string: { ...scalar('string', WIRE_LEN, '', (r) => r.string(), (w, v) => w.string(v as string)), packable: false },
  bytes: { ...scalar('binary', WIRE_LEN, new Uint8Array(0), (r) => r.bytes(), (w, v) => w.bytes(v as Uint8Array)), packable: false, isDefault: (v: unknown) => (v as Uint8Array).length === 0 },
});

function scalar(type: string, wire: number, defaultValue: unknown, read: Kind['read'], write: Kind['write']): Kind {
  // protoc writes a proto3 float or double that is -0 (its bits are not zero), so only +0 is the default.
  return { type, wire, packable: true, defaultValue, read, write, isDefault: (v) => (typeof v === 'number' ? Object.is(v, 0) : v === defaultValue) };
}

function zigzag(v: bigint): bigint {
  return BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
}

function unzigzag(u: bigint): bigint {
  return (u >> 1n) ^ -(u & 1n);
}

function scalarKind(type: string, at: string): Kind {
  const k = SCALARS[type];
  if (k === undefined) throw unsupported(`${at} has the Protobuf type ${type}, which Floe does not map`);
  return k;
}

function enumKind(e: protobuf.Enum): Kind {
  const byNumber = new Map<number, string>();
  for (const [name, n] of Object.entries(e.values)) if (!byNumber.has(n)) byNumber.set(n, name);
  const toNumber = (v: unknown): number => {
    if (typeof v === 'string') {
      const n = e.values[v];
      if (n !== undefined) return n;
      if (/^-?\d+$/.test(v)) return Number(v);
    }
    throw corrupt(`${String(v).slice(0, 40)} is neither a value of the enum ${e.fullName.replace(/^\./, '')} nor an enum number`);
  };
  return {
    type: 'string',
    wire: WIRE_VARINT,
    packable: true,
    defaultValue: byNumber.get(0) ?? '0',
    read: (r) => {
      r.varint();
      const n = r.lo | 0;
      return byNumber.get(n) ?? String(n);
    },
    write: (w, v) => w.int32(toNumber(v)),
    isDefault: (v) => toNumber(v) === 0,
  };
}

const WRAPPERS: Readonly<Record<string, string>> = Object.freeze({
  'google.protobuf.DoubleValue': 'double',
  'google.protobuf.FloatValue': 'float',
  'google.protobuf.Int64Value': 'int64',
  'google.protobuf.UInt64Value': 'uint64',
  'google.protobuf.Int32Value': 'int32',
  'google.protobuf.UInt32Value': 'uint32',
  'google.protobuf.BoolValue': 'bool',
  'google.protobuf.StringValue': 'string',
  'google.protobuf.BytesValue': 'bytes',
});

function messageKind(type: protobuf.Type, stack: readonly protobuf.Type[]): Kind {
  const name = type.fullName.replace(/^\./, '');
  const wrapped = WRAPPERS[name];
  if (wrapped !== undefined) return wrapperKind(SCALARS[wrapped] as Kind);
  if (name === 'google.protobuf.Timestamp') return secondsNanosKind('timestamptz', true);
  if (name === 'google.protobuf.Duration') return secondsNanosKind('long', false);
  const structKind = STRUCT_KINDS[name];
  if (structKind !== undefined) return structKind;
  if (type.fieldsArray.length === 0) {
    return delimitedKind('boolean', (r) => (skipAll(r), true), () => undefined);
  }
  const plan = planMessage(type, stack);
  return delimitedKind(
    { type: 'struct', fields: plan.mapped },
    (r) => decodeMessage(plan, r),
    (w, v) => {
      if (v === null || typeof v !== 'object') throw corrupt(`${plan.name}: expected a struct, got ${typeof v}`);
      encodeMessage(plan, v as Row, w);
    },
  );
}

function skipAll(r: WireReader): void {
  while (!r.done) {
    const tag = r.uint32();
    r.skip(tag & 7, tag >>> 3);
  }
}

/** A wrapper message: field 1 `value` of a scalar type, implicit presence. */
function wrapperKind(inner: Kind): Kind {
  return delimitedKind(
    inner.type,
    (r) => {
      let value = inner.defaultValue;
      while (!r.done) {
        const tag = r.uint32();
        if (tag >>> 3 === 1 && (tag & 7) === inner.wire) value = inner.read(r);
        else r.skip(tag & 7, tag >>> 3);
      }
      return value;
    },
    (w, v) => {
      if (!inner.isDefault(v)) {
        w.tag(1, inner.wire);
        inner.write(w, v);
      }
    },
  );
}

const MICROS = 1_000_000n;

/** Timestamp and Duration: `seconds` int64 (1), `nanos` int32 (2), as microseconds. */
function secondsNanosKind(type: string, floorNanos: boolean): Kind {
  return delimitedKind(
    type,
    (r) => {
      let seconds = 0n;
      let nanos = 0;
      while (!r.done) {
        const tag = r.uint32();
        if (tag === 8) seconds = (r.varint(), r.s64());
        else if (tag === 16) nanos = (r.varint(), r.lo | 0);
        else r.skip(tag & 7, tag >>> 3);
      }
      return seconds * MICROS + BigInt(Math.trunc(nanos / 1000));
    },
    (w, v) => {
      if (typeof v !== 'bigint') throw corrupt(`a ${type === 'long' ? 'Duration' : 'Timestamp'} must be a bigint of microseconds, got ${typeof v}`);
      // Timestamps keep nanos in [0, 1e9) (seconds floor); Durations give both parts the sign of the whole.
      let seconds = v / MICROS;
      let micros = v % MICROS;
      if (floorNanos && micros < 0n) {
        seconds -= 1n;
        micros += MICROS;
      }
      if (seconds !== 0n) {
        w.tag(1, WIRE_VARINT);
        w.u64(seconds);
      }
      if (micros !== 0n) {
        w.tag(2, WIRE_VARINT);
        w.int32(Number(micros) * 1000);
      }
    },
  );
}

function decodeMessage(plan: MessagePlan, r: WireReader): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of plan.fields) out[f.name] = f.label === 'implicit' ? f.kind.defaultValue : f.label === 'explicit' ? null : [];
  while (!r.done) {
    const tag = r.uint32();
    const id = tag >>> 3;
    const wt = tag & 7;
    if (id === 0) throw corrupt(`${plan.name}: field number 0 is not valid`);
    const f = plan.byId.get(id);
    if (f === undefined) {
      r.skip(wt, id);
      continue;
    }
    if (f.label === 'map') {
      if (wt !== WIRE_LEN) {
        r.skip(wt, id);
        continue;
      }
      (out[f.name] as unknown[]).push(readMapEntry(f, r));
    } else if (f.label === 'repeated') {
      const list = out[f.name] as unknown[];
      if (wt === WIRE_LEN && f.kind.packable) {
        const [s, e] = r.delimited();
        const sub = new WireReader(r.buf, s, e);
        while (!sub.done) list.push(f.kind.read(sub));
      } else if (wt === f.kind.wire) list.push(f.kind.read(r));
      else r.skip(wt, id);
    } else if (wt === f.kind.wire) out[f.name] = f.kind.read(r);
    else r.skip(wt, id);
  }
  return out;
}

const EMPTY_MESSAGE = new Uint8Array([0]);

function readMapEntry(f: FieldPlan, r: WireReader): [unknown, unknown] {
  const key = f.key as Kind;
  const [s, e] = r.delimited();
  const sub = new WireReader(r.buf, s, e);
  let k = key.defaultValue;
  let v: unknown = undefined;
  while (!sub.done) {
    const tag = sub.uint32();
    if (tag === ((1 << 3) | key.wire)) k = key.read(sub);
    else if (tag === ((2 << 3) | f.kind.wire)) v = f.kind.read(sub);
    else sub.skip(tag & 7, tag >>> 3);
  }
  // No value: a scalar's default, or a message kind read from an empty message (a zero length prefix).
  if (v === undefined) v = f.kind.wire === WIRE_LEN && f.kind.defaultValue === null ? f.kind.read(new WireReader(EMPTY_MESSAGE, 0, 1)) : f.kind.defaultValue;
  return [k, v];
}

function encodeMessage(plan: MessagePlan, row: Row, w: WireWriter): void {
  for (const f of plan.fields) {
    const v = row[f.name];
    switch (f.label) {
      case 'implicit':
        if (v === null || v === undefined || f.kind.isDefault(v)) continue;
        w.tag(f.id, f.kind.wire);
        f.kind.write(w, v);
        continue;
      case 'explicit':
        if (v === null || v === undefined) continue;
        w.tag(f.id, f.kind.wire);
        f.kind.write(w, v);
        continue;
      case 'repeated': {
        const list = listOf(v, plan.name, f.name);
        if (list.length === 0) continue;
        if (f.packed) {
          w.tag(f.id, WIRE_LEN);
          w.delimited((sub) => {
            for (const x of list) f.kind.write(sub, x);
          });
        } else {
          for (const x of list) {
            w.tag(f.id, f.kind.wire);
            f.kind.write(w, x);
          }
        }
        continue;
      }
      case 'map': {
        const key = f.key as Kind;
        for (const pair of listOf(v, plan.name, f.name)) {
          if (!Array.isArray(pair) || pair.length !== 2) throw corrupt(`${plan.name}.${f.name}: a map entry is not a [key, value] pair`);
          w.tag(f.id, WIRE_LEN);
          w.delimited((sub) => {
            sub.tag(1, key.wire);
            key.write(sub, pair[0]);
            sub.tag(2, f.kind.wire);
            f.kind.write(sub, pair[1]);
          });
        }
      }
    }
  }
}

function listOf(v: unknown, message: string, field: string): readonly unknown[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v)) throw corrupt(`${message}.${field}: expected a list, got ${typeof v}`);
  return v;
}
