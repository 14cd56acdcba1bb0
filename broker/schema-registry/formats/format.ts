/**
 * What every schema format gives the registry: parsing (invalid schemas are refused with 42201), the
 * canonical text identity is decided on, and a reader/writer compatibility check. The registry composes
 * the check into BACKWARD/FORWARD/FULL (compatibility.ts); a format only answers "can `reader` read what
 * `writer` wrote?".
 */
import type { SchemaType } from '../model.js';

/** A referenced schema, already fetched from its subject and version: `name` is how the referrer names it. */
export interface ResolvedReference {
  readonly name: string;
  readonly schemaType: SchemaType;
  readonly schema: string;
}

export interface ParsedSchema {
  readonly schemaType: SchemaType;
  /** The canonical text stored and served; two registrations with the same canonical text share an id. */
  readonly canonical: string;
}

export interface SchemaFormat<P extends ParsedSchema = ParsedSchema> {
  readonly schemaType: SchemaType;
  /**
   * Parses `schema` with its references (transitive ones included, dependencies first). Throws
   * RegistryError INVALID_SCHEMA saying what is wrong.
   */
  parse(schema: string, references: readonly ResolvedReference[]): P;
  /** Why data written with `writer` cannot be read with `reader`: one message per problem, empty when it can. */
  readerIncompatibilities(reader: P, writer: P): string[];
  /**
   * The schema text to serve for a `?format=` (Protobuf: `serialized` for a base64 FileDescriptorProto, else
   * .proto text). Formats without other forms leave it out and serve the canonical text.
   */
  render?(parsed: P, format: string | undefined): string;
}
