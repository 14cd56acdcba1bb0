/**
 * How the native writer stores each Iceberg primitive type in Parquet: physical type, type length, converted
 * type and logical type (Iceberg spec, Appendix A); `physicalOf` is undefined for types it does not write.
 */
import type { CompactWriter } from './thrift-writer.js';
import { PhysicalType } from './footer.js';
import type { ParsedPrimitive } from '../types.js';

export const ConvertedType = { UTF8: 0, MAP: 1, LIST: 3, DATE: 6, TIME_MICROS: 8, TIMESTAMP_MICROS: 10 } as const;

export interface Physical {
  readonly type: PhysicalType;
  readonly typeLength?: number;
  readonly converted?: number;
  /** Writes the logical type union's field (inside SchemaElement field 10). */
  readonly logical?: (w: CompactWriter) => void;
}

function timeUnit(w: CompactWriter, unit: 'MICROS' | 'NANOS'): void {
  w.struct(2).struct(unit === 'MICROS' ? 2 : 3).endStruct().endStruct();
}

export function physicalOf(p: ParsedPrimitive): Physical | undefined {
  switch (p.kind) {
    case 'boolean':
      return { type: PhysicalType.BOOLEAN };
    case 'int':
      return { type: PhysicalType.INT32 };
    case 'long':
      return { type: PhysicalType.INT64 };
    case 'float':
      return { type: PhysicalType.FLOAT };
    case 'double':
      return { type: PhysicalType.DOUBLE };
    case 'date':
      return { type: PhysicalType.INT32, converted: ConvertedType.DATE, logical: (w) => w.struct(6).endStruct() };
    case 'time':
      return { type: PhysicalType.INT64, converted: ConvertedType.TIME_MICROS, logical: (w) => (w.struct(7).bool(1, false), timeUnit(w, 'MICROS'), w.endStruct()) };
    case 'timestamp':
      return { type: PhysicalType.INT64, logical: (w) => (w.struct(8).bool(1, false), timeUnit(w, 'MICROS'), w.endStruct()) };
    case 'timestamptz':
      return { type: PhysicalType.INT64, converted: ConvertedType.TIMESTAMP_MICROS, logical: (w) => (w.struct(8).bool(1, true), timeUnit(w, 'MICROS'), w.endStruct()) };
    case 'timestamp_ns':
      return { type: PhysicalType.INT64, logical: (w) => (w.struct(8).bool(1, false), timeUnit(w, 'NANOS'), w.endStruct()) };
    case 'timestamptz_ns':
      return { type: PhysicalType.INT64, logical: (w) => (w.struct(8).bool(1, true), timeUnit(w, 'NANOS'), w.endStruct()) };
    case 'string':
      return { type: PhysicalType.BYTE_ARRAY, converted: ConvertedType.UTF8, logical: (w) => w.struct(1).endStruct() };
    case 'binary':
      return { type: PhysicalType.BYTE_ARRAY };
    case 'uuid':
      return { type: PhysicalType.FIXED_LEN_BYTE_ARRAY, typeLength: 16, logical: (w) => w.struct(14).endStruct() };
    case 'fixed':
      return { type: PhysicalType.FIXED_LEN_BYTE_ARRAY, typeLength: p.length };
    default:
      return undefined;
  }
}
