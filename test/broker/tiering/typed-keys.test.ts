// Typed keys (iceberg.key.mode): keys written with Confluent's serializer become the struct column `key`
// beside the typed value columns, follow a new key schema version, come back to Kafka consumers byte for byte
// from the `key` column once the local segments are gone, and keys that cannot be typed are dead letters
// (also for a tombstone, whose dead letter has no value).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AvroSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { createTypedTopic, tableQuery, tableSchema, tierAll, typedEnv, type TypedEnv } from './typed-fixture.js';
import { fetchAllBatches } from '../../tiering/e2e/wire.js';

const KEY_V1 = { type: 'record', name: 'OrderKey', namespace: 'floe.test', fields: [{ name: 'region', type: 'string' }, { name: 'id', type: 'long' }] };
const KEY_V2 = { ...KEY_V1, fields: [...KEY_V1.fields, { name: 'shard', type: ['null', 'int'], default: null }] };
const VALUE = { type: 'record', name: 'Order', namespace: 'floe.test', fields: [{ name: 'qty', type: 'int' }, { name: 'key', type: 'string' }] };

interface Sent {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

async function produceRecords(e: TypedEnv, topic: string, records: readonly Sent[]): Promise<void> {
  const producer = e.kafka.producer();
  await producer.connect();
  for (let i = 0; i < records.length; i += 20) {
    await producer.send({ topic, acks: -1, messages: records.slice(i, i + 20).map((r) => ({ key: r.key, value: r.value, partition: 0 })) });
  }
  await producer.disconnect();
}

/** Every record Kafka serves for partition 0 (key and value), by offset. */
async function kafkaRecords(e: TypedEnv, topic: string): Promise<Map<number, Sent>> {
  const out = new Map<number, Sent>();
  for (const served of await fetchAllBatches(e.b.port, topic, 0, 0)) {
    if (served.batch.isControl) continue;
    for (const r of served.batch.records) {
      out.set(Number(served.batch.baseOffset) + r.offsetDelta, { key: r.key === null ? null : Buffer.from(r.key), value: r.value === null ? null : Buffer.from(r.value) });
    }
  }
  return out;
}

/** An Avro string as its binary encoding (zigzag length, then UTF-8): a key without the wire-format prefix. */
function avroString(s: string): Buffer {
  const bytes = Buffer.from(s, 'utf8');
  assert.ok(bytes.length < 64, 'one varint byte');
  return Buffer.concat([Buffer.from([bytes.length * 2]), bytes]);
}

test('Avro keys with the wire-format prefix become the key struct column, evolve, and Kafka still reads every key byte', { timeout: 120_000 }, async (t) => {
  const e = await typedEnv(t);
  const topic = 'keyed-orders';
  await createTypedTopic(e, topic, { 'iceberg.mode': 'value_schema_id_prefix', 'iceberg.key.mode': 'key_schema_id_prefix' });
  const client = new SchemaRegistryClient({ baseURLs: [e.registryUrl] });
  await client.register(`${topic}-key`, { schemaType: 'AVRO', schema: JSON.stringify(KEY_V1) });
  await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(VALUE) });
  const keys = new AvroSerializer(client, SerdeType.KEY, { useLatestVersion: true });
  const values = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const sent: Sent[] = [];
  for (let i = 0; i < 30; i++) sent.push({ key: await keys.serialize(topic, { region: i % 2 === 0 ? 'eu' : 'us', id: i }), value: await values.serialize(topic, { qty: i, key: `field-${i}` }) });
  // A key that is not Avro, a null key, and a tombstone with a typed key.
  sent.push({ key: Buffer.from('plain key'), value: await values.serialize(topic, { qty: 30, key: 'x' }) });
  sent.push({ key: null, value: await values.serialize(topic, { qty: 31, key: 'y' }) });
  sent.push({ key: await keys.serialize(topic, { region: 'eu', id: 32 }), value: null });
  await produceRecords(e, topic, sent);
  await tierAll(e, topic);

  // Version 2 of the key schema adds an optional field: the key struct gains it, earlier rows read null.
  await client.register(`${topic}-key`, { schemaType: 'AVRO', schema: JSON.stringify(KEY_V2) });
  // A fresh client: the first one caches the subject's latest version.
  const keys2 = new AvroSerializer(new SchemaRegistryClient({ baseURLs: [e.registryUrl] }), SerdeType.KEY, { useLatestVersion: true });
  const later: Sent[] = [];
  for (let i = 33; i < 40; i++) later.push({ key: await keys2.serialize(topic, { region: 'ap', id: i, shard: i }), value: await values.serialize(topic, { qty: i, key: `field-${i}` }) });
  await produceRecords(e, topic, later);
  await tierAll(e, topic);
  sent.push(...later);

  const fields = await tableSchema(e, topic);
  assert.deepEqual(fields.map((f) => f.name), ['kafka', 'value', 'key', 'qty', 'key_'], 'the typed key is the column key; a value field named key becomes key_');
  const keyType = fields.find((f) => f.name === 'key')!.type as { type: string; fields: { name: string; type: string }[] };
  assert.deepEqual(keyType.fields.map((f) => [f.name, f.type]), [['region', 'string'], ['id', 'long'], ['shard', 'int']]);

  const rows = await tableQuery(t, e, topic, (from) => `select kafka."offset" as o, kafka.key_schema_id as ksid, kafka.key is null as no_key_bytes, "key".region as region, "key".id as id, "key".shard as shard, qty, key_ from ${from} order by o`);
  assert.equal(rows.length, 40, 'every record is a row');
  for (let i = 0; i < 30; i++) {
    const r = rows[i]!;
    assert.equal(r['ksid'], 1, `offset ${i}: the key is decoded with schema id 1`);
    assert.equal(r['no_key_bytes'], true, 'the key column rebuilds the key: no raw bytes kept');
    assert.equal(r['region'], i % 2 === 0 ? 'eu' : 'us');
    assert.equal(String(r['id']), String(i));
    assert.equal(r['shard'], null, 'written before the field existed');
    assert.equal(r['qty'], i);
    assert.equal(r['key_'], `field-${i}`);
  }
  assert.equal(rows[30]!['ksid'], null, 'a key that is not Avro is not typed');
  assert.equal(rows[30]!['no_key_bytes'], false, 'its bytes stay in kafka.key');
  assert.equal(rows[30]!['qty'], 30, 'its value is still typed');
  assert.equal(rows[31]!['ksid'], null);
  assert.equal(rows[31]!['no_key_bytes'], true, 'a null key has no bytes');
  assert.equal(rows[32]!['ksid'], 1, 'a tombstone\'s key is typed');
  assert.equal(rows[32]!['qty'], null);
  for (let i = 33; i < 40; i++) {
    assert.equal(rows[i]!['ksid'], 3, `offset ${i}: decoded with the key schema's version 2 (id 3)`);
    assert.equal(rows[i]!['region'], 'ap');
    assert.equal(rows[i]!['shard'], i);
  }

  assert.equal(e.b.broker.services.logs.get(topic, 0)!.logStartOffset, 40, 'the local segments are gone: Kafka reads come from the typed files');
  const served = await kafkaRecords(e, topic);
  assert.equal(served.size, 40);
  sent.forEach((s, i) => {
    assert.deepEqual(served.get(i)?.key, s.key, `offset ${i}: the key comes back byte for byte`);
    assert.deepEqual(served.get(i)?.value, s.value, `offset ${i}: the value comes back byte for byte`);
  });

  const dead = await tableQuery(t, e, `${topic}~dlq`, (from) => `select kafka."offset" as o, kafka.key as k, reason, message from ${from} order by o`);
  assert.deepEqual(dead.map((d) => [Number(d['o']), d['reason']]), [[30, 'MISSING_PREFIX']]);
  assert.match(String(dead[0]!['message']), /^key: the key starts with byte 112/);
  assert.deepEqual(Buffer.from(dead[0]!['k'] as Uint8Array), Buffer.from('plain key'));
});

test('keys typed with the subject\'s latest schema: a string key is key.value, and a tombstone with a bad key is a dead letter without a value', { timeout: 120_000 }, async (t) => {
  const e = await typedEnv(t);
  const topic = 'sessions';
  await createTypedTopic(e, topic, { 'iceberg.key.mode': 'key_schema_latest', 'iceberg.key.subject': 'session-ids' });
  const client = new SchemaRegistryClient({ baseURLs: [e.registryUrl] });
  await client.register('session-ids', { schemaType: 'AVRO', schema: JSON.stringify('string') });
  const sent: Sent[] = [];
  for (let i = 0; i < 20; i++) sent.push({ key: avroString(`session-${i}`), value: Buffer.from(`payload ${i}`) });
  // A length prefix longer than the bytes: not an Avro string.
  sent.push({ key: Buffer.from([0x7e, 0x41]), value: null });
  await produceRecords(e, topic, sent);
  await tierAll(e, topic);

  const fields = await tableSchema(e, topic);
  assert.deepEqual(fields.map((f) => f.name), ['kafka', 'value', 'key'], 'values stay binary (iceberg.mode is key_value)');
  const rows = await tableQuery(t, e, topic, (from) => `select kafka."offset" as o, kafka.key_schema_id as ksid, kafka.key is null as no_key_bytes, "key"."value" as k, "value" as v from ${from} order by o`);
  assert.equal(rows.length, 21);
  for (let i = 0; i < 20; i++) {
    assert.equal(rows[i]!['ksid'], 1);
    assert.equal(rows[i]!['no_key_bytes'], true);
    assert.equal(rows[i]!['k'], `session-${i}`);
    assert.deepEqual(Buffer.from(rows[i]!['v'] as Uint8Array), Buffer.from(`payload ${i}`), 'the value is kept as bytes');
  }
  assert.equal(rows[20]!['ksid'], null);
  assert.equal(rows[20]!['no_key_bytes'], false);

  const served = await kafkaRecords(e, topic);
  sent.forEach((s, i) => {
    assert.deepEqual(served.get(i)?.key, s.key, `offset ${i}: the key comes back byte for byte`);
    assert.deepEqual(served.get(i)?.value, s.value, `offset ${i}: the value comes back byte for byte`);
  });
  const dead = await tableQuery(t, e, `${topic}~dlq`, (from) => `select kafka."offset" as o, reason, message, "value" is null as no_value from ${from} order by o`);
  assert.deepEqual(dead.map((d) => [Number(d['o']), d['reason'], d['no_value']]), [[20, 'CORRUPT_PAYLOAD', true]]);
  assert.match(String(dead[0]!['message']), /^key: schema id 1/);
});
