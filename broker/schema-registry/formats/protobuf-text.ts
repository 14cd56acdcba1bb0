/**
 * The two forms of a Protobuf schema Confluent's API serves: `.proto` text (the default) and a base64
 * `FileDescriptorProto` (`?format=serialized`, which Confluent's JavaScript deserializer asks for). A schema
 * registered in one form is converted to the other from its parsed protobufjs types: messages (nested
 * types, oneofs, maps, labels), enums, the package, the syntax and the imports. Options and comments are not
 * carried over, and services are left out.
 */
import protobuf from 'protobufjs';
import descriptorNamespace from 'protobufjs/ext/descriptor/index.js';

const descriptor = descriptorNamespace as unknown as { readonly FileDescriptorProto: protobuf.Type };

/** What is known of the schema's own file. */
export interface ProtoFile {
  readonly syntax: 'proto2' | 'proto3';
  readonly pkg: string;
  readonly imports: readonly string[];
  /** The file's top-level messages and enums. */
  readonly types: readonly (protobuf.Type | protobuf.Enum)[];
}

export function toProtoText(file: ProtoFile): string {
  const lines = [`syntax = "${file.syntax}";`];
  if (file.pkg !== '') lines.push(`package ${file.pkg};`);
  for (const i of file.imports) lines.push(`import "${i}";`);
  for (const t of file.types) lines.push('', ...printType(t, '', file.syntax));
  return lines.join('\n') + '\n';
}

function printType(t: protobuf.Type | protobuf.Enum, indent: string, syntax: string): string[] {
  if (t instanceof protobuf.Enum) {
    return [`${indent}enum ${t.name} {`, ...Object.entries(t.values).map(([k, v]) => `${indent}  ${k} = ${v};`), `${indent}}`];
  }
  const out = [`${indent}message ${t.name} {`];
  const inner = indent + '  ';
  const field = (f: protobuf.Field, pad: string, inOneof: boolean) => {
    if (f.map) return `${pad}map<${(f as unknown as protobuf.MapField).keyType}, ${f.type}> ${f.name} = ${f.id};`;
    let label = '';
    if (f.repeated) label = 'repeated ';
    else if (f.required) label = 'required ';
    else if (!inOneof && (syntax === 'proto2' || isProto3Optional(f))) label = 'optional ';
    return `${pad}${label}${f.type} ${f.name} = ${f.id};`;
  };
  const realOneofs = t.oneofsArray.filter((o) => !(o.fieldsArray.length === 1 && isProto3Optional(o.fieldsArray[0] as protobuf.Field)));
  const inReal = new Set(realOneofs.flatMap((o) => o.fieldsArray.map((f) => f.name)));
  for (const f of t.fieldsArray) if (!inReal.has(f.name)) out.push(field(f, inner, false));
  for (const o of realOneofs) out.push(`${inner}oneof ${o.name} {`, ...o.fieldsArray.map((f) => field(f, inner + '  ', true)), `${inner}}`);
  for (const n of t.nestedArray) if (n instanceof protobuf.Type || n instanceof protobuf.Enum) out.push(...printType(n, inner, syntax));
  out.push(`${indent}}`);
  return out;
}

/** A proto3 `optional` field: protobufjs gives it a synthetic oneof named after the field. */
function isProto3Optional(f: protobuf.Field): boolean {
  const o = f.partOf;
  return o !== null && o.fieldsArray.length === 1 && o.name === `_${f.name}`;
}

/** The base64 FileDescriptorProto of the schema's own file (its package's types, its imports). */
export function toSerialized(root: protobuf.Root, file: ProtoFile): string {
  const set = (root as unknown as { toDescriptor(syntax: string): { file: Record<string, unknown>[] } }).toDescriptor(file.syntax);
  const own = set.file.find((f) => (f['package'] ?? '') === file.pkg) ?? { package: file.pkg };
  const names = new Set(file.types.map((t) => t.name));
  const keep = (list: unknown): unknown[] => (Array.isArray(list) ? (list as { name?: string }[]).filter((m) => names.has(m.name ?? '')) : []);
  const proto: Record<string, unknown> = { ...own, name: own['name'] ?? 'schema.proto', dependency: [...file.imports], messageType: keep(own['messageType']), enumType: keep(own['enumType']) };
  if (file.syntax === 'proto3') proto['syntax'] = 'proto3';
  return Buffer.from(descriptor.FileDescriptorProto.encode(descriptor.FileDescriptorProto.fromObject(proto)).finish()).toString('base64');
}
