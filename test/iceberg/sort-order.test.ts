import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSortOrder, sortOrderToJson, validateSortOrder } from '../../iceberg/sort-order.js';
import type { Schema } from '../../iceberg/schema.js';

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

test('sort orders parse, print in spec form and validate against the schema', () => {
  const json = { 'order-id': 1, fields: [{ transform: 'identity', 'source-id': 2, direction: 'asc', 'null-order': 'nulls-first' }, { transform: 'bucket[4]', 'source-id': 1, direction: 'desc', 'null-order': 'nulls-last' }] };
  const order = parseSortOrder(json);
  assert.deepEqual(sortOrderToJson(order), json);
  validateSortOrder(order, schema);
  assert.throws(() => parseSortOrder({ ...json, fields: [{ ...json.fields[0], direction: 'up' }] }), /direction "up"/);
  assert.throws(() => parseSortOrder({ ...json, fields: [{ ...json.fields[0], 'null-order': 'first' }] }), /null-order "first"/);
  assert.throws(() => parseSortOrder({ 'order-id': 0, fields: json.fields }), /reserved for the unsorted order/);
  assert.throws(() => validateSortOrder(parseSortOrder({ 'order-id': 2, fields: [{ ...json.fields[0], 'source-id': 3 }] }), schema), /a list; sort on primitives/);
});
