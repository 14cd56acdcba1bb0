// `_schemas` records: Confluent's key and value shapes, and a decode of every encode.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeRecord, encodeRecord, type RegistryRecord } from '../../../broker/schema-registry/records.js';

test('keys and values have Confluent\'s shapes', () => {
  const schema = encodeRecord({ kind: 'SCHEMA', subject: 's', version: 2, value: { subject: 's', version: 2, id: 7, schemaType: 'AVRO', schema: '"int"', references: [], deleted: false } });
  assert.deepEqual(JSON.parse(schema.key.toString()), { keytype: 'SCHEMA', subject: 's', version: 2, magic: 1 });
  assert.deepEqual(JSON.parse(schema.value?.toString() ?? ''), { subject: 's', version: 2, id: 7, references: [], schema: '"int"', deleted: false }, 'AVRO leaves schemaType out, as Confluent does');
  const json = encodeRecord({ kind: 'SCHEMA', subject: 's', version: 1, value: { subject: 's', version: 1, id: 1, schemaType: 'JSON', schema: '{}', references: [{ name: 'r', subject: 'o', version: 1 }], deleted: true } });
  assert.equal(JSON.parse(json.value?.toString() ?? '').schemaType, 'JSON');
  assert.deepEqual(JSON.parse(encodeRecord({ kind: 'CONFIG', subject: null, value: 'FULL' }).key.toString()), { keytype: 'CONFIG', subject: null, magic: 0 });
  assert.deepEqual(JSON.parse(encodeRecord({ kind: 'CONFIG', subject: null, value: 'FULL' }).value?.toString() ?? ''), { compatibilityLevel: 'FULL' });
  assert.deepEqual(JSON.parse(encodeRecord({ kind: 'MODE', subject: 'x', value: 'IMPORT' }).value?.toString() ?? ''), { mode: 'IMPORT' });
  assert.equal(encodeRecord({ kind: 'SCHEMA', subject: 's', version: 1, value: null }).value, null, 'a permanent delete is a tombstone');
});

test('every record decodes to what was encoded; other key types and garbage are ignored', () => {
  const records: RegistryRecord[] = [
    { kind: 'SCHEMA', subject: 's', version: 3, value: { subject: 's', version: 3, id: 9, schemaType: 'PROTOBUF', schema: 'syntax = "proto3";', references: [{ name: 'a.proto', subject: 'a', version: 1 }], deleted: true, metadata: { properties: { owner: 'me' } } } },
    { kind: 'SCHEMA', subject: 's', version: 3, value: null },
    { kind: 'CONFIG', subject: 's', value: 'BACKWARD_TRANSITIVE' },
    { kind: 'CONFIG', subject: null, value: null },
    { kind: 'MODE', subject: null, value: 'READONLY' },
    { kind: 'ID_HIGH_WATER', value: 41 },
  ];
  for (const r of records) {
    const e = encodeRecord(r);
    assert.deepEqual(decodeRecord(e.key, e.value), r);
  }
  assert.equal(decodeRecord(Buffer.from('{"keytype":"NOOP","magic":0}'), null), undefined);
  assert.equal(decodeRecord(Buffer.from('not json'), Buffer.from('x')), undefined);
  assert.equal(decodeRecord(null, Buffer.from('{}')), undefined);
  assert.equal(decodeRecord(Buffer.from('{"keytype":"CONFIG","subject":null,"magic":0}'), Buffer.from('{"compatibilityLevel":"SIDEWAYS"}')), undefined);
});
