// Topics in a schema mode become typed tables: Avro values written with Confluent's serializer (wire-format
// prefix) become top-level columns with the right values, the exact bytes come back to Kafka consumers from
// the typed columns once the local segments are gone, and values that cannot be typed are dead letters:
// still served to Kafka byte for byte, and copied to the <topic>~dlq table with the reason.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AvroSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { createTypedTopic, kafkaValues, produce, tableQuery, tableSchema, tierAll, typedEnv } from './typed-fixture.js';
import { loadTable, waitFor } from '../../helpers/tiered-table.js';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

const ORDER_V1 = {
  type: 'record',
  name: 'Order',
  namespace: 'floe.test',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'item', type: 'string' },
    { name: 'qty', type: 'int' },
    { name: 'price', type: { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 } },
    { name: 'at', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'tags', type: { type: 'array', items: 'string' } },
    { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['NEW', 'PAID'] } },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
};

test('Avro values with the wire-format prefix become typed columns, and Kafka still reads every byte', { timeout: 120_000 }, async (t) => {
  const e = await typedEnv(t);
  const topic = 'orders';
  await createTypedTopic(e, topic, { 'iceberg.mode': 'value_schema_id_prefix' });
  const client = new SchemaRegistryClient({ baseURLs: [e.registryUrl] });
  await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(ORDER_V1) });
  const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const values: (Buffer | null)[] = [];
  for (let i = 0; i < 60; i++) {
    values.push(
      await ser.serialize(topic, {
        id: 1000 + i,
        item: `item-${i}`,
        qty: i,
        price: Buffer.from([0x01, i]),
        at: 1_700_000_000_000 + i * 1000,
        tags: i % 2 === 0 ? ['a', 'b'] : [],
        status: i % 3 === 0 ? 'PAID' : 'NEW',
        note: i % 4 === 0 ? null : `n${i}`,
      }),
    );
  }
  // Garbage and a tombstone among them: dead letters and a null value.
  values.push(Buffer.from('not avro at all'), Buffer.from([0, 0, 0, 0x7f, 0x7f, 1, 2]), null);
  await produce(e, topic, values);
  await tierAll(e, topic);

  const fields = await tableSchema(e, topic);
  assert.deepEqual(fields.map((f) => f.name), ['kafka', 'value', 'id', 'item', 'qty', 'price', 'at', 'tags', 'status', 'note']);
  const typeOf = (n: string) => fields.find((f) => f.name === n)!.type;
  assert.equal(typeOf('id'), 'long');
  assert.equal(typeOf('price'), 'decimal(10,2)');
  assert.equal(typeOf('at'), 'timestamptz');
  assert.equal(typeOf('status'), 'string');

  const rows = await tableQuery(t, e, topic, (from) => `select kafka."offset" as o, kafka.value_schema_id as sid, "value" is null as no_bytes, id, item, qty, price::varchar as price, epoch_ms("at") as at_ms, tags, status, note from ${from} order by o`);
  assert.equal(rows.length, 63, 'every record is a row');
  for (let i = 0; i < 60; i++) {
    const r = rows[i]!;
    assert.equal(Number(r['o']), i);
    assert.equal(r['sid'], 1, 'decoded with schema id 1');
    assert.equal(r['no_bytes'], true, 'the typed columns rebuild the value: no raw bytes kept');
    assert.equal(String(r['id']), String(1000 + i));
    assert.equal(r['item'], `item-${i}`);
    assert.equal(r['qty'], i);
    assert.equal(Number(r['price']), (256 + i) / 100);
    assert.equal(Number(r['at_ms']), 1_700_000_000_000 + i * 1000);
    assert.deepEqual(r['tags'], i % 2 === 0 ? ['a', 'b'] : []);
    assert.equal(r['status'], i % 3 === 0 ? 'PAID' : 'NEW');
    assert.equal(r['note'], i % 4 === 0 ? null : `n${i}`);
  }
  for (const r of rows.slice(60, 62)) {
    assert.equal(r['sid'], null, 'a dead letter is not typed');
    assert.equal(r['no_bytes'], false, 'its bytes stay in the data file');
  }
  assert.equal(rows[62]!['no_bytes'], true, 'a tombstone has no value');

  const log = e.b.broker.services.logs.get(topic, 0)!;
  assert.equal(log.logStartOffset, 63, 'the local segments are gone: Kafka reads come from the typed files');
  const served = await kafkaValues(e, topic);
  assert.equal(served.size, 63);
  values.forEach((v, i) => assert.deepEqual(served.get(i), v, `offset ${i} comes back byte for byte`));

  const dead = await tableQuery(t, e, `${topic}~dlq`, (from) => `select kafka."offset" as o, reason, message, "value" as v, schema_id from ${from} order by o`);
  assert.deepEqual(dead.map((d) => [Number(d['o']), d['reason']]), [[60, 'MISSING_PREFIX'], [61, 'UNKNOWN_SCHEMA']]);
  assert.match(String(dead[1]!['message']), /schema id 32639/);

  // Deleting the topic drops its table and its dead letters, as Kafka deletes a deleted topic's data.
  const admin = e.kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
  await waitFor('both tables to be dropped', async () => ((await loadTable(e.restUrl, topic)) === undefined && (await loadTable(e.restUrl, `${topic}~dlq`)) === undefined ? true : undefined));
  // ... and purged: no file is left in either table's folder.
  const left = async (name: string) => (await readdir(join(e.warehouse, 'kafka', name), { recursive: true, withFileTypes: true }).catch(() => [])).filter((d) => d.isFile()).length;
  await waitFor('both tables\' files to be purged', async () => ((await left(topic)) + (await left(`${topic}~dlq`)) === 0 ? true : undefined));
});

test('compaction of a typed table keeps every row typed and every Kafka byte', { timeout: 120_000 }, async (t) => {
  const e = await typedEnv(t);
  const topic = 'compacted-orders';
  await createTypedTopic(e, topic, { 'iceberg.mode': 'value_schema_id_prefix', 'internal.segment.bytes': '1024' });
  const client = new SchemaRegistryClient({ baseURLs: [e.registryUrl] });
  await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(ORDER_V1) });
  const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const values: Buffer[] = [];
  // Six rounds, each tiered on its own: six small data files at least.
  for (let round = 0; round < 6; round++) {
    const batch: Buffer[] = [];
    for (let i = 0; i < 10; i++) {
      const n = round * 10 + i;
      batch.push(await ser.serialize(topic, { id: n, item: `i${n}`, qty: n, price: Buffer.from([n]), at: 1_700_000_000_000 + n, tags: [], status: 'NEW', note: null }));
    }
    // An undecodable value in each round: compaction must keep it (raw) and not copy it to the dead letters again.
    batch.push(Buffer.from(`garbage-${round}`));
    await produce(e, topic, batch);
    await tierAll(e, topic);
    values.push(...batch);
  }
  const plugin = e.b.broker.services.tiering!.plugin as unknown as { compact(tp: { topic: string; partition: number }, o: { minInputFiles: number }): Promise<{ status: string }> };
  const filesBefore = (await tableQuery(t, e, topic, (from) => `select count(distinct filename) as n from ${from}`))[0]!['n'];
  const outcome = await plugin.compact({ topic, partition: 0 }, { minInputFiles: 2 });
  assert.equal(outcome.status, 'compacted');
  const rows = await tableQuery(t, e, topic, (from) => `select kafka."offset" as o, kafka.value_schema_id as sid, "value" is null as rebuilt, id, item from ${from} order by o`);
  assert.equal(rows.length, values.length, 'one row per record after compaction');
  const filesAfter = (await tableQuery(t, e, topic, (from) => `select count(distinct filename) as n from ${from}`))[0]!['n'];
  assert.ok(Number(filesAfter) < Number(filesBefore), `compaction merged files (${String(filesBefore)} -> ${String(filesAfter)})`);
  rows.forEach((r, k) => {
    const garbage = k % 11 === 10;
    assert.equal(r['sid'], garbage ? null : 1, `row ${k} is typed unless it is garbage`);
    assert.equal(r['rebuilt'], !garbage);
    if (!garbage) assert.equal(r['item'], `i${Math.floor(k / 11) * 10 + (k % 11)}`);
  });
  const dead = await tableQuery(t, e, `${topic}~dlq`, (from) => `select kafka."offset" as o from ${from} order by o`);
  assert.deepEqual(dead.map((d) => Number(d['o'])), [10, 21, 32, 43, 54, 65], 'each dead letter once, compaction added none');
  const served = await kafkaValues(e, topic);
  values.forEach((v, i) => assert.deepEqual(served.get(i), v, `offset ${i} byte for byte after compaction`));
});
