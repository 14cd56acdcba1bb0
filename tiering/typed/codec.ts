/**
 * Compiles the value codec for a registry schema, by its format (see ./api.ts for the contract and
 * the README's "Type mapping" table for the mapping of each format).
 */
import { TypedValueError, type ValueCodec, type WriterSchema } from './api.js';
import { compileAvroCodec } from './avro-codec.js';
import { compileJsonCodec } from './json-codec.js';
import { compileProtobufCodec } from './protobuf-codec.js';

export interface CompileOptions {
  /** Protobuf: the message the payloads are, as the wire-format prefix's message indexes name it (default [0]). */
  readonly messageIndexes?: readonly number[];
}

/**
 * A codec for values written with `writer`; throws TypedValueError INVALID_SCHEMA (the schema does not
 * parse, or a reference is missing) or UNSUPPORTED_SCHEMA (a recursive type, or a type with no mapping).
 */
export function compileValueCodec(writer: WriterSchema, options: CompileOptions = {}): ValueCodec {
  switch (writer.schemaType) {
    case 'AVRO':
      return compileAvroCodec(writer);
    case 'JSON':
      return compileJsonCodec(writer);
    case 'PROTOBUF':
      return compileProtobufCodec(writer, options.messageIndexes ?? [0]);
    default:
      throw new TypedValueError('INVALID_SCHEMA', `schema ${String((writer as WriterSchema).id)} has the type ${String((writer as WriterSchema).schemaType)}; the registry's types are AVRO, JSON and PROTOBUF`);
  }
}
