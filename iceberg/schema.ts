/**
 * Iceberg schemas, named and shaped after the spec's JSON serialization (Iceberg spec, "Schemas and Data
 * Types" and Appendix C), so that the in-memory model and the stored JSON line up one to one.
 */

/** Primitive types in their spec spelling, e.g. `'long'`, `'timestamptz'`, `'decimal(10,2)'`, `'fixed[16]'`. */
export type PrimitiveType = string;

export interface NestedField {
  readonly id: number;
  readonly name: string;
  readonly required: boolean;
  readonly type: Type;
  readonly doc?: string;
  readonly 'initial-default'?: unknown;
  readonly 'write-default'?: unknown;
}

export interface StructType {
  readonly type: 'struct';
  readonly fields: readonly NestedField[];
}

export interface ListType {
  readonly type: 'list';
  readonly 'element-id': number;
  readonly element: Type;
  readonly 'element-required': boolean;
}

export interface MapType {
  readonly type: 'map';
  readonly 'key-id': number;
  readonly key: Type;
  readonly 'value-id': number;
  readonly value: Type;
  readonly 'value-required': boolean;
}

export type Type = PrimitiveType | StructType | ListType | MapType;

export interface Schema extends StructType {
  readonly 'schema-id': number;
  readonly 'identifier-field-ids'?: readonly number[];
}
