import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assignFreshSchemaIds,
  checkSchemaEvolution,
  findFieldByName,
  highestFieldId,
  indexByName,
  parseSchema,
  schemaToJson,
  type Schema,
} from '../../iceberg/schema.js';
import { canPromote, parsePrimitiveType, formatPrimitiveType, IcebergError } from '../../iceberg/types.js';
import { parseJson, stringifyJson } from '../../iceberg/json.js';

const base: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'int' },
    { id: 2, name: 'price', required: false, type: 'decimal(9,2)' },
    {
      id: 3,
      name: 'kafka',
      required: true,
      type: { type: 'struct', fields: [{ id: 4, name: 'offset', required: true, type: 'long' }, { id: 5, name: 'headers', required: false, type: { type: 'list', 'element-id': 6, element: 'binary', 'element-required': true } }] },
    },
    { id: 7, name: 'ratio', required: true, type: 'float' },
    { id: 8, name: 'day', required: false, type: 'date' },
  ],
};

test('primitive types parse with whitespace and print canonically', () => {
  assert.deepEqual(parsePrimitiveType('decimal( 9 , 2 )'), { kind: 'decimal', precision: 9, scale: 2 });
  assert.equal(formatPrimitiveType(parsePrimitiveType('fixed[ 16 ]')), 'fixed[16]');
  assert.equal(formatPrimitiveType(parsePrimitiveType('timestamptz_ns')), 'timestamptz_ns');
  assert.equal(formatPrimitiveType(parsePrimitiveType('geography(srid:4326, karney)')), 'geography(srid:4326, karney)');
  for (const bad of ['decimal(39,0)', 'decimal(5,6)', 'fixed[0]', 'varchar', 'Long']) {
    assert.throws(() => parsePrimitiveType(bad), (e: unknown) => e instanceof IcebergError && e.code === 'INVALID_TYPE', bad);
  }
});

test('promotion rules follow the spec per format version', () => {
  const p = parsePrimitiveType;
  assert.ok(canPromote(p('int'), p('long'), 2));
  assert.ok(canPromote(p('float'), p('double'), 2));
  assert.ok(canPromote(p('decimal(9,2)'), p('decimal(18,2)'), 2));
  assert.ok(!canPromote(p('decimal(9,2)'), p('decimal(18,3)'), 2));
  assert.ok(!canPromote(p('decimal(18,2)'), p('decimal(9,2)'), 2));
  assert.ok(!canPromote(p('long'), p('int'), 2));
  assert.ok(!canPromote(p('date'), p('timestamp'), 2));
  assert.ok(canPromote(p('date'), p('timestamp_ns'), 3));
  assert.ok(!canPromote(p('date'), p('timestamptz'), 3));
  assert.ok(canPromote(p('unknown'), p('string'), 3));
  assert.ok(!canPromote(p('int'), p('string'), 3));
});

test('lookup by id and dotted name, highest id', () => {
  const names = indexByName(base);
  assert.equal(names.get('kafka.offset'), 4);
  assert.equal(names.get('kafka.headers.element'), 6);
  assert.equal(findFieldByName(base, 'kafka.headers')?.parentId, 3);
  assert.equal(findFieldByName(base, 'kafka.headers.element')?.inRepeated, true);
  assert.equal(highestFieldId(base), 8);
});

test('parseSchema rejects duplicate ids, duplicate names and bad identifier fields', () => {
  const json = (s: unknown): unknown => parseJson(JSON.stringify(s));
  const dupId = { ...base, fields: [...base.fields, { id: 4, name: 'x', required: false, type: 'int' }] };
  assert.throws(() => parseSchema(json(dupId)), /Duplicate field id 4/);
  const dupName = { ...base, fields: [...base.fields, { id: 9, name: 'id', required: false, type: 'int' }] };
  assert.throws(() => parseSchema(json(dupName)), /Duplicate field name 'id'/);
  assert.throws(() => parseSchema(json({ ...base, 'identifier-field-ids': [7] })), /cannot be float/);
  assert.throws(() => parseSchema(json({ ...base, 'identifier-field-ids': [2] })), /must be required/);
  assert.throws(() => parseSchema(json({ ...base, 'identifier-field-ids': [6] })), /must be required|list or map/);
  assert.throws(() => parseSchema(json({ ...base, 'identifier-field-ids': [42] })), /not in schema/);
  assert.throws(() => parseSchema(json({ type: 'struct', fields: [{ id: 1, name: 'a', type: 'int' }] })), /missing required field 'required'/);
  const ok = parseSchema(json({ ...base, 'identifier-field-ids': [1, 4] }));
  assert.deepEqual(ok['identifier-field-ids'], [1, 4]);
  assert.equal(stringifyJson(parseJson(JSON.stringify(schemaToJson(ok)))), JSON.stringify(schemaToJson(ok)));
});

test('fresh ids are assigned breadth-first per struct, starting after lastColumnId', () => {
  const { schema, lastColumnId } = assignFreshSchemaIds({ ...base, 'identifier-field-ids': [4] }, 0);
  assert.equal(lastColumnId, 8);
  assert.deepEqual(schema.fields.map((f) => f.id), [1, 2, 3, 4, 5]);
  assert.equal(findFieldByName(schema, 'kafka.offset')?.id, 6);
  assert.equal(findFieldByName(schema, 'kafka.headers.element')?.id, 8);
  assert.deepEqual(schema['identifier-field-ids'], [6]);
});

test('evolution: add optional, promote, rename, drop, relax are valid', () => {
  const next: Schema = {
    ...base,
    'schema-id': 1,
    fields: [
      { id: 1, name: 'key', required: true, type: 'long' },
      { id: 2, name: 'price', required: false, type: 'decimal(12,2)' },
      { id: 3, name: 'kafka', required: false, type: { type: 'struct', fields: [{ id: 4, name: 'offset', required: false, type: 'long' }] } },
      { id: 7, name: 'ratio', required: true, type: 'double' },
      { id: 9, name: 'added', required: false, type: { type: 'struct', fields: [{ id: 10, name: 'inner', required: true, type: 'int' }] } },
    ],
  };
  assert.deepEqual(checkSchemaEvolution(base, next), { ok: true });
});

test('evolution: the reverse directions are invalid, with reasons', () => {
  const next: Schema = {
    ...base,
    'schema-id': 1,
    fields: [
      { id: 1, name: 'id', required: true, type: 'string' },
      { id: 2, name: 'price', required: true, type: 'decimal(9,3)' },
      { id: 3, name: 'kafka', required: true, type: 'string' },
      { id: 7, name: 'ratio', required: true, type: 'float' },
      { id: 8, name: 'day', required: false, type: 'timestamp' },
      { id: 9, name: 'new_required', required: true, type: 'int' },
      { id: 4, name: 'offset', required: true, type: 'long' },
    ],
  };
  const r = checkSchemaEvolution(base, next, 2);
  assert.equal(r.ok, false);
  const reasons = r.ok ? '' : r.reasons.join('\n');
  assert.match(reasons, /'id' \(id 1\) cannot be promoted from int to string/);
  assert.match(reasons, /'price' \(id 2\) changed from optional to required/);
  assert.match(reasons, /'price' \(id 2\) cannot be promoted from decimal\(9,2\) to decimal\(9,3\)/);
  assert.match(reasons, /'kafka' \(id 3\) changed from struct to primitive/);
  assert.match(reasons, /'day' \(id 8\) cannot be promoted from date to timestamp in format v2/);
  assert.match(reasons, /new field 'new_required' \(id 9\) is required/);
  assert.match(reasons, /field 4 moved/);
  // date -> timestamp is fine in v3, and a required field with an initial-default is fine
  const v3: Schema = { ...base, fields: [...base.fields.filter((f) => f.id !== 8), { id: 8, name: 'day', required: false, type: 'timestamp' }, { id: 9, name: 'n', required: true, type: 'int', 'initial-default': 0 }] };
  assert.deepEqual(checkSchemaEvolution(base, v3, 3), { ok: true });
});
