/**
 * Types the values of one topic in a schema mode, record by record, for the conversion:
 *
 * - `value_schema_id_prefix`: the Confluent wire-format prefix names the schema (and, for Protobuf, the
 *   message); `value_schema_latest`: the subject's latest version when the data file is started, for
 *   producers that add no prefix.
 * - Every typed record is checked: its value must come back byte for byte from its typed columns (prefix
 *   re-encoded, payload re-encoded by the codec). When it does not, the raw bytes are kept beside the typed
 *   columns (`exact: false`).
 * - A record that cannot be typed is a dead letter with a reason: no prefix, an unknown schema id, a schema
 *   Iceberg cannot hold, a change Iceberg cannot express, or a payload that is not a value of its schema.
 *   The conversion keeps its bytes in the data file (Kafka fetches read them) and hands it to the
 *   dead-letter table.
 *
 * Keys are typed the same way by a second typer (`iceberg.key.mode`, `TypedPartSettings.part` 'key'), into
 * the layout's `key` column.
 *
 * Schemas come from the registry (`RegistryReader`, the broker's in-process view); codecs are compiled once
 * per schema id and message, and what a file used is written into its footer (`FileTyping.writers`), so a
 * Kafka fetch rebuilds values from the file alone, whatever the registry holds later.
 */
import type { Row, ValueCodec, WriterSchema, WriterSchemaType } from './api.js';
import { TypedValueError } from './api.js';
import { compileValueCodec } from './codec.js';
import { encodeWirePrefix, parseWirePrefix } from './wire-format.js';
import type { TypedLayout } from './table-layout.js';

export type TypedTableMode = 'value_schema_id_prefix' | 'value_schema_latest';
/** `iceberg.key.mode`'s typed modes: the same as the value's, for keys. */
export type TypedKeyMode = 'key_schema_id_prefix' | 'key_schema_latest';

export interface TypedValueSettings {
  readonly mode: TypedTableMode;
  /** The subject `value_schema_latest` reads (default `<topic>-value`). */
  readonly subject: string;
}

/** `iceberg.key.mode` other than binary, with `iceberg.key.subject` (default `<topic>-key`). */
export interface TypedKeySettings {
  readonly mode: TypedKeyMode;
  readonly subject: string;
}

/** What one typer types: a record's value or its key, with the wire-format prefix or with a subject's latest schema. */
export interface TypedPartSettings {
  readonly part: 'value' | 'key';
  readonly prefixed: boolean;
  readonly subject: string;
}

export function valuePart(s: TypedValueSettings): TypedPartSettings {
  return { part: 'value', prefixed: s.mode === 'value_schema_id_prefix', subject: s.subject };
}

export function keyPart(s: TypedKeySettings): TypedPartSettings {
  return { part: 'key', prefixed: s.mode === 'key_schema_id_prefix', subject: s.subject };
}

/** A schema as the registry holds it. */
export interface RegistrySchema {
  readonly schemaType: WriterSchemaType;
  readonly schema: string;
  readonly references: readonly { readonly name: string; readonly subject: string; readonly version: number }[];
}

/** What tiering reads from the schema registry (the broker's `SchemaRegistryView` has this shape). */
export interface RegistryReader {
  schemaById(id: number): RegistrySchema | undefined;
  latestVersion(subject: string): (RegistrySchema & { readonly id: number; readonly version: number }) | undefined;
  subjectVersion(subject: string, version: number, includeDeleted?: boolean): (RegistrySchema & { readonly id: number; readonly version: number }) | undefined;
  /** The (subject, version) pairs that use a schema id, for log lines. */
  versionsOfId?(id: number): readonly { readonly subject: string; readonly version: number }[];
}

/** A writer schema the table cannot take (told once per schema and layout version, for a log line). */
export interface SchemaRefusal {
  readonly schemaId: number;
  readonly reason: 'UNSUPPORTED_SCHEMA' | 'INCOMPATIBLE_SCHEMA';
  readonly message: string;
  /** Subjects and versions registered with that id. */
  readonly versions: readonly { readonly subject: string; readonly version: number }[];
}

export type DeadLetterReason = 'MISSING_PREFIX' | 'UNKNOWN_SCHEMA' | 'UNSUPPORTED_SCHEMA' | 'INCOMPATIBLE_SCHEMA' | 'CORRUPT_PAYLOAD';

export type TypedOutcome =
  | { readonly kind: 'typed'; readonly schemaId: number; readonly row: Row; readonly exact: boolean }
  | { readonly kind: 'dead'; readonly reason: DeadLetterReason; readonly schemaId: number | null; readonly message: string };

/** A writer a data file used, as its footer records it (`floe.value.writers`). */
export interface FileWriter {
  readonly id: number;
  readonly schemaType: WriterSchemaType;
  readonly schema: string;
  readonly references: readonly { readonly name: string; readonly schema: string }[];
  readonly messageIndexes: readonly number[];
  /** Whether values carry the wire-format prefix. */
  readonly prefixed: boolean;
}

export const WRITERS_KEY = 'floe.value.writers';
/** The footer key naming the writers of a file's typed keys. */
export const KEY_WRITERS_KEY = 'floe.key.writers';

interface CompiledWriter {
  readonly codec: ValueCodec;
  readonly writer: FileWriter;
  /** Whether the layout holds it, as of layout version `version`. */
  verdict?: { version: number; reason: string | null };
  /** The canonical wire-format prefix of its values. */
  prefix?: Uint8Array;
}
type Compiled = CompiledWriter | { readonly error: TypedValueError };

/** Raised when the registry is not attached yet: the conversion fails and is retried, nothing is dead-lettered. */
export class RegistryUnavailableError extends Error {
  readonly code = 'REGISTRY_UNAVAILABLE';
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The references of a schema, transitively, dependencies first; throws INVALID_SCHEMA for a missing one. */
function resolveReferences(registry: RegistryReader, schema: RegistrySchema, seen = new Set<string>()): { name: string; schema: string }[] {
  const out: { name: string; schema: string }[] = [];
  for (const r of schema.references) {
    const key = `${r.subject}/${r.version}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const v = registry.subjectVersion(r.subject, r.version, true);
    if (!v) throw new TypedValueError('INVALID_SCHEMA', `reference ${r.name} names ${r.subject} version ${r.version}, which the registry does not hold`);
    out.push(...resolveReferences(registry, v, seen), { name: r.name, schema: v.schema });
  }
  return out;
}

export class ValueTyper {
  private readonly compiled = new Map<string, Compiled>();

  constructor(
    readonly settings: TypedPartSettings,
    /** undefined: not attached yet (conversion waits); null: the broker runs without a registry. */
    private readonly registry: () => RegistryReader | null | undefined,
    readonly layout: TypedLayout,
    private readonly onRefused: (refusal: SchemaRefusal) => void = () => undefined,
  ) {}

  private refused(registry: RegistryReader, schemaId: number, reason: SchemaRefusal['reason'], message: string): void {
    try {
      this.onRefused({ schemaId, reason, message, versions: registry.versionsOfId?.(schemaId) ?? [] });
    } catch {
      // A report must never stop a conversion.
    }
  }

  /** The typing of one data file's records (latest mode resolves the subject's version now). */
  beginFile(): FileTyping {
    const registry = this.registry();
    if (registry === undefined) throw new RegistryUnavailableError('the schema registry is not started yet; the segment is converted once it is');
    return new FileTyping(this, registry);
  }

  /** The codec of schema `id` and message `indexes`, compiled once (failures too). */
  private lastRegistry: RegistryReader | undefined;

  codec(registry: RegistryReader, id: number, indexes: readonly number[], prefixed: boolean): Compiled | undefined {
    this.lastRegistry = registry;
    const key = `${id}/${indexes.join('.')}/${prefixed ? 'p' : 'r'}`;
    let c = this.compiled.get(key);
    if (c === undefined) {
      const s = registry.schemaById(id);
      if (s === undefined) return undefined;
      try {
        const writer: WriterSchema = { id, schemaType: s.schemaType, schema: s.schema, references: resolveReferences(registry, s) };
        const codec = compileValueCodec(writer, s.schemaType === 'PROTOBUF' ? { messageIndexes: indexes } : {});
        c = { codec, writer: { ...writer, messageIndexes: indexes, prefixed } };
      } catch (err) {
        if (!(err instanceof TypedValueError)) throw err;
        c = { error: err };
        this.refused(registry, id, 'UNSUPPORTED_SCHEMA', err.message);
      }
      this.compiled.set(key, c);
    }
    return c;
  }

  /** Whether the layout holds (or now evolved to hold) the codec's fields: null, or why not. */
  fits(c: CompiledWriter): string | null {
    if (c.verdict && c.verdict.version === this.layout.version) return c.verdict.reason;
    const a = this.settings.part === 'key' ? this.layout.acceptKey(c.codec.fields) : this.layout.accept(c.codec.fields);
    c.verdict = { version: this.layout.version, reason: a.ok ? null : a.reason };
    if (!a.ok) this.refused(this.lastRegistry!, c.writer.id, 'INCOMPATIBLE_SCHEMA', a.reason);
    return c.verdict.reason;
  }
}

export class FileTyping {
  private readonly used = new Map<string, FileWriter>();
  private readonly latest: { id: number; version: number } | { error: string } | null;

  constructor(
    private readonly typer: ValueTyper,
    private readonly registry: RegistryReader | null,
  ) {
    if (typer.settings.prefixed) this.latest = null;
    else if (registry === null) this.latest = { error: 'the broker runs without a schema registry (schema.registry.port=-1)' };
    else {
      const v = registry.latestVersion(typer.settings.subject);
      this.latest = v ? { id: v.id, version: v.version } : { error: `subject ${typer.settings.subject} has no schema in the registry` };
      if (v) this.writerFor(v.id, [], false);
    }
  }

  /**
   * Before the file is written: registers the writer a value names (prefix mode), evolving the layout for
   * it, so the file's schema and footer are complete before its first row. Values that will be dead letters
   * are ignored here.
   */
  scan(value: Uint8Array): void {
    if (!this.typer.settings.prefixed || this.registry === null) return;
    if (value.length < 5 || value[0] !== 0) return;
    const id = Buffer.from(value.buffer, value.byteOffset, value.byteLength).readInt32BE(1);
    // Most files hold one or two writers: skip the prefix parse for ids seen (Protobuf indexes aside).
    if (this.scanned.has(id)) return;
    const schema = this.registry.schemaById(id);
    if (schema === undefined) return;
    let indexes: readonly number[] = [];
    try {
      indexes = parseWirePrefix(value, schema.schemaType).messageIndexes;
    } catch (err) {
      if (!(err instanceof TypedValueError)) throw err;
      return;
    }
    if (schema.schemaType !== 'PROTOBUF') this.scanned.add(id);
    this.writerFor(id, indexes, true);
  }

  private readonly scanned = new Set<number>();

  /** Compiles and fits a writer, recording it for the footer when it fits. */
  private writerFor(id: number, indexes: readonly number[], prefixed: boolean): void {
    const c = this.typer.codec(this.registry!, id, indexes, prefixed);
    if (c === undefined || 'error' in c) return;
    if (this.typer.fits(c) !== null) return;
    const key = `${id}/${indexes.join('.')}`;
    if (!this.used.has(key)) this.used.set(key, c.writer);
  }

  /** Types one non-null value (a view of the record's bytes, valid during the call). */
  type(value: Uint8Array): TypedOutcome {
    const s = this.typer.settings;
    let id: number;
    let indexes: readonly number[] = [];
    let payloadStart = 0;
    if (!s.prefixed) {
      const l = this.latest!;
      if ('error' in l) return { kind: 'dead', reason: 'UNKNOWN_SCHEMA', schemaId: null, message: l.error };
      id = l.id;
    } else {
      if (this.registry === null) return { kind: 'dead', reason: 'UNKNOWN_SCHEMA', schemaId: null, message: 'the broker runs without a schema registry (schema.registry.port=-1)' };
      if (value.length < 5 || value[0] !== 0) return { kind: 'dead', reason: 'MISSING_PREFIX', schemaId: null, message: value.length < 5 ? `a ${value.length}-byte ${s.part} cannot hold the 5-byte wire-format prefix` : `the ${s.part} starts with byte ${value[0]}, not the wire format's magic byte 0` };
      id = Buffer.from(value.buffer, value.byteOffset, value.byteLength).readInt32BE(1);
      const schema = this.registry.schemaById(id);
      if (schema === undefined) return { kind: 'dead', reason: 'UNKNOWN_SCHEMA', schemaId: id, message: `schema id ${id} is not in the registry` };
      try {
        const p = parseWirePrefix(value, schema.schemaType);
        indexes = p.messageIndexes;
        payloadStart = p.payloadStart;
      } catch (err) {
        if (!(err instanceof TypedValueError)) throw err;
        return { kind: 'dead', reason: 'MISSING_PREFIX', schemaId: id, message: err.message };
      }
    }
    const prefixed = s.prefixed;
    const c = this.registry === null ? undefined : this.typer.codec(this.registry, id, indexes, prefixed);
    if (c === undefined) return { kind: 'dead', reason: 'UNKNOWN_SCHEMA', schemaId: id, message: `schema id ${id} is not in the registry` };
    if ('error' in c) return { kind: 'dead', reason: c.error.code === 'UNSUPPORTED_SCHEMA' ? 'UNSUPPORTED_SCHEMA' : 'UNKNOWN_SCHEMA', schemaId: id, message: c.error.message };
    const misfit = this.typer.fits(c);
    if (misfit !== null) return { kind: 'dead', reason: 'INCOMPATIBLE_SCHEMA', schemaId: id, message: `schema id ${id}: ${misfit}` };
    const payload = value.subarray(payloadStart);
    let row: Row;
    try {
      row = c.codec.decode(payload);
    } catch (err) {
      if (!(err instanceof TypedValueError)) throw err;
      return { kind: 'dead', reason: 'CORRUPT_PAYLOAD', schemaId: id, message: `schema id ${id}: ${err.message}` };
    }
    // One message per schema id in a file: the rebuild finds the writer by the row's schema id.
    let exact = this.rebuildable(id, indexes);
    if (exact) try {
      exact = equalBytes(c.codec.encode(row), payload) && (!prefixed || equalBytes((c.prefix ??= encodeWirePrefix(id, c.writer.schemaType, indexes)), value.subarray(0, payloadStart)));
    } catch (err) {
      if (!(err instanceof TypedValueError)) throw err;
      exact = false;
    }
    return { kind: 'typed', schemaId: id, row, exact };
  }

  private readonly verdicts = new Map<string, boolean>();

  /** Whether rows of this writer can be rebuilt from the file: it is in the footer, alone for its schema id. */
  private rebuildable(id: number, indexes: readonly number[]): boolean {
    const key = `${id}/${indexes.join('.')}`;
    let v = this.verdicts.get(key);
    if (v === undefined) {
      v = this.used.has(key) && [...this.used.keys()].every((k) => k === key || !k.startsWith(`${id}/`));
      this.verdicts.set(key, v);
    }
    return v;
  }

  /** The writers this file's rows may use (registered by `scan` and the latest version), for its footer. */
  writers(): FileWriter[] {
    return [...this.used.values()];
  }
}
