import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJson, stringifyJson } from '../../../iceberg/json.js';
import {
  createTableRequestToJson,
  parseCommitTableRequest,
  parseCreateTableRequest,
  parseTableRequirement,
  parseTableUpdate,
  tableRequirementToJson,
  tableUpdateToJson,
} from '../../../iceberg/rest/messages.js';
import { CatalogError } from '../../../iceberg/catalog/catalog.js';
import type { TableRequirement, TableUpdate } from '../../../iceberg/table-metadata-builder.js';

const BIG = 9007199254740993n; // 2^53 + 1: not representable as a double

const UPDATES: TableUpdate[] = [
  { action: 'assign-uuid', uuid: '9c12d441-03fe-4693-9a96-a0705ddf69c1' },
  { action: 'upgrade-format-version', 'format-version': 3 },
  { action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, fields: [{ id: 1, name: 'a', required: true, type: 'decimal(10,2)' }] }, 'last-column-id': 1 },
  { action: 'set-current-schema', 'schema-id': -1 },
  { action: 'add-spec', spec: { 'spec-id': 1, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'a_b', transform: 'bucket[16]' }] } },
  { action: 'set-default-spec', 'spec-id': -1 },
  { action: 'add-sort-order', 'sort-order': { 'order-id': 1, fields: [{ 'source-id': 1, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] } },
  { action: 'set-default-sort-order', 'sort-order-id': 1 },
  {
    action: 'add-snapshot',
    snapshot: { 'snapshot-id': BIG, 'parent-snapshot-id': 7n, 'sequence-number': 3, 'timestamp-ms': 1700000000000, 'manifest-list': 's3://b/t/metadata/snap.avro', summary: { operation: 'append', 'floe.offsets': '{"0":9}' }, 'schema-id': 1 },
  },
  { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': BIG },
  { action: 'remove-snapshots', 'snapshot-ids': [BIG, 5n] },
  { action: 'remove-snapshot-ref', 'ref-name': 'old' },
  { action: 'set-location', location: 's3://b/t2' },
  { action: 'set-properties', updates: { a: '1' } },
  { action: 'remove-properties', removals: ['b'] },
];

const REQUIREMENTS: TableRequirement[] = [
  { type: 'assert-create' },
  { type: 'assert-table-uuid', uuid: '9c12d441-03fe-4693-9a96-a0705ddf69c1' },
  { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': BIG },
  { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null },
  { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 4 },
  { type: 'assert-current-schema-id', 'current-schema-id': 0 },
  { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1000 },
  { type: 'assert-default-spec-id', 'default-spec-id': 0 },
  { type: 'assert-default-sort-order-id', 'default-sort-order-id': 0 },
];

const wire = (v: Parameters<typeof stringifyJson>[0]): unknown => parseJson(stringifyJson(v));

test('every TableUpdate and TableRequirement survives the wire, 64-bit ids exact', () => {
  for (const u of UPDATES) assert.deepEqual(parseTableUpdate(wire(tableUpdateToJson(u))), u, u.action);
  for (const r of REQUIREMENTS) assert.deepEqual(parseTableRequirement(wire(tableRequirementToJson(r))), r, r.type);
  const text = stringifyJson(tableUpdateToJson(UPDATES[8] as TableUpdate));
  assert.ok(text.includes('"snapshot-id":9007199254740993'), 'written as a bare integer literal');
});

test('create-table requests round-trip; ids and orders default as the spec allows', () => {
  const json = createTableRequestToJson('t', { schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'x', required: false, type: 'long' }] }, formatVersion: 3, location: 's3://b/t' });
  assert.equal(json['stage-create'], false, 'stage-create is sent, as Iceberg\'s clients send it (Nessie requires it)');
  const { name, request, stageCreate } = parseCreateTableRequest(wire(json));
  assert.equal(name, 't');
  assert.equal(stageCreate, false);
  assert.equal(request.formatVersion, 3);
  assert.equal(request.location, 's3://b/t');
  const minimal = parseCreateTableRequest({ name: 'm', schema: { type: 'struct', fields: [] }, 'write-order': { fields: [] } });
  assert.equal(minimal.request.schema['schema-id'], 0);
  assert.equal(minimal.request.sortOrder?.['order-id'], 0);
});

test('malformed messages are 400s that name the problem', () => {
  const bad = (f: () => unknown, re: RegExp): void =>
    assert.throws(f, (e: unknown) => e instanceof CatalogError && e.code === 'INVALID_REQUEST' && re.test(e.message));
  bad(() => parseTableUpdate({ action: 'explode' }), /'explode' is not supported/);
  bad(() => parseTableUpdate({ action: 'set-current-schema' }), /integer 'schema-id'/);
  bad(() => parseTableUpdate({ action: 'add-schema', schema: { type: 'struct', fields: [{ id: 1, name: 'a', required: true, type: 'nope' }] } }), /add-schema.*nope/);
  bad(() => parseTableUpdate({ action: 'set-properties', updates: { a: 1 } }), /'a' must be a string/);
  bad(() => parseTableRequirement({ type: 'assert-ref-snapshot-id', 'snapshot-id': 1 }), /string 'ref'/);
  bad(() => parseCommitTableRequest({ updates: [] }), /'requirements' list/);
  bad(() => parseCreateTableRequest({ schema: { type: 'struct', fields: [] } }), /string 'name'/);
});
