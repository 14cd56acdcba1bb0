/**
 * The contract between the typed-value codecs (one per registry format: Avro, JSON Schema, Protobuf) and the
 * conversion that writes their rows into a topic table's typed columns (the `value_schema_id_prefix` and
 * `value_schema_latest` table modes, see ../../README.md "Typed tables").
 *
 * - A codec is compiled from a registry schema (`WriterSchema`: its text and its references' texts, resolved,
 *   so nothing here reads the registry).
 * - `fields` is the value mapped to Iceberg types, before field ids (ids are assigned against the table's
 *   current schema by ./table-layout.ts, so they stay stable across versions).
 * - `decode` turns a payload (the wire-format prefix already removed) into a `Row` whose JS values follow
 *   the conventions below; `encode` turns such a row back into payload bytes. Conversion keeps a record's
 *   typed columns only when `encode(decode(payload))` equals `payload` byte for byte; otherwise it keeps the
 *   raw bytes beside them.
 *
 * Value conventions (what `decode` returns and `encode` accepts), by the Iceberg type of the field:
 *   boolean: boolean | int: number (int32) | long: bigint | float, double: number
 *   decimal(P,S): bigint, the unscaled value | date: number, days since 1970-01-01
 *   time: bigint, microseconds since midnight | timestamp, timestamptz: bigint, microseconds since the epoch
 *   string: string | uuid: string, lowercase canonical (36 chars) | binary, fixed[L]: Uint8Array
 *   struct: a plain object keyed by field name | list: an array | map: an array of [key, value] pairs
 *   null (or a missing property) for an absent optional value.
 */

export type WriterSchemaType = 'AVRO' | 'JSON' | 'PROTOBUF';

/** A registry schema with everything it references, resolved (no registry access needed to compile it). */
export interface WriterSchema {
  /** The registry's global schema id. */
  readonly id: number;
  readonly schemaType: WriterSchemaType;
  /** The schema text as the registry holds it. */
  readonly schema: string;
  /**
   * Every schema it references, transitively, dependencies first: `name` is how the referring schema names
   * it (an Avro full name, a .proto import path, a JSON Schema `$ref` URL).
   */
  readonly references: readonly { readonly name: string; readonly schema: string }[];
}

/** An Iceberg type by the spec's names, without field ids. */
export type MappedType =
  | string // a primitive: boolean, int, long, float, double, decimal(P,S), date, time, timestamp, timestamptz, string, uuid, fixed[L], binary
  | MappedStruct
  | { readonly type: 'list'; readonly element: MappedType; readonly elementRequired: boolean }
  | { readonly type: 'map'; readonly key: MappedType; readonly value: MappedType; readonly valueRequired: boolean };

export interface MappedStruct {
  readonly type: 'struct';
  readonly fields: readonly MappedField[];
}

export interface MappedField {
  readonly name: string;
  readonly required: boolean;
  readonly type: MappedType;
  readonly doc?: string;
}

/** A decoded value: field name to value, by the conventions above. */
export type Row = { readonly [field: string]: unknown };

export interface ValueCodec {
  readonly writer: WriterSchema;
  /** For Protobuf, the message the payloads are (its full name); undefined for the other formats. */
  readonly message?: string;
  /** The value's top-level fields (each becomes a top-level column of the table). */
  readonly fields: readonly MappedField[];
  /** Decodes a payload; throws TypedValueError('CORRUPT_PAYLOAD') when the bytes are not a value of the schema. */
  decode(payload: Uint8Array): Row;
  /** Encodes a row (as `decode` gives it) back to payload bytes. */
  encode(row: Row): Uint8Array;
}

export type TypedValueErrorCode =
  /** The schema text does not parse, or names a reference that was not given. */
  | 'INVALID_SCHEMA'
  /** The schema parses but Iceberg cannot hold it: a recursive type, or a construct with no mapping. */
  | 'UNSUPPORTED_SCHEMA'
  /** The payload is not a value of the schema. */
  | 'CORRUPT_PAYLOAD'
  /** The bytes lack the Confluent wire-format prefix (magic byte 0, a 4-byte schema id, Protobuf message indexes). */
  | 'MISSING_PREFIX';

/** Errors of the typed-value codecs: `code` is stable, the message says what is wrong and what to do. */
export class TypedValueError extends Error {
  constructor(
    readonly code: TypedValueErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TypedValueError';
  }
}
