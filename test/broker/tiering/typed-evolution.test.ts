// Schema evolution while a producer keeps producing (issue 11's scenario): v1; v2 adds an optional field;
// v3 widens int to long; v4 drops a field; v5 changes a field's type in a way Iceberg cannot express. The
// table evolves by itself in the commits that first need each version, keeps every row (earlier rows read
// null for later columns), the v5 records are dead letters (with a log line and a metric naming the topic,
// schema and reason), a background producer is never refused, tiering keeps committing after v5, and Kafka
// consumers read every original byte once the local segments are gone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AvroSerializer, Compatibility, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { createTypedTopic, kafkaValues, tableQuery, tableSchema, tierAll, typedEnv } from './typed-fixture.js';
import { waitFor } from '../../helpers/tiered-table.js';

const record = (fields: unknown[]) => JSON.stringify({ type: 'record', name: 'User', namespace: 'floe.evolve', fields });
const V1 = record([{ name: 'id', type: 'int' }, { name: 'name', type: 'string' }, { name: 'score', type: 'int' }]);
const V2 = record([{ name: 'id', type: 'int' }, { name: 'name', type: 'string' }, { name: 'score', type: 'int' }, { name: 'email', type: ['null', 'string'], default: null }]);
const V3 = record([{ name: 'id', type: 'int' }, { name: 'name', type: 'string' }, { name: 'score', type: 'long' }, { name: 'email', type: ['null', 'string'], default: null }]);
const V4 = record([{ name: 'id', type: 'int' }, { name: 'score', type: 'long' }, { name: 'email', type: ['null', 'string'], default: null }]);
const V5 = record([{ name: 'id', type: 'string' }, { name: 'score', type: 'long' }, { name: 'email', type: ['null', 'string'], default: null }]);

test('a schema evolving v1 to v5 while producing: the table follows, v5 goes to dead letters, nothing stops', { timeout: 180_000 }, async (t) => {
  const e = await typedEnv(t, ['--iceberg.commit.interval.ms=300']);
  const topic = 'users';
  await createTypedTopic(e, topic, { 'iceberg.mode': 'value_schema_id_prefix', 'iceberg.commit.interval.ms': '300', 'internal.segment.bytes': '2048' });
  const subject = `${topic}-value`;
  const client = new SchemaRegistryClient({ baseURLs: [e.registryUrl] });
  const producer = e.kafka.producer();
  await producer.connect();
  t.after(() => producer.disconnect());

  // A producer that keeps writing v1 records all along (its serializer keeps the v1 id).
  const v1Id = await client.register(subject, { schemaType: 'AVRO', schema: V1 });
  const v1 = new AvroSerializer(client, SerdeType.VALUE, { useSchemaId: v1Id });
  const sent = new Map<number, Buffer>();
  let stop = false;
  let backgroundSends = 0;
  let slowestMs = 0;
  const background = (async () => {
    for (let n = 0; !stop; n++) {
      const value = await v1.serialize(topic, { id: 100_000 + n, name: `bg${n}`, score: n });
      const started = performance.now();
      const [meta] = await producer.send({ topic, acks: -1, messages: [{ value }] });
      slowestMs = Math.max(slowestMs, performance.now() - started);
      sent.set(Number(meta!.baseOffset), value);
      backgroundSends++;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();

  const committed = () => e.b.broker.services.tiering!.plugin.metadata.highestCommittedOffset({ topic, partition: 0 });
  /** Produces 30 records with `schema` (registered first), then waits until the table holds them. */
  const phase = async (schema: string, value: (i: number) => Record<string, unknown>): Promise<number> => {
    const id = await client.register(subject, { schemaType: 'AVRO', schema });
    const ser = new AvroSerializer(client, SerdeType.VALUE, { useSchemaId: id });
    let last = -1;
    for (let i = 0; i < 30; i++) {
      const v = await ser.serialize(topic, value(i));
      const [meta] = await producer.send({ topic, acks: -1, messages: [{ value: v }] });
      last = Number(meta!.baseOffset);
      sent.set(last, v);
    }
    // Tiering commits on its own interval: wait for the table to pass this phase's records.
    await waitFor(`the table holds offset ${last}`, async () => (committed() >= last ? true : undefined), 60_000);
    return id;
  };

  await phase(V1, (i) => ({ id: i, name: `u${i}`, score: i }));
  await phase(V2, (i) => ({ id: 100 + i, name: `u${i}`, score: i, email: i % 2 ? `u${i}@x` : null }));
  await phase(V3, (i) => ({ id: 200 + i, name: `u${i}`, score: 5_000_000_000 + i, email: null }));
  await phase(V4, (i) => ({ id: 300 + i, score: i, email: `v4-${i}` }));
  await client.updateConfig(subject, { compatibility: Compatibility.NONE });
  const v5Id = await phase(V5, (i) => ({ id: `s${i}`, score: i, email: null }));
  // After the incompatible version, ingestion goes on: more v4 records reach the table.
  await phase(V4, (i) => ({ id: 400 + i, score: i, email: null }));
  stop = true;
  await background;
  await tierAll(e, topic);

  const fields = await tableSchema(e, topic);
  assert.deepEqual(fields.map((f) => f.name), ['kafka', 'value', 'id', 'name', 'score', 'email']);
  assert.equal(fields.find((f) => f.name === 'score')!.type, 'long', 'v3 widened score to long');
  assert.equal(fields.find((f) => f.name === 'id')!.type, 'int', 'v5 did not change id');

  const rows = await tableQuery(t, e, topic, (from) => `select kafka."offset" as o, kafka.value_schema_id as sid, id, name, score::varchar as score, email from ${from} order by o`);
  assert.equal(rows.length, sent.size, 'every record is a row of the table');
  const byId = (lo: number) => rows.filter((r) => typeof r['id'] === 'number' && (r['id'] as number) >= lo && (r['id'] as number) < lo + 30);
  assert.ok(byId(0).every((r) => r['email'] === null), 'v1 rows read null for the column v2 added');
  assert.deepEqual(byId(100).map((r) => r['email']), Array.from({ length: 30 }, (_, i) => (i % 2 ? `u${i}@x` : null)));
  assert.deepEqual(byId(200).map((r) => r['score']), Array.from({ length: 30 }, (_, i) => String(5_000_000_000 + i)), 'longs beyond int range after the widening');
  assert.ok(byId(300).every((r) => r['name'] === null), 'v4 rows read null for the dropped field');
  const v5Rows = rows.filter((r) => r['sid'] === null);
  assert.equal(v5Rows.length, 30, 'the v5 records are untyped rows in the table');

  const dead = await tableQuery(t, e, `${topic}~dlq`, (from) => `select kafka."offset" as o, reason, message, schema_id from ${from} order by o`);
  assert.equal(dead.length, 30);
  assert.ok(dead.every((d) => d['reason'] === 'INCOMPATIBLE_SCHEMA' && d['schema_id'] === v5Id));
  assert.match(String(dead[0]!['message']), /id changes from int to string/);
  assert.deepEqual(dead.map((d) => Number(d['o'])), v5Rows.map((r) => Number(r['o'])));
  // One warning names the topic, the schema id, its subject and version, and the reason.
  const refusals = e.warnings().filter((w) => w['schemaId'] === v5Id);
  assert.equal(refusals.length, 1, `one warning for schema id ${v5Id}: ${JSON.stringify(e.warnings())}`);
  assert.equal(refusals[0]!['level'], 'warn');
  assert.equal(refusals[0]!['topic'], topic);
  assert.deepEqual(refusals[0]!['subjects'], [`${subject} version 5`]);
  assert.equal(refusals[0]!['reason'], 'INCOMPATIBLE_SCHEMA');
  assert.match(String(refusals[0]!['detail']), /id changes from int to string/);

  assert.ok(backgroundSends > 0, 'the background producer produced throughout');
  t.diagnostic(`background producer: ${backgroundSends} sends, slowest ${slowestMs.toFixed(1)} ms`);
  const metrics = await (await fetch(`${e.b.adminUrl}/metrics`)).text();
  assert.match(metrics, new RegExp(`floe_table_dead_letter_records_total\\{topic="${topic}",reason="INCOMPATIBLE_SCHEMA"\\} 30`));
  assert.match(metrics, new RegExp(`floe_table_typed_records_total\\{topic="${topic}",bytes="rebuilt"\\} ${sent.size - 30}`));

  assert.equal(e.b.broker.services.logs.get(topic, 0)!.logStartOffset, sent.size, 'the local segments are gone');
  const served = await kafkaValues(e, topic);
  assert.equal(served.size, sent.size);
  for (const [offset, v] of sent) assert.deepEqual(served.get(offset), v, `offset ${offset} comes back byte for byte`);
});
