// @kafkajs/confluent-schema-registry, unchanged, against Floe's registry: register, encode and decode in
// each of its three formats, with the records produced and consumed through Floe by kafkajs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel } from 'kafkajs';
import protobuf from 'protobufjs';
import descriptorNamespace from 'protobufjs/ext/descriptor/index.js';
import { startRegistryBroker } from './registry-broker.js';

test('@kafkajs/confluent-schema-registry against Floe', { timeout: 120_000 }, async (t) => {
  const broker = await startRegistryBroker();
  const registry = new SchemaRegistry({ host: broker.registryUrl });
  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'kafkajs-registry', logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  // node:test runs after-hooks in the order they were added: the producer disconnects before the broker stops.
  t.after(async () => {
    await producer.disconnect();
    await broker.stop();
  });

  const roundTrip = async (topic: string, value: Buffer): Promise<Buffer> => {
    await producer.send({ topic, acks: -1, messages: [{ value }] });
    const consumer = kafka.consumer({ groupId: `g-${topic}` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const got = await new Promise<Buffer>((resolve) => {
      void consumer.run({ eachMessage: async ({ message }) => resolve(message.value ?? Buffer.alloc(0)) });
    });
    await consumer.disconnect();
    return got;
  };

  const avro = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify({ type: 'record', name: 'Click', namespace: 'floe.kjs', fields: [{ name: 'url', type: 'string' }] }) });
  assert.equal(avro.id, 1);
  const again = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify({ type: 'record', name: 'Click', namespace: 'floe.kjs', fields: [{ name: 'url', type: 'string' }] }) });
  assert.equal(again.id, 1, 'registering the same schema again returns its id');
  assert.deepEqual({ ...(await registry.decode(await roundTrip('kjs-avro', await registry.encode(avro.id, { url: '/a' })))) }, { url: '/a' });

  const json = await registry.register({ type: SchemaType.JSON, schema: JSON.stringify({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }) }, { subject: 'kjs-json-value' });
  assert.deepEqual(await registry.decode(await roundTrip('kjs-json', await registry.encode(json.id, { n: 4 }))), { n: 4 });

  const proto = await registry.register({ type: SchemaType.PROTOBUF, schema: 'syntax = "proto3";\npackage floe.kjs;\nmessage Ping {\n  string host = 1;\n  int64 at = 2;\n}\n' }, { subject: 'kjs-proto-value' });
  const decoded = (await registry.decode(await roundTrip('kjs-proto', await registry.encode(proto.id, { host: 'h1', at: 5 })))) as { host: string; at: unknown };
  assert.equal(decoded.host, 'h1');
  assert.equal(Number(decoded.at), 5);

  // A Protobuf schema registered as a base64 FileDescriptorProto (as Confluent's serializers send it): this
  // client parses .proto text, which the registry serves by default.
  const descriptor = descriptorNamespace as unknown as { FileDescriptorProto: protobuf.Type };
  const fdp = { name: 'floe/b64.proto', package: 'floe.b64', syntax: 'proto3', messageType: [{ name: 'Tick', field: [{ name: 'n', number: 1, type: 'TYPE_INT32', label: 'LABEL_OPTIONAL' }, { name: 'tags', number: 2, type: 'TYPE_STRING', label: 'LABEL_REPEATED' }] }] };
  const b64 = Buffer.from(descriptor.FileDescriptorProto.encode(descriptor.FileDescriptorProto.fromObject(fdp)).finish()).toString('base64');
  const reg = await fetch(`${broker.registryUrl}/subjects/kjs-b64-value/versions`, { method: 'POST', headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json' }, body: JSON.stringify({ schemaType: 'PROTOBUF', schema: b64 }) });
  const b64Id = ((await reg.json()) as { id: number }).id;
  const tick = (await registry.decode(await roundTrip('kjs-b64', await registry.encode(b64Id, { n: 9, tags: ['x'] })))) as { n: number; tags: string[] };
  assert.equal(tick.n, 9);
  assert.deepEqual([...tick.tags], ['x']);

  assert.equal(await registry.getLatestSchemaId('floe.kjs.Click'), 1, 'the default subject is the record\'s full name');
  assert.equal(await registry.getRegistryId('kjs-json-value', 1), json.id);
  const schema = await registry.getSchema(proto.id);
  assert.ok(schema, 'getSchema by id');
  await assert.rejects(
    registry.register({ type: SchemaType.AVRO, schema: JSON.stringify({ type: 'record', name: 'Click', namespace: 'floe.kjs', fields: [{ name: 'url', type: 'int' }] }) }),
    (err: Error) => /409|incompatible/i.test(err.message),
    'an incompatible schema is refused',
  );
});
