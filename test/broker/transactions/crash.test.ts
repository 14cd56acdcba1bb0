// kill -9 of the broker (the compiled broker as users run it, test/helpers/broker.ts spawnBroker) in the
// middle of transactions:
//   - with a transaction open (no EndTxn yet): after the restart it is aborted on every partition, the
//     LSO is the log end, and a fenced producer cannot finish it;
//   - after PrepareCommit is durable (FLOE_TXN_CRASH_AT, broker/transactions/crash-points.ts), with no
//     marker written, after the first of three markers, and after the last marker and the offsets but
//     before CompleteCommit is durable: the restart completes the commit on every partition (markers written
//     again are harmless, as in Kafka), and its transactional offsets become visible;
//   - after PrepareAbort: the restart aborts it everywhere.
// Checked with wire Fetch (LSO, aborted lists) and with a kafkajs read_committed consumer.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { spawnBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { consumeKeys } from '../../interop/transactions/verify.js';
import { encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { fetchBody, fetchPartitions, firstPartition, WireClient } from '../handlers/wire-client.js';

const TOPIC = 'txn-crash';
const PARTITIONS = 3;
const GROUP = 'txn-crash-group';

interface Txn {
  readonly pid: bigint;
  readonly epoch: number;
}

async function stop(p: BrokerProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  await p.exited;
}

async function begin(c: WireClient, id: string): Promise<Txn> {
  const r = await c.request(22, 4, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
  assert.equal(r.errorCode, ErrorCode.NONE);
  return { pid: r.producerId as bigint, epoch: r.producerEpoch as number };
}

/** Adds every partition and the group, writes one record `<tag>-<p>` to each, and commits offset `offset` in it. */
async function write(c: WireClient, id: string, t: Txn, tag: string, seq: number, offset: bigint): Promise<void> {
  const partitions = Array.from({ length: PARTITIONS }, (_, p) => p);
  const add = await c.request(24, 3, { v3AndBelowTransactionalId: id, v3AndBelowProducerId: t.pid, v3AndBelowProducerEpoch: t.epoch, v3AndBelowTopics: [{ name: TOPIC, partitions }] });
  assert.deepEqual(JSON.stringify(add.resultsByTopicV3AndBelow), JSON.stringify([{ name: TOPIC, resultsByPartition: partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: 0 })) }]));
  for (const p of partitions) {
    const res = await c.request(0, 9, { transactionalId: id, acks: -1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: p, records: keyed(`${tag}-${p}`, t, seq) }] }] });
    assert.equal(firstPartition(res).errorCode, ErrorCode.NONE);
  }
  assert.equal((await c.request(25, 3, { transactionalId: id, producerId: t.pid, producerEpoch: t.epoch, groupId: GROUP })).errorCode, ErrorCode.NONE);
  const commit = await c.request(28, 3, {
    transactionalId: id,
    groupId: GROUP,
    producerId: t.pid,
    producerEpoch: t.epoch,
    generationId: -1,
    memberId: '',
    groupInstanceId: null,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
  });
  assert.equal((commit.topics as { partitions: { errorCode: number }[] }[])[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
}

/** One transactional record whose key is `key`. */
function keyed(key: string, t: Txn, seq: number): Buffer {
  return encodeRecordBatch({ baseTimestamp: BigInt(Date.now()), producerId: t.pid, producerEpoch: t.epoch, baseSequence: seq, isTransactional: true, records: [{ key: Buffer.from(key), value: Buffer.from('v') }] });
}

/** Commits one more transaction writing `tail-<p>` to every partition: a consumer that has those read past every abort. */
async function commitTail(c: WireClient): Promise<string[]> {
  const t = await begin(c, 'tail');
  await write(c, 'tail', t, 'tail', 0, 3n);
  assert.equal((await c.request(26, 3, { transactionalId: 'tail', producerId: t.pid, producerEpoch: t.epoch, committed: true })).errorCode, ErrorCode.NONE);
  return Array.from({ length: PARTITIONS }, (_, p) => `tail-${p}`);
}

async function partitionView(c: WireClient, p: number) {
  const r = fetchPartitions(await c.request(1, 12, fetchBody(TOPIC, [{ partition: p, fetchOffset: 0n }], { isolationLevel: 1 })))[0];
  assert.ok(r);
  return r;
}

async function committedOffset(c: WireClient): Promise<bigint | undefined> {
  const res = await c.request(9, 7, { groupId: GROUP, topics: [{ name: TOPIC, partitionIndexes: [0] }], requireStable: true });
  return (res.topics as { partitions: { committedOffset: bigint }[] }[])[0]?.partitions[0]?.committedOffset;
}

async function readCommitted(bootstrap: string, until: Set<string>): Promise<string[]> {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'txn-crash-verify', logLevel: logLevel.NOTHING });
  return (await consumeKeys(kafka, TOPIC, { readUncommitted: false, until })).seen.sort();
}

/** Starts a broker on `dataDir`, commits a first transaction (keys base-0..2, offset 1), and returns it. */
async function startWithBase(dataDir: string, env?: NodeJS.ProcessEnv): Promise<{ broker: BrokerProcess; c: WireClient }> {
  const broker = await spawnBroker(dataDir, [`--num.partitions=${PARTITIONS}`], 0, env ? { env: { ...process.env, ...env } } : {});
  const c = await WireClient.connect(broker.port);
  const admin = await c.request(19, 4, { topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
  assert.equal((admin.topics as { errorCode: number }[])[0]?.errorCode, ErrorCode.NONE);
  const t = await begin(c, 'base');
  await write(c, 'base', t, 'base', 0, 1n);
  assert.equal((await c.request(26, 3, { transactionalId: 'base', producerId: t.pid, producerEpoch: t.epoch, committed: true })).errorCode, ErrorCode.NONE);
  return { broker, c };
}

const BASE = ['base-0', 'base-1', 'base-2'];

test('kill -9 with a transaction open: the restart aborts it on every partition and fences its producer', async (t) => {
  const dataDir = await tempDir();
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const { broker, c } = await startWithBase(dataDir);
  const txn = await begin(c, 'open');
  await write(c, 'open', txn, 'open', 0, 2n);
  broker.child.kill('SIGKILL');
  assert.equal((await broker.ended).signal, 'SIGKILL');
  c.close();

  const restarted = await spawnBroker(dataDir);
  t.after(() => stop(restarted));
  const c2 = await WireClient.connect(restarted.port);
  t.after(() => c2.close());
  for (let p = 0; p < PARTITIONS; p++) {
    const v = await partitionView(c2, p);
    assert.equal(v.lastStableOffset, v.highWatermark, `partition ${p}: nothing is open after the restart`);
    assert.equal(v.highWatermark, 4n, `partition ${p}: base record + commit marker + open record + abort marker`);
    assert.deepEqual(v.abortedTransactions, [{ producerId: txn.pid, firstOffset: 2n }]);
  }
  assert.equal(await committedOffset(c2), 1n, 'the open transaction offset was never committed');
  const end = await c2.request(26, 3, { transactionalId: 'open', producerId: txn.pid, producerEpoch: txn.epoch, committed: true });
  assert.equal(end.errorCode, ErrorCode.PRODUCER_FENCED);
  const expected = [...BASE, ...(await commitTail(c2))];
  assert.deepEqual(await readCommitted(restarted.bootstrap, new Set(expected)), expected.sort());
});

for (const point of ['after-prepare', 'mid-markers', 'after-markers'] as const) {
  test(`kill -9 ${point} of a commit: the restart completes the commit on every partition and commits its offsets`, async (t) => {
    const dataDir = await tempDir();
    t.after(() => rm(dataDir, { recursive: true, force: true }));
    // The base transaction ends too: the crash point is armed for the second one (":2").
    const { broker, c } = await startWithBase(dataDir, { FLOE_TXN_CRASH_AT: `${point}:2` });
    const txn = await begin(c, 'prepared');
    await write(c, 'prepared', txn, 'prepared', 0, 2n);
    await assert.rejects(c.request(26, 3, { transactionalId: 'prepared', producerId: txn.pid, producerEpoch: txn.epoch, committed: true }));
    const ended = await broker.ended;
    assert.equal(ended.signal, 'SIGKILL');
    assert.match(broker.output(), new RegExp(`FLOE_TXN_CRASH ${point} 2`));
    c.close();

    const restarted = await spawnBroker(dataDir);
    t.after(() => stop(restarted));
    const c2 = await WireClient.connect(restarted.port);
    t.after(() => c2.close());
    for (let p = 0; p < PARTITIONS; p++) {
      const v = await partitionView(c2, p);
      assert.equal(v.lastStableOffset, v.highWatermark, `partition ${p}`);
      assert.deepEqual(v.abortedTransactions, [], `partition ${p}: nothing aborted`);
    }
    assert.equal(await committedOffset(c2), 2n, 'the transaction offset committed with it');
    const all = [...BASE, 'prepared-0', 'prepared-1', 'prepared-2'];
    assert.deepEqual(await readCommitted(restarted.bootstrap, new Set(all)), all.sort());
    const dt = await c2.request(65, 0, { transactionalIds: ['prepared'] });
    assert.equal((dt.transactionStates as { transactionState: string }[])[0]?.transactionState, 'CompleteCommit');
  });
}

test('kill -9 after PrepareAbort: the restart aborts the transaction on every partition', async (t) => {
  const dataDir = await tempDir();
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const { broker, c } = await startWithBase(dataDir, { FLOE_TXN_CRASH_AT: 'after-prepare:2' });
  const txn = await begin(c, 'aborting');
  await write(c, 'aborting', txn, 'aborting', 0, 2n);
  await assert.rejects(c.request(26, 3, { transactionalId: 'aborting', producerId: txn.pid, producerEpoch: txn.epoch, committed: false }));
  assert.equal((await broker.ended).signal, 'SIGKILL');
  c.close();

  const restarted = await spawnBroker(dataDir);
  t.after(() => stop(restarted));
  const c2 = await WireClient.connect(restarted.port);
  t.after(() => c2.close());
  for (let p = 0; p < PARTITIONS; p++) {
    const v = await partitionView(c2, p);
    assert.equal(v.lastStableOffset, v.highWatermark);
    assert.deepEqual(v.abortedTransactions, [{ producerId: txn.pid, firstOffset: 2n }]);
  }
  assert.equal(await committedOffset(c2), 1n);
  const expected = [...BASE, ...(await commitTail(c2))];
  assert.deepEqual(await readCommitted(restarted.bootstrap, new Set(expected)), expected.sort());
});
