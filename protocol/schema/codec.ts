/**
 * The codec engine: from a MessageSpec it derives, once per (message, version), a decoder and an encoder
 * made of pre-built closures. Per message, nothing re-reads the schema: which fields are present, tagged,
 * nullable or compact was settled when the plan was compiled.
 *
 * Decoded values are plain objects keyed by the camelCase field names, holding every field of the struct
 * (fields absent from the version hold their default). int64 is a bigint, uuid a 16-byte Buffer, bytes and
 * records are Buffer views into the frame (no copy).
 *
 * Encoding leaves out the fields a version lacks. For requests such a field must hold its default unless it
 * is ignorable (Kafka's rule); for responses it is simply not written (see compileStruct).
 */
import { ProtocolError } from '../protocol-error.js';
import { DEFAULT_DECODE_LIMITS, Reader, type DecodeLimits } from '../reader.js';
import { Writer } from '../writer.js';
import { defaultValue, isDefaultValue } from './defaults.js';
import type { FieldSpec, FieldType, MessageSpec, PrimitiveType, StructType } from './types.js';
import { inVersionRange, parseVersionRange } from './versions.js';

type Decode = (r: Reader) => unknown;
type Encode = (w: Writer, v: unknown) => void;

interface TypeCodec {
  readonly decode: Decode;
  readonly encode: Encode;
  /** Fewest bytes a value can occupy on the wire (bounds array counts before allocating). */
  readonly minSize: number;
}

/** A decoded message body. */
export type MessageBody = Record<string, unknown>;

export interface MessageCodec {
  readonly spec: MessageSpec;
  readonly version: number;
  readonly flexible: boolean;
  /** Decode the body at the reader's position, leaving the reader after it. */
  decode(r: Reader): MessageBody;
  /** Encode a body; omitted fields take their defaults. Throws ProtocolError('INVALID_VALUE') on bad input. */
  encode(w: Writer, body: object): void;
}

// -------------------------------------------------------------------------------------------------------
// Primitives

function invalid(message: string): ProtocolError {
  return new ProtocolError('INVALID_VALUE', message);
}

function asBigInt(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  throw invalid(`int64 value ${String(v)} is neither a bigint nor a safe integer`);
}

function primitiveCodec(type: PrimitiveType, nullable: boolean, compact: boolean): TypeCodec {
  switch (type) {
    case 'bool':
      return {
        minSize: 1,
        decode: (r) => r.bool(),
        encode: (w, v) => {
          if (typeof v !== 'boolean') throw invalid(`expected a boolean, got ${typeof v}`);
          w.bool(v);
        },
      };
    case 'int8':
      return { minSize: 1, decode: (r) => r.int8(), encode: (w, v) => w.int8(v as number) };
    case 'int16':
      return { minSize: 2, decode: (r) => r.int16(), encode: (w, v) => w.int16(v as number) };
    case 'uint16':
      return { minSize: 2, decode: (r) => r.uint16(), encode: (w, v) => w.uint16(v as number) };
    case 'int32':
      return { minSize: 4, decode: (r) => r.int32(), encode: (w, v) => w.int32(v as number) };
    case 'uint32':
      return { minSize: 4, decode: (r) => r.uint32(), encode: (w, v) => w.uint32(v as number) };
    case 'int64':
      return { minSize: 8, decode: (r) => r.int64(), encode: (w, v) => w.int64(asBigInt(v)) };
    case 'float64':
      return { minSize: 8, decode: (r) => r.float64(), encode: (w, v) => w.float64(v as number) };
    case 'uuid':
      return { minSize: 16, decode: (r) => r.uuid(), encode: (w, v) => w.uuid(v as Uint8Array) };
    case 'string':
      return {
        minSize: compact ? 1 : 2,
        decode: nullable ? (r) => r.nullableString(compact) : (r) => r.string(compact),
        encode: nullable ? (w, v) => w.nullableString(v as string | null, compact) : (w, v) => w.string(v as string, compact),
      };
    case 'bytes':
      return {
        minSize: compact ? 1 : 4,
        decode: nullable ? (r) => r.nullableBytes(compact) : (r) => r.bytes(compact),
        encode: nullable ? (w, v) => w.nullableBytes(v as Uint8Array | null, compact) : (w, v) => w.bytes(v as Uint8Array, compact),
      };
    case 'records':
      return {
        minSize: compact ? 1 : 4,
        decode: nullable ? (r) => r.nullableBytes(compact) : (r) => r.bytes(compact),
        encode: nullable
          ? (w, v) => w.records(v as Uint8Array | null, compact)
          : (w, v) => {
              if (v === null) throw new ProtocolError('INVALID_VALUE', 'null records where the field is not nullable');
              w.records(v as Uint8Array, compact);
            },
      };
  }
}

// -------------------------------------------------------------------------------------------------------
// Structs and arrays

interface CompiledField {
  readonly spec: FieldSpec;
  readonly name: string;
  /** 'regular': on the wire in order; 'tagged': in the tagged section; 'absent': not in this version. */
  readonly mode: 'regular' | 'tagged' | 'absent';
  readonly codec: TypeCodec | null;
}

function compileType(type: FieldType, nullable: boolean, version: number, flexible: boolean, strict: boolean): TypeCodec {
  if (typeof type === 'string') return primitiveCodec(type, nullable, flexible);
  if (type.kind === 'array') {
    const item = compileType(type.items, false, version, flexible, strict);
    const itemDecode = item.decode;
    const itemEncode = item.encode;
    const minItem = item.minSize;
    return {
      minSize: flexible ? 1 : 4,
      decode: (r) => {
        const start = r.pos;
        const n = r.arrayLength(flexible, minItem);
        if (n < 0) {
          if (!nullable) throw new ProtocolError('INVALID_VALUE', `null array at offset ${start} where the field is not nullable`, { offset: start });
          return null;
        }
        const out: unknown[] = [];
        for (let i = 0; i < n; i++) out.push(itemDecode(r));
        return out;
      },
      encode: (w, v) => {
        if (v === null) {
          if (!nullable) throw invalid('null array where the field is not nullable');
          w.arrayLength(-1, flexible);
          return;
        }
        if (!Array.isArray(v)) throw invalid(`expected an array, got ${typeof v}`);
        w.arrayLength(v.length, flexible);
        for (let i = 0; i < v.length; i++) {
          try {
            itemEncode(w, v[i]);
          } catch (e) {
            throw wrapEncodeError(e, `[${i}]`);
          }
        }
      },
    };
  }
  const inner = compileStruct(type, version, flexible, strict);
  if (!nullable) return inner;
  return {
    minSize: 1,
    decode: (r) => (r.int8() < 0 ? null : inner.decode(r)),
    encode: (w, v) => {
      if (v === null) {
        w.int8(-1);
        return;
      }
      w.int8(1);
      inner.encode(w, v);
    },
  };
}

function wrapEncodeError(e: unknown, name: string): ProtocolError {
  if (e instanceof ProtocolError) return e.inField(name);
  return new ProtocolError('INVALID_VALUE', e instanceof Error ? e.message : String(e), { field: name, cause: e });
}

function compileField(spec: FieldSpec, version: number, flexible: boolean, strict: boolean): CompiledField {
  const present = inVersionRange(spec.versions, version);
  const tagged = present && flexible && inVersionRange(spec.taggedVersions, version);
  if (tagged && (spec.tag === undefined || !Number.isInteger(spec.tag) || spec.tag < 0)) {
    throw new Error(`field '${spec.name}' is tagged in v${version} but declares no valid tag`);
  }
  const nullable = inVersionRange(spec.nullableVersions, version);
  return {
    spec,
    name: spec.name,
    mode: !present ? 'absent' : tagged ? 'tagged' : 'regular',
    codec: present ? compileType(spec.type, nullable, version, flexible, strict) : null,
  };
}

/**
 * `strict`: a field absent from this version must hold its default unless it is ignorable (Kafka's rule, kept
 * for requests, so a client built on this codec never silently drops what it meant to send). Responses are
 * not strict: the broker fills a response once for all versions and each version carries what it has, so a
 * field the version lacks is left out (DescribeConfigs v1 has no `isDefault`, only `configSource`).
 */
function compileStruct(type: StructType | { readonly fields: readonly FieldSpec[] }, version: number, flexible: boolean, strict: boolean): TypeCodec {
  const fields = type.fields.map((f) => compileField(f, version, flexible, strict));
  const names = fields.map((f) => f.name);
  if (new Set(names).size !== names.length) throw new Error(`duplicate field names in struct: ${names.join(', ')}`);

  // Decoding: per field, either read it in order or give its default (tagged fields start at default and
  // are overwritten when their tag shows up). Keeping one key order makes every decoded object one shape.
  const count = fields.length;
  const readers: (Decode | null)[] = fields.map((f) => (f.mode === 'regular' ? (f.codec as TypeCodec).decode : null));
  const defaults = fields.map((f) => f.spec);
  const tagged = new Map<number, CompiledField>();
  for (const f of fields) {
    if (f.mode !== 'tagged') continue;
    const tag = f.spec.tag as number;
    if (tagged.has(tag)) throw new Error(`tag ${tag} is used twice in one struct (v${version})`);
    tagged.set(tag, f);
  }
  const taggedSorted = [...tagged.entries()].sort((a, b) => a[0] - b[0]).map(([, f]) => f);
  const regular = fields.filter((f) => f.mode === 'regular');
  const absentStrict = strict ? fields.filter((f) => f.mode === 'absent' && f.spec.ignorable !== true) : [];

  const decode: Decode = (r) => {
    if (++r.depth > r.limits.maxDepth) {
      throw new ProtocolError('LIMIT_EXCEEDED', `structs nested deeper than the limit of ${r.limits.maxDepth}`, { offset: r.pos });
    }
    const out: Record<string, unknown> = {};
    for (let i = 0; i < count; i++) {
      const read = readers[i];
      out[names[i] as string] = read != null ? read(r) : defaultValue(defaults[i] as FieldSpec);
    }
    if (flexible) readTaggedSection(r, tagged, out);
    r.depth--;
    return out;
  };

  const encode: Encode = (w, v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid(`expected an object, got ${v === null ? 'null' : typeof v}`);
    const obj = v as Record<string, unknown>;
    for (const f of regular) {
      let value = obj[f.name];
      if (value === undefined) value = defaultValue(f.spec);
      try {
        (f.codec as TypeCodec).encode(w, value);
      } catch (e) {
        throw wrapEncodeError(e, f.name);
      }
    }
    for (const f of absentStrict) {
      if (!isDefaultValue(f.spec, obj[f.name])) {
        throw new ProtocolError('INVALID_VALUE', `the field is not in version ${version} and is not ignorable, so it must hold its default`, { field: f.name });
      }
    }
    if (flexible) writeTaggedSection(w, taggedSorted, obj);
  };

  let minSize = flexible ? 1 : 0;
  for (const f of regular) minSize += (f.codec as TypeCodec).minSize;
  return { decode, encode, minSize };
}

function readTaggedSection(r: Reader, tagged: ReadonlyMap<number, CompiledField>, out: Record<string, unknown>): void {
  const n = r.uvarint();
  if (n === 0) return;
  if (n > r.remaining / 2) {
    throw new ProtocolError('TRUNCATED', `${n} tagged fields cannot fit in the ${r.remaining} bytes left`, { offset: r.pos });
  }
  for (let i = 0; i < n; i++) {
    const tag = r.uvarint();
    const size = r.uvarint();
    r.need(size);
    const start = r.pos;
    const fieldEnd = start + size;
    const f = tagged.get(tag);
    if (f === undefined) {
      r.pos = fieldEnd; // unknown tag: skip
      continue;
    }
    const outerEnd = r.end;
    r.end = fieldEnd;
    try {
      out[f.name] = (f.codec as TypeCodec).decode(r);
    } finally {
      r.end = outerEnd;
    }
    if (r.pos !== fieldEnd) {
      throw new ProtocolError('INVALID_LENGTH', `tagged field ${tag} ('${f.name}') declares ${size} bytes but its value took ${r.pos - start}`, { offset: start });
    }
  }
}

const scratchPool: Writer[] = [];

function writeTaggedSection(w: Writer, taggedSorted: readonly CompiledField[], obj: Record<string, unknown>): void {
  let present: CompiledField[] | null = null;
  for (const f of taggedSorted) {
    if (!isDefaultValue(f.spec, obj[f.name])) (present ??= []).push(f);
  }
  if (present === null) {
    w.uvarint(0);
    return;
  }
  w.uvarint(present.length);
  const scratch = scratchPool.pop() ?? new Writer(64);
  try {
    for (const f of present) {
      scratch.reset();
      try {
        (f.codec as TypeCodec).encode(scratch, obj[f.name]);
      } catch (e) {
        throw wrapEncodeError(e, f.name);
      }
      w.uvarint(f.spec.tag as number).uvarint(scratch.length).raw(scratch.view());
    }
  } finally {
    scratchPool.push(scratch);
  }
}

// -------------------------------------------------------------------------------------------------------
// Per-message cache

const cache = new WeakMap<MessageSpec, Map<number, MessageCodec>>();

/**
 * The compiled codec of `spec` at `version`, built on first use and cached. Throws
 * ProtocolError('UNSUPPORTED_VERSION') if the version is outside `validVersions`.
 */
export function messageCodec(spec: MessageSpec, version: number): MessageCodec {
  let perVersion = cache.get(spec);
  if (perVersion === undefined) {
    perVersion = new Map();
    cache.set(spec, perVersion);
  }
  const hit = perVersion.get(version);
  if (hit !== undefined) return hit;
  if (!Number.isInteger(version) || !inVersionRange(spec.validVersions, version)) {
    const span = parseVersionRange(spec.validVersions);
    throw new ProtocolError('UNSUPPORTED_VERSION', `${spec.name} ${spec.type} v${version} is not supported; supported versions are ${span.min}-${span.max}`, {
      apiKey: spec.apiKey,
      apiVersion: version,
    });
  }
  const flexible = inVersionRange(spec.flexibleVersions, version);
  const root = compileStruct(spec, version, flexible, spec.type === 'request');
  const codec: MessageCodec = {
    spec,
    version,
    flexible,
    decode: root.decode as (r: Reader) => MessageBody,
    encode: (w, body) => root.encode(w, body),
  };
  perVersion.set(version, codec);
  return codec;
}

/** Decode a whole buffer as one message body; trailing bytes are an error. */
export function decodeMessage(spec: MessageSpec, version: number, buf: Buffer, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): MessageBody {
  const codec = messageCodec(spec, version);
  const r = new Reader(buf, 0, buf.length, limits);
  const body = codec.decode(r);
  if (r.remaining !== 0) {
    throw new ProtocolError('INVALID_LENGTH', `${r.remaining} bytes left over after decoding ${spec.name} ${spec.type} v${version}`, { apiKey: spec.apiKey, apiVersion: version, offset: r.pos });
  }
  return body;
}

/** Encode one message body into a new Buffer. */
export function encodeMessage(spec: MessageSpec, version: number, body: object): Buffer {
  const w = new Writer(256);
  messageCodec(spec, version).encode(w, body);
  return w.toBuffer();
}
