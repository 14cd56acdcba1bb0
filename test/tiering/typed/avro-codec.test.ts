// The Avro codec against payloads other serializers wrote: avsc with its plain (non-logical) values, and
// @confluentinc/schemaregistry's AvroSerializer through Floe's own registry (with a referenced named type).
// Each payload must decode to the expected row and re-encode byte for byte. Python's fastavro is in
// python-serializers.test.ts. Refusals: recursion, garbage, bad schemas.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AvroSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import avro from 'avsc';
import { TypedValueError, type WriterSchema } from '../../../tiering/typed/api.js';
import { compileValueCodec } from '../../../tiering/typed/codec.js';
import { parseWirePrefix } from '../../../tiering/typed/wire-format.js';
import { startRegistryBroker } from '../../interop/schema-registry/registry-broker.js';
import { READING, READING_FIELDS } from './fixtures.js';
import { writerSchemaFromRegistry } from './registry-writer.js';

function avroWriter(schema: unknown, references: WriterSchema['references'] = [], id = 1): WriterSchema {
  return { id, schemaType: 'AVRO', schema: JSON.stringify(schema), references };
}

function assertRoundTrip(codec: ReturnType<typeof compileValueCodec>, payload: Uint8Array, message: string): Record<string, unknown> {
  const row = codec.decode(payload);
  assert.deepEqual(Buffer.from(codec.encode(row)).toString('hex'), Buffer.from(payload).toString('hex'), `${message}: encode(decode(p)) is p`);
  return row as Record<string, unknown>;
}

test('Avro: the mapping of every construct', () => {
  const codec = compileValueCodec(avroWriter(READING));
  assert.deepEqual(codec.fields, READING_FIELDS);
  assert.equal(codec.message, undefined);
});

test('Avro: avsc-written values (plain, no logical types) decode to the expected row and re-encode exactly', () => {
  const codec = compileValueCodec(avroWriter(READING));
  const plain = avro.Type.forSchema(READING as avro.Schema, { wrapUnions: true });
  const base = {
    id: -4_000_000_000_000_001, // avsc writes plain numbers exactly only while 2|n| < 2^53
    score: 1.5,
    ratio: -0.1,
    ok: true,
    label: 'héllo',
    blob: Buffer.from([0, 1, 255]),
    hash: Buffer.from('abcd'),
    kind: 'C',
    price: Buffer.from([0xfe, 0x0c]), // -500 unscaled: -5.00
    fprice: Buffer.from([0, 0, 0, 0, 0, 0x01, 0xe2, 0x40]), // 123456 unscaled: 12.3456
    day: 19_782, // 2024-02-29
    tmillis: 45_296_789, // 12:34:56.789
    tmicros: 45_296_789_123,
    tsmillis: 1_700_000_000_123,
    tsmicros: -1_000_001,
    local: 1_700_000_000_123_456,
    uid: '123e4567-e89b-12d3-a456-426614174000',
    note: null,
    note2: { string: 'n2' },
    choice: { 'floe.typed.Point': { x: 1, y: -2 } },
    either: { string: 'e' },
    tags: ['a', 'b'],
    points: [{ x: 3, y: 4 }],
    attrs: { a: { long: 1 }, b: null },
    nested: { deep: { v: 2.25 } },
  };
  const row = assertRoundTrip(codec, plain.toBuffer(base), 'all constructs');
  assert.deepEqual(row, {
    id: -4_000_000_000_000_001n,
    score: 1.5,
    ratio: -0.1,
    ok: true,
    label: 'héllo',
    blob: new Uint8Array([0, 1, 255]),
    hash: new Uint8Array(Buffer.from('abcd')),
    kind: 'C',
    price: -500n,
    fprice: 123_456n,
    day: 19_782,
    tmillis: 45_296_789_000n,
    tmicros: 45_296_789_123n,
    tsmillis: 1_700_000_000_123_000n,
    tsmicros: -1_000_001n,
    local: 1_700_000_000_123_456n,
    uid: '123e4567-e89b-12d3-a456-426614174000',
    note: null,
    note2: 'n2',
    choice: { tag: 2, field0: null, field1: null, field2: { x: 1, y: -2 } },
    either: { tag: 1, field0: null, field1: 'e' },
    tags: ['a', 'b'],
    points: [{ x: 3, y: 4 }],
    attrs: [
      ['a', 1n],
      ['b', null],
    ],
    nested: { deep: { v: 2.25 } },
  });
  // The other branches and empty collections.
  const other = assertRoundTrip(codec, plain.toBuffer({ ...base, note: { string: '' }, note2: null, choice: null, either: { long: 0 }, tags: [], points: [], attrs: {} }), 'other branches');
  assert.equal(other['note'], '');
  assert.equal(other['note2'], null);
  assert.equal(other['choice'], null);
  assert.deepEqual(other['either'], { tag: 0, field0: 0n, field1: null });
  assert.deepEqual(other['attrs'], []);
  const int = assertRoundTrip(codec, plain.toBuffer({ ...base, choice: { int: -7 } }), 'an int branch');
  assert.deepEqual(int['choice'], { tag: 0, field0: -7, field1: null, field2: null });
});

test('Avro: longs beyond 2^53 and the extremes are exact bigints', () => {
  const codec = compileValueCodec(avroWriter({ type: 'record', name: 'L', fields: [{ name: 'a', type: 'long' }, { name: 'b', type: { type: 'long' } }, { name: 'c', type: ['null', 'long'] }] }));
  // zigzag varints written by hand: 2^63-1, -2^63, 2^53+1
  const max = Buffer.from('feffffffffffffffff01', 'hex');
  const min = Buffer.from('ffffffffffffffffff01', 'hex');
  const over = Buffer.from('8280808080808020', 'hex');
  const payload = Buffer.concat([max, min, Buffer.from([2]), over]);
  const row = assertRoundTrip(codec, payload, 'long extremes');
  assert.deepEqual(row, { a: 2n ** 63n - 1n, b: -(2n ** 63n), c: 2n ** 53n + 1n });
});

test('Avro: a top-level non-record is one field named value; uuid on fixed(16); invalid logical types fall back', () => {
  const top = compileValueCodec(avroWriter(['null', 'string']));
  assert.deepEqual(top.fields, [{ name: 'value', required: false, type: 'string' }]);
  assert.deepEqual(assertRoundTrip(top, Buffer.from([2, 2, 0x41]), 'top-level union'), { value: 'A' });
  const uuidFixed = compileValueCodec(avroWriter({ type: 'fixed', name: 'U', size: 16, logicalType: 'uuid' }));
  assert.deepEqual(uuidFixed.fields, [{ name: 'value', required: true, type: 'uuid' }]);
  const bytes = Buffer.from('123e4567e89b12d3a456426614174000', 'hex');
  assert.deepEqual(assertRoundTrip(uuidFixed, bytes, 'uuid fixed'), { value: '123e4567-e89b-12d3-a456-426614174000' });
  // decimal with scale > precision, or precision beyond Iceberg's 38: the spec says ignore the logical type.
  const bad = compileValueCodec(avroWriter({ type: 'record', name: 'B', fields: [{ name: 'd', type: { type: 'bytes', logicalType: 'decimal', precision: 2, scale: 3 } }, { name: 'e', type: { type: 'bytes', logicalType: 'decimal', precision: 40 } }, { name: 'f', type: { type: 'int', logicalType: 'timestamp-millis' } }] }));
  assert.deepEqual(bad.fields.map((f) => f.type), ['binary', 'binary', 'int']);
});

test('Avro: values that decode but do not re-encode to the same bytes', () => {
  const codec = compileValueCodec(avroWriter({ type: 'record', name: 'R', fields: [{ name: 'u', type: { type: 'string', logicalType: 'uuid' } }, { name: 'm', type: { type: 'map', values: 'int' } }] }));
  const plain = avro.Type.forSchema({ type: 'record', name: 'R', fields: [{ name: 'u', type: 'string' }, { name: 'm', type: { type: 'map', values: 'int' } }] } as avro.Schema);
  const upper = plain.toBuffer({ u: '123E4567-E89B-12D3-A456-426614174000', m: {} });
  const row = codec.decode(upper);
  assert.equal(row['u'], '123e4567-e89b-12d3-a456-426614174000', 'a uuid reads lowercase');
  assert.notDeepEqual(Buffer.from(codec.encode(row)), upper, 'so its bytes do not rebuild: conversion keeps them raw');
  // A map written in two blocks (legal Avro) re-encodes as one.
  const twoBlocks = Buffer.concat([plain.toBuffer({ u: '123e4567-e89b-12d3-a456-426614174000', m: {} }).subarray(0, -1), Buffer.from([2, 2, 0x61, 2, 2, 2, 0x62, 4, 0])]);
  const r2 = codec.decode(twoBlocks);
  assert.deepEqual(r2['m'], [
    ['a', 1],
    ['b', 2],
  ]);
  assert.notDeepEqual(Buffer.from(codec.encode(r2)), twoBlocks);
  assert.throws(() => codec.decode(plain.toBuffer({ u: 'not-a-uuid', m: {} })), (e: TypedValueError) => e.code === 'CORRUPT_PAYLOAD' && /not a UUID/.test(e.message));
});

test('Avro: refusals', () => {
  const recursive = { type: 'record', name: 'Node', namespace: 'floe.t', fields: [{ name: 'value', type: 'int' }, { name: 'next', type: ['null', 'Node'] }] };
  assert.throws(() => compileValueCodec(avroWriter(recursive)), (e: TypedValueError) => e.code === 'UNSUPPORTED_SCHEMA' && e.message.includes('floe.t.Node') && /recursive/.test(e.message));
  const mutual = { type: 'record', name: 'A', fields: [{ name: 'b', type: { type: 'record', name: 'B', fields: [{ name: 'a', type: { type: 'array', items: 'A' } }] } }] };
  assert.throws(() => compileValueCodec(avroWriter(mutual)), (e: TypedValueError) => e.code === 'UNSUPPORTED_SCHEMA' && e.message.includes('A → B → A'));
  assert.throws(() => compileValueCodec(avroWriter({ type: 'record', name: 'N', fields: [{ name: 'n', type: 'null' }] })), (e: TypedValueError) => e.code === 'UNSUPPORTED_SCHEMA' && e.message.includes('N.n'));
  assert.throws(() => compileValueCodec({ id: 1, schemaType: 'AVRO', schema: '{not json', references: [] }), (e: TypedValueError) => e.code === 'INVALID_SCHEMA');
  assert.throws(() => compileValueCodec(avroWriter({ type: 'record', name: 'R', fields: [{ name: 'p', type: 'floe.Missing' }] })), (e: TypedValueError) => e.code === 'INVALID_SCHEMA' && e.message.includes('floe.Missing'));
  const codec = compileValueCodec(avroWriter(READING));
  for (const garbage of [Buffer.from([]), Buffer.from([0xff, 0xff, 0xff]), Buffer.from('garbage that is not avro at all')]) {
    assert.throws(() => codec.decode(garbage), (e: TypedValueError) => e instanceof TypedValueError && e.code === 'CORRUPT_PAYLOAD', `garbage ${garbage.toString('hex')}`);
  }
  const small = compileValueCodec(avroWriter({ type: 'record', name: 'S', fields: [{ name: 'a', type: 'int' }] }));
  assert.throws(() => small.decode(Buffer.from([2, 2])), (e: TypedValueError) => e.code === 'CORRUPT_PAYLOAD' && /trailing/.test(e.message), 'bytes left over');
  assert.throws(() => small.encode({ a: 'x' }), (e: TypedValueError) => e.code === 'CORRUPT_PAYLOAD');
});

test('Avro: @confluentinc/schemaregistry AvroSerializer payloads, with a referenced named type, through Floe registry', { timeout: 60_000 }, async (t) => {
  const broker = await startRegistryBroker();
  t.after(() => broker.stop());
  const client = new SchemaRegistryClient({ baseURLs: [broker.registryUrl] });
  const address = { type: 'record', name: 'Address', namespace: 'floe.ref', fields: [{ name: 'city', type: 'string' }, { name: 'zip', type: ['null', 'int'], default: null }] };
  await client.register('address-value', { schemaType: 'AVRO', schema: JSON.stringify(address) });
  const person = {
    type: 'record',
    name: 'Person',
    namespace: 'floe.ref',
    fields: [
      { name: 'name', type: 'string' },
      { name: 'home', type: 'floe.ref.Address' },
      { name: 'others', type: { type: 'array', items: 'floe.ref.Address' } },
      { name: 'age', type: ['null', 'int'], default: null },
    ],
  };
  const id = await client.register('people-value', { schemaType: 'AVRO', schema: JSON.stringify(person), references: [{ name: 'floe.ref.Address', subject: 'address-value', version: 1 }] });
  const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const writer = await writerSchemaFromRegistry(broker.registryUrl, id);
  assert.equal(writer.references.length, 1);
  const codec = compileValueCodec(writer);
  assert.deepEqual(
    codec.fields.map((f) => f.name),
    ['name', 'home', 'others', 'age'],
  );
  const values = [
    { name: 'Ada', home: { city: 'London', zip: 12345 }, others: [{ city: 'Paris', zip: null }], age: 36 },
    { name: '', home: { city: 'Oslo', zip: null }, others: [], age: null },
  ];
  const expected = [
    { name: 'Ada', home: { city: 'London', zip: 12345 }, others: [{ city: 'Paris', zip: null }], age: 36 },
    { name: '', home: { city: 'Oslo', zip: null }, others: [], age: null },
  ];
  for (const [i, value] of values.entries()) {
    const bytes = await ser.serialize('people', value);
    const prefix = parseWirePrefix(bytes, 'AVRO');
    assert.equal(prefix.schemaId, id);
    const row = assertRoundTrip(codec, bytes.subarray(prefix.payloadStart), `Confluent record ${i}`);
    assert.deepEqual(row, expected[i]);
  }
});

test('Avro: logical types inside nullable unions, arrays and maps', () => {
  const schema = {
    type: 'record',
    name: 'N',
    fields: [
      { name: 'ts', type: ['null', { type: 'long', logicalType: 'timestamp-millis' }], default: null },
      { name: 'dec', type: [{ type: 'bytes', logicalType: 'decimal', precision: 4, scale: 1 }, 'null'] },
      { name: 'uid', type: ['null', { type: 'string', logicalType: 'uuid' }], default: null },
      { name: 'days', type: { type: 'array', items: { type: 'int', logicalType: 'date' } } },
      { name: 'times', type: { type: 'map', values: { type: 'long', logicalType: 'time-micros' } } },
      { name: 'mixed', type: ['null', 'string', { type: 'long', logicalType: 'local-timestamp-millis' }], default: null },
    ],
  };
  const codec = compileValueCodec(avroWriter(schema));
  assert.deepEqual(
    codec.fields.map((f) => [f.name, f.required, f.type]),
    [
      ['ts', false, 'timestamptz'],
      ['dec', false, 'decimal(4,1)'],
      ['uid', false, 'uuid'],
      ['days', true, { type: 'list', element: 'date', elementRequired: true }],
      ['times', true, { type: 'map', key: 'string', value: 'time', valueRequired: true }],
      ['mixed', false, { type: 'struct', fields: [{ name: 'tag', required: true, type: 'int' }, { name: 'field0', required: false, type: 'string' }, { name: 'field1', required: false, type: 'timestamp' }] }],
    ],
  );
  const plain = avro.Type.forSchema(
    { type: 'record', name: 'N', fields: [
      { name: 'ts', type: ['null', 'long'] },
      { name: 'dec', type: ['bytes', 'null'] },
      { name: 'uid', type: ['null', 'string'] },
      { name: 'days', type: { type: 'array', items: 'int' } },
      { name: 'times', type: { type: 'map', values: 'long' } },
      { name: 'mixed', type: ['null', 'string', 'long'] },
    ] } as avro.Schema,
    { wrapUnions: true },
  );
  const set = plain.toBuffer({ ts: { long: 1_000 }, dec: { bytes: Buffer.from([0x7f]) }, uid: { string: '00000000-0000-0000-0000-000000000001' }, days: [0, -1], times: { a: 5 }, mixed: { long: 2 } });
  assert.deepEqual(assertRoundTrip(codec, set, 'set'), {
    ts: 1_000_000n,
    dec: 127n,
    uid: '00000000-0000-0000-0000-000000000001',
    days: [0, -1],
    times: [['a', 5n]],
    mixed: { tag: 1, field0: null, field1: 2000n },
  });
  const unset = plain.toBuffer({ ts: null, dec: null, uid: null, days: [], times: {}, mixed: null });
  assert.deepEqual(assertRoundTrip(codec, unset, 'unset'), { ts: null, dec: null, uid: null, days: [], times: [], mixed: null });
});
