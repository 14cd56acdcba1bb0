/**
 * Partition specs, shaped after the spec's JSON serialization (Iceberg spec, "Partitioning" and Appendix C):
 * `{ "spec-id": 0, "fields": [{ "source-id": 4, "field-id": 1000, "name": "ts_day", "transform": "day" }] }`.
 * Transforms stay in their string form in the model so that JSON round-trips exactly; parse them with
 * `parseTransform` from `./transforms.js`.
 */
import { isJsonObject } from './json.js';
import { indexById, isPrimitive, type Schema, type StructType, type NestedField } from './schema.js';
import { parseTransform, resultType, transformToString } from './transforms.js';
import { IcebergError } from './types.js';
import type { Transform, TransformString } from './transforms.js';

export type { Transform, TransformString };

export interface PartitionField {
  /** Id of the source column in the table schema. */
  readonly 'source-id': number;
  /** v3 multi-argument transforms: ids of every source column (then `source-id` is the first). */
  readonly 'source-ids'?: readonly number[];
  /** Partition field id, unique across every spec of a table; starts at 1000. */
  readonly 'field-id': number;
  readonly name: string;
  readonly transform: TransformString;
}

export interface PartitionSpec {
  readonly 'spec-id': number;
  readonly fields: readonly PartitionField[];
}

/** Partition field ids start here (spec: "partition field IDs ... start at 1000"). */
export const PARTITION_DATA_ID_START = 1000;

/** The spec with no partition fields, spec-id 0. */
export const UNPARTITIONED_SPEC: PartitionSpec = Object.freeze({ 'spec-id': 0, fields: Object.freeze([]) });

// ---------------------------------------------------------------------------------------------------------
// Behaviour


function fail(message: string): never {
  throw new IcebergError('INVALID_PARTITION_SPEC', message);
}

function int(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(`${what} must be an integer`);
  return v;
}

/** Parses a partition spec from JSON; the transform string is checked (and canonicalized) here. */
export function parsePartitionSpec(json: unknown): PartitionSpec {
  if (!isJsonObject(json)) fail('A partition spec must be a JSON object');
  if (json['spec-id'] === undefined) fail("partition spec is missing required field 'spec-id'");
  const specId = int(json['spec-id'], 'spec-id');
  const fields = json.fields;
  if (!Array.isArray(fields)) fail(`partition spec ${specId} is missing its 'fields' list`);
  return {
    'spec-id': specId,
    fields: fields.map((f: unknown, i): PartitionField => {
      const w = `partition spec ${specId} field ${i}`;
      if (!isJsonObject(f)) fail(`${w} must be an object`);
      if (typeof f.name !== 'string' || f.name === '') fail(`${w} needs a non-empty 'name'`);
      if (typeof f.transform !== 'string') fail(`${w} ('${f.name}') needs a 'transform' string`);
      if (f['field-id'] === undefined) fail(`${w} ('${f.name}') is missing 'field-id'`);
      let transform: string;
      try {
        transform = transformToString(parseTransform(f.transform));
      } catch (e) {
        if (e instanceof IcebergError) fail(`${w} ('${f.name}'): ${e.message}`);
        throw e;
      }
      const sourceIds = f['source-ids'];
      const out: { -readonly [K in keyof PartitionField]: PartitionField[K] } = {
        'source-id': 0,
        'field-id': int(f['field-id'], `${w} field-id`),
        name: f.name,
        transform,
      };
      if (sourceIds !== undefined) {
        if (!Array.isArray(sourceIds) || sourceIds.length === 0) fail(`${w} 'source-ids' must be a non-empty list`);
        out['source-ids'] = sourceIds.map((x: unknown) => int(x, `${w} source-ids entry`));
        out['source-id'] = out['source-ids'][0] ?? 0;
      } else {
        if (f['source-id'] === undefined) fail(`${w} ('${f.name}') is missing 'source-id'`);
        out['source-id'] = int(f['source-id'], `${w} source-id`);
      }
      return out;
    }),
  };
}

/** JSON form: `source-ids` only for multi-argument transforms, otherwise `source-id` (spec Appendix C). */
export function partitionSpecToJson(spec: PartitionSpec): Record<string, unknown> {
  return {
    'spec-id': spec['spec-id'],
    fields: spec.fields.map((f) => {
      const src = f['source-ids'] !== undefined && f['source-ids'].length > 1 ? { 'source-ids': [...f['source-ids']] } : { 'source-id': f['source-id'] };
      return { ...src, 'field-id': f['field-id'], name: f.name, transform: f.transform };
    }),
  };
}

/**
 * Checks a spec against a schema: sources exist, are primitives outside lists and maps, and accept the
 * transform; field ids and names are unique; a partition name equal to a column name is allowed only for
 * an identity partition of that column. Known-but-unusable transforms are errors; unknown ones are not.
 */
export function validatePartitionSpec(spec: PartitionSpec, schema: Schema): void {
  const byId = indexById(schema);
  const topNames = new Map(schema.fields.map((f) => [f.name, f.id]));
  const ids = new Set<number>();
  const names = new Set<string>();
  for (const f of spec.fields) {
    const w = `partition field '${f.name}' of spec ${spec['spec-id']}`;
    if (ids.has(f['field-id'])) fail(`${w} reuses field-id ${f['field-id']}; partition field ids must be unique`);
    ids.add(f['field-id']);
    if (names.has(f.name)) fail(`${w}: duplicate partition field name`);
    names.add(f.name);
    const t = parseTransform(f.transform);
    for (const sourceId of f['source-ids'] ?? [f['source-id']]) {
      const src = byId.get(sourceId);
      if (!src) fail(`${w} has source-id ${sourceId}, which is not a column of schema ${schema['schema-id']}`);
      if (!isPrimitive(src.type)) fail(`${w} is on '${src.name}', a ${src.type.type}; partition sources must be primitives`);
      if (src.inRepeated) fail(`${w} is on '${src.name}', which is inside a list or map`);
      if (t.kind !== 'unknown') {
        try {
          resultType(t, src.type);
        } catch (e) {
          if (e instanceof IcebergError) fail(`${w}: ${e.message}`);
          throw e;
        }
      }
    }
    const col = topNames.get(f.name);
    if (col !== undefined && !(t.kind === 'identity' && col === f['source-id'])) {
      fail(`${w} has the name of column '${f.name}'; only an identity partition of that column may share its name`);
    }
  }
}

/** The highest partition field id in the spec, or 999 for an unpartitioned spec (so the next is 1000). */
export function lastAssignedFieldId(spec: PartitionSpec): number {
  return spec.fields.reduce((m, f) => Math.max(m, f['field-id']), PARTITION_DATA_ID_START - 1);
}

/** True when the spec has no fields, or only void transforms. */
export function isUnpartitioned(spec: PartitionSpec): boolean {
  return spec.fields.every((f) => f.transform === 'void');
}

/**
 * The struct of partition values in data files (the manifest's `partition` field): one optional field per
 * partition field, with the partition field id and the transform's result type.
 */
export function partitionType(spec: PartitionSpec, schema: Schema): StructType {
  const byId = indexById(schema);
  return {
    type: 'struct',
    fields: spec.fields.map((f): NestedField => {
      const src = byId.get(f['source-id']);
      if (!src || !isPrimitive(src.type)) fail(`partition field '${f.name}' has no primitive source column ${f['source-id']} in schema ${schema['schema-id']}`);
      const t = parseTransform(f.transform);
      return { id: f['field-id'], name: f.name, required: false, type: resultType(t, src.type) };
    }),
  };
}

/** Spec equivalence (spec, "Partitioning"): same fields in order with the same sources, transforms and names. */
export function specsEquivalent(a: PartitionSpec, b: PartitionSpec): boolean {
  if (a.fields.length !== b.fields.length) return false;
  return a.fields.every((f, i) => {
    const g = b.fields[i];
    return (
      g !== undefined &&
      f.name === g.name &&
      f.transform === g.transform &&
      JSON.stringify(f['source-ids'] ?? [f['source-id']]) === JSON.stringify(g['source-ids'] ?? [g['source-id']])
    );
  });
}
