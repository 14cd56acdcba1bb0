// Transactions on a compacted topic, with kafkajs transactional producers: the cleaner removes aborted
// records (they never supersede a committed value), keeps committed ones by the latest-per-key rule, and
// never cleans past an open transaction (the last stable offset) until it ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker } from '../../../helpers/broker.js';
import { waitFor } from '../../../helpers/tiered-table.js';
import { readLog } from './helpers.js';

const TOPIC = 'compacted-txn';

test('aborted records are cleaned away, committed ones compete by offset, and an open transaction holds the cleaner back', { timeout: 120_000 }, async (t) => {
  const broker = await startBroker(['--log.cleaner.backoff.ms=100']);
  t.after(() => broker.stop());
  const kafka = new Kafka({ clientId: 'compaction-txn', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic: TOPIC, numPartitions: 1, configEntries: [
      { name: 'cleanup.policy', value: 'compact' },
      { name: 'internal.segment.bytes', value: '1500' },
      { name: 'min.cleanable.dirty.ratio', value: '0.01' },
    ] }],
  });
  await admin.disconnect();
  const plain = kafka.producer();
  await plain.connect();
  t.after(() => plain.disconnect());
  const tx = kafka.producer({ transactionalId: 'compaction-txn', idempotent: true, maxInFlightRequests: 1 });
  await tx.connect();
  t.after(() => tx.disconnect());
  const pad = 'x'.repeat(40);

  await plain.send({ topic: TOPIC, acks: -1, messages: [{ key: 'a', value: `a-plain-${pad}` }, { key: 'b', value: `b-plain-${pad}` }] });
  const aborted = await tx.transaction();
  await aborted.send({ topic: TOPIC, messages: [{ key: 'a', value: `a-aborted-${pad}` }, { key: 'c', value: `c-aborted-${pad}` }] });
  await aborted.abort();
  const committed = await tx.transaction();
  await committed.send({ topic: TOPIC, messages: [{ key: 'b', value: `b-committed-${pad}` }] });
  await committed.commit();
  // Unique keys (never superseded) that close the segment; then an open transaction, then enough plain
  // updates to close several segments after it.
  for (let i = 0; i < 20; i++) await plain.send({ topic: TOPIC, acks: -1, messages: [{ key: `g${i}`, value: `g-${pad}` }] });
  const open = await tx.transaction();
  await open.send({ topic: TOPIC, messages: [{ key: 'd', value: `d-open-${pad}` }] });
  for (let i = 0; i < 60; i++) await plain.send({ topic: TOPIC, acks: -1, messages: [{ key: 'e', value: `e-${i}-${pad}` }] });

  const log = broker.broker.services.logs.get(TOPIC, 0);
  assert.ok(log);
  const data = async () => (await readLog(log, 0)).map((r) => `${r.offset}:${r.key}=${r.value?.slice(0, r.value.indexOf('-x') < 0 ? undefined : r.value.indexOf('-x')) ?? 'null'}`);
  const cleaner = broker.broker.services.cleaner;
  assert.ok(cleaner);
  await waitFor('the aborted records to be cleaned away', async () => (!(await data()).some((r) => r.includes('aborted')) ? true : undefined), 30_000, 100);
  const held = await data();
  // The committed b superseded plain b; everything from the open transaction on stays. A pass counts itself
  // after its swap is visible to reads (see compaction-clients.test.ts): wait for the count.
  await waitFor('the cleaner to count its pass', async () => (cleaner.metrics.passes > 0 ? true : undefined), 30_000, 50);
  assert.ok(held.some((r) => r.endsWith('a=a-plain')), 'the aborted a did not supersede the plain a');
  assert.ok(!held.some((r) => r.endsWith('b=b-plain')) && held.some((r) => r.endsWith('b=b-committed')));
  assert.ok(held.some((r) => r.endsWith('d=d-open')));
  assert.equal(held.filter((r) => r.includes(':e=')).length, 60, 'no update after the open transaction was cleaned');

  await open.commit();
  for (let i = 0; i < 30; i++) await plain.send({ topic: TOPIC, acks: -1, messages: [{ key: `f${i}`, value: `filler-${pad}` }] });
  await waitFor('the updates after the committed transaction to be cleaned', async () => ((await data()).filter((r) => r.includes(':e=')).length === 1 ? true : undefined), 30_000, 100);
  const after = await data();
  assert.ok(after.some((r) => r.endsWith('e=e-59')), 'the latest e stays');
  assert.ok(after.some((r) => r.endsWith('d=d-open')), 'the committed d stays');
});
