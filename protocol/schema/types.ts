/**
 * The declarative message-schema language. Every Kafka API is declared once, as data, in
 * `protocol/messages/`, using the builders below; the codec engine derives the encoder and decoder of
 * every version from the declaration. Nothing else in the project may hand-write a per-version codec.
 *
 * Version ranges use Kafka's notation: `'3'` (only 3), `'3-7'` (3 to 7), `'3+'` (3 and later),
 * `'none'` (never).
 */

/** A version range string: `'none'`, `'N'`, `'N-M'` or `'N+'`. */
export type VersionRange = string;

export type PrimitiveType =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'uint16'
  | 'int32'
  | 'uint32'
  | 'int64'
  | 'float64'
  | 'string'
  | 'bytes'
  /** Record batches: bytes on the wire, kept as an undecoded Buffer by the codec. */
  | 'records'
  /** 16 bytes; represented as a 16-byte Buffer. */
  | 'uuid';

export interface StructType {
  readonly kind: 'struct';
  readonly fields: readonly FieldSpec[];
}

export interface ArrayType {
  readonly kind: 'array';
  readonly items: PrimitiveType | StructType;
}

export type FieldType = PrimitiveType | StructType | ArrayType;

export interface FieldSpec {
  /** Property name in the decoded object, camelCase (Kafka's `TopicData` becomes `topicData`). */
  readonly name: string;
  readonly type: FieldType;
  /** Versions in which the field is present on the wire (as a regular or a tagged field). */
  readonly versions: VersionRange;
  /** Versions in which the field may be null (strings, bytes, records, arrays, structs). */
  readonly nullableVersions?: VersionRange;
  /** Versions in which the field is a tagged field (flexible versions only), with its tag. */
  readonly taggedVersions?: VersionRange;
  readonly tag?: number;
  /**
   * Value used when the field is absent from a version (on decode) and when the caller omits it
   * (on encode). If not given, the type's zero value is used: 0, 0n, false, '', empty Buffer,
   * an all-zero UUID, [] for arrays, a struct of defaults for structs. `null` is allowed for nullable
   * fields.
   */
  readonly default?: unknown;
  /**
   * Encoding a non-default value in a version where the field is absent is an error unless the field is
   * ignorable (mirrors Kafka's `ignorable`).
   */
  readonly ignorable?: boolean;
}

export interface MessageSpec {
  readonly apiKey: number;
  /** e.g. `'Produce'`. */
  readonly name: string;
  readonly type: 'request' | 'response';
  /** Versions this project declares for the message (may be narrower than Kafka's). */
  readonly validVersions: VersionRange;
  readonly flexibleVersions: VersionRange;
  readonly fields: readonly FieldSpec[];
}

/** A request/response pair for one API, plus the versions the broker advertises. */
export interface ApiSpec {
  readonly apiKey: number;
  readonly name: string;
  readonly request: MessageSpec;
  readonly response: MessageSpec;
}

// ---------------------------------------------------------------------------------------------------
// Builders: keep declarations short and readable.

type FieldOptions = Omit<FieldSpec, 'name' | 'type' | 'versions'>;

export function field(name: string, type: FieldType, versions: VersionRange, options: FieldOptions = {}): FieldSpec {
  return Object.freeze({ name, type, versions, ...options });
}

export function struct(fields: readonly FieldSpec[]): StructType {
  return Object.freeze({ kind: 'struct', fields: Object.freeze([...fields]) });
}

export function array(items: PrimitiveType | StructType | readonly FieldSpec[]): ArrayType {
  const resolved = Array.isArray(items) ? struct(items as readonly FieldSpec[]) : (items as PrimitiveType | StructType);
  return Object.freeze({ kind: 'array', items: resolved });
}

export function message(spec: MessageSpec): MessageSpec {
  return Object.freeze(spec);
}

export function api(request: MessageSpec, response: MessageSpec): ApiSpec {
  if (request.apiKey !== response.apiKey) throw new Error(`api ${request.name}: request and response keys differ`);
  return Object.freeze({ apiKey: request.apiKey, name: request.name, request, response });
}
