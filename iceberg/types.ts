/**
 * Iceberg primitive types (spec, "Primitive Types"): parsing and printing of the spec's string spelling
 * (`'decimal(10,2)'`, `'fixed[16]'`, `'timestamptz_ns'`, ...), the format version that introduced each type,
 * and the primitive promotion rules of "Schema Evolution". Also home of `IcebergError`, the one error type of
 * the Iceberg model, so that every module below `iceberg/` throws errors with a code.
 */

export type IcebergErrorCode =
  | 'INVALID_JSON'
  | 'INVALID_TYPE'
  | 'INVALID_SCHEMA'
  | 'INVALID_TRANSFORM'
  | 'INVALID_PARTITION_SPEC'
  | 'INVALID_SORT_ORDER'
  | 'INVALID_SNAPSHOT'
  | 'INVALID_METADATA'
  | 'UNSUPPORTED_FORMAT_VERSION'
  | 'INVALID_UPDATE'
  | 'INVALID_REQUIREMENT'
  | 'COMMIT_CONFLICT'
  | 'MAINTENANCE_INCOMPLETE';

/** An error of the Iceberg model. `code` is stable; the message names the offending field and the fix. */
export class IcebergError extends Error {
  constructor(
    readonly code: IcebergErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'IcebergError';
  }
}

/** Primitive types without parameters, in their spec spelling. */
export const SIMPLE_PRIMITIVES = [
  'unknown',
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'timestamp_ns',
  'timestamptz_ns',
  'string',
  'uuid',
  'binary',
  'variant',
] as const;

export type SimplePrimitiveName = (typeof SIMPLE_PRIMITIVES)[number];

/** A primitive type, parsed. `variant` is semi-structured but serialized like a primitive, so it lives here. */
export type ParsedPrimitive =
  | { readonly kind: SimplePrimitiveName }
  | { readonly kind: 'decimal'; readonly precision: number; readonly scale: number }
  | { readonly kind: 'fixed'; readonly length: number }
  | { readonly kind: 'geometry'; readonly crs: string }
  | { readonly kind: 'geography'; readonly crs: string; readonly algorithm: string };

export type PrimitiveKind = ParsedPrimitive['kind'];

const SIMPLE = new Set<string>(SIMPLE_PRIMITIVES);
const DECIMAL = /^decimal\s*\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)$/;
const FIXED = /^fixed\s*\[\s*(\d+)\s*\]$/;
const GEOMETRY = /^geometry\s*(?:\(\s*([^,()]*?)\s*\))?$/;
const GEOGRAPHY = /^geography\s*(?:\(\s*([^,()]*?)\s*(?:,\s*([^,()]*?)\s*)?\))?$/;
const EDGE_ALGORITHMS = new Set(['spherical', 'vincenty', 'thomas', 'andoyer', 'karney']);

export const MAX_DECIMAL_PRECISION = 38;
export const DEFAULT_CRS = 'OGC:CRS84';

/** Parses a primitive type string; accepts optional whitespace around parameters, as the spec asks of readers. */
export function parsePrimitiveType(text: string): ParsedPrimitive {
  const s = text.trim();
  if (SIMPLE.has(s)) return { kind: s as SimplePrimitiveName };
  let m = DECIMAL.exec(s);
  if (m) {
    const precision = Number(m[1]);
    const scale = Number(m[2]);
    if (precision < 1 || precision > MAX_DECIMAL_PRECISION) {
      throw new IcebergError(
        'INVALID_TYPE',
        `Invalid type '${text}': decimal precision must be between 1 and ${MAX_DECIMAL_PRECISION}`,
      );
    }
    if (scale < 0 || scale > precision) {
      throw new IcebergError('INVALID_TYPE', `Invalid type '${text}': decimal scale must be between 0 and the precision`);
    }
    return { kind: 'decimal', precision, scale };
  }
  m = FIXED.exec(s);
  if (m) {
    const length = Number(m[1]);
    if (!Number.isSafeInteger(length) || length < 1) {
      throw new IcebergError('INVALID_TYPE', `Invalid type '${text}': fixed length must be a positive integer`);
    }
    return { kind: 'fixed', length };
  }
  m = GEOMETRY.exec(s);
  if (m) return { kind: 'geometry', crs: m[1] || DEFAULT_CRS };
  m = GEOGRAPHY.exec(s);
  if (m) {
    const algorithm = m[2] || 'spherical';
    if (!EDGE_ALGORITHMS.has(algorithm)) {
      throw new IcebergError(
        'INVALID_TYPE',
        `Invalid type '${text}': edge algorithm must be one of ${[...EDGE_ALGORITHMS].join(', ')}`,
      );
    }
    return { kind: 'geography', crs: m[1] || DEFAULT_CRS, algorithm };
  }
  throw new IcebergError(
    'INVALID_TYPE',
    `Unknown Iceberg type '${text}': expected one of ${SIMPLE_PRIMITIVES.join(', ')}, decimal(P,S), fixed[L], geometry(C), geography(C, A), or a struct/list/map object`,
  );
}

/** The canonical spelling of a primitive type (spec Appendix C). */
export function formatPrimitiveType(t: ParsedPrimitive): string {
  switch (t.kind) {
    case 'decimal':
      return `decimal(${t.precision},${t.scale})`;
    case 'fixed':
      return `fixed[${t.length}]`;
    case 'geometry':
      return t.crs === DEFAULT_CRS ? 'geometry' : `geometry(${t.crs})`;
    case 'geography':
      if (t.algorithm === 'spherical') return t.crs === DEFAULT_CRS ? 'geography' : `geography(${t.crs})`;
      return `geography(${t.crs}, ${t.algorithm})`;
    default:
      return t.kind;
  }
}

/** Canonical spelling of a primitive type string (`'decimal(9, 2)'` -> `'decimal(9,2)'`). */
export function canonicalPrimitiveType(text: string): string {
  return formatPrimitiveType(parsePrimitiveType(text));
}

const V3_KINDS = new Set<PrimitiveKind>(['unknown', 'timestamp_ns', 'timestamptz_ns', 'variant', 'geometry', 'geography']);

/** The first table format version in which the type may be used. */
export function minFormatVersion(t: ParsedPrimitive): 1 | 3 {
  return V3_KINDS.has(t.kind) ? 3 : 1;
}

/**
 * Whether a column of primitive type `from` may be promoted to `to` in a table of `formatVersion` (spec,
 * "Schema Evolution"): int->long, float->double, decimal(P,S)->decimal(P',S) with P'>P; from v3 also
 * unknown->any and date->timestamp/timestamp_ns (never to the tz variants). Equal types are not promotions.
 */
export function canPromote(from: ParsedPrimitive, to: ParsedPrimitive, formatVersion: number): boolean {
  if (from.kind === 'unknown') return formatVersion >= 3;
  if (from.kind === 'int') return to.kind === 'long';
  if (from.kind === 'float') return to.kind === 'double';
  if (from.kind === 'decimal') return to.kind === 'decimal' && to.scale === from.scale && to.precision > from.precision;
  if (from.kind === 'date') return formatVersion >= 3 && (to.kind === 'timestamp' || to.kind === 'timestamp_ns');
  return false;
}

/** Structural equality of two primitive types (whitespace-insensitive). */
export function samePrimitive(a: ParsedPrimitive, b: ParsedPrimitive): boolean {
  return formatPrimitiveType(a) === formatPrimitiveType(b);
}
