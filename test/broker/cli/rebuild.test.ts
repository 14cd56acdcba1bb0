// The runbook's rebuild (`floe table rebuild`): a typed topic whose producer started before its schema was
// registered has only dead letters in its table; once the schema is registered, the rebuild converts the
// range again from the stored Kafka bytes, and the same rows are typed, while Kafka consumers read the
// same bytes before and after. Bad arguments exit 2, an unknown table 4.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import avsc from 'avsc';
import { SchemaRegistryClient } from '@confluentinc/schemaregistry';
import { runFloe } from '../../helpers/cli.js';
import { createTypedTopic, kafkaValues, produce, tableQuery, tierAll, typedEnv } from '../tiering/typed-fixture.js';

const PAYMENT = { type: 'record', name: 'Payment', fields: [{ name: 'id', type: 'long' }, { name: 'amount', type: 'double' }] };

test('floe table rebuild types the rows a missing schema left untyped, and Kafka bytes do not change', { timeout: 120_000 }, async (t) => {
  const e = await typedEnv(t);
  const topic = 'payments';
  await createTypedTopic(e, topic, { 'iceberg.mode': 'value_schema_latest' });
  const type = avsc.Type.forSchema(PAYMENT as avsc.Schema);
  const values = Array.from({ length: 30 }, (_, i) => type.toBuffer({ id: i, amount: i + 0.5 }));
  await produce(e, topic, values);
  await tierAll(e, topic);
  const before = await tableQuery(t, e, topic, (from) => `select kafka.value_schema_id as sid from ${from}`);
  assert.equal(before.length, 30);
  assert.ok(before.every((r) => r['sid'] === null), 'no schema yet: every row is a dead letter');
  const servedBefore = await kafkaValues(e, topic);

  await new SchemaRegistryClient({ baseURLs: [e.registryUrl] }).register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(PAYMENT) });
  const admin = ['--admin-url', e.b.adminUrl!];
  const usage = await runFloe(['table', 'rebuild', `kafka.${topic}`, ...admin]);
  assert.equal(usage.code, 2, 'no --from-offset: usage error');
  const unknown = await runFloe(['table', 'rebuild', 'kafka.nope', '--from-offset', '0', ...admin]);
  assert.equal(unknown.code, 4, 'unknown table');
  const run = await runFloe(['table', 'rebuild', `kafka.${topic}`, '--from-offset', '0', ...admin]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /rebuilt [1-9]\d* segments of kafka\.payments from offset 0/);

  const after = await tableQuery(t, e, topic, (from) => `select kafka."offset" as o, kafka.value_schema_id as sid, "value" is null as rebuilt, id, amount from ${from} order by o`);
  assert.deepEqual(after.map((r) => [Number(r['o']), r['sid'], r['rebuilt'], Number(r['id']), r['amount']]), values.map((_, i) => [i, 1, true, i, i + 0.5]), 'every row is typed now');
  const servedAfter = await kafkaValues(e, topic);
  assert.deepEqual([...servedAfter], [...servedBefore], 'Kafka consumers read the same bytes');
  values.forEach((v, i) => assert.deepEqual(servedAfter.get(i), v));
});
