/**
 * Iceberg schema <-> Arrow schema (Iceberg spec, Appendix A "Parquet"). Every Arrow field, nested ones
 * included, carries its Iceberg field id as the `PARQUET:field_id` metadata, which parquet-wasm writes into
 * the Parquet schema. List elements are named `element`, map entries `key_value` with `key` and `value`.
 */
import * as arrow from 'apache-arrow';
import type { ListType, MapType, NestedField, Schema, StructType, Type } from '../schema.js';
import { parsePrimitiveType } from '../types.js';
import { ParquetError } from './errors.js';

export const FIELD_ID_KEY = 'PARQUET:field_id';

function idMeta(id: number): Map<string, string> {
  return new Map([[FIELD_ID_KEY, String(id)]]);
}

/** The Arrow type that stores values of an Iceberg type. */
export function icebergTypeToArrow(type: Type): arrow.DataType {
  if (typeof type !== 'string') {
    switch (type.type) {
      case 'struct':
        return new arrow.Struct(type.fields.map(icebergFieldToArrow));
      case 'list':
        return new arrow.List(new arrow.Field('element', icebergTypeToArrow(type.element), !type['element-required'], idMeta(type['element-id'])));
      case 'map': {
        const entries = new arrow.Struct([
          new arrow.Field('key', icebergTypeToArrow(type.key), false, idMeta(type['key-id'])),
          new arrow.Field('value', icebergTypeToArrow(type.value), !type['value-required'], idMeta(type['value-id'])),
        ]);
        return new arrow.Map_(new arrow.Field('key_value', entries, false));
      }
    }
  }
  const p = parsePrimitiveType(type);
  switch (p.kind) {
    case 'boolean':
      return new arrow.Bool();
    case 'int':
      return new arrow.Int32();
    case 'long':
      return new arrow.Int64();
    case 'float':
      return new arrow.Float32();
    case 'double':
      return new arrow.Float64();
    case 'decimal':
      return new arrow.Decimal(p.scale, p.precision, 128);
    case 'date':
      return new arrow.DateDay();
    case 'time':
      return new arrow.TimeMicrosecond();
    case 'timestamp':
      return new arrow.TimestampMicrosecond();
    case 'timestamptz':
      return new arrow.TimestampMicrosecond('UTC');
    case 'timestamp_ns':
      return new arrow.TimestampNanosecond();
    case 'timestamptz_ns':
      return new arrow.TimestampNanosecond('UTC');
    case 'string':
      return new arrow.Utf8();
    case 'uuid':
      return new arrow.FixedSizeBinary(16);
    case 'fixed':
      return new arrow.FixedSizeBinary(p.length);
    case 'binary':
    case 'geometry':
    case 'geography':
      return new arrow.Binary();
    default:
      throw new ParquetError(
        'UNSUPPORTED_TYPE',
        `Iceberg type '${type}' has no Parquet mapping here (unknown and variant are not stored in data files yet); leave the column out of the data file`,
      );
  }
}

/** An Iceberg field as an Arrow field with its field id. */
export function icebergFieldToArrow(field: NestedField): arrow.Field {
  return new arrow.Field(field.name, icebergTypeToArrow(field.type), !field.required, idMeta(field.id));
}

/** The Arrow schema for an Iceberg schema; build record batches against it and every column has its id. */
export function icebergToArrowSchema(schema: StructType): arrow.Schema {
  return new arrow.Schema(schema.fields.map(icebergFieldToArrow));
}

/** The Iceberg field id stored on an Arrow field, or undefined. */
export function arrowFieldId(field: arrow.Field): number | undefined {
  const v = field.metadata.get(FIELD_ID_KEY);
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : undefined;
}

function requireId(field: arrow.Field, where: string): number {
  const id = arrowFieldId(field);
  if (id === undefined) {
    throw new ParquetError('MISSING_FIELD_ID', `Arrow field '${where}' has no ${FIELD_ID_KEY} metadata; build the batch with icebergToArrowSchema or map names to ids first`);
  }
  return id;
}

/** The Iceberg type for an Arrow type; nested fields must carry field ids. */
export function arrowTypeToIceberg(type: arrow.DataType, where: string): Type {
  if (arrow.DataType.isStruct(type)) {
    const t: StructType = { type: 'struct', fields: type.children.map((c) => arrowFieldToIceberg(c, `${where}.${c.name}`)) };
    return t;
  }
  if (arrow.DataType.isList(type)) {
    const child = type.children[0];
    if (!child) throw new ParquetError('INVALID_PARQUET', `Arrow list '${where}' has no element field`);
    const t: ListType = {
      type: 'list',
      'element-id': requireId(child, `${where}.element`),
      element: arrowTypeToIceberg(child.type, `${where}.element`),
      'element-required': !child.nullable,
    };
    return t;
  }
  if (arrow.DataType.isMap(type)) {
    const entries = type.children[0];
    const key = entries?.type.children[0];
    const value = entries?.type.children[1];
    if (!key || !value) throw new ParquetError('INVALID_PARQUET', `Arrow map '${where}' lacks key or value fields`);
    const t: MapType = {
      type: 'map',
      'key-id': requireId(key, `${where}.key`),
      key: arrowTypeToIceberg(key.type, `${where}.key`),
      'value-id': requireId(value, `${where}.value`),
      value: arrowTypeToIceberg(value.type, `${where}.value`),
      'value-required': !value.nullable,
    };
    return t;
  }
  if (arrow.DataType.isBool(type)) return 'boolean';
  if (arrow.DataType.isInt(type)) {
    if (type.bitWidth === 64) return 'long';
    if (type.bitWidth === 32 && !type.isSigned) return 'long';
    return 'int';
  }
  if (arrow.DataType.isFloat(type)) return type.precision === arrow.Precision.DOUBLE ? 'double' : 'float';
  if (arrow.DataType.isDecimal(type)) return `decimal(${type.precision},${type.scale})`;
  if (arrow.DataType.isDate(type)) {
    if (type.unit === arrow.DateUnit.DAY) return 'date';
  }
  if (arrow.DataType.isTime(type)) {
    if (type.unit === arrow.TimeUnit.MICROSECOND) return 'time';
  }
  if (arrow.DataType.isTimestamp(type)) {
    const tz = type.timezone !== null && type.timezone !== undefined && type.timezone !== '';
    if (type.unit === arrow.TimeUnit.MICROSECOND) return tz ? 'timestamptz' : 'timestamp';
    if (type.unit === arrow.TimeUnit.NANOSECOND) return tz ? 'timestamptz_ns' : 'timestamp_ns';
  }
  if (arrow.DataType.isUtf8(type) || arrow.DataType.isLargeUtf8(type)) return 'string';
  if (arrow.DataType.isBinary(type) || arrow.DataType.isLargeBinary(type)) return 'binary';
  if (arrow.DataType.isFixedSizeBinary(type)) return `fixed[${type.byteWidth}]`;
  throw new ParquetError('UNSUPPORTED_TYPE', `Arrow type ${String(type)} of '${where}' has no Iceberg equivalent; cast it (e.g. to Int64, Timestamp(us), Utf8) first`);
}

export function arrowFieldToIceberg(field: arrow.Field, where = field.name): NestedField {
  return { id: requireId(field, where), name: field.name, required: !field.nullable, type: arrowTypeToIceberg(field.type, where) };
}

/**
 * An Iceberg schema from an Arrow schema whose fields carry ids (as read back from a Parquet file).
 * FixedSizeBinary(16) comes back as `fixed[16]`; pass the table schema when `uuid` must be told apart.
 */
export function arrowToIcebergSchema(schema: arrow.Schema, schemaId = 0): Schema {
  return { type: 'struct', 'schema-id': schemaId, fields: schema.fields.map((f) => arrowFieldToIceberg(f)) };
}

/**
 * Checks that `actual` (the Arrow type of some data) stores `expected` (an Iceberg type) exactly, ignoring
 * field names and metadata. Returns a description of the first mismatch, or undefined when they agree.
 */
export function arrowTypeMismatch(expected: Type, actual: arrow.DataType, where: string): string | undefined {
  const want = icebergTypeToArrow(expected);
  return structuralMismatch(want, actual, where);
}

function structuralMismatch(want: arrow.DataType, got: arrow.DataType, where: string): string | undefined {
  if (want.typeId !== got.typeId) return `'${where}' is ${String(got)} but the schema needs ${String(want)}`;
  if (arrow.DataType.isStruct(want) || arrow.DataType.isList(want) || arrow.DataType.isMap(want)) {
    if (want.children.length !== got.children.length) return `'${where}' has ${got.children.length} children, the schema ${want.children.length}`;
    for (let i = 0; i < want.children.length; i++) {
      const w = want.children[i] as arrow.Field;
      const g = got.children[i] as arrow.Field;
      const m = structuralMismatch(w.type, g.type, `${where}.${w.name}`);
      if (m) return m;
    }
    return undefined;
  }
  // Compare parameters (bit widths, units, time zones, precision) through the printed type.
  const ws = String(want);
  const gs = String(got);
  if (ws !== gs) {
    // Any non-empty time zone is "with time zone"; Iceberg stores UTC.
    if (arrow.DataType.isTimestamp(want) && arrow.DataType.isTimestamp(got) && want.unit === got.unit && !!want.timezone === !!got.timezone) return undefined;
    return `'${where}' is ${gs} but the schema needs ${ws}`;
  }
  return undefined;
}
