// The JSON Schema codec against payloads @confluentinc/schemaregistry's JsonSerializer wrote (validating,
// through Floe's registry, with a reference), in draft-07 and 2020-12: each decodes to the expected row and
// re-encodes byte for byte. Texts in other spellings decode to the same values but re-encode to other bytes.
// Refusals: $ref cycles, garbage, values that do not fit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { TypedValueError, type WriterSchema } from '../../../tiering/typed/api.js';
import { compileValueCodec } from '../../../tiering/typed/codec.js';
import { parseWirePrefix } from '../../../tiering/typed/wire-format.js';
import { startRegistryBroker } from '../../interop/schema-registry/registry-broker.js';
import { EVENT, EVENT_FIELDS } from './fixtures.js';
import { writerSchemaFromRegistry } from './registry-writer.js';

function jsonWriter(schema: unknown, references: WriterSchema['references'] = []): WriterSchema {
  return { id: 1, schemaType: 'JSON', schema: JSON.stringify(schema), references };
}

function assertRoundTrip(codec: ReturnType<typeof compileValueCodec>, payload: Uint8Array, message: string): Record<string, unknown> {
  const row = codec.decode(payload);
  assert.equal(Buffer.from(codec.encode(row)).toString(), Buffer.from(payload).toString(), `${message}: encode(decode(p)) is p`);
  return row as Record<string, unknown>;
}

test('JSON Schema: the mapping', () => {
  assert.deepEqual(compileValueCodec(jsonWriter(EVENT)).fields, EVENT_FIELDS);
  const top = compileValueCodec(jsonWriter({ type: 'array', items: { type: 'integer' } }));
  assert.deepEqual(top.fields, [{ name: 'value', required: true, type: { type: 'list', element: 'long', elementRequired: true } }]);
  const viaRef = compileValueCodec(jsonWriter({ $ref: '#/$defs/Root', $defs: { Root: { type: 'object', properties: { r: { type: 'boolean' } } } } }));
  assert.deepEqual(viaRef.fields, [{ name: 'r', required: false, type: 'boolean' }], 'a top-level $ref');
  const enums = compileValueCodec(jsonWriter({ type: 'object', properties: { a: { enum: ['x', null] }, b: { enum: [1, 'one'] }, c: { const: 5 } }, required: ['a', 'b', 'c'] }));
  assert.deepEqual(enums.fields, [{ name: 'a', required: false, type: 'string' }, { name: 'b', required: true, type: 'string' }, { name: 'c', required: true, type: 'long' }]);
  assert.deepEqual(assertRoundTrip(enums, Buffer.from('{"a":null,"b":"one","c":5}'), 'enums'), { a: null, b: '"one"', c: 5n }, 'a mixed enum holds JSON text');
  const merged = compileValueCodec(jsonWriter({ allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { type: 'object', properties: { b: { type: 'integer' } } }] }));
  assert.deepEqual(merged.fields, [{ name: 'a', required: true, type: 'string' }, { name: 'b', required: false, type: 'long' }]);
});

test('JSON Schema: @confluentinc/schemaregistry JsonSerializer payloads (draft-07 and 2020-12, a reference) round-trip', { timeout: 60_000 }, async (t) => {
  const broker = await startRegistryBroker();
  t.after(() => broker.stop());
  const client = new SchemaRegistryClient({ baseURLs: [broker.registryUrl] });
  const ser = new JsonSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const id = await client.register('events-value', { schemaType: 'JSON', schema: JSON.stringify(EVENT) });
  const writer = await writerSchemaFromRegistry(broker.registryUrl, id);
  const codec = compileValueCodec(writer);
  assert.deepEqual(codec.fields, EVENT_FIELDS);
  const full = {
    id: 7,
    name: null,
    score: 1.25,
    ok: false,
    when: new Date(Date.UTC(2024, 1, 29, 12, 0, 0, 5)).toISOString(),
    day: '2024-02-29',
    at: '23:59:59.500',
    uid: '123e4567-e89b-12d3-a456-426614174000',
    color: 'green',
    level: 3,
    tags: ['x', 'y'],
    attrs: { a: -1, b: 9007199254740991 },
    home: { city: 'Oslo', zip: 150 },
    pick: { city: 'Rome' },
    maybe: null,
    extra: { anything: [1, 'two', null] },
  };
  const bytes = await ser.serialize('events', full);
  const prefix = parseWirePrefix(bytes, 'JSON');
  assert.equal(prefix.schemaId, id);
  assert.deepEqual(prefix.messageIndexes, []);
  const row = assertRoundTrip(codec, bytes.subarray(prefix.payloadStart), 'a full event');
  assert.deepEqual(row, {
    id: 7n,
    name: null,
    score: 1.25,
    ok: false,
    when: BigInt(Date.UTC(2024, 1, 29, 12, 0, 0, 5)) * 1000n,
    day: 19_782,
    at: 86_399_500_000n,
    uid: '123e4567-e89b-12d3-a456-426614174000',
    color: 'green',
    level: 3n,
    tags: ['x', 'y'],
    attrs: [
      ['a', -1n],
      ['b', 9007199254740991n],
    ],
    home: { city: 'Oslo', zip: 150n },
    pick: { option0: null, option1: null, option2: { city: 'Rome', zip: null } },
    maybe: null,
    extra: '{"anything":[1,"two",null]}',
  });
  const small = await ser.serialize('events', { id: -1, name: 'n', pick: 'p', maybe: 2.5 });
  const smallRow = assertRoundTrip(codec, small.subarray(5), 'a small event');
  assert.deepEqual(
    Object.entries(smallRow).filter(([, v]) => v !== null),
    [
      ['id', -1n],
      ['name', 'n'],
      ['pick', { option0: 'p', option1: null, option2: null }],
      ['maybe', 2.5],
    ],
  );

  // 2020-12 with $defs, and a referenced schema by its name.
  const point = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] };
  await client.register('point-value', { schemaType: 'JSON', schema: JSON.stringify(point) });
  const shape = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { kind: { $ref: '#/$defs/Kind' }, at: { $ref: 'point.json' }, path: { type: 'array', items: { $ref: 'point.json' } } },
    $defs: { Kind: { type: 'string', enum: ['line', 'dot'] } },
  };
  const shapeId = await client.register('shapes-value', { schemaType: 'JSON', schema: JSON.stringify(shape), references: [{ name: 'point.json', subject: 'point-value', version: 1 }] });
  const shapeCodec = compileValueCodec(await writerSchemaFromRegistry(broker.registryUrl, shapeId));
  const POINT = { type: 'struct', fields: [{ name: 'x', required: true, type: 'double' }, { name: 'y', required: true, type: 'double' }] };
  assert.deepEqual(shapeCodec.fields, [
    { name: 'kind', required: false, type: 'string' },
    { name: 'at', required: false, type: POINT },
    { name: 'path', required: false, type: { type: 'list', element: POINT, elementRequired: true } },
  ]);
  const shapeSer = new JsonSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const shapeBytes = await shapeSer.serialize('shapes', { kind: 'line', at: { x: 0, y: -1.5 }, path: [{ x: 1, y: 2 }] });
  assert.deepEqual(assertRoundTrip(shapeCodec, shapeBytes.subarray(5), 'a shape'), { kind: 'line', at: { x: 0, y: -1.5 }, path: [{ x: 1, y: 2 }] });
});

test('JSON Schema: other spellings of the same value decode alike but re-encode to the canonical text', () => {
  const codec = compileValueCodec(jsonWriter(EVENT));
  // `maybe` allows null: a null is written as null (absent, it would not rebuild); `score` does not: left out.
  const canonical = '{"id":1,"name":"a","when":"2024-01-02T03:04:05.000Z","attrs":{"k":1},"maybe":null}';
  const expected = codec.decode(Buffer.from(canonical));
  assert.equal(Buffer.from(codec.encode(expected)).toString(), canonical);
  for (const other of [
    '{ "id": 1, "name": "a", "when": "2024-01-02T03:04:05.000Z", "attrs": {"k": 1}, "maybe": null }', // spaces
    '{"name":"a","id":1,"when":"2024-01-02T03:04:05.000Z","attrs":{"k":1},"maybe":null}', // key order
    '{"id":1,"name":"a","when":"2024-01-02T04:04:05+01:00","attrs":{"k":1},"maybe":null}', // another offset
    '{"id":1,"name":"a","when":"2024-01-02T03:04:05Z","attrs":{"k":1},"maybe":null}', // no fraction
    '{"id":1,"name":"a","when":"2024-01-02T03:04:05.000Z","attrs":{"k":1},"maybe":null,"unknown":true}', // an extra property
    '{"id":1.0,"name":"a","when":"2024-01-02T03:04:05.000Z","attrs":{"k":1},"maybe":null}', // 1.0
    '{"id":1,"name":"a","when":"2024-01-02T03:04:05.000Z","attrs":{"k":1}}', // a nullable property absent
    '{"id":1,"name":"\\u0061","when":"2024-01-02T03:04:05.000Z","attrs":{"k":1},"maybe":null}', // an escape
  ]) {
    const row = codec.decode(Buffer.from(other));
    assert.deepEqual(row, expected, other);
    assert.equal(Buffer.from(codec.encode(row)).toString(), canonical, `${other} re-encodes canonically, so conversion keeps its raw bytes`);
  }
});

test('JSON Schema: refusals and values that do not fit', () => {
  const cyclic = { type: 'object', properties: { child: { $ref: '#/definitions/Node' } }, definitions: { Node: { type: 'object', properties: { next: { $ref: '#/definitions/Node' } } } } };
  assert.throws(() => compileValueCodec(jsonWriter(cyclic)), (e: TypedValueError) => e.code === 'UNSUPPORTED_SCHEMA' && e.message.includes('#/definitions/Node') && /recursive/.test(e.message));
  assert.throws(() => compileValueCodec(jsonWriter({ type: 'object', properties: { a: { $ref: 'missing.json' } } })), (e: TypedValueError) => e.code === 'INVALID_SCHEMA' && e.message.includes('missing.json'));
  assert.throws(() => compileValueCodec(jsonWriter({ type: 'object', properties: { a: { $ref: '#/definitions/Nope' } } })), (e: TypedValueError) => e.code === 'INVALID_SCHEMA');
  assert.throws(() => compileValueCodec({ id: 1, schemaType: 'JSON', schema: '{', references: [] }), (e: TypedValueError) => e.code === 'INVALID_SCHEMA');
  const codec = compileValueCodec(jsonWriter(EVENT));
  const bad = [
    'not json',
    '\xff\xfe',
    '[1,2]', // not an object
    '{"name":"a"}', // the required id is missing
    '{"id":"7","name":null}', // a string for an integer
    '{"id":1.5,"name":null}', // not an integer
    '{"id":9007199254740993,"name":null}', // beyond 2^53
    '{"id":1,"name":null,"when":"yesterday"}', // not a date-time
    '{"id":1,"name":null,"day":"2023-02-29"}', // no such day
    '{"id":1,"name":null,"pick":true}', // fits no branch
    '{"id":1,"name":null,"tags":[1]}', // a number in a string list
  ];
  for (const text of bad) assert.throws(() => codec.decode(Buffer.from(text, 'latin1')), (e: TypedValueError) => e instanceof TypedValueError && e.code === 'CORRUPT_PAYLOAD', text);
});
