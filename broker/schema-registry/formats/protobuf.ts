/**
 * Protobuf schemas, in either form clients send: `.proto` text, or a base64 `FileDescriptorProto` (what the
 * Confluent serializers of confluent-kafka-python and the JavaScript client register). Parsed with
 * protobufjs; imports resolve through the references (by import path) and the well-known types
 * (`google/protobuf/*.proto`); a type that does not resolve makes the schema invalid. The schema is stored as
 * sent (trimmed), so a client reads back the form it registered.
 *
 * Compatibility ("can a reader schema parse what the writer wrote?"), the main rules Confluent applies:
 * - the package must not change; a message of the writer that the reader lacks fails (MESSAGE_REMOVED);
 * - fields are matched by number: a change of kind (scalar, message, map) fails; a scalar change fails
 *   unless both are in one wire-compatible group (int32/uint32/int64/uint64/bool and enums;
 *   sint32/sint64; fixed32/sfixed32; fixed64/sfixed64; string/bytes; float; double); a message type
 *   with another name (within its package) fails; map keys and values are compared the same way;
 *   labels (singular, repeated) are not compared, as in Confluent;
 * - added and removed fields are fine, except proto2 `required` ones and a field removed from a oneof
 *   that both schemas have;
 * - a field moved into an existing oneof, or several fields moved into one oneof, fails;
 * - renamed fields, added or removed oneofs, and added or removed enums and enum values are fine.
 */
import protobuf from 'protobufjs';
import descriptorNamespace from 'protobufjs/ext/descriptor/index.js';
import { invalidSchema } from '../errors.js';
import type { ParsedSchema, ResolvedReference, SchemaFormat } from './format.js';
import { toProtoText, toSerialized, type ProtoFile } from './protobuf-text.js';

export interface ParsedProtobuf extends ParsedSchema {
  readonly schemaType: 'PROTOBUF';
  readonly root: protobuf.Root;
  readonly pkg: string;
  /** Full names (no leading dot) of the messages this schema itself defines. */
  readonly messages: readonly string[];
  /** The schema's own file, for serving it in the other form. */
  readonly file: ProtoFile;
  /** The form it was registered in. */
  readonly form: 'text' | 'serialized';
}

/** protobufjs's descriptor extension exports the `google.protobuf` namespace of descriptor.proto. */
const descriptor = descriptorNamespace as unknown as { readonly FileDescriptorProto: protobuf.Type };

const WIRE_GROUPS: readonly (readonly string[])[] = [
  ['int32', 'uint32', 'int64', 'uint64', 'bool'],
  ['sint32', 'sint64'],
  ['fixed32', 'sfixed32'],
  ['fixed64', 'sfixed64'],
  ['string', 'bytes'],
];
const SCALARS = new Set(['double', 'float', ...WIRE_GROUPS.flat()]);

interface FileDescriptorLike {
  readonly package?: string;
  readonly syntax?: string;
  readonly dependency?: readonly string[];
  readonly messageType?: readonly unknown[];
  readonly enumType?: readonly unknown[];
}

export const PROTOBUF_FORMAT: SchemaFormat<ParsedProtobuf> = {
  schemaType: 'PROTOBUF',
  parse(schema: string, references: readonly ResolvedReference[]): ParsedProtobuf {
    const root = new protobuf.Root();
    const imports = new Set<string>();
    for (const ref of references) {
      if (ref.schemaType !== 'PROTOBUF') throw invalidSchema(`reference '${ref.name}' is a ${ref.schemaType} schema; a Protobuf schema can only import Protobuf schemas`);
      addFile(root, ref.schema, `reference '${ref.name}'`, imports);
    }
    const before = new Set(allMessages(root));
    const ownImports = new Set<string>();
    const topBefore = new Set(topLevel(root));
    const { pkg, syntax } = addFile(root, schema, 'the schema', ownImports);
    for (const i of ownImports) imports.add(i);
    const types = topLevel(root).filter((t) => !topBefore.has(t));
    for (const name of imports) {
      if (!name.startsWith('google/protobuf/')) continue;
      const common = protobuf.common.get(name) as { nested?: protobuf.INamespace['nested'] } | null;
      if (common?.nested) root.addJSON(common.nested);
    }
    try {
      root.resolveAll();
    } catch (err) {
      throw invalidSchema(`the Protobuf schema does not resolve (${(err as Error).message}); imports need a reference named by their path`);
    }
    const messages = allMessages(root).filter((m) => !before.has(m) && !m.startsWith('google.protobuf.'));
    const file: ProtoFile = { syntax, pkg, imports: [...ownImports], types };
    return { schemaType: 'PROTOBUF', canonical: schema.trim(), root, pkg, messages, file, form: looksLikeBase64Descriptor(schema) ? 'serialized' : 'text' };
  },
  render(parsed: ParsedProtobuf, format: string | undefined): string {
    if (format === 'serialized') return parsed.form === 'serialized' ? parsed.canonical : toSerialized(parsed.root, parsed.file);
    return parsed.form === 'text' ? parsed.canonical : toProtoText(parsed.file);
  },
  readerIncompatibilities(reader: ParsedProtobuf, writer: ParsedProtobuf): string[] {
    const problems: string[] = [];
    if (reader.pkg !== writer.pkg) problems.push(`package changed from '${writer.pkg}' to '${reader.pkg}'`);
    for (const name of writer.messages) {
      const w = writer.root.lookup(name);
      const r = reader.root.lookup(reader.pkg === writer.pkg ? name : name.replace(writer.pkg, reader.pkg));
      if (!(w instanceof protobuf.Type)) continue;
      if (!(r instanceof protobuf.Type)) {
        problems.push(`message ${name} removed`);
        continue;
      }
      checkMessage(r, w, name, problems, reader.pkg, writer.pkg);
    }
    return problems;
  },
};

function looksLikeBase64Descriptor(text: string): boolean {
  const t = text.trim();
  return t.length > 0 && /^[A-Za-z0-9+/=\r\n]+$/.test(t) && !/\b(message|syntax|enum|package)\b/.test(t);
}

/** The messages and enums directly under every namespace of the root (packages included), as objects. */
function topLevel(root: protobuf.Root): (protobuf.Type | protobuf.Enum)[] {
  const out: (protobuf.Type | protobuf.Enum)[] = [];
  const walk = (ns: protobuf.NamespaceBase) => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Type || child instanceof protobuf.Enum) out.push(child);
      else if (child instanceof protobuf.Namespace) walk(child);
    }
  };
  walk(root);
  return out;
}

/** Adds one file to the root; returns its package and syntax. */
function addFile(root: protobuf.Root, text: string, what: string, imports: Set<string>): { pkg: string; syntax: 'proto2' | 'proto3' } {
  if (looksLikeBase64Descriptor(text)) {
    let fd: FileDescriptorLike;
    try {
      fd = descriptor.FileDescriptorProto.decode(Buffer.from(text.trim(), 'base64')) as unknown as FileDescriptorLike;
    } catch (err) {
      throw invalidSchema(`${what} is neither .proto text nor a base64 FileDescriptorProto (${(err as Error).message})`);
    }
    const pkg = fd.package ?? '';
    const ns = pkg === '' ? root : root.define(pkg);
    const syntax = fd.syntax === 'proto3' ? 'proto3' : 'proto2';
    try {
      // keepCase: the fields keep their .proto names (maybe_i, not maybeI), as protoc prints the schema.
      for (const m of fd.messageType ?? []) ns.add((protobuf.Type as unknown as { fromDescriptor(d: unknown, c: { edition: string; keepCase: boolean }): protobuf.Type }).fromDescriptor(m, { edition: syntax, keepCase: true }));
      for (const e of fd.enumType ?? []) ns.add((protobuf.Enum as unknown as { fromDescriptor(d: unknown): protobuf.Enum }).fromDescriptor(e));
    } catch (err) {
      throw invalidSchema(`${what}: the FileDescriptorProto is not valid (${(err as Error).message})`);
    }
    for (const d of fd.dependency ?? []) imports.add(d);
    return { pkg, syntax };
  }
  let parsed: protobuf.IParserResult;
  try {
    parsed = protobuf.parse(text, root, { keepCase: true });
  } catch (err) {
    throw invalidSchema(`${what} is not valid .proto text (${(err as Error).message})`);
  }
  for (const d of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) imports.add(d);
  return { pkg: parsed.package ?? '', syntax: /\bsyntax\s*=\s*["']proto3["']/.test(text) ? 'proto3' : 'proto2' };
}

function allMessages(ns: protobuf.NamespaceBase): string[] {
  const out: string[] = [];
  for (const child of ns.nestedArray) {
    if (child instanceof protobuf.Type) out.push(child.fullName.replace(/^\./, ''));
    if (child instanceof protobuf.Namespace || child instanceof protobuf.Type) out.push(...allMessages(child));
  }
  return out;
}

/** A field's kind as Confluent groups them: map, message, or scalar (enums count as scalar int32s). */
function kind(f: protobuf.Field): 'map' | 'message' | 'scalar' {
  if (f.map) return 'map';
  return SCALARS.has(f.type) || f.resolvedType instanceof protobuf.Enum ? 'scalar' : 'message';
}

function scalarGroup(type: string, resolved: protobuf.ReflectionObject | null): string {
  if (resolved instanceof protobuf.Enum) return 'int32';
  return WIRE_GROUPS.find((g) => g.includes(type))?.[0] ?? type;
}

/** A message type's name within its package (a package change is reported on its own). */
function localName(t: protobuf.ReflectionObject | null, type: string, pkg: string): string {
  const full = t?.fullName.replace(/^\./, '') ?? type;
  return pkg !== '' && full.startsWith(`${pkg}.`) ? full.slice(pkg.length + 1) : full;
}

/** The real oneof a field is in; proto3 `optional` fields sit in a synthetic one, which does not count. */
function oneofOf(f: protobuf.Field): string | undefined {
  const o = f.partOf;
  if (o === null || (o.fieldsArray.length === 1 && o.name === `_${f.name}`)) return undefined;
  return o.name;
}

function describeType(f: protobuf.Field): string {
  if (f.map) return `map<${(f as unknown as protobuf.MapField).keyType},${f.type}>`;
  return f.resolvedType?.fullName.replace(/^\./, '') ?? f.type;
}

/** Compares by field number, `writer` as Confluent's "original" and `reader` as its "update". */
function checkMessage(reader: protobuf.Type, writer: protobuf.Type, name: string, problems: string[], readerPkg: string, writerPkg: string): void {
  const readerFields = new Map(reader.fieldsArray.map((f) => [f.id, f]));
  const writerFields = new Map(writer.fieldsArray.map((f) => [f.id, f]));
  for (const [id, w] of writerFields) {
    const r = readerFields.get(id);
    if (r === undefined) {
      if (w.required) problems.push(`${name}: required field ${w.name} (${id}) removed`);
      const wOneof = oneofOf(w);
      if (wOneof !== undefined && reader.oneofsArray.some((o) => o.name === wOneof)) problems.push(`${name}: field ${w.name} (${id}) removed from oneof ${wOneof}`);
      continue;
    }
    compareTypes(r, w, `${name}: field ${id}`, problems, readerPkg, writerPkg);
  }
  for (const [id, r] of readerFields) {
    if (!writerFields.has(id) && r.required) problems.push(`${name}: required field ${r.name} (${id}) added`);
  }
  // Fields moving into a oneof of the reader: one top-level field may move into a new oneof, no more.
  const groups = new Map<string, protobuf.Field[]>();
  for (const f of reader.fieldsArray) {
    const o = oneofOf(f);
    if (o !== undefined) groups.set(o, [...(groups.get(o) ?? []), f]);
  }
  for (const [oneof, fields] of groups) {
    const moved = fields.filter((f) => writerFields.has(f.id) && oneofOf(writerFields.get(f.id) as protobuf.Field) === undefined).length;
    const existing = fields.filter((f) => writerFields.has(f.id) && oneofOf(writerFields.get(f.id) as protobuf.Field) !== undefined).length;
    if (moved > 1) problems.push(`${name}: several fields moved into the oneof ${oneof}`);
    else if (moved === 1 && existing > 0) problems.push(`${name}: a field moved into the existing oneof ${oneof}`);
  }
}

function compareTypes(r: protobuf.Field, w: protobuf.Field, at: string, problems: string[], readerPkg: string, writerPkg: string): void {
  const rk = kind(r);
  const wk = kind(w);
  if (rk !== wk) {
    problems.push(`${at} changed kind from ${wk} (${describeType(w)}) to ${rk} (${describeType(r)})`);
    return;
  }
  if (rk === 'scalar') {
    if (scalarGroup(r.type, r.resolvedType) !== scalarGroup(w.type, w.resolvedType)) problems.push(`${at} changed type from ${describeType(w)} to ${describeType(r)}`);
  } else if (rk === 'message') {
    if (localName(r.resolvedType, r.type, readerPkg) !== localName(w.resolvedType, w.type, writerPkg)) problems.push(`${at} changed type from ${describeType(w)} to ${describeType(r)}`);
  } else {
    const rKey = (r as unknown as protobuf.MapField).keyType;
    const wKey = (w as unknown as protobuf.MapField).keyType;
    if (scalarGroup(rKey, null) !== scalarGroup(wKey, null)) problems.push(`${at} changed its map key from ${wKey} to ${rKey}`);
    const rv = SCALARS.has(r.type) || r.resolvedType instanceof protobuf.Enum ? scalarGroup(r.type, r.resolvedType) : `msg:${localName(r.resolvedType, r.type, readerPkg)}`;
    const wv = SCALARS.has(w.type) || w.resolvedType instanceof protobuf.Enum ? scalarGroup(w.type, w.resolvedType) : `msg:${localName(w.resolvedType, w.type, writerPkg)}`;
    if (rv !== wv) problems.push(`${at} changed its map value from ${w.type} to ${r.type}`);
  }
}
