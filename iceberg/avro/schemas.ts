/**
 * The spec's Avro schemas for manifests and manifest lists, with every `field-id`, `element-id` and
 * `key-id`/`value-id` where the spec puts them (Iceberg spec, "Manifests", "Manifest Lists", Appendix A
 * "Avro"), plus the general Iceberg type -> Avro schema mapping used for the partition struct.
 * Maps with int keys are arrays of key/value records with `logicalType: map`, named `k<key-id>_v<value-id>`.
 */
import type { StructType, Type } from '../schema.js';
import { parsePrimitiveType } from '../types.js';
import { AvroError } from './errors.js';

export type AvroSchema = string | AvroSchema[] | { readonly [k: string]: unknown };

export interface AvroField {
  readonly name: string;
  readonly type: AvroSchema;
  readonly 'field-id': number;
  readonly default?: null;
  readonly doc?: string;
}

const VALID_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An Avro-compatible field name, as Iceberg's reference implementation makes them (`a-b` -> `a_x2Db`). */
export function avroCompatibleName(name: string): string {
  if (VALID_NAME.test(name)) return name;
  let out = '';
  [...name].forEach((c, i) => {
    const ok = i === 0 ? /[A-Za-z_]/.test(c) : /[A-Za-z0-9_]/.test(c);
    if (ok) out += c;
    else if (i === 0 && /[0-9]/.test(c)) out += `_${c}`;
    else out += `_x${(c.codePointAt(0) as number).toString(16).toUpperCase()}`;
  });
  return out;
}

/** Minimum bytes of a two's complement integer holding any `precision`-digit decimal. */
export function decimalRequiredBytes(precision: number): number {
  let bytes = 1;
  while (2n ** BigInt(8 * bytes - 1) <= 10n ** BigInt(precision)) bytes++;
  return bytes;
}

const optional = (t: AvroSchema): AvroSchema => ['null', t];

function mapRecord(keyId: number, key: AvroSchema, valueId: number, value: AvroSchema): AvroSchema {
  return {
    type: 'array',
    logicalType: 'map',
    items: {
      type: 'record',
      name: `k${keyId}_v${valueId}`,
      fields: [
        { name: 'key', type: key, 'field-id': keyId },
        { name: 'value', type: value, 'field-id': valueId },
      ],
    },
  };
}

/** The Avro schema of an Iceberg type; `id` names records and fixed types uniquely. */
export function icebergTypeToAvro(type: Type, id: number): AvroSchema {
  if (typeof type !== 'string') {
    if (type.type === 'struct') return icebergStructToAvro(type, `r${id}`);
    if (type.type === 'list') {
      const el = icebergTypeToAvro(type.element, type['element-id']);
      return { type: 'array', items: type['element-required'] ? el : optional(el), 'element-id': type['element-id'] };
    }
    const key = icebergTypeToAvro(type.key, type['key-id']);
    const v = icebergTypeToAvro(type.value, type['value-id']);
    return mapRecord(type['key-id'], key, type['value-id'], type['value-required'] ? v : optional(v));
  }
  const p = parsePrimitiveType(type);
  switch (p.kind) {
    case 'boolean':
    case 'int':
    case 'long':
    case 'float':
    case 'double':
    case 'string':
      return p.kind;
    case 'binary':
      return 'bytes';
    case 'date':
      return { type: 'int', logicalType: 'date' };
    case 'time':
      return { type: 'long', logicalType: 'time-micros' };
    case 'timestamp':
    case 'timestamptz':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': p.kind === 'timestamptz' };
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': p.kind === 'timestamptz_ns' };
    case 'uuid':
      return { type: 'fixed', name: `uuid_fixed_${id}`, size: 16, logicalType: 'uuid' };
    case 'fixed':
      return { type: 'fixed', name: `fixed_${id}`, size: p.length };
    case 'decimal':
      return { type: 'fixed', name: `decimal_${id}`, size: decimalRequiredBytes(p.precision), logicalType: 'decimal', precision: p.precision, scale: p.scale };
    default:
      throw new AvroError('UNSUPPORTED_TYPE', `Iceberg type '${type}' cannot be stored in an Avro metadata file; partition on another column`);
  }
}

/** An Iceberg struct as an Avro record; optional fields become `["null", T]` with default null. */
export function icebergStructToAvro(struct: StructType, name: string): AvroSchema {
  return {
    type: 'record',
    name,
    fields: struct.fields.map((f): AvroField => {
      const t = icebergTypeToAvro(f.type, f.id);
      return f.required
        ? { name: avroCompatibleName(f.name), type: t, 'field-id': f.id }
        : { name: avroCompatibleName(f.name), type: optional(t), default: null, 'field-id': f.id };
    }),
  };
}

const opt = (name: string, type: AvroSchema, id: number): AvroField => ({ name, type: optional(type), default: null, 'field-id': id });
const req = (name: string, type: AvroSchema, id: number): AvroField => ({ name, type, 'field-id': id });
const intMap = (keyId: number, valueId: number, value: 'long' | 'bytes'): AvroSchema => mapRecord(keyId, 'int', valueId, value);

export type FormatVersion = 2 | 3;

export function checkFormatVersion(v: number): FormatVersion {
  if (v !== 2 && v !== 3) {
    throw new AvroError('UNSUPPORTED_FORMAT_VERSION', `Format version ${v} is not written here; Floe writes v2 and v3 manifests`);
  }
  return v;
}

/** The `data_file` struct (field 2) for a partition struct type. */
export function dataFileSchema(partition: StructType, formatVersion: FormatVersion): AvroSchema {
  const fields: AvroField[] = [
    req('content', 'int', 134),
    req('file_path', 'string', 100),
    req('file_format', 'string', 101),
    req('partition', icebergStructToAvro(partition, 'r102'), 102),
    req('record_count', 'long', 103),
    req('file_size_in_bytes', 'long', 104),
    opt('column_sizes', intMap(117, 118, 'long'), 108),
    opt('value_counts', intMap(119, 120, 'long'), 109),
    opt('null_value_counts', intMap(121, 122, 'long'), 110),
    opt('nan_value_counts', intMap(138, 139, 'long'), 137),
    opt('lower_bounds', intMap(126, 127, 'bytes'), 125),
    opt('upper_bounds', intMap(129, 130, 'bytes'), 128),
    opt('key_metadata', 'bytes', 131),
    opt('split_offsets', { type: 'array', items: 'long', 'element-id': 133 }, 132),
    opt('equality_ids', { type: 'array', items: 'int', 'element-id': 136 }, 135),
    opt('sort_order_id', 'int', 140),
  ];
  if (formatVersion >= 3) fields.push(opt('first_row_id', 'long', 142));
  fields.push(opt('referenced_data_file', 'string', 143));
  if (formatVersion >= 3) fields.push(opt('content_offset', 'long', 144), opt('content_size_in_bytes', 'long', 145));
  return { type: 'record', name: 'r2', fields };
}

/** The `manifest_entry` schema of a manifest file. */
export function manifestEntrySchema(partition: StructType, formatVersion: FormatVersion): AvroSchema {
  return {
    type: 'record',
    name: 'manifest_entry',
    fields: [
      req('status', 'int', 0),
      opt('snapshot_id', 'long', 1),
      opt('sequence_number', 'long', 3),
      opt('file_sequence_number', 'long', 4),
      req('data_file', dataFileSchema(partition, formatVersion), 2),
    ],
  };
}

/** The `manifest_file` schema of a manifest list. */
export function manifestFileSchema(formatVersion: FormatVersion): AvroSchema {
  const fields: AvroField[] = [
    req('manifest_path', 'string', 500),
    req('manifest_length', 'long', 501),
    req('partition_spec_id', 'int', 502),
    req('content', 'int', 517),
    req('sequence_number', 'long', 515),
    req('min_sequence_number', 'long', 516),
    req('added_snapshot_id', 'long', 503),
    req('added_files_count', 'int', 504),
    req('existing_files_count', 'int', 505),
    req('deleted_files_count', 'int', 506),
    req('added_rows_count', 'long', 512),
    req('existing_rows_count', 'long', 513),
    req('deleted_rows_count', 'long', 514),
    opt(
      'partitions',
      {
        type: 'array',
        'element-id': 508,
        items: {
          type: 'record',
          name: 'r508',
          fields: [req('contains_null', 'boolean', 509), opt('contains_nan', 'boolean', 518), opt('lower_bound', 'bytes', 510), opt('upper_bound', 'bytes', 511)],
        },
      },
      507,
    ),
    opt('key_metadata', 'bytes', 519),
  ];
  if (formatVersion >= 3) fields.push(opt('first_row_id', 'long', 520));
  return { type: 'record', name: 'manifest_file', fields };
}
