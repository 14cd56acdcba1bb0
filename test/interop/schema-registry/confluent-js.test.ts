// Confluent's official JavaScript client, @confluentinc/schemaregistry, unchanged against Floe's registry:
// its Avro, JSON Schema and Protobuf serializers register schemas on first use (auto-register), the records
// go through Floe as Kafka messages (kafkajs), and the deserializers decode them by the id in the wire
// format's prefix. The client's admin calls (versions, lookups, config, compatibility, deletes) give what
// Confluent's registry gives.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { create, createFileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import {
  AvroDeserializer,
  AvroSerializer,
  JsonDeserializer,
  JsonSerializer,
  ProtobufDeserializer,
  ProtobufSerializer,
  SchemaRegistryClient,
  SerdeType,
} from '@confluentinc/schemaregistry';
import { Kafka, logLevel } from 'kafkajs';
import protobuf from 'protobufjs';
import { startRegistryBroker } from './registry-broker.js';

/** Produces `value` to `topic` through Floe and reads it back, so the bytes really travel as a Kafka record. */
async function throughKafka(bootstrap: string, topic: string, value: Buffer): Promise<Buffer> {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'registry-js', logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: [{ value }] });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `g-${topic}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = await new Promise<Buffer>((resolve) => {
    void consumer.run({ eachMessage: async ({ message }) => resolve(message.value ?? Buffer.alloc(0)) });
  });
  await consumer.disconnect();
  return got;
}

test('@confluentinc/schemaregistry serializers and client against Floe', { timeout: 120_000 }, async (t) => {
  const broker = await startRegistryBroker();
  t.after(() => broker.stop());
  const client = new SchemaRegistryClient({ baseURLs: [broker.registryUrl] });

  await t.test('Avro: register, serialize with the latest version, produce, consume, deserialize', async () => {
    const schema = { type: 'record', name: 'Reading', namespace: 'floe.test', fields: [{ name: 'sensor', type: 'string' }, { name: 'value', type: 'double' }] };
    const registered = await client.register('js-avro-value', { schemaType: 'AVRO', schema: JSON.stringify(schema) });
    const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
    const bytes = await ser.serialize('js-avro', { sensor: 's1', value: 21.5 });
    assert.equal(bytes[0], 0, 'Confluent wire format: magic byte 0');
    const id = bytes.readInt32BE(1);
    assert.equal(id, registered, 'the serializer writes the registered id');
    assert.equal(id, 1, 'the first schema gets id 1');
    const back = await throughKafka(broker.bootstrap, 'js-avro', bytes);
    const de = new AvroDeserializer(new SchemaRegistryClient({ baseURLs: [broker.registryUrl] }), SerdeType.VALUE, {});
    assert.deepEqual({ ...(await de.deserialize('js-avro', back)) }, { sensor: 's1', value: 21.5 });
    const latest = await client.getLatestSchemaMetadata('js-avro-value');
    assert.equal(latest.id, id);
    assert.equal(latest.version, 1);
    assert.deepEqual(JSON.parse(latest.schema ?? ''), schema);
  });

  await t.test('JSON Schema: register, serialize with the latest version (validated), produce, consume, deserialize', async () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: 'Order',
      type: 'object',
      properties: { id: { type: 'integer' }, item: { type: 'string' } },
      required: ['id'],
    };
    await client.register('js-json-value', { schemaType: 'JSON', schema: JSON.stringify(schema) });
    const ser = new JsonSerializer(client, SerdeType.VALUE, { useLatestVersion: true, validate: true });
    const bytes = await ser.serialize('js-json', { id: 7, item: 'tea' });
    await assert.rejects(ser.serialize('js-json', { item: 'no id' }), 'the serializer validates against the schema it got from the registry');
    const back = await throughKafka(broker.bootstrap, 'js-json', bytes);
    const de = new JsonDeserializer(new SchemaRegistryClient({ baseURLs: [broker.registryUrl] }), SerdeType.VALUE, { validate: true });
    assert.deepEqual(await de.deserialize('js-json', back), { id: 7, item: 'tea' });
    const meta = await client.getLatestSchemaMetadata('js-json-value');
    assert.equal(meta.schemaType, 'JSON');
    assert.equal(bytes.readInt32BE(1), meta.id);
  });

  await t.test('Protobuf: auto-register (base64 descriptor), produce, consume, deserialize', async () => {
    const fileProto = create(FileDescriptorProtoSchema, {
      name: 'floe/reading.proto',
      package: 'floe.test',
      syntax: 'proto3',
      messageType: [
        {
          name: 'Reading',
          field: [
            { name: 'sensor', number: 1, type: 9, label: 1, jsonName: 'sensor' },
            { name: 'value', number: 2, type: 1, label: 1, jsonName: 'value' },
            { name: 'tags', number: 3, type: 9, label: 3, jsonName: 'tags' },
          ],
        },
      ],
    });
    const files = createFileRegistry(fileProto, () => undefined);
    const desc = files.getMessage('floe.test.Reading');
    assert.ok(desc);
    const ser = new ProtobufSerializer(client, SerdeType.VALUE, { autoRegisterSchemas: true });
    ser.registry.add(desc);
    const msg = create(desc, { sensor: 's2', value: 3.25, tags: ['a', 'b'] } as never);
    const bytes = await ser.serialize('js-proto', msg);
    const back = await throughKafka(broker.bootstrap, 'js-proto', bytes);
    const de = new ProtobufDeserializer(new SchemaRegistryClient({ baseURLs: [broker.registryUrl] }), SerdeType.VALUE, {});
    const decoded = (await de.deserialize('js-proto', back)) as { sensor: string; value: number; tags: string[] };
    assert.equal(decoded.sensor, 's2');
    assert.equal(decoded.value, 3.25);
    assert.deepEqual(decoded.tags, ['a', 'b']);
    const meta = await client.getLatestSchemaMetadata('js-proto-value');
    assert.equal(meta.schemaType, 'PROTOBUF');
  });

  await t.test('Protobuf registered as .proto text decodes with the deserializer (served to it as a FileDescriptorProto)', async () => {
    const text = 'syntax = "proto3";\npackage floe.text;\nmessage Note {\n  string body = 1;\n  repeated int32 marks = 2;\n  map<string, string> attrs = 3;\n}\n';
    const id = await client.register('js-proto-text-value', { schemaType: 'PROTOBUF', schema: text });
    const Note = protobuf.parse(text).root.lookupType('floe.text.Note');
    const payload = Buffer.from(Note.encode(Note.fromObject({ body: 'hi', marks: [1, 2], attrs: { k: 'v' } })).finish());
    const header = Buffer.alloc(6);
    header.writeInt32BE(id, 1); // magic 0, the id, then message index 0 (the first message), one zero byte
    const de = new ProtobufDeserializer(new SchemaRegistryClient({ baseURLs: [broker.registryUrl] }), SerdeType.VALUE, {});
    const decoded = (await de.deserialize('js-proto-text', Buffer.concat([header, payload]))) as { body: string; marks: number[]; attrs: Record<string, string> };
    assert.equal(decoded.body, 'hi');
    assert.deepEqual(decoded.marks, [1, 2]);
    assert.deepEqual({ ...decoded.attrs }, { k: 'v' });
  });

  await t.test('client admin calls: ids are global, lookups, compatibility, config, deletes', async () => {
    const v1 = JSON.stringify({ type: 'record', name: 'User', fields: [{ name: 'name', type: 'string' }] });
    const v2 = JSON.stringify({ type: 'record', name: 'User', fields: [{ name: 'name', type: 'string' }, { name: 'age', type: ['null', 'int'], default: null }] });
    const bad = JSON.stringify({ type: 'record', name: 'User', fields: [{ name: 'name', type: 'int' }] });
    const id1 = await client.register('users-value', { schemaType: 'AVRO', schema: v1 });
    assert.equal(await new SchemaRegistryClient({ baseURLs: [broker.registryUrl] }).register('users-value', { schemaType: 'AVRO', schema: v1 }), id1, 'the same schema again: the same id');
    assert.equal(await client.register('other-value', { schemaType: 'AVRO', schema: v1 }), id1, 'the same schema under another subject: the same global id');
    assert.equal(await client.testSubjectCompatibility('users-value', { schemaType: 'AVRO', schema: v2 }), true);
    assert.equal(await client.testSubjectCompatibility('users-value', { schemaType: 'AVRO', schema: bad }), false);
    const id2 = await client.register('users-value', { schemaType: 'AVRO', schema: v2 });
    assert.ok(id2 > id1);
    assert.deepEqual(await client.getAllVersions('users-value'), [1, 2]);
    const found = await client.getVersion('users-value', { schemaType: 'AVRO', schema: v2 });
    assert.equal(found, 2);
    await assert.rejects(client.register('users-value', { schemaType: 'AVRO', schema: bad }), (err: { status?: number }) => err.status === 409);
    await client.updateCompatibility('users-value', 'NONE' as never);
    assert.equal(await client.getCompatibility('users-value'), 'NONE');
    assert.equal(await client.register('users-value', { schemaType: 'AVRO', schema: bad }) > id2, true, 'NONE accepts the incompatible schema');
    assert.deepEqual(await client.deleteSubject('other-value'), [1]);
    assert.deepEqual(await client.deleteSubject('other-value', true), [1]);
    assert.ok(!(await client.getAllSubjects()).includes('other-value'));
    const bySubjects = await client.getBySubjectAndId('users-value', id1);
    assert.equal(bySubjects.schema, v1, 'the id still resolves while users-value uses it');
  });
});
