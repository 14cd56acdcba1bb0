/**
 * The registry's data model, shared by the store, the formats and the HTTP layer: schema types, references,
 * registered versions, compatibility levels and modes, with Confluent's spellings.
 */

export const SCHEMA_TYPES = Object.freeze(['AVRO', 'JSON', 'PROTOBUF'] as const);
export type SchemaType = (typeof SCHEMA_TYPES)[number];

export const COMPATIBILITY_LEVELS = Object.freeze(['NONE', 'BACKWARD', 'BACKWARD_TRANSITIVE', 'FORWARD', 'FORWARD_TRANSITIVE', 'FULL', 'FULL_TRANSITIVE'] as const);
export type CompatibilityLevel = (typeof COMPATIBILITY_LEVELS)[number];
export const DEFAULT_COMPATIBILITY: CompatibilityLevel = 'BACKWARD';

export const MODES = Object.freeze(['READWRITE', 'READONLY', 'READONLY_OVERRIDE', 'IMPORT'] as const);
export type Mode = (typeof MODES)[number];
export const DEFAULT_MODE: Mode = 'READWRITE';

/** A named dependency of a schema: `name` is how the schema refers to it (an Avro full name, a .proto import path, a JSON `$ref` URL). */
export interface SchemaReference {
  readonly name: string;
  readonly subject: string;
  readonly version: number;
}

/** The content of a schema as ids name it: the same content under several subjects has one id. */
export interface SchemaContent {
  readonly schemaType: SchemaType;
  /** The canonical text (what GET answers and what identity is decided on). */
  readonly schema: string;
  readonly references: readonly SchemaReference[];
  /** Confluent data-contract fields, kept and echoed verbatim when a client sends them. */
  readonly metadata?: unknown;
  readonly ruleSet?: unknown;
}

/** One version of one subject. */
export interface SubjectVersion extends SchemaContent {
  readonly subject: string;
  readonly version: number;
  readonly id: number;
  /** Soft-deleted: hidden unless `?deleted=true`, still resolvable by id. */
  readonly deleted: boolean;
}

/** The registry as tiering (and anything else in-process) reads it: synchronous, kept current by the store. */
export interface SchemaRegistryView {
  /** The schema with this global id (also when every version using it is soft-deleted), or undefined. */
  schemaById(id: number): SchemaContent | undefined;
  /** The newest version of the subject that is not deleted, or undefined. */
  latestVersion(subject: string): SubjectVersion | undefined;
  /** Version `version` of the subject (soft-deleted versions too when `includeDeleted`), or undefined. */
  subjectVersion(subject: string, version: number, includeDeleted?: boolean): SubjectVersion | undefined;
  /** Every (subject, version) that uses this id, soft-deleted ones included. */
  versionsOfId(id: number): readonly SubjectVersion[];
  /** Tells `listener` after each change is durable and applied; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}

export function isSchemaType(v: unknown): v is SchemaType {
  return typeof v === 'string' && (SCHEMA_TYPES as readonly string[]).includes(v);
}

export function isCompatibilityLevel(v: unknown): v is CompatibilityLevel {
  return typeof v === 'string' && (COMPATIBILITY_LEVELS as readonly string[]).includes(v);
}

export function isMode(v: unknown): v is Mode {
  return typeof v === 'string' && (MODES as readonly string[]).includes(v);
}
