/**
 * Loads a registry Protobuf schema into a protobufjs Root, as the registry parses it
 * (../../broker/schema-registry/formats/protobuf.ts, which tiering/ may not import): `.proto` text or a base64
 * FileDescriptorProto, references added by their import path, `google/protobuf/*.proto` imports from
 * protobufjs's bundled well-known types. Then picks the message a payload's Confluent message indexes name:
 * the first index counts the schema file's top-level messages in declaration order, each further index the
 * nested messages of the one before (enums do not count), as Confluent's serializers number them.
 */
import protobuf from 'protobufjs';
import descriptorNamespace from 'protobufjs/ext/descriptor/index.js';
import { TypedValueError, type WriterSchema } from './api.js';

const descriptor = descriptorNamespace as unknown as { readonly FileDescriptorProto: protobuf.Type };

interface FileDescriptorLike {
  readonly package?: string;
  readonly syntax?: string;
  readonly dependency?: readonly string[];
  readonly messageType?: readonly unknown[];
  readonly enumType?: readonly unknown[];
}

export interface LoadedProtobuf {
  readonly root: protobuf.Root;
  /** The schema file's own top-level messages, in declaration order. */
  readonly messages: readonly protobuf.Type[];
}

function invalid(why: string, cause?: unknown): TypedValueError {
  return new TypedValueError('INVALID_SCHEMA', why, cause === undefined ? undefined : { cause });
}

export function loadProtobuf(writer: WriterSchema): LoadedProtobuf {
  const root = new protobuf.Root();
  const imports = new Set<string>();
  for (const ref of writer.references) {
    // A well-known type given as a reference (serializers that do not skip them) is the bundled one.
    if (ref.name.startsWith('google/protobuf/') && protobuf.common.get(ref.name) !== null) {
      imports.add(ref.name);
      continue;
    }
    addFile(root, ref.schema, `reference '${ref.name}'`, imports);
  }
  const own = addFile(root, writer.schema, 'the schema', imports);
  for (const name of imports) {
    if (!name.startsWith('google/protobuf/')) continue;
    const common = protobuf.common.get(name) as { nested?: protobuf.INamespace['nested'] } | null;
    if (common?.nested) root.addJSON(common.nested);
  }
  try {
    root.resolveAll();
  } catch (err) {
    throw invalid(`the Protobuf schema does not resolve (${(err as Error).message}); every import needs a reference named by its path`, err);
  }
  return { root, messages: own.messages() };
}

/** Adds one file; `messages()` (called after resolving) gives the file's own top-level messages. */
function addFile(root: protobuf.Root, text: string, what: string, imports: Set<string>): { messages: () => protobuf.Type[] } {
  if (looksLikeBase64Descriptor(text)) {
    let fd: FileDescriptorLike;
    try {
      fd = descriptor.FileDescriptorProto.decode(Buffer.from(text.trim(), 'base64')) as unknown as FileDescriptorLike;
    } catch (err) {
      throw invalid(`${what} is neither .proto text nor a base64 FileDescriptorProto (${(err as Error).message})`, err);
    }
    const pkg = fd.package ?? '';
    const ns = pkg === '' ? root : root.define(pkg);
    const syntax = fd.syntax === 'proto3' ? 'proto3' : fd.syntax === 'editions' ? 'editions' : 'proto2';
    const added: protobuf.Type[] = [];
    try {
      for (const m of fd.messageType ?? []) {
        // keepCase: columns take the .proto field names (as the text form does), not their JSON names.
        const t = (protobuf.Type as unknown as { fromDescriptor(d: unknown, ctx: unknown): protobuf.Type }).fromDescriptor(m, { edition: syntax, keepCase: true });
        ns.add(t);
        added.push(t);
      }
      for (const e of fd.enumType ?? []) ns.add((protobuf.Enum as unknown as { fromDescriptor(d: unknown): protobuf.Enum }).fromDescriptor(e));
    } catch (err) {
      throw invalid(`${what}: the FileDescriptorProto is not valid (${(err as Error).message})`, err);
    }
    for (const d of fd.dependency ?? []) imports.add(d);
    return { messages: () => added };
  }
  const before = new Set<protobuf.ReflectionObject>();
  const collect = (ns: protobuf.NamespaceBase, into: (t: protobuf.ReflectionObject) => void) => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Type) into(child);
      else if (child instanceof protobuf.Namespace) collect(child, into);
    }
  };
  collect(root, (t) => before.add(t));
  let parsed: protobuf.IParserResult;
  try {
    parsed = protobuf.parse(text, root, { keepCase: true });
  } catch (err) {
    throw invalid(`${what} is not valid .proto text (${(err as Error).message})`, err);
  }
  for (const d of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) imports.add(d);
  const pkg = parsed.package ?? '';
  return {
    messages: () => {
      const ns = pkg === '' ? root : root.lookup(pkg);
      if (!(ns instanceof protobuf.Namespace) && !(ns instanceof protobuf.Root)) return [];
      return (ns as protobuf.NamespaceBase).nestedArray.filter((c): c is protobuf.Type => c instanceof protobuf.Type && !before.has(c));
    },
  };
}

function looksLikeBase64Descriptor(text: string): boolean {
  const t = text.trim();
  return t.length > 0 && /^[A-Za-z0-9+/=\r\n]+$/.test(t) && !/\b(message|syntax|enum|package)\b/.test(t);
}

/** The message `indexes` name (Confluent's message indexes; [] means [0]). */
export function messageAt(loaded: LoadedProtobuf, indexes: readonly number[]): protobuf.Type {
  const path = indexes.length === 0 ? [0] : indexes;
  let candidates: readonly protobuf.Type[] = loaded.messages;
  let found: protobuf.Type | undefined;
  for (const [depth, index] of path.entries()) {
    found = candidates[index];
    if (found === undefined) {
      throw invalid(`message indexes [${path.join(', ')}] name no message: at depth ${depth} there are ${candidates.length} messages, index ${index} is past them`);
    }
    candidates = found.nestedArray.filter((c): c is protobuf.Type => c instanceof protobuf.Type);
  }
  return found as protobuf.Type;
}
