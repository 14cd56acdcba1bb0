/**
 * Default values of schema fields, and the equality used to decide whether a value is its default
 * (tagged fields are written only when not default; absent fields may only carry their default).
 */
import type { FieldSpec, FieldType, PrimitiveType, StructType } from './types.js';

const EMPTY = Buffer.alloc(0);

/** The zero value of a type: 0, 0n, false, '', an empty Buffer, a zero UUID, [] or a struct of defaults. */
export function zeroValue(type: FieldType): unknown {
  if (typeof type === 'string') return primitiveZero(type);
  if (type.kind === 'array') return [];
  return structDefault(type);
}

function primitiveZero(type: PrimitiveType): unknown {
  switch (type) {
    case 'bool':
      return false;
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'uint32':
    case 'float64':
      return 0;
    case 'int64':
      return 0n;
    case 'string':
      return '';
    case 'bytes':
    case 'records':
      return EMPTY;
    case 'uuid':
      return Buffer.alloc(16);
  }
}

/** A fresh struct whose every field holds its default. */
export function structDefault(type: StructType): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of type.fields) out[f.name] = defaultValue(f);
  return out;
}

/**
 * A fresh copy of a field's default value: its declared `default` (coerced to the field's type, so a
 * declaration may write `-1` for an int64) or the type's zero value.
 */
export function defaultValue(field: FieldSpec): unknown {
  const d = field.default;
  if (d === undefined) return zeroValue(field.type);
  if (d === null) return null;
  const type = field.type;
  if (typeof type === 'string') {
    switch (type) {
      case 'int64':
        return typeof d === 'bigint' ? d : BigInt(d as number | string);
      case 'bool':
        return d === true || d === 'true';
      case 'string':
        return String(d);
      case 'bytes':
      case 'records':
      case 'uuid':
        return d instanceof Uint8Array ? Buffer.from(d) : zeroValue(type);
      default:
        return typeof d === 'number' ? d : Number(d);
    }
  }
  if (type.kind === 'array') return Array.isArray(d) ? [...(d as unknown[])] : [];
  return typeof d === 'object' ? { ...structDefault(type), ...(d as Record<string, unknown>) } : structDefault(type);
}

/** Structural equality over decoded values: primitives, bigints, Buffers, arrays and plain objects. */
export function valueEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return a instanceof Uint8Array && b instanceof Uint8Array && Buffer.compare(a, b) === 0;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valueEquals(a[i], b[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!valueEquals(ao[k], bo[k])) return false;
  return true;
}

/** True if `value` is the field's default; `undefined` (the caller left the field out) counts as default. */
export function isDefaultValue(field: FieldSpec, value: unknown): boolean {
  if (value === undefined) return true;
  const type = field.type;
  if (typeof type === 'object' && type.kind === 'struct' && field.default === undefined && value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return type.fields.every((f) => isDefaultValue(f, obj[f.name]));
  }
  if (type === 'int64' && typeof value === 'number' && Number.isInteger(value)) return valueEquals(BigInt(value), defaultValue(field));
  return valueEquals(value, defaultValue(field));
}
