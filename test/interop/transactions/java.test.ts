// Apache Kafka's Java client (kafka-clients 4.x from the peers) against Floe's transactions: a
// consume-transform-produce loop with sendOffsetsToTransaction and random aborts (TxnLoop.java beside this
// file, compiled here with javac); then Java consumers read the output. read_committed sees each input
// record's result exactly once and nothing aborted; read_uncommitted sees the aborted attempts too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker } from '../../helpers/broker.js';
import { compileTxnLoop, javaTxnLoop } from './txn-loop.js';

test('Java consume-transform-produce with sendOffsetsToTransaction and random aborts: read_committed sees every input exactly once', async (t) => {
  const { classpath, cleanup } = await compileTxnLoop();
  t.after(cleanup);
  const b = await startBroker();
  t.after(() => b.stop());
  const topics = b.broker.services.topics;
  await topics.createTopic('java-in', 2);
  await topics.createTopic('java-out', 3);

  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'java-txn-input', logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  const inputs = Array.from({ length: 120 }, (_, i) => `in-${i}`);
  for (let i = 0; i < inputs.length; i += 10) {
    await producer.send({ topic: 'java-in', acks: -1, messages: inputs.slice(i, i + 10).map((key, j) => ({ key, value: `v${i + j}`, partition: (i + j) % 2 })) });
  }
  await producer.disconnect();

  const summary = JSON.parse(await javaTxnLoop(classpath, ['loop', b.bootstrap, 'java-in', 'java-out', 'java-eos', 'java-eos-tx', '0.3', '14'])) as { committed: number; aborted: number };
  assert.ok(summary.committed > 0 && summary.aborted > 0, `the run both committed and aborted: ${JSON.stringify(summary)}`);

  const committedKeys = (await javaTxnLoop(classpath, ['read', b.bootstrap, 'java-out', 'read_committed'])).split('\n').filter((k) => k !== '');
  assert.deepEqual([...committedKeys].sort(), [...inputs].sort(), 'each input exactly once, nothing aborted');

  const allKeys = (await javaTxnLoop(classpath, ['read', b.bootstrap, 'java-out', 'read_uncommitted'])).split('\n').filter((k) => k !== '');
  assert.ok(allKeys.length > inputs.length, `read_uncommitted also sees the aborted attempts (${allKeys.length} records for ${inputs.length} inputs)`);
  assert.deepEqual(new Set(allKeys), new Set(inputs));

  // The group's committed offsets are the end of the input: they were committed with the transactions.
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  const offsets = await admin.fetchOffsets({ groupId: 'java-eos', topics: ['java-in'] });
  assert.deepEqual(
    offsets[0]?.partitions.map((p) => [p.partition, p.offset]).sort(),
    [
      [0, '60'],
      [1, '60'],
    ],
  );
});

test('Java zombie: a second producer with the same transactional.id fences the first; read_committed sees only the successor', async (t) => {
  const { classpath, cleanup } = await compileTxnLoop();
  t.after(cleanup);
  const b = await startBroker();
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic('java-zombie', 1);
  const outcome = (await javaTxnLoop(classpath, ['zombie', b.bootstrap, 'java-zombie', 'java-zombie-tx'])).trim();
  assert.ok(['org.apache.kafka.common.errors.ProducerFencedException', 'org.apache.kafka.common.errors.InvalidProducerEpochException'].includes(outcome), `the zombie was fenced: ${outcome}`);
  const keys = (await javaTxnLoop(classpath, ['read', b.bootstrap, 'java-zombie', 'read_committed'])).split('\n').filter((k) => k !== '');
  assert.deepEqual(keys, ['successor']);
  const all = (await javaTxnLoop(classpath, ['read', b.bootstrap, 'java-zombie', 'read_uncommitted'])).split('\n').filter((k) => k !== '');
  assert.deepEqual(all, ['zombie', 'successor'], 'the zombie record is in the log, aborted by the fence');
});
