// The transaction APIs at the wire, with exact field checks a real client would not show: LSO and aborted
// lists in Fetch, read_committed ListOffsets, KIP-890 verification on produce, fencing codes per version,
// pending offsets, the timeout abort, restart with an open transaction, and the operator APIs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { decodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { batchOf, fetchBody, fetchPartitions, firstPartition, WireClient, type Body } from '../handlers/wire-client.js';

const TOPIC = 'txn-wire';

async function init(c: WireClient, id: string, opts: { timeoutMs?: number; version?: number; pid?: bigint; epoch?: number } = {}): Promise<Body> {
  return c.request(22, opts.version ?? 4, { transactionalId: id, transactionTimeoutMs: opts.timeoutMs ?? 60_000, producerId: opts.pid ?? -1n, producerEpoch: opts.epoch ?? -1 });
}

async function addPartitions(c: WireClient, id: string, pid: bigint, epoch: number, partitions: number[], version = 3): Promise<number[]> {
  const res = await c.request(24, version, { v3AndBelowTransactionalId: id, v3AndBelowProducerId: pid, v3AndBelowProducerEpoch: epoch, v3AndBelowTopics: [{ name: TOPIC, partitions }] });
  return (res.resultsByTopicV3AndBelow as { resultsByPartition: { partitionErrorCode: number }[] }[]).flatMap((t) => t.resultsByPartition.map((p) => p.partitionErrorCode));
}

async function produceTxn(c: WireClient, id: string | null, pid: bigint, epoch: number, seq: number, values: string[], partition = 0) {
  const records = batchOf(values, { producerId: pid, producerEpoch: epoch, baseSequence: seq, isTransactional: true });
  const res = await c.request(0, 9, { transactionalId: id, acks: -1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
  return firstPartition(res);
}

async function endTxn(c: WireClient, id: string, pid: bigint, epoch: number, committed: boolean, version = 3): Promise<number> {
  return (await c.request(26, version, { transactionalId: id, producerId: pid, producerEpoch: epoch, committed })).errorCode as number;
}

async function fetch(c: WireClient, offset: bigint, isolationLevel: number, partition = 0) {
  const p = fetchPartitions(await c.request(1, 12, fetchBody(TOPIC, [{ partition, fetchOffset: offset }], { isolationLevel })))[0];
  assert.ok(p);
  const batches = [];
  const records = p.records ?? Buffer.alloc(0);
  for (const b of iterateBatches(records)) batches.push(decodeRecordBatch(records, b.start));
  return { ...p, batches };
}

async function listLatest(c: WireClient, isolationLevel: number): Promise<bigint> {
  const res = await c.request(2, 7, { replicaId: -1, isolationLevel, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] });
  return (res.topics as { partitions: { offset: bigint }[] }[])[0]?.partitions[0]?.offset as bigint;
}

test('a transaction holds back the LSO; abort lists it as aborted, commit makes it visible; markers are control batches', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic(TOPIC, 2);
  const c = await WireClient.connect(b.port);
  t.after(() => c.close());

  const r = await init(c, 'tx-a');
  assert.equal(r.errorCode, ErrorCode.NONE);
  const pid = r.producerId as bigint;
  const epoch = r.producerEpoch as number;
  assert.equal(epoch, 0);

  // Not added yet: KIP-890 verification refuses the batch.
  assert.equal((await produceTxn(c, 'tx-a', pid, epoch, 0, ['x'])).errorCode, ErrorCode.INVALID_TXN_STATE);
  assert.deepEqual(await addPartitions(c, 'tx-a', pid, epoch, [0]), [ErrorCode.NONE]);
  assert.equal((await produceTxn(c, 'tx-a', pid, epoch, 0, ['a1', 'a2'])).errorCode, ErrorCode.NONE);

  let p = await fetch(c, 0n, 1);
  assert.equal(p.highWatermark, 2n);
  assert.equal(p.lastStableOffset, 0n, 'the open transaction starts at 0');
  assert.equal(p.batches.length, 0, 'read_committed sees nothing past the LSO');
  assert.equal((await fetch(c, 0n, 0)).batches.length, 1, 'read_uncommitted sees the open transaction');
  assert.equal(await listLatest(c, 1), 0n);
  assert.equal(await listLatest(c, 0), 2n);

  assert.equal(await endTxn(c, 'tx-a', pid, epoch, false), ErrorCode.NONE);
  p = await fetch(c, 0n, 1);
  assert.equal(p.lastStableOffset, 3n);
  assert.equal(p.highWatermark, 3n);
  assert.deepEqual(p.abortedTransactions, [{ producerId: pid, firstOffset: 0n }]);
  assert.equal(p.batches.length, 2);
  const marker = p.batches[1];
  assert.ok(marker?.isControl && marker.isTransactional);
  assert.equal(marker.control?.kind, 'abort');
  assert.equal(marker.producerId, pid);
  // The other partition of the topic was never part of the transaction.
  assert.equal((await fetch(c, 0n, 1, 1)).batches.length, 0);

  // The next transaction (same epoch, sequences go on) commits.
  assert.deepEqual(await addPartitions(c, 'tx-a', pid, epoch, [0]), [ErrorCode.NONE]);
  assert.equal((await produceTxn(c, 'tx-a', pid, epoch, 2, ['b1'])).errorCode, ErrorCode.NONE);
  assert.equal((await fetch(c, 3n, 1)).batches.length, 0);
  assert.equal(await endTxn(c, 'tx-a', pid, epoch, true), ErrorCode.NONE);
  // A retried EndTxn of the completed transaction succeeds; the opposite outcome does not.
  assert.equal(await endTxn(c, 'tx-a', pid, epoch, true), ErrorCode.NONE);
  assert.equal(await endTxn(c, 'tx-a', pid, epoch, false), ErrorCode.INVALID_TXN_STATE);
  p = await fetch(c, 3n, 1);
  assert.equal(p.lastStableOffset, 5n);
  assert.deepEqual(p.abortedTransactions, [], 'the aborted transaction ends before offset 3');
  assert.deepEqual(
    p.batches.map((x) => (x.isControl ? x.control?.kind : x.records.map((rec) => rec.value?.toString()).join(','))),
    ['b1', 'commit'],
  );
  assert.equal(await listLatest(c, 1), 5n);

  // A non-transactional batch from the producer while a transaction is open there is refused.
  assert.deepEqual(await addPartitions(c, 'tx-a', pid, epoch, [0]), [ErrorCode.NONE]);
  assert.equal((await produceTxn(c, 'tx-a', pid, epoch, 3, ['c1'])).errorCode, ErrorCode.NONE);
  const plain = batchOf(['plain'], { producerId: pid, producerEpoch: epoch, baseSequence: 4 });
  const res = await c.request(0, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: plain }] }] });
  assert.equal(firstPartition(res).errorCode, ErrorCode.INVALID_TXN_STATE);

  // DescribeProducers shows the open transaction's start; DescribeTransactions and ListTransactions the state.
  const dp = await c.request(61, 0, { topics: [{ name: TOPIC, partitionIndexes: [0] }] });
  const producers = (dp.topics as { partitions: { activeProducers: Body[] }[] }[])[0]?.partitions[0]?.activeProducers;
  assert.equal(producers?.length, 1);
  assert.equal(producers?.[0]?.producerId, pid);
  assert.equal(producers?.[0]?.currentTxnStartOffset, 5n);
  assert.equal(producers?.[0]?.lastSequence, 3);
  assert.equal(producers?.[0]?.coordinatorEpoch, b.broker.services.transactions.coordinator.coordinatorEpoch);
  const dt = await c.request(65, 0, { transactionalIds: ['tx-a', 'nobody'] });
  const [known, unknown] = dt.transactionStates as Body[];
  assert.equal(known?.transactionState, 'Ongoing');
  assert.deepEqual(known?.topics, [{ topic: TOPIC, partitions: [0] }]);
  assert.equal(unknown?.errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
  const lt = await c.request(66, 1, { stateFilters: ['Ongoing', 'Bogus'], producerIdFilters: [], durationFilter: -1n });
  assert.deepEqual(lt.unknownStateFilters, ['Bogus']);
  assert.deepEqual(lt.transactionStates, [{ transactionalId: 'tx-a', producerId: pid, transactionState: 'Ongoing' }]);
});

test('fencing: a new InitProducerId bumps the epoch, aborts the open transaction, and the old epoch is refused with the code its version knows', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic(TOPIC, 1);
  const c = await WireClient.connect(b.port);
  t.after(() => c.close());

  const first = await init(c, 'tx-z');
  const pid = first.producerId as bigint;
  assert.deepEqual(await addPartitions(c, 'tx-z', pid, 0, [0]), [ErrorCode.NONE]);
  assert.equal((await produceTxn(c, 'tx-z', pid, 0, 0, ['zombie'])).errorCode, ErrorCode.NONE);

  const second = await init(c, 'tx-z');
  assert.equal(second.errorCode, ErrorCode.NONE);
  assert.equal(second.producerId, pid, 'same transactional id, same producer id');
  assert.ok((second.producerEpoch as number) > 0);
  // The zombie's open transaction was aborted (with a fencing epoch) before the new producer got its epoch.
  const p = await fetch(c, 0n, 1);
  assert.equal(p.lastStableOffset, 2n);
  assert.deepEqual(p.abortedTransactions, [{ producerId: pid, firstOffset: 0n }]);

  assert.equal(await endTxn(c, 'tx-z', pid, 0, true, 3), ErrorCode.PRODUCER_FENCED);
  assert.equal(await endTxn(c, 'tx-z', pid, 0, true, 1), ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.deepEqual(await addPartitions(c, 'tx-z', pid, 0, [0], 3), [ErrorCode.PRODUCER_FENCED]);
  assert.deepEqual(await addPartitions(c, 'tx-z', pid, 0, [0], 1), [ErrorCode.INVALID_PRODUCER_EPOCH]);
  assert.equal((await produceTxn(c, 'tx-z', pid, 0, 1, ['late'])).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  // KIP-360: presenting a stale epoch to InitProducerId is fenced; presenting the current one bumps it.
  assert.equal((await init(c, 'tx-z', { pid, epoch: 0 })).errorCode, ErrorCode.PRODUCER_FENCED);
  assert.equal((await init(c, 'tx-z', { pid, epoch: 0, version: 3 })).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  const bumped = await init(c, 'tx-z', { pid, epoch: second.producerEpoch as number });
  assert.equal(bumped.errorCode, ErrorCode.NONE);
  assert.equal(bumped.producerEpoch, (second.producerEpoch as number) + 1);
  // Its retry (the answer was lost) gets the same epoch again rather than a fence.
  const retried = await init(c, 'tx-z', { pid, epoch: second.producerEpoch as number });
  assert.equal(retried.errorCode, ErrorCode.NONE);
  assert.equal(retried.producerEpoch, bumped.producerEpoch);

  assert.equal((await init(c, 'tx-big', { timeoutMs: 900_001 })).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
});

test('TxnOffsetCommit offsets are invisible to OffsetFetch until the transaction commits, and dropped on abort', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic(TOPIC, 1);
  const c = await WireClient.connect(b.port);
  t.after(() => c.close());
  const group = 'txn-group';
  const offsetFetch = async (requireStable: boolean) => {
    const res = await c.request(9, 7, { groupId: group, topics: [{ name: TOPIC, partitionIndexes: [0] }], requireStable });
    return (res.topics as { partitions: { committedOffset: bigint; errorCode: number }[] }[])[0]?.partitions[0];
  };
  const r = await init(c, 'tx-o');
  const pid = r.producerId as bigint;
  const commitOffsets = async (offset: bigint) => {
    assert.equal((await c.request(25, 3, { transactionalId: 'tx-o', producerId: pid, producerEpoch: 0, groupId: group })).errorCode, ErrorCode.NONE);
    const res = await c.request(28, 3, {
      transactionalId: 'tx-o',
      groupId: group,
      producerId: pid,
      producerEpoch: 0,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    assert.equal((res.topics as { partitions: { errorCode: number }[] }[])[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  };

  await commitOffsets(7n);
  assert.equal((await offsetFetch(false))?.committedOffset, -1n);
  assert.equal((await offsetFetch(true))?.errorCode, ErrorCode.UNSTABLE_OFFSET_COMMIT);
  assert.equal(await endTxn(c, 'tx-o', pid, 0, false), ErrorCode.NONE);
  assert.deepEqual(await offsetFetch(true), { partitionIndex: 0, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.NONE });

  await commitOffsets(9n);
  assert.equal(await endTxn(c, 'tx-o', pid, 0, true), ErrorCode.NONE);
  assert.equal((await offsetFetch(true))?.committedOffset, 9n);
});

test('the broker aborts a transaction open past its timeout, with an epoch bump; the LSO advances', async (t) => {
  const b = await startBroker(['--transaction.abort.timed.out.transaction.cleanup.interval.ms=50']);
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic(TOPIC, 1);
  const c = await WireClient.connect(b.port);
  t.after(() => c.close());
  // Long enough that the batch lands first even on a loaded machine; the loop below waits for the abort.
  const r = await init(c, 'tx-t', { timeoutMs: 3000 });
  const pid = r.producerId as bigint;
  assert.deepEqual(await addPartitions(c, 'tx-t', pid, 0, [0]), [ErrorCode.NONE]);
  assert.equal((await produceTxn(c, 'tx-t', pid, 0, 0, ['t1', 't2', 't3'])).errorCode, ErrorCode.NONE);
  let p = await fetch(c, 0n, 1);
  assert.equal(p.lastStableOffset, 0n);
  // Long-poll until the marker lands (the abort wakes the fetch), bounded by the test runner's timeout.
  while (p.lastStableOffset === 0n) p = fetchPartitions(await c.request(1, 12, fetchBody(TOPIC, [{ partition: 0, fetchOffset: 3n }], { isolationLevel: 1, maxWaitMs: 1000, minBytes: 1 })))[0] as typeof p;
  p = await fetch(c, 0n, 1);
  assert.equal(p.lastStableOffset, 4n);
  assert.deepEqual(p.abortedTransactions, [{ producerId: pid, firstOffset: 0n }]);
  assert.equal(p.batches.at(-1)?.control?.kind, 'abort');
  assert.equal(p.batches.at(-1)?.producerEpoch, 1, 'the marker carries the fencing epoch');
  assert.equal(await endTxn(c, 'tx-t', pid, 0, true), ErrorCode.PRODUCER_FENCED);
  assert.equal((await produceTxn(c, 'tx-t', pid, 0, 1, ['late'])).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
});

test('after a restart an open transaction is aborted with a fencing epoch, and the aborted list survives', async (t) => {
  const dataDir = await tempDir();
  let b = await startBroker([], { dataDir });
  await b.broker.services.topics.createTopic(TOPIC, 1);
  let c = await WireClient.connect(b.port);
  const r = await init(c, 'tx-r');
  const pid = r.producerId as bigint;
  assert.deepEqual(await addPartitions(c, 'tx-r', pid, 0, [0]), [ErrorCode.NONE]);
  assert.equal((await produceTxn(c, 'tx-r', pid, 0, 0, ['r1'])).errorCode, ErrorCode.NONE);
  c.close();
  await b.stop();

  b = await startBroker([], { dataDir });
  t.after(() => b.stop());
  c = await WireClient.connect(b.port);
  t.after(() => c.close());
  const p = await fetch(c, 0n, 1);
  assert.equal(p.lastStableOffset, 2n);
  assert.deepEqual(p.abortedTransactions, [{ producerId: pid, firstOffset: 0n }]);
  const dt = await c.request(65, 0, { transactionalIds: ['tx-r'] });
  assert.equal((dt.transactionStates as Body[])[0]?.transactionState, 'CompleteAbort');
  assert.equal((dt.transactionStates as Body[])[0]?.producerEpoch, 1);
});

test('a transactional id idle past transactional.id.expiration.ms is forgotten; its next InitProducerId gets a new producer id', async (t) => {
  const b = await startBroker(['--transaction.abort.timed.out.transaction.cleanup.interval.ms=50', '--transactional.id.expiration.ms=300']);
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic(TOPIC, 1);
  const c = await WireClient.connect(b.port);
  t.after(() => c.close());
  const first = await init(c, 'tx-e');
  const pid = first.producerId as bigint;
  assert.deepEqual(await addPartitions(c, 'tx-e', pid, 0, [0]), [ErrorCode.NONE]);
  assert.equal((await produceTxn(c, 'tx-e', pid, 0, 0, ['e1'])).errorCode, ErrorCode.NONE);
  assert.equal(await endTxn(c, 'tx-e', pid, 0, true), ErrorCode.NONE);
  // Bounded by the test runner's timeout if the id is never forgotten.
  const describe = async () => ((await c.request(65, 0, { transactionalIds: ['tx-e'] })).transactionStates as Body[])[0]?.errorCode;
  while ((await describe()) !== ErrorCode.TRANSACTIONAL_ID_NOT_FOUND) await new Promise((r) => setTimeout(r, 50));
  const again = await init(c, 'tx-e');
  assert.equal(again.errorCode, ErrorCode.NONE);
  assert.notEqual(again.producerId, pid);
  assert.equal(again.producerEpoch, 0);
});
