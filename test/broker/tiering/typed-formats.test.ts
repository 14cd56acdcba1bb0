// JSON Schema and Protobuf topics become typed tables too, in both schema modes: values written by
// Confluent's serializers (prefix mode) and by protobufjs without a prefix (latest mode) land in typed
// columns with the right values, and Kafka consumers read every original byte once the local segments are
// gone. JSON text that does not come back byte for byte from its columns keeps its raw bytes beside them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { create, createFileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { JsonSerializer, ProtobufSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import protobuf from 'protobufjs';
import { createTypedTopic, kafkaValues, produce, tableQuery, tableSchema, tierAll, typedEnv } from './typed-fixture.js';

test('JSON Schema values with the prefix: typed columns; compact JSON rebuilt, other spellings kept raw', { timeout: 120_000 }, async (t) => {
  const e = await typedEnv(t);
  const topic = 'events';
  await createTypedTopic(e, topic, { 'iceberg.mode': 'value_schema_id_prefix' });
  const client = new SchemaRegistryClient({ baseURLs: [e.registryUrl] });
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Event',
    type: 'object',
    properties: { id: { type: 'integer' }, kind: { type: 'string' }, ok: { type: 'boolean' }, day: { type: 'string', format: 'date' }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['id'],
  };
  const id = await client.register(`${topic}-value`, { schemaType: 'JSON', schema: JSON.stringify(schema) });
  const ser = new JsonSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const values: Buffer[] = [];
  for (let i = 0; i < 20; i++) values.push(await ser.serialize(topic, { id: i, kind: `k${i % 3}`, ok: i % 2 === 0, day: '2026-12-02', tags: ['x'] }));
  // The same kind of value, spelled with spaces: typed, but its exact text is kept.
  const spaced = Buffer.concat([values[0]!.subarray(0, 5), Buffer.from('{ "id": 99, "kind": "spaced" }')]);
  values.push(spaced);
  await produce(e, topic, values);
  await tierAll(e, topic);

  const names = (await tableSchema(e, topic)).map((f) => f.name);
  assert.deepEqual(names, ['kafka', 'value', 'id', 'kind', 'ok', 'day', 'tags']);
  const rows = await tableQuery(t, e, topic, (from) => `select kafka.value_schema_id as sid, "value" is null as rebuilt, id, kind, ok, day::varchar as day, tags from ${from} order by kafka."offset"`);
  assert.equal(rows.length, 21);
  rows.slice(0, 20).forEach((r, i) => {
    assert.equal(r['sid'], id);
    assert.equal(r['rebuilt'], true, 'compact JSON in schema order comes back from the columns');
    assert.equal(Number(r['id']), i);
    assert.equal(r['kind'], `k${i % 3}`);
    assert.equal(r['ok'], i % 2 === 0);
    assert.equal(r['day'], '2026-12-02');
    assert.deepEqual(r['tags'], ['x']);
  });
  assert.equal(rows[20]!['rebuilt'], false, 'the spaced text keeps its bytes');
  assert.equal(Number(rows[20]!['id']), 99, 'and is typed all the same');
  const served = await kafkaValues(e, topic);
  values.forEach((v, i) => assert.deepEqual(served.get(i), v, `offset ${i} byte for byte`));
});

test('Protobuf values with the prefix (Confluent serializer) and without it (latest mode)', { timeout: 120_000 }, async (t) => {
  const e = await typedEnv(t);
  const client = new SchemaRegistryClient({ baseURLs: [e.registryUrl] });

  // Prefix mode: Confluent's ProtobufSerializer registers the descriptor and writes the prefix.
  const withPrefix = 'readings';
  await createTypedTopic(e, withPrefix, { 'iceberg.mode': 'value_schema_id_prefix' });
  const fileProto = create(FileDescriptorProtoSchema, {
    name: 'floe/reading.proto',
    package: 'floe.test',
    syntax: 'proto3',
    messageType: [{
      name: 'Reading',
      field: [
        { name: 'sensor', number: 1, type: 9, label: 1, jsonName: 'sensor' },
        { name: 'value', number: 2, type: 1, label: 1, jsonName: 'value' },
        { name: 'count', number: 3, type: 3, label: 1, jsonName: 'count' },
        { name: 'tags', number: 4, type: 9, label: 3, jsonName: 'tags' },
      ],
    }],
  });
  const desc = createFileRegistry(fileProto, () => undefined).getMessage('floe.test.Reading');
  assert.ok(desc);
  const ser = new ProtobufSerializer(client, SerdeType.VALUE, { autoRegisterSchemas: true });
  ser.registry.add(desc);
  const prefixed: Buffer[] = [];
  for (let i = 0; i < 20; i++) prefixed.push(await ser.serialize(withPrefix, create(desc, { sensor: `s${i}`, value: i + 0.5, count: BigInt(i) * 1_000_000_000_000n, tags: i % 2 ? ['a'] : [] } as never)));
  await produce(e, withPrefix, prefixed);
  await tierAll(e, withPrefix);
  const rows = await tableQuery(t, e, withPrefix, (from) => `select "value" is null as rebuilt, sensor, "value_" as v, "count"::varchar as c, tags from ${from} order by kafka."offset"`);
  assert.equal(rows.length, 20);
  rows.forEach((r, i) => {
    assert.equal(r['rebuilt'], true);
    assert.equal(r['sensor'], `s${i}`);
    assert.equal(r['v'], i + 0.5, 'a field named value becomes the column value_');
    assert.equal(r['c'], String(BigInt(i) * 1_000_000_000_000n));
    assert.deepEqual(r['tags'], i % 2 ? ['a'] : []);
  });
  const served = await kafkaValues(e, withPrefix);
  prefixed.forEach((v, i) => assert.deepEqual(served.get(i), v, `offset ${i} byte for byte`));

  // Latest mode: plain protobufjs payloads, typed with the subject's latest schema.
  const plain = 'notes';
  const text = 'syntax = "proto3";\npackage floe.notes;\nmessage Note {\n  string body = 1;\n  repeated int32 marks = 2;\n  map<string, string> attrs = 3;\n}\n';
  await client.register('notes-schema', { schemaType: 'PROTOBUF', schema: text });
  await createTypedTopic(e, plain, { 'iceberg.mode': 'value_schema_latest', 'iceberg.value.subject': 'notes-schema' });
  const Note = protobuf.parse(text).root.lookupType('floe.notes.Note');
  const notes = Array.from({ length: 20 }, (_, i) => Buffer.from(Note.encode(Note.fromObject({ body: `b${i}`, marks: [i, i + 1], attrs: { k: `v${i}` } })).finish()));
  await produce(e, plain, notes);
  await tierAll(e, plain);
  const noteRows = await tableQuery(t, e, plain, (from) => `select "value" is null as rebuilt, body, marks, map_extract(attrs, 'k')[1] as k from ${from} order by kafka."offset"`);
  assert.equal(noteRows.length, 20);
  noteRows.forEach((r, i) => {
    assert.equal(r['rebuilt'], true);
    assert.equal(r['body'], `b${i}`);
    assert.deepEqual(r['marks'], [i, i + 1]);
    assert.equal(r['k'], `v${i}`);
  });
  const servedNotes = await kafkaValues(e, plain);
  notes.forEach((v, i) => assert.deepEqual(servedNotes.get(i), v, `offset ${i} byte for byte`));
});

test('value_schema_latest for Avro and JSON: bare payloads typed with the subject\'s latest schema', { timeout: 120_000 }, async (t) => {
  const e = await typedEnv(t);
  const client = new SchemaRegistryClient({ baseURLs: [e.registryUrl] });
  const avroSchema = { type: 'record', name: 'Point', fields: [{ name: 'x', type: 'int' }, { name: 'label', type: 'string' }] };
  await client.register('points-value', { schemaType: 'AVRO', schema: JSON.stringify(avroSchema) });
  await createTypedTopic(e, 'points', { 'iceberg.mode': 'value_schema_latest' });
  const avsc = (await import('avsc')).default;
  const type = avsc.Type.forSchema(avroSchema as never);
  const points = Array.from({ length: 15 }, (_, i) => type.toBuffer({ x: i, label: `p${i}` }));
  await produce(e, 'points', points);
  await tierAll(e, 'points');
  const rows = await tableQuery(t, e, 'points', (from) => `select kafka.value_schema_id as sid, "value" is null as rebuilt, x, label from ${from} order by kafka."offset"`);
  assert.deepEqual(rows.map((r) => [r['sid'], r['rebuilt'], r['x'], r['label']]), points.map((_, i) => [1, true, i, `p${i}`]));
  const served = await kafkaValues(e, 'points');
  points.forEach((v, i) => assert.deepEqual(served.get(i), v));

  const jsonSchema = { type: 'object', properties: { city: { type: 'string' }, temp: { type: 'number' } } };
  const jsonId = await client.register('weather-schema', { schemaType: 'JSON', schema: JSON.stringify(jsonSchema) });
  await createTypedTopic(e, 'weather', { 'iceberg.mode': 'value_schema_latest', 'iceberg.value.subject': 'weather-schema' });
  const readings = Array.from({ length: 15 }, (_, i) => Buffer.from(JSON.stringify({ city: `c${i}`, temp: i + 0.25 })));
  await produce(e, 'weather', readings);
  await tierAll(e, 'weather');
  const wrows = await tableQuery(t, e, 'weather', (from) => `select kafka.value_schema_id as sid, "value" is null as rebuilt, city, temp from ${from} order by kafka."offset"`);
  assert.deepEqual(wrows.map((r) => [r['sid'], r['rebuilt'], r['city'], r['temp']]), readings.map((_, i) => [jsonId, true, `c${i}`, i + 0.25]));
  const wserved = await kafkaValues(e, 'weather');
  readings.forEach((v, i) => assert.deepEqual(wserved.get(i), v));
});
