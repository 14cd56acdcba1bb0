// kafkajs's transactional producer against Floe: transactions that commit and abort (random, seeded), with
// offsets sent in the transaction; a read_committed kafkajs consumer sees each committed record exactly once
// and no aborted one, a read_uncommitted one sees both; the group's committed offset is the last committed
// transaction's. Then a zombie: a second producer with the same transactional.id fences the first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker } from '../../helpers/broker.js';
import { consumeKeys, seededRandom } from './verify.js';

const TOPIC = 'txn-kafkajs';
const GROUP = 'txn-kafkajs-input';

test('kafkajs transactions: commits visible exactly once to read_committed, aborts only to read_uncommitted, offsets commit with them', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic(TOPIC, 3);
  await b.broker.services.topics.createTopic('input', 1);
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'txn-kafkajs', logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ transactionalId: 'kafkajs-tx', maxInFlightRequests: 1, idempotent: true });
  await producer.connect();
  t.after(() => producer.disconnect());

  const random = seededRandom(14);
  const committed = new Set<string>();
  const aborted = new Set<string>();
  let position = 0;
  let committedPosition = 0;
  for (let txnNo = 0; txnNo < 30; txnNo++) {
    const txn = await producer.transaction();
    const last = txnNo === 29;
    const keys = Array.from({ length: last ? 3 : 1 + Math.floor(random() * 5) }, (_, i) => `t${txnNo}-${i}`);
    // The last transaction writes to every partition: a consumer that has its records has read past every abort.
    await txn.send({ topic: TOPIC, messages: keys.map((key, i) => ({ key, value: `v-${key}`, partition: last ? i : Math.floor(random() * 3) })) });
    position += keys.length;
    await txn.sendOffsets({ consumerGroupId: GROUP, topics: [{ topic: 'input', partitions: [{ partition: 0, offset: String(position) }] }] });
    if (!last && random() < 0.35) {
      await txn.abort();
      for (const k of keys) aborted.add(k);
      position = committedPosition;
    } else {
      await txn.commit();
      for (const k of keys) committed.add(k);
      committedPosition = position;
    }
  }
  assert.ok(aborted.size > 0 && committed.size > 0);

  const readCommitted = await consumeKeys(kafka, TOPIC, { readUncommitted: false, until: committed });
  assert.deepEqual(readCommitted.duplicates, [], 'each committed record once');
  assert.deepEqual([...readCommitted.seen].filter((k) => aborted.has(k)), [], 'no aborted record');
  assert.deepEqual(new Set(readCommitted.seen), committed);

  const everything = new Set([...committed, ...aborted]);
  const readUncommitted = await consumeKeys(kafka, TOPIC, { readUncommitted: true, until: everything });
  assert.deepEqual(new Set(readUncommitted.seen), everything);

  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  const offsets = await admin.fetchOffsets({ groupId: GROUP, topics: ['input'] });
  assert.equal(offsets[0]?.partitions[0]?.offset, String(committedPosition));
});

test('kafkajs zombie: a second producer with the same transactional.id fences the first, whose open transaction is aborted', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic(TOPIC, 1);
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'txn-kafkajs-zombie', logLevel: logLevel.NOTHING });
  const zombie = kafka.producer({ transactionalId: 'kafkajs-zombie', maxInFlightRequests: 1, idempotent: true });
  await zombie.connect();
  t.after(() => zombie.disconnect());
  const zombieTxn = await zombie.transaction();
  await zombieTxn.send({ topic: TOPIC, messages: [{ key: 'zombie-1', value: 'z' }] });

  const successor = kafka.producer({ transactionalId: 'kafkajs-zombie', maxInFlightRequests: 1, idempotent: true });
  await successor.connect();
  t.after(() => successor.disconnect());
  const txn = await successor.transaction();
  await txn.send({ topic: TOPIC, messages: [{ key: 'successor-1', value: 's' }] });
  await txn.commit();

  await assert.rejects(zombieTxn.commit(), (err: Error & { type?: string }) => ['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH'].includes(err.type ?? ''), 'the zombie is fenced');
  const seen = await consumeKeys(kafka, TOPIC, { readUncommitted: false, until: new Set(['successor-1']) });
  assert.deepEqual(seen.seen, ['successor-1']);
});

test('kafkajs transaction left open past transaction.timeout.ms: the broker aborts it, read_committed never sees it, the LSO advances', async (t) => {
  const b = await startBroker(['--transaction.abort.timed.out.transaction.cleanup.interval.ms=50']);
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic(TOPIC, 1);
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'txn-kafkajs-timeout', logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ transactionalId: 'kafkajs-timeout', transactionTimeout: 3000, maxInFlightRequests: 1, idempotent: true });
  await producer.connect();
  t.after(() => producer.disconnect());
  const stale = await producer.transaction();
  await stale.send({ topic: TOPIC, messages: [{ key: 'timed-out', value: 'x' }] });

  // The coordinator aborts the expired transaction (bounded by the test runner's timeout if it never does).
  const coordinator = b.broker.services.transactions.coordinator;
  while (coordinator.describe('kafkajs-timeout')?.state !== 'CompleteAbort') await new Promise((r) => setTimeout(r, 100));
  await assert.rejects(stale.commit(), 'the timed-out transaction cannot commit');

  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  const [latest] = await admin.fetchTopicOffsets(TOPIC);
  assert.equal(latest?.offset, '2', 'LATEST is past the record and its abort marker: nothing holds the LSO back');

  // A fresh producer commits one record: read_committed sees it, never the timed-out one before it.
  const next = kafka.producer({ transactionalId: 'kafkajs-timeout-2', maxInFlightRequests: 1, idempotent: true });
  await next.connect();
  t.after(() => next.disconnect());
  const txn = await next.transaction();
  await txn.send({ topic: TOPIC, messages: [{ key: 'after', value: 'y' }] });
  await txn.commit();
  const seen = await consumeKeys(kafka, TOPIC, { readUncommitted: false, until: new Set(['after']) });
  assert.deepEqual(seen.seen, ['after']);
});
