import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePartitionSpec, partitionSpecToJson, partitionType, specsEquivalent, validatePartitionSpec } from '../../iceberg/partition-spec.js';
import type { Schema } from '../../iceberg/schema.js';
import { IcebergError } from '../../iceberg/types.js';

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'tags', required: false, type: { type: 'list', 'element-id': 4, element: 'string', 'element-required': true } },
    { id: 5, name: 'price', required: false, type: 'decimal(9,2)' },
  ],
};

test('partition spec JSON parses, validates and yields the partition struct type', () => {
  const json = { 'spec-id': 1, fields: [{ 'source-id': 2, 'field-id': 1000, name: 'ts_hour', transform: 'hour' }, { 'source-id': 1, 'field-id': 1001, name: 'id_bucket', transform: 'bucket[ 8 ]' }, { 'source-id': 5, 'field-id': 1002, name: 'price_trunc', transform: 'truncate[50]' }] };
  const spec = parsePartitionSpec(json);
  assert.equal(spec.fields[1]?.transform, 'bucket[8]');
  validatePartitionSpec(spec, schema);
  assert.deepEqual(partitionType(spec, schema).fields.map((f) => [f.id, f.name, f.type, f.required]), [
    [1000, 'ts_hour', 'int', false],
    [1001, 'id_bucket', 'int', false],
    [1002, 'price_trunc', 'decimal(9,2)', false],
  ]);
  assert.deepEqual(partitionSpecToJson(spec), { ...json, fields: json.fields.map((f) => ({ ...f, transform: f.transform.replace(/ /g, '') })) });
  assert.ok(specsEquivalent(spec, { ...spec, 'spec-id': 9 }));
  assert.ok(!specsEquivalent(spec, { ...spec, fields: spec.fields.slice(1) }));
});

test('invalid partition specs are rejected with the field named', () => {
  const check = (fields: unknown[], re: RegExp) =>
    assert.throws(() => validatePartitionSpec(parsePartitionSpec({ 'spec-id': 0, fields }), schema), (e: unknown) => e instanceof IcebergError && e.code === 'INVALID_PARTITION_SPEC' && re.test(e.message));
  check([{ 'source-id': 9, 'field-id': 1000, name: 'x', transform: 'identity' }], /source-id 9, which is not a column/);
  check([{ 'source-id': 4, 'field-id': 1000, name: 'x', transform: 'identity' }], /inside a list or map/);
  check([{ 'source-id': 3, 'field-id': 1000, name: 'x', transform: 'identity' }], /a list; partition sources must be primitives/);
  check([{ 'source-id': 1, 'field-id': 1000, name: 'x', transform: 'day' }], /cannot be applied to a long column/);
  check([{ 'source-id': 1, 'field-id': 1000, name: 'ts', transform: 'identity' }], /name of column 'ts'/);
  check([{ 'source-id': 1, 'field-id': 1000, name: 'a', transform: 'identity' }, { 'source-id': 2, 'field-id': 1000, name: 'b', transform: 'day' }], /reuses field-id 1000/);
  check([{ 'source-id': 1, 'field-id': 1000, name: 'a', transform: 'bucket[x]' }], /bucket\[N\]/);
  check([{ 'source-id': 1, name: 'a', transform: 'identity' }], /missing 'field-id'/);
});
