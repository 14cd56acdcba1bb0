import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { Kafka, logLevel } from 'kafkajs';
import { spawnBroker, startBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { WireClient } from '../groups/wire-client.js';

type Obj = Record<string, unknown>;

async function commitAndFetch(port: number, offset: bigint): Promise<void> {
  const c = await WireClient.open(port);
  try {
    await c.send(19, 4, { topics: [{ name: 't', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
    const r = await c.send(8, 8, { groupId: 'durable', generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: 2, committedMetadata: 'm' }] }] });
    assert.equal(((r.topics as Obj[])[0]?.partitions as Obj[])[0]?.errorCode, 0);
  } finally {
    c.close();
  }
}

async function fetchCommitted(port: number): Promise<unknown[]> {
  const c = await WireClient.open(port);
  try {
    const r = await c.send(9, 7, { groupId: 'durable', topics: null });
    return ((r.topics as Obj[])[0]?.partitions as Obj[]).map((p) => [p.partitionIndex, p.committedOffset, p.committedLeaderEpoch, p.metadata]);
  } finally {
    c.close();
  }
}

async function stopProcess(p: BrokerProcess, signal: NodeJS.Signals): Promise<void> {
  p.child.kill(signal);
  await p.exited;
}

test('an acknowledged commit survives kill -9 and SIGTERM of the broker process', async (t) => {
  const dir = await tempDir();
  t.after(() => rm(dir, { recursive: true, force: true }));
  let p = await spawnBroker(dir);
  t.after(() => p.child.kill('SIGKILL'));
  await commitAndFetch(p.port, 1234n);
  await stopProcess(p, 'SIGKILL');

  p = await spawnBroker(dir);
  assert.deepEqual(await fetchCommitted(p.port), [[0, 1234n, 2, 'm']]);
  await commitAndFetch(p.port, 5678n);
  await stopProcess(p, 'SIGTERM');

  p = await spawnBroker(dir);
  assert.deepEqual(await fetchCommitted(p.port), [[0, 5678n, 2, 'm']]);
  await stopProcess(p, 'SIGTERM');
});

test('kafkajs: a group consumes everything, commits, and resumes exactly at its committed position after a restart; admin lists, describes and fetches offsets', async (t) => {
  const dir = await tempDir();
  let b = await startBroker(['--group.min.session.timeout.ms=1000'], { dataDir: dir });
  t.after(async () => {
    await b.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const kafkaFor = (bootstrap: string) => new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
  let kafka = kafkaFor(b.bootstrap);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'events', numPartitions: 3 }] });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: 'events', messages: Array.from({ length: 60 }, (_, i) => ({ key: String(i % 7), value: `a${i}` })) });
  await producer.disconnect();

  const consumeAll = async (k: Kafka, want: number): Promise<string[]> => {
    const consumer = k.consumer({ groupId: 'app', sessionTimeout: 6000, heartbeatInterval: 500 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'events', fromBeginning: true });
    const seen: string[] = [];
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(String(message.value));
          if (seen.length === want) resolve();
        },
      });
    });
    await consumer.stop(); // commits the consumed offsets
    await consumer.disconnect();
    return seen;
  };
  const first = await consumeAll(kafka, 60);
  assert.equal(new Set(first).size, 60);

  const groups = await admin.listGroups();
  assert.deepEqual(groups.groups.map((g) => g.groupId), ['app']);
  const described = await admin.describeGroups(['app']);
  assert.equal(described.groups[0]?.state, 'Empty');
  const offsets = await admin.fetchOffsets({ groupId: 'app', topics: ['events'] });
  const total = offsets[0]?.partitions.reduce((n, p) => n + Number(p.offset), 0);
  assert.equal(total, 60, 'committed offsets cover every record: no lag');
  await admin.disconnect();

  await b.stop();
  b = await startBroker(['--group.min.session.timeout.ms=1000'], { dataDir: dir });
  kafka = kafkaFor(b.bootstrap);
  const p2 = kafka.producer();
  await p2.connect();
  await p2.send({ topic: 'events', messages: Array.from({ length: 9 }, (_, i) => ({ key: String(i), value: `b${i}` })) });
  await p2.disconnect();
  const second = await consumeAll(kafka, 9);
  assert.deepEqual(second.sort(), Array.from({ length: 9 }, (_, i) => `b${i}`).sort(), 'resumes exactly after the committed position');
});
