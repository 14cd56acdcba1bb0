/**
 * The REST catalog's JSON messages (`../shared/iceberg/rest-catalog-open-api.yaml`): `TableUpdate`,
 * `TableRequirement`, `CreateTableRequest`, `LoadTableResult`, `CommitTableResponse`, in both directions,
 * with 64-bit ids kept exact (`../json.ts`). Used by the REST server and by `RestCatalogClient`.
 */
import { fromBigInt, isJsonObject, type JsonObject, type JsonValue } from '../json.js';
import { parsePartitionSpec, partitionSpecToJson } from '../partition-spec.js';
import { parseSchema, schemaToJson } from '../schema.js';
import { parseLongId, parseSnapshot, parseSnapshotRef, snapshotRefToJson, snapshotToJson } from '../snapshot.js';
import { parseSortOrder, sortOrderToJson } from '../sort-order.js';
import { parseTableMetadata, tableMetadataToJson, type FormatVersion } from '../table-metadata.js';
import type { TableRequirement, TableUpdate } from '../table-metadata-builder.js';
import { CatalogError, type CommitTableResult, type CreateTableRequest, type LoadTableResult, type TableIdentifier } from '../catalog/catalog.js';

function bad(message: string): never {
  throw new CatalogError('INVALID_REQUEST', message);
}

function obj(v: unknown, what: string): JsonObject {
  if (!isJsonObject(v)) bad(`${what} must be a JSON object`);
  return v;
}

function str(o: JsonObject, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== 'string') bad(`${what} needs a string '${key}'`);
  return v;
}

function int(o: JsonObject, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) bad(`${what} needs an integer '${key}'`);
  return v;
}

function strings(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) bad(`${what} must be a list of strings`);
  return v as string[];
}

function stringMap(v: unknown, what: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  const o = obj(v, what);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(o)) {
    if (typeof x !== 'string') bad(`${what}: '${k}' must be a string`);
    out[k] = x;
  }
  return out;
}

/** Runs a model parser and turns its errors into 400s that say where the problem is. */
function within<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof CatalogError) throw e;
    throw new CatalogError('INVALID_REQUEST', `${what}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

// ---------------------------------------------------------------------------------------------------
// Updates and requirements

export function parseTableUpdate(json: unknown): TableUpdate {
  const o = obj(json, 'A table update');
  const action = str(o, 'action', 'A table update');
  const w = `update '${action}'`;
  switch (action) {
    case 'assign-uuid':
      return { action, uuid: str(o, 'uuid', w) };
    case 'upgrade-format-version':
      return { action, 'format-version': int(o, 'format-version', w) };
    case 'add-schema': {
      const schema = within(w, () => parseSchema(withDefault(obj(o['schema'], `${w} schema`), 'schema-id', 0), 3));
      return o['last-column-id'] === undefined ? { action, schema } : { action, schema, 'last-column-id': int(o, 'last-column-id', w) };
    }
    case 'set-current-schema':
      return { action, 'schema-id': int(o, 'schema-id', w) };
    case 'add-spec':
      return { action, spec: within(w, () => parsePartitionSpec(withDefault(obj(o['spec'], `${w} spec`), 'spec-id', 0))) };
    case 'set-default-spec':
      return { action, 'spec-id': int(o, 'spec-id', w) };
    case 'add-sort-order':
      return { action, 'sort-order': within(w, () => parseSortOrder(o['sort-order'])) };
    case 'set-default-sort-order':
      return { action, 'sort-order-id': int(o, 'sort-order-id', w) };
    case 'add-snapshot':
      return { action, snapshot: within(w, () => parseSnapshot(o['snapshot'], 2)) };
    case 'set-snapshot-ref': {
      const name = str(o, 'ref-name', w);
      const { action: _a, 'ref-name': _n, ...ref } = o;
      return { action, 'ref-name': name, ...within(w, () => parseSnapshotRef(ref, name)) };
    }
    case 'remove-snapshots': {
      const ids = o['snapshot-ids'];
      if (!Array.isArray(ids)) bad(`${w} needs a list 'snapshot-ids'`);
      return { action, 'snapshot-ids': ids.map((x) => within(w, () => parseLongId(x, 'snapshot-ids[]'))) };
    }
    case 'remove-snapshot-ref':
      return { action, 'ref-name': str(o, 'ref-name', w) };
    case 'set-location':
      return { action, location: str(o, 'location', w) };
    case 'set-properties':
      return { action, updates: stringMap(o['updates'], `${w} updates`) };
    case 'remove-properties':
      return { action, removals: strings(o['removals'], `${w} removals`) };
    default:
      return bad(`Table update action '${action}' is not supported by this catalog`);
  }
}

function withDefault(o: JsonObject, key: string, value: JsonValue): JsonObject {
  return o[key] === undefined ? { ...o, [key]: value } : o;
}

export function tableUpdateToJson(u: TableUpdate): JsonObject {
  switch (u.action) {
    case 'add-schema': {
      const out: JsonObject = { action: u.action, schema: schemaToJson(u.schema) as JsonObject };
      if (u['last-column-id'] !== undefined) out['last-column-id'] = u['last-column-id'];
      return out;
    }
    case 'add-spec':
      return { action: u.action, spec: partitionSpecToJson(u.spec) as JsonObject };
    case 'add-sort-order':
      return { action: u.action, 'sort-order': sortOrderToJson(u['sort-order']) as JsonObject };
    case 'add-snapshot':
      return { action: u.action, snapshot: snapshotToJson(u.snapshot) };
    case 'set-snapshot-ref': {
      const { action, 'ref-name': name, ...ref } = u;
      return { action, 'ref-name': name, ...snapshotRefToJson(ref) };
    }
    case 'remove-snapshots':
      return { action: u.action, 'snapshot-ids': u['snapshot-ids'].map(fromBigInt) };
    case 'set-properties':
      return { action: u.action, updates: { ...u.updates } };
    case 'remove-properties':
      return { action: u.action, removals: [...u.removals] };
    default:
      return { ...u } as JsonObject;
  }
}

export function parseTableRequirement(json: unknown): TableRequirement {
  const o = obj(json, 'A table requirement');
  const type = str(o, 'type', 'A table requirement');
  const w = `requirement '${type}'`;
  switch (type) {
    case 'assert-create':
      return { type };
    case 'assert-table-uuid':
      return { type, uuid: str(o, 'uuid', w) };
    case 'assert-ref-snapshot-id': {
      const id = o['snapshot-id'];
      return { type, ref: str(o, 'ref', w), 'snapshot-id': id === null || id === undefined ? null : within(w, () => parseLongId(id, 'snapshot-id')) };
    }
    case 'assert-last-assigned-field-id':
      return { type, 'last-assigned-field-id': int(o, 'last-assigned-field-id', w) };
    case 'assert-current-schema-id':
      return { type, 'current-schema-id': int(o, 'current-schema-id', w) };
    case 'assert-last-assigned-partition-id':
      return { type, 'last-assigned-partition-id': int(o, 'last-assigned-partition-id', w) };
    case 'assert-default-spec-id':
      return { type, 'default-spec-id': int(o, 'default-spec-id', w) };
    case 'assert-default-sort-order-id':
      return { type, 'default-sort-order-id': int(o, 'default-sort-order-id', w) };
    default:
      return bad(`Table requirement type '${type}' is not supported by this catalog`);
  }
}

export function tableRequirementToJson(r: TableRequirement): JsonObject {
  if (r.type === 'assert-ref-snapshot-id') return { type: r.type, ref: r.ref, 'snapshot-id': r['snapshot-id'] === null ? null : fromBigInt(r['snapshot-id']) };
  return { ...r } as JsonObject;
}

/** `CommitTableRequest` body: `{ identifier?, requirements, updates }`. */
export function parseCommitTableRequest(json: unknown): { requirements: TableRequirement[]; updates: TableUpdate[] } {
  const o = obj(json, 'The commit request');
  const reqs = o['requirements'];
  const ups = o['updates'];
  if (!Array.isArray(reqs)) bad("The commit request needs a 'requirements' list");
  if (!Array.isArray(ups)) bad("The commit request needs an 'updates' list");
  return { requirements: reqs.map(parseTableRequirement), updates: ups.map(parseTableUpdate) };
}

// ---------------------------------------------------------------------------------------------------
// Tables

export function parseCreateTableRequest(json: unknown): { name: string; request: CreateTableRequest; stageCreate: boolean } {
  const o = obj(json, 'The create-table request');
  const name = str(o, 'name', 'The create-table request');
  const schema = within('schema', () => parseSchema(withDefault(obj(o['schema'], 'schema'), 'schema-id', 0), 3));
  let request: CreateTableRequest = { schema, properties: stringMap(o['properties'], 'properties') };
  if (typeof o['location'] === 'string' && o['location'] !== '') request = { ...request, location: o['location'] };
  if (o['partition-spec'] != null) request = { ...request, partitionSpec: within('partition-spec', () => parsePartitionSpec(withDefault(obj(o['partition-spec'], 'partition-spec'), 'spec-id', 0))) };
  if (o['write-order'] != null) request = { ...request, sortOrder: within('write-order', () => parseSortOrder(withDefault(obj(o['write-order'], 'write-order'), 'order-id', 0))) };
  const fv = request.properties?.['format-version'];
  if (fv === '2' || fv === '3') request = { ...request, formatVersion: Number(fv) as FormatVersion };
  return { name, request, stageCreate: o['stage-create'] === true };
}

export function createTableRequestToJson(name: string, r: CreateTableRequest): JsonObject {
  // stage-create is optional in the spec (false when absent), but Nessie's server refuses a request without it
  // (a 500: "some of required attributes are not set [stageCreate]"); Iceberg's Java client and pyiceberg
  // always send it, so Floe does too.
  const out: JsonObject = { name, schema: schemaToJson(r.schema) as JsonObject, 'stage-create': false };
  if (r.location !== undefined) out['location'] = r.location;
  if (r.partitionSpec) out['partition-spec'] = partitionSpecToJson(r.partitionSpec) as JsonObject;
  if (r.sortOrder) out['write-order'] = sortOrderToJson(r.sortOrder) as JsonObject;
  const props: Record<string, string> = { ...(r.properties ?? {}) };
  if (r.formatVersion !== undefined) props['format-version'] = String(r.formatVersion);
  out['properties'] = props;
  return out;
}

export function loadTableResultToJson(r: LoadTableResult): JsonObject {
  return { 'metadata-location': r.metadataLocation, metadata: tableMetadataToJson(r.metadata), config: { ...r.config } };
}

export function parseLoadTableResult(json: unknown): LoadTableResult {
  const o = obj(json, 'LoadTableResult');
  return {
    metadataLocation: str(o, 'metadata-location', 'LoadTableResult'),
    metadata: parseTableMetadata(o['metadata'] ?? null),
    config: stringMap(o['config'], 'LoadTableResult config'),
  };
}

export function commitTableResultToJson(r: CommitTableResult): JsonObject {
  return { 'metadata-location': r.metadataLocation, metadata: tableMetadataToJson(r.metadata) };
}

export function parseCommitTableResult(json: unknown): CommitTableResult {
  const o = obj(json, 'CommitTableResponse');
  return { metadataLocation: str(o, 'metadata-location', 'CommitTableResponse'), metadata: parseTableMetadata(o['metadata'] ?? null) };
}

export function identifierToJson(id: TableIdentifier): JsonObject {
  return { namespace: [...id.namespace], name: id.name };
}
