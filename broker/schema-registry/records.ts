/**
 * The records of the `_schemas` topic, keyed and shaped as Confluent Schema Registry writes them, so the
 * topic reads like Confluent's (key and value are JSON; a null value is a tombstone):
 * - SCHEMA  key `{"keytype":"SCHEMA","subject":s,"version":v,"magic":1}`, value the registered version
 *   (`subject`, `version`, `id`, `schemaType` unless AVRO, `references`, `schema`, `deleted`); a soft delete
 *   rewrites it with `deleted: true`, a permanent delete writes its tombstone;
 * - CONFIG  key `{"keytype":"CONFIG","subject":s|null,"magic":0}`, value `{"compatibilityLevel":L}`;
 * - MODE    key `{"keytype":"MODE","subject":s|null,"magic":0}`, value `{"mode":M}`;
 * - ID_HIGH_WATER (Floe's own) key `{"keytype":"ID_HIGH_WATER","magic":0}`, value `{"id":N}`: written with
 *   permanent deletes, so the largest id ever given survives even when compaction drops a deleted schema's
 *   record, and ids are never reused.
 * Records of other key types (Confluent's NOOP, DELETE_SUBJECT, ...) are ignored on replay.
 */
import { isCompatibilityLevel, isMode, isSchemaType, type CompatibilityLevel, type Mode, type SchemaReference, type SubjectVersion } from './model.js';

export type RegistryRecord =
  | { readonly kind: 'SCHEMA'; readonly subject: string; readonly version: number; readonly value: SubjectVersion | null }
  | { readonly kind: 'CONFIG'; readonly subject: string | null; readonly value: CompatibilityLevel | null }
  | { readonly kind: 'MODE'; readonly subject: string | null; readonly value: Mode | null }
  | { readonly kind: 'ID_HIGH_WATER'; readonly value: number };

export interface EncodedRecord {
  readonly key: Buffer;
  readonly value: Buffer | null;
}

export function encodeRecord(r: RegistryRecord): EncodedRecord {
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  switch (r.kind) {
    case 'SCHEMA':
      return { key: json({ keytype: 'SCHEMA', subject: r.subject, version: r.version, magic: 1 }), value: r.value === null ? null : json(schemaValue(r.value)) };
    case 'CONFIG':
      return { key: json({ keytype: 'CONFIG', subject: r.subject, magic: 0 }), value: r.value === null ? null : json({ compatibilityLevel: r.value }) };
    case 'MODE':
      return { key: json({ keytype: 'MODE', subject: r.subject, magic: 0 }), value: r.value === null ? null : json({ mode: r.value }) };
    case 'ID_HIGH_WATER':
      return { key: json({ keytype: 'ID_HIGH_WATER', magic: 0 }), value: json({ id: r.value }) };
  }
}

function schemaValue(v: SubjectVersion): Record<string, unknown> {
  return {
    subject: v.subject,
    version: v.version,
    id: v.id,
    ...(v.schemaType === 'AVRO' ? {} : { schemaType: v.schemaType }),
    references: v.references,
    schema: v.schema,
    deleted: v.deleted,
    ...(v.metadata !== undefined ? { metadata: v.metadata } : {}),
    ...(v.ruleSet !== undefined ? { ruleSet: v.ruleSet } : {}),
  };
}

/** Decodes one record; undefined for key types the registry does not keep (or a record it cannot read). */
export function decodeRecord(key: Buffer | null, value: Buffer | null): RegistryRecord | undefined {
  if (key === null) return undefined;
  const k = parse(key);
  if (!isObj(k)) return undefined;
  const v = value === null ? null : parse(value);
  const subject = typeof k['subject'] === 'string' ? k['subject'] : null;
  switch (k['keytype']) {
    case 'SCHEMA': {
      const version = k['version'];
      if (subject === null || typeof version !== 'number') return undefined;
      if (v === null) return { kind: 'SCHEMA', subject, version, value: null };
      const parsed = parseSchemaValue(v);
      return parsed === undefined ? undefined : { kind: 'SCHEMA', subject, version, value: parsed };
    }
    case 'CONFIG': {
      if (v === null) return { kind: 'CONFIG', subject, value: null };
      const level = isObj(v) ? v['compatibilityLevel'] : undefined;
      return isCompatibilityLevel(level) ? { kind: 'CONFIG', subject, value: level } : undefined;
    }
    case 'MODE': {
      if (v === null) return { kind: 'MODE', subject, value: null };
      const mode = isObj(v) ? v['mode'] : undefined;
      return isMode(mode) ? { kind: 'MODE', subject, value: mode } : undefined;
    }
    case 'ID_HIGH_WATER': {
      const id = isObj(v) ? v['id'] : undefined;
      return typeof id === 'number' ? { kind: 'ID_HIGH_WATER', value: id } : undefined;
    }
    default:
      return undefined;
  }
}

function parseSchemaValue(v: unknown): SubjectVersion | undefined {
  if (!isObj(v)) return undefined;
  const { subject, version, id, schema } = v;
  const schemaType = v['schemaType'] ?? 'AVRO';
  if (typeof subject !== 'string' || typeof version !== 'number' || typeof id !== 'number' || typeof schema !== 'string' || !isSchemaType(schemaType)) return undefined;
  const refs = Array.isArray(v['references']) ? v['references'] : [];
  const references: SchemaReference[] = [];
  for (const r of refs) {
    if (isObj(r) && typeof r['name'] === 'string' && typeof r['subject'] === 'string' && typeof r['version'] === 'number') references.push({ name: r['name'], subject: r['subject'], version: r['version'] });
  }
  return {
    subject,
    version,
    id,
    schemaType,
    schema,
    references,
    deleted: v['deleted'] === true,
    ...(v['metadata'] !== undefined && v['metadata'] !== null ? { metadata: v['metadata'] } : {}),
    ...(v['ruleSet'] !== undefined && v['ruleSet'] !== null ? { ruleSet: v['ruleSet'] } : {}),
  };
}

function parse(buf: Buffer): unknown {
  try {
    return JSON.parse(buf.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
