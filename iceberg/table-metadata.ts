/**
 * Table metadata (Iceberg spec, "Table Metadata" and Appendix C), format versions 2 and 3. The model keeps
 * the spec's field names; `parseTableMetadata` reads the JSON with exact 64-bit ids and checks every
 * cross-reference, and `serializeTableMetadata` writes it back in the spec's field order, so a metadata file
 * round-trips byte for byte. Format v1 is refused with a message (Floe creates v2/v3 tables only).
 */
import { isJsonObject, parseJson, stringifyJson, fromBigInt, type JsonObject, type JsonValue } from './json.js';
import { parsePartitionSpec, partitionSpecToJson, validatePartitionSpec, type PartitionSpec } from './partition-spec.js';
import { highestFieldId, parseSchema, schemaToJson, type Schema } from './schema.js';
import {
  MAIN_BRANCH,
  parseLongId,
  parseSnapshot,
  parseSnapshotRef,
  snapshotRefToJson,
  snapshotToJson,
  type MetadataLogEntry,
  type Snapshot,
  type SnapshotLogEntry,
  type SnapshotRef,
} from './snapshot.js';
import { parseSortOrder, sortOrderToJson, validateSortOrder, type SortOrder } from './sort-order.js';
import { IcebergError } from './types.js';

export type FormatVersion = 2 | 3;
export const SUPPORTED_FORMAT_VERSIONS: readonly FormatVersion[] = [2, 3];
export const DEFAULT_FORMAT_VERSION: FormatVersion = 2;

export interface TableMetadata {
  readonly 'format-version': FormatVersion;
  readonly 'table-uuid': string;
  readonly location: string;
  readonly 'last-sequence-number': number;
  readonly 'last-updated-ms': number;
  readonly 'last-column-id': number;
  readonly schemas: readonly Schema[];
  readonly 'current-schema-id': number;
  readonly 'partition-specs': readonly PartitionSpec[];
  readonly 'default-spec-id': number;
  readonly 'last-partition-id': number;
  readonly properties: Readonly<Record<string, string>>;
  /** Undefined when the table has no current snapshot (written as `null`; `-1` is read as none). */
  readonly 'current-snapshot-id': bigint | undefined;
  readonly snapshots: readonly Snapshot[];
  readonly 'snapshot-log': readonly SnapshotLogEntry[];
  readonly 'metadata-log': readonly MetadataLogEntry[];
  readonly 'sort-orders': readonly SortOrder[];
  readonly 'default-sort-order-id': number;
  readonly refs: Readonly<Record<string, SnapshotRef>>;
  /** v3 row lineage: higher than every assigned row id. */
  readonly 'next-row-id'?: number;
  /** Carried through unchanged (Puffin statistics are not modelled here). */
  readonly statistics?: readonly JsonValue[];
  readonly 'partition-statistics'?: readonly JsonValue[];
  readonly 'encryption-keys'?: readonly JsonValue[];
}

function fail(message: string): never {
  throw new IcebergError('INVALID_METADATA', message);
}

function required(o: JsonObject, key: string): JsonValue {
  const v = o[key];
  if (v === undefined) fail(`table metadata is missing required field '${key}'`);
  return v;
}

function int(o: JsonObject, key: string): number {
  const v = required(o, key);
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) fail(`table metadata field '${key}' must be an integer, got ${typeof v === 'bigint' ? v.toString() : JSON.stringify(v)}`);
  return v;
}

function list(o: JsonObject, key: string, optional = false): JsonValue[] {
  const v = o[key];
  if (v === undefined || v === null) {
    if (optional) return [];
    fail(`table metadata is missing required field '${key}'`);
  }
  if (!Array.isArray(v)) fail(`table metadata field '${key}' must be a list`);
  return v;
}

/** Wraps errors of the nested parsers so the message says where in the metadata the problem is. */
function within<T>(where: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof IcebergError && e.code !== 'INVALID_METADATA') {
      throw new IcebergError('INVALID_METADATA', `${where}: ${e.message}`, { cause: e });
    }
    throw e;
  }
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Parses metadata from JSON text (exact 64-bit ids) or an already parsed `parseJson` value. */
export function parseTableMetadata(input: string | JsonValue): TableMetadata {
  const json = typeof input === 'string' ? parseJson(input) : input;
  if (!isJsonObject(json)) fail('table metadata must be a JSON object');
  const fv = required(json, 'format-version');
  if (fv === 1) {
    throw new IcebergError('UNSUPPORTED_FORMAT_VERSION', 'format-version 1 tables are not supported; upgrade the table to format-version 2 with its writer');
  }
  if (fv !== 2 && fv !== 3) {
    throw new IcebergError('UNSUPPORTED_FORMAT_VERSION', `format-version ${JSON.stringify(typeof fv === 'bigint' ? fv.toString() : fv)} is not supported; this implementation reads format-version 2 and 3`);
  }
  const formatVersion: FormatVersion = fv;
  const uuid = required(json, 'table-uuid');
  if (typeof uuid !== 'string' || !UUID.test(uuid)) fail(`table-uuid must be a UUID string, got ${JSON.stringify(uuid)}`);
  const location = required(json, 'location');
  if (typeof location !== 'string' || location === '') fail('table metadata field \'location\' must be a non-empty string');

  const schemas = list(json, 'schemas').map((s, i) => within(`schemas[${i}]`, () => parseSchema(s, formatVersion)));
  const specs = list(json, 'partition-specs').map((s, i) => within(`partition-specs[${i}]`, () => parsePartitionSpec(s)));
  const orders = list(json, 'sort-orders').map((s, i) => within(`sort-orders[${i}]`, () => parseSortOrder(s)));
  const snapshots = list(json, 'snapshots', true).map((s, i) => within(`snapshots[${i}]`, () => parseSnapshot(s, formatVersion)));

  const props = json.properties;
  const properties: Record<string, string> = {};
  if (props !== undefined && props !== null) {
    if (!isJsonObject(props)) fail("table metadata field 'properties' must be an object of strings");
    for (const [k, v] of Object.entries(props)) {
      if (typeof v !== 'string') fail(`table property '${k}' must be a string`);
      properties[k] = v;
    }
  }

  const cur = json['current-snapshot-id'];
  let currentSnapshotId: bigint | undefined;
  if (cur !== undefined && cur !== null) {
    currentSnapshotId = parseLongId(cur, 'current-snapshot-id', 'INVALID_METADATA');
    if (currentSnapshotId === -1n) currentSnapshotId = undefined;
  }

  const refs: Record<string, SnapshotRef> = {};
  const rawRefs = json.refs;
  if (rawRefs !== undefined && rawRefs !== null) {
    if (!isJsonObject(rawRefs)) fail("table metadata field 'refs' must be an object");
    for (const [name, r] of Object.entries(rawRefs)) refs[name] = parseSnapshotRef(r, name, 'INVALID_METADATA');
  }
  if (refs[MAIN_BRANCH] === undefined && currentSnapshotId !== undefined) {
    refs[MAIN_BRANCH] = { 'snapshot-id': currentSnapshotId, type: 'branch' };
  }

  const snapshotLog = list(json, 'snapshot-log', true).map((e, i): SnapshotLogEntry => {
    if (!isJsonObject(e)) fail(`snapshot-log[${i}] must be an object`);
    return { 'snapshot-id': parseLongId(e['snapshot-id'], `snapshot-log[${i}] snapshot-id`, 'INVALID_METADATA'), 'timestamp-ms': int(e, 'timestamp-ms') };
  });
  const metadataLog = list(json, 'metadata-log', true).map((e, i): MetadataLogEntry => {
    if (!isJsonObject(e) || typeof e['metadata-file'] !== 'string') fail(`metadata-log[${i}] needs a 'metadata-file' string`);
    return { 'metadata-file': e['metadata-file'], 'timestamp-ms': int(e, 'timestamp-ms') };
  });

  let md: TableMetadata = {
    'format-version': formatVersion,
    'table-uuid': uuid.toLowerCase(),
    location,
    'last-sequence-number': int(json, 'last-sequence-number'),
    'last-updated-ms': int(json, 'last-updated-ms'),
    'last-column-id': int(json, 'last-column-id'),
    schemas,
    'current-schema-id': int(json, 'current-schema-id'),
    'partition-specs': specs,
    'default-spec-id': int(json, 'default-spec-id'),
    'last-partition-id': int(json, 'last-partition-id'),
    properties,
    'current-snapshot-id': currentSnapshotId,
    snapshots,
    'snapshot-log': snapshotLog,
    'metadata-log': metadataLog,
    'sort-orders': orders,
    'default-sort-order-id': int(json, 'default-sort-order-id'),
    refs,
  };
  if (formatVersion >= 3) md = { ...md, 'next-row-id': int(json, 'next-row-id') };
  for (const key of ['statistics', 'partition-statistics', 'encryption-keys'] as const) {
    const v = json[key];
    if (v !== undefined && v !== null) md = { ...md, [key]: list(json, key) };
  }
  validateTableMetadata(md);
  return md;
}

/**
 * Checks the invariants between fields: ids unique and referenced ids present, last-column-id and
 * last-partition-id not below what is used, refs and current-snapshot-id pointing at known snapshots, main
 * agreeing with current-snapshot-id, sequence numbers not above last-sequence-number, and parents known.
 */
export function validateTableMetadata(md: TableMetadata): void {
  const uniq = <T>(items: readonly T[], id: (x: T) => number | bigint, what: string): void => {
    const seen = new Set<number | bigint>();
    for (const x of items) {
      const k = id(x);
      if (seen.has(k)) fail(`duplicate ${what} ${k}; ids must be unique`);
      seen.add(k);
    }
  };
  if (md.schemas.length === 0) fail("table metadata 'schemas' is empty; a table needs at least one schema");
  uniq(md.schemas, (s) => s['schema-id'], 'schema-id');
  uniq(md['partition-specs'], (s) => s['spec-id'], 'spec-id');
  uniq(md['sort-orders'], (s) => s['order-id'], 'sort order-id');
  uniq(md.snapshots, (s) => s['snapshot-id'], 'snapshot-id');
  const current = md.schemas.find((s) => s['schema-id'] === md['current-schema-id']);
  if (!current) fail(`current-schema-id ${md['current-schema-id']} is not one of the schemas (${md.schemas.map((s) => s['schema-id']).join(', ')})`);
  for (const s of md.schemas) {
    const h = highestFieldId(s);
    if (h > md['last-column-id']) fail(`schema ${s['schema-id']} uses field id ${h}, above last-column-id ${md['last-column-id']}`);
  }
  const spec = md['partition-specs'].find((s) => s['spec-id'] === md['default-spec-id']);
  if (!spec) fail(`default-spec-id ${md['default-spec-id']} is not one of the partition-specs`);
  within(`default partition spec ${spec['spec-id']}`, () => validatePartitionSpec(spec, current));
  for (const s of md['partition-specs']) {
    for (const f of s.fields) {
      if (f['field-id'] > md['last-partition-id']) fail(`partition spec ${s['spec-id']} uses field-id ${f['field-id']}, above last-partition-id ${md['last-partition-id']}`);
    }
  }
  const order = md['sort-orders'].find((o) => o['order-id'] === md['default-sort-order-id']);
  if (!order) fail(`default-sort-order-id ${md['default-sort-order-id']} is not one of the sort-orders`);
  within(`default sort order ${order['order-id']}`, () => validateSortOrder(order, current));

  const byId = new Map(md.snapshots.map((s) => [s['snapshot-id'], s]));
  const schemaIds = new Set(md.schemas.map((s) => s['schema-id']));
  for (const s of md.snapshots) {
    if (s['sequence-number'] > md['last-sequence-number']) {
      fail(`snapshot ${s['snapshot-id']} has sequence-number ${s['sequence-number']}, above last-sequence-number ${md['last-sequence-number']}`);
    }
    if (s['schema-id'] !== undefined && !schemaIds.has(s['schema-id'])) fail(`snapshot ${s['snapshot-id']} has schema-id ${s['schema-id']}, which is not one of the schemas`);
  }
  if (md['current-snapshot-id'] !== undefined && !byId.has(md['current-snapshot-id'])) {
    fail(`current-snapshot-id ${md['current-snapshot-id']} is not one of the snapshots`);
  }
  for (const [name, ref] of Object.entries(md.refs)) {
    if (!byId.has(ref['snapshot-id'])) fail(`ref '${name}' points at snapshot ${ref['snapshot-id']}, which is not one of the snapshots`);
  }
  const main = md.refs[MAIN_BRANCH];
  if (main?.['snapshot-id'] !== md['current-snapshot-id']) {
    fail(`current-snapshot-id ${md['current-snapshot-id'] ?? 'null'} must equal the main branch's snapshot-id ${main?.['snapshot-id'] ?? 'null'}`);
  }
  if (md['format-version'] >= 3 && (md['next-row-id'] === undefined || md['next-row-id'] < 0)) fail("format v3 metadata needs a non-negative 'next-row-id'");
}

// ---------------------------------------------------------------------------------------------------------
// Accessors

export function currentSchema(md: TableMetadata): Schema {
  const s = md.schemas.find((x) => x['schema-id'] === md['current-schema-id']);
  if (!s) fail(`current-schema-id ${md['current-schema-id']} is not one of the schemas`);
  return s;
}

export function defaultSpec(md: TableMetadata): PartitionSpec {
  const s = md['partition-specs'].find((x) => x['spec-id'] === md['default-spec-id']);
  if (!s) fail(`default-spec-id ${md['default-spec-id']} is not one of the partition-specs`);
  return s;
}

export function defaultSortOrder(md: TableMetadata): SortOrder {
  const s = md['sort-orders'].find((x) => x['order-id'] === md['default-sort-order-id']);
  if (!s) fail(`default-sort-order-id ${md['default-sort-order-id']} is not one of the sort-orders`);
  return s;
}

export function snapshotById(md: TableMetadata, id: bigint): Snapshot | undefined {
  return md.snapshots.find((s) => s['snapshot-id'] === id);
}

export function currentSnapshot(md: TableMetadata): Snapshot | undefined {
  const id = md['current-snapshot-id'];
  return id === undefined ? undefined : snapshotById(md, id);
}

/** The snapshot a branch or tag points at. */
export function snapshotForRef(md: TableMetadata, ref: string): Snapshot | undefined {
  const r = md.refs[ref];
  return r === undefined ? undefined : snapshotById(md, r['snapshot-id']);
}

/** The snapshot and its ancestors, newest first, stopping where a parent has been expired. */
export function* ancestorsOf(md: TableMetadata, id: bigint | undefined): Generator<Snapshot> {
  const byId = new Map(md.snapshots.map((s) => [s['snapshot-id'], s]));
  let cur = id === undefined ? undefined : byId.get(id);
  const seen = new Set<bigint>();
  while (cur && !seen.has(cur['snapshot-id'])) {
    seen.add(cur['snapshot-id']);
    yield cur;
    const p = cur['parent-snapshot-id'];
    cur = p === undefined ? undefined : byId.get(p);
  }
}

// ---------------------------------------------------------------------------------------------------------
// JSON

/** The JSON value of the metadata, fields in the spec's order. */
export function tableMetadataToJson(md: TableMetadata): JsonObject {
  const out: JsonObject = {
    'format-version': md['format-version'],
    'table-uuid': md['table-uuid'],
    location: md.location,
    'last-sequence-number': md['last-sequence-number'],
    'last-updated-ms': md['last-updated-ms'],
    'last-column-id': md['last-column-id'],
    'current-schema-id': md['current-schema-id'],
    schemas: md.schemas.map((s) => schemaToJson(s) as JsonObject),
    'default-spec-id': md['default-spec-id'],
    'partition-specs': md['partition-specs'].map((s) => partitionSpecToJson(s) as JsonObject),
    'last-partition-id': md['last-partition-id'],
    'default-sort-order-id': md['default-sort-order-id'],
    'sort-orders': md['sort-orders'].map((o) => sortOrderToJson(o) as JsonObject),
    properties: { ...md.properties },
    'current-snapshot-id': md['current-snapshot-id'] === undefined ? null : fromBigInt(md['current-snapshot-id']),
  };
  if (md['next-row-id'] !== undefined) out['next-row-id'] = md['next-row-id'];
  out.refs = Object.fromEntries(Object.entries(md.refs).map(([k, r]) => [k, snapshotRefToJson(r)]));
  out.snapshots = md.snapshots.map(snapshotToJson);
  if (md.statistics !== undefined) out.statistics = [...md.statistics];
  if (md['partition-statistics'] !== undefined) out['partition-statistics'] = [...md['partition-statistics']];
  if (md['encryption-keys'] !== undefined) out['encryption-keys'] = [...md['encryption-keys']];
  out['snapshot-log'] = md['snapshot-log'].map((e) => ({ 'snapshot-id': fromBigInt(e['snapshot-id']), 'timestamp-ms': e['timestamp-ms'] }));
  out['metadata-log'] = md['metadata-log'].map((e) => ({ 'metadata-file': e['metadata-file'], 'timestamp-ms': e['timestamp-ms'] }));
  return out;
}

/** Metadata file text: exact 64-bit ids, 2-space indentation by default. */
export function serializeTableMetadata(md: TableMetadata, indent = 2): string {
  return stringifyJson(tableMetadataToJson(md), indent);
}
