import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { scanBatches } from '../../../protocol/record-batch/batches.js';
import { startBroker } from '../../helpers/broker.js';
import { WireClient, batchOf, fetchBody, fetchPartitions, firstPartition, produceBody } from './wire-client.js';

async function setup(t: { after(fn: () => Promise<void> | void): void }) {
  const broker = await startBroker(['--num.partitions=2']);
  const client = await WireClient.connect(broker.port);
  t.after(async () => {
    client.close();
    await broker.stop();
  });
  return { broker, client };
}

const KB = 'x'.repeat(1000);

test('maxBytes and partitionMaxBytes limit the answer, but the first batch always comes whole', async (t) => {
  const { client } = await setup(t);
  for (let i = 0; i < 4; i++) await client.request(0, 9, produceBody('f', 0, batchOf([KB, KB])));
  await client.request(0, 9, produceBody('f', 1, batchOf([KB])));
  const batchSize = batchOf([KB, KB]).length;
  const tiny = fetchPartitions(await client.request(1, 12, fetchBody('f', [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 10 }, { partition: 1, fetchOffset: 0n, partitionMaxBytes: 10 }])));
  assert.equal(tiny[0]?.records?.length, batchSize, 'one whole batch despite partitionMaxBytes=10');
  assert.equal(tiny[1]?.records?.length, 0, 'later partitions stay within their limit');
  assert.deepEqual([tiny[0]?.highWatermark, tiny[0]?.lastStableOffset, tiny[0]?.logStartOffset], [8n, 8n, 0n]);
  const overall = fetchPartitions(await client.request(1, 11, fetchBody('f', [{ partition: 0, fetchOffset: 2n }, { partition: 1, fetchOffset: 0n }], { maxBytes: 2 * batchSize + 10 })));
  assert.deepEqual(scanBatches(overall[0]?.records ?? Buffer.alloc(0)).batches.map((b) => b.baseOffset), [2n, 4n]);
  assert.equal(overall[1]?.records?.length, 0, 'the overall budget is spent');
  const mid = fetchPartitions(await client.request(1, 4, fetchBody('f', [{ partition: 0, fetchOffset: 3n }])));
  assert.equal(scanBatches(mid[0]?.records ?? Buffer.alloc(0)).batches[0]?.baseOffset, 2n, 'the batch holding the fetch offset is returned whole');
});

test('a long poll is woken by an append to one of its partitions', async (t) => {
  const { client, broker } = await setup(t);
  await client.request(0, 9, produceBody('lp', 0, batchOf(['first'])));
  const polling = client.request(1, 12, fetchBody('lp', [{ partition: 0, fetchOffset: 1n }, { partition: 1, fetchOffset: 0n }], { maxWaitMs: 60_000, minBytes: 1 }));
  while (broker.broker.services.fetchWaiters.waiting === 0) await new Promise((r) => setTimeout(r, 5));
  const producer = await WireClient.connect(broker.port);
  t.after(() => producer.close());
  await producer.request(0, 9, produceBody('lp', 1, batchOf(['wake'])));
  const parts = fetchPartitions(await polling);
  assert.equal(parts[0]?.records?.length, 0);
  assert.equal(scanBatches(parts[1]?.records ?? Buffer.alloc(0)).batches.length, 1);
});

test('without data a poll answers empty after maxWaitMs; shutdown answers waiting polls', async (t) => {
  const { client, broker } = await setup(t);
  await client.request(0, 9, produceBody('idle', 0, batchOf(['a'])));
  const empty = fetchPartitions(await client.request(1, 12, fetchBody('idle', [{ partition: 0, fetchOffset: 1n }], { maxWaitMs: 20, minBytes: 1 })));
  assert.deepEqual([empty[0]?.errorCode, empty[0]?.records?.length, empty[0]?.highWatermark], [0, 0, 1n]);
  const polling = client.request(1, 12, fetchBody('idle', [{ partition: 0, fetchOffset: 1n }], { maxWaitMs: 600_000, minBytes: 1 }));
  while (broker.broker.services.fetchWaiters.waiting === 0) await new Promise((r) => setTimeout(r, 5));
  await broker.broker.stop();
  assert.equal(fetchPartitions(await polling)[0]?.errorCode, 0);
});

test('errors: offset out of range, unknown topic and partition, fencing; read_committed sees the LSO and an empty aborted list', async (t) => {
  const { client } = await setup(t);
  await client.request(0, 9, produceBody('e', 0, batchOf(['a', 'b'])));
  const parts = fetchPartitions(await client.request(1, 12, fetchBody('e', [{ partition: 0, fetchOffset: 5n }, { partition: 9, fetchOffset: 0n }], { maxWaitMs: 10_000, minBytes: 1 })));
  assert.deepEqual([parts[0]?.errorCode, parts[0]?.highWatermark], [ErrorCode.OFFSET_OUT_OF_RANGE, 2n]);
  assert.equal(parts[1]?.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const unknown = fetchPartitions(await client.request(1, 12, fetchBody('nope', [{ partition: 0, fetchOffset: 0n }])));
  assert.equal(unknown[0]?.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const committed = fetchPartitions(await client.request(1, 12, fetchBody('e', [{ partition: 0, fetchOffset: 0n }], { isolationLevel: 1 })));
  assert.deepEqual([committed[0]?.lastStableOffset, committed[0]?.abortedTransactions], [2n, []]);
  const fenced = fetchBody('e', [{ partition: 0, fetchOffset: 0n }]);
  ((fenced.topics as { partitions: { currentLeaderEpoch: number }[] }[])[0]?.partitions[0] as { currentLeaderEpoch: number }).currentLeaderEpoch = 5;
  assert.equal(fetchPartitions(await client.request(1, 12, fenced))[0]?.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
});

test('sessions: a session-opening fetch gets sessionId 0; an incremental one FETCH_SESSION_ID_NOT_FOUND', async (t) => {
  const { client } = await setup(t);
  await client.request(0, 9, produceBody('s', 0, batchOf(['a'])));
  const open = await client.request(1, 12, fetchBody('s', [{ partition: 0, fetchOffset: 0n }], { sessionId: 0, sessionEpoch: 0 }));
  assert.deepEqual([open.errorCode, open.sessionId, fetchPartitions(open)[0]?.records?.length !== 0], [0, 0, true]);
  const inc = await client.request(1, 12, fetchBody('s', [], { sessionId: 77, sessionEpoch: 1 }));
  assert.deepEqual([inc.errorCode, inc.sessionId, (inc.responses as unknown[]).length], [ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, 0]);
});

test('ListOffsets: earliest, latest, max timestamp, by timestamp to the exact record; DeleteRecords; OffsetForLeaderEpoch', async (t) => {
  const { client } = await setup(t);
  // Records at timestamps T, T+1, T+2 then T+10..T+12 (batchOf steps timestamps by 1 per record).
  await client.request(0, 9, produceBody('lo', 0, batchOf(['a', 'b', 'c'])));
  await client.request(0, 9, produceBody('lo', 0, batchOf(['d', 'e', 'f'], { baseTimestamp: 1_700_000_000_010n })));
  const list = async (timestamp: bigint, version = 9) => {
    const r = await client.request(2, version, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'lo', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp }] }] });
    const p = (r.topics as { partitions: { errorCode: number; offset: bigint; timestamp: bigint; leaderEpoch: number }[] }[])[0]?.partitions[0];
    return [p?.errorCode, p?.offset, p?.timestamp];
  };
  const T = 1_700_000_000_000n;
  assert.deepEqual(await list(-1n), [0, 6n, -1n]);
  assert.deepEqual(await list(-2n, 1), [0, 0n, -1n]);
  assert.deepEqual(await list(-3n), [0, 5n, T + 12n]);
  assert.deepEqual(await list(-4n), [0, 0n, -1n]);
  assert.deepEqual(await list(T + 1n), [0, 1n, T + 1n]);
  assert.deepEqual(await list(T + 5n), [0, 3n, T + 10n]);
  assert.deepEqual(await list(T + 11n), [0, 4n, T + 11n]);
  assert.deepEqual(await list(T + 100n), [0, -1n, -1n]);

  const del = async (offset: bigint) => {
    const r = await client.request(21, 2, { topics: [{ name: 'lo', partitions: [{ partitionIndex: 0, offset }] }], timeoutMs: 1000 });
    const p = (r.topics as { partitions: { errorCode: number; lowWatermark: bigint }[] }[])[0]?.partitions[0];
    return [p?.errorCode, p?.lowWatermark];
  };
  assert.deepEqual(await del(7n), [ErrorCode.OFFSET_OUT_OF_RANGE, -1n]);
  assert.deepEqual(await del(2n), [0, 2n]);
  assert.deepEqual(await list(-2n), [0, 2n, -1n]);
  const below = fetchPartitions(await client.request(1, 12, fetchBody('lo', [{ partition: 0, fetchOffset: 1n }])));
  assert.deepEqual([below[0]?.errorCode, below[0]?.logStartOffset], [ErrorCode.OFFSET_OUT_OF_RANGE, 2n]);
  assert.deepEqual(await del(-1n), [0, 6n]);

  const epochs = await client.request(23, 4, {
    replicaId: -1,
    topics: [{ topic: 'lo', partitions: [0, 1, -1].map((leaderEpoch) => ({ partition: 0, currentLeaderEpoch: -1, leaderEpoch })) }],
  });
  const answers = (epochs.topics as { partitions: { errorCode: number; leaderEpoch: number; endOffset: bigint }[] }[])[0]?.partitions.map((p) => [p.errorCode, p.leaderEpoch, p.endOffset]);
  assert.deepEqual(answers, [
    [0, 0, 6n],
    [0, -1, -1n],
    [0, -1, -1n],
  ]);
  assert.equal(firstPartition(await client.request(0, 9, produceBody('lo', 0, batchOf(['g'])))).logStartOffset, 6n);
});

// ---- Fetch v13+: topics by id ----

interface IdPartition {
  partition: number;
  fetchOffset: bigint;
}

/** A Fetch v13+ body: topics named by id; v15+ carries the replica id in ReplicaState, v17 a directory id. */
function fetchByIdBody(topics: { topicId: Buffer; partitions: IdPartition[] }[], version: number, opts: { maxWaitMs?: number; minBytes?: number } = {}) {
  return {
    ...(version >= 15 ? { replicaState: { replicaId: -1, replicaEpoch: -1n } } : { replicaId: -1 }),
    maxWaitMs: opts.maxWaitMs ?? 0,
    minBytes: opts.minBytes ?? 0,
    maxBytes: 0x7fffffff,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: topics.map((t) => ({
      topicId: t.topicId,
      partitions: t.partitions.map((p) => ({
        partition: p.partition,
        currentLeaderEpoch: -1,
        fetchOffset: p.fetchOffset,
        lastFetchedEpoch: -1,
        logStartOffset: -1n,
        partitionMaxBytes: 1 << 20,
        // Follower fetches only; a consumer that sent one anyway is answered like any consumer.
        ...(version >= 17 ? { replicaDirectoryId: Buffer.alloc(16, 7) } : {}),
      })),
    })),
    forgottenTopicsData: [],
    rackId: '',
  };
}

interface IdTopicResponse {
  topicId: Buffer;
  partitions: { partitionIndex: number; errorCode: number; highWatermark: bigint; records: Buffer | null }[];
}

/** The topic id as a client learns it: from Metadata v12. */
async function topicIdOf(client: WireClient, topic: string): Promise<Buffer> {
  const md = await client.request(3, 12, { topics: [{ topicId: Buffer.alloc(16), name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  const t = (md.topics as { errorCode: number; topicId: Buffer }[])[0];
  assert.equal(t?.errorCode, 0, `Metadata knows ${topic}`);
  return t.topicId;
}

const offsetsIn = (records: Buffer | null | undefined) => scanBatches(records ?? Buffer.alloc(0)).batches.map((b) => b.baseOffset);

test('Fetch v13-17 by topic id: the response echoes the id and carries what v12 returns by name; ApiVersions advertises 4-17', async (t) => {
  const { client } = await setup(t);
  await client.request(0, 9, produceBody('ids', 0, batchOf(['a', 'b'])));
  await client.request(0, 9, produceBody('ids', 0, batchOf(['c'])));
  await client.request(0, 9, produceBody('ids', 1, batchOf(['d'])));
  const id = await topicIdOf(client, 'ids');
  assert.notDeepEqual(id, Buffer.alloc(16));
  const byName = fetchPartitions(await client.request(1, 12, fetchBody('ids', [{ partition: 0, fetchOffset: 1n }, { partition: 1, fetchOffset: 0n }])));
  for (let version = 13; version <= 17; version++) {
    const res = await client.request(1, version, fetchByIdBody([{ topicId: id, partitions: [{ partition: 0, fetchOffset: 1n }, { partition: 1, fetchOffset: 0n }] }], version));
    const topics = res.responses as IdTopicResponse[];
    assert.equal(topics.length, 1);
    assert.deepEqual(topics[0]?.topicId, id, `v${version} echoes the topic id`);
    const parts = topics[0]?.partitions ?? [];
    assert.deepEqual(parts.map((p) => [p.partitionIndex, p.errorCode, p.highWatermark]), [[0, 0, 3n], [1, 0, 1n]], `v${version}`);
    assert.deepEqual(parts.map((p) => offsetsIn(p.records)), [[0n, 2n], [0n]], `v${version}: the batch holding offset 1, then the next`);
    assert.deepEqual(parts.map((p) => p.records), byName.map((p) => p.records), `v${version} returns the bytes v12 returns`);
    if (version >= 16) assert.deepEqual(res.nodeEndpoints, [], 'no leader hints from the only broker');
  }
  const versions = await client.request(18, 3, { clientSoftwareName: 'wire-test', clientSoftwareVersion: '1' });
  const fetch = (versions.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]).find((k) => k.apiKey === 1);
  assert.deepEqual([fetch?.minVersion, fetch?.maxVersion], [4, 17]);
});

test('Fetch v13+: an id the broker does not know is UNKNOWN_TOPIC_ID at once, also the id of a deleted topic recreated under its name', async (t) => {
  const { client, broker } = await setup(t);
  await client.request(0, 9, produceBody('gone', 0, batchOf(['old'])));
  const oldId = await topicIdOf(client, 'gone');
  const random = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
  // A long poll with minBytes would wait; an unknown topic answers at once, as any partition error does.
  const unknown = await client.request(1, 13, fetchByIdBody([{ topicId: random, partitions: [{ partition: 0, fetchOffset: 0n }, { partition: 1, fetchOffset: 0n }] }], 13, { maxWaitMs: 600_000, minBytes: 1 }));
  const [topic] = unknown.responses as IdTopicResponse[];
  assert.deepEqual(topic?.topicId, random);
  assert.deepEqual(topic?.partitions.map((p) => [p.partitionIndex, p.errorCode, p.highWatermark, p.records?.length ?? 0]), [[0, ErrorCode.UNKNOWN_TOPIC_ID, -1n, 0], [1, ErrorCode.UNKNOWN_TOPIC_ID, -1n, 0]]);
  const zero = (await client.request(1, 16, fetchByIdBody([{ topicId: Buffer.alloc(16), partitions: [{ partition: 0, fetchOffset: 0n }] }], 16))).responses as IdTopicResponse[];
  assert.equal(zero[0]?.partitions[0]?.errorCode, ErrorCode.UNKNOWN_TOPIC_ID, 'the zero id names no topic');

  await broker.broker.services.topics.deleteTopic('gone');
  await broker.broker.services.topics.createTopic('gone', 1);
  await client.request(0, 9, produceBody('gone', 0, batchOf(['new'])));
  const newId = await topicIdOf(client, 'gone');
  assert.notDeepEqual(newId, oldId, 'a recreated topic gets a new id');
  const stale = (await client.request(1, 15, fetchByIdBody([{ topicId: oldId, partitions: [{ partition: 0, fetchOffset: 0n }] }], 15))).responses as IdTopicResponse[];
  assert.equal(stale[0]?.partitions[0]?.errorCode, ErrorCode.UNKNOWN_TOPIC_ID, 'the old id does not read the new topic');
  const fresh = (await client.request(1, 15, fetchByIdBody([{ topicId: newId, partitions: [{ partition: 0, fetchOffset: 0n }] }], 15))).responses as IdTopicResponse[];
  const record = scanBatches(fresh[0]?.partitions[0]?.records ?? Buffer.alloc(0)).batches;
  assert.deepEqual([fresh[0]?.partitions[0]?.errorCode, record.length], [0, 1]);
});

test('Fetch v13+ mixed: known and unknown ids in one request keep their order; a missing partition of a known id is UNKNOWN_TOPIC_OR_PARTITION', async (t) => {
  const { client } = await setup(t);
  await client.request(0, 9, produceBody('m1', 1, batchOf(['x'])));
  await client.request(0, 9, produceBody('m2', 0, batchOf(['y', 'z'])));
  const [m1, m2] = [await topicIdOf(client, 'm1'), await topicIdOf(client, 'm2')];
  const unknown = Buffer.alloc(16, 0xab);
  const res = await client.request(1, 16, fetchByIdBody([
    { topicId: m2, partitions: [{ partition: 0, fetchOffset: 0n }, { partition: 9, fetchOffset: 0n }] },
    { topicId: unknown, partitions: [{ partition: 0, fetchOffset: 0n }] },
    { topicId: m1, partitions: [{ partition: 1, fetchOffset: 0n }, { partition: 0, fetchOffset: 0n }] },
  ], 16));
  const topics = res.responses as IdTopicResponse[];
  assert.deepEqual(topics.map((x) => x.topicId), [m2, unknown, m1]);
  const summary = topics.map((x) => x.partitions.map((p) => [p.partitionIndex, p.errorCode, offsetsIn(p.records)]));
  assert.deepEqual(summary, [
    [[0, 0, [0n]], [9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []]],
    [[0, ErrorCode.UNKNOWN_TOPIC_ID, []]],
    [[1, 0, [0n]], [0, 0, []]],
  ]);
});

test('fetches in flight together each answer with their own bytes while record-set memory is reused', async (t) => {
  const { client } = await setup(t);
  const values = Array.from({ length: 24 }, () => randomBytes(150_000).toString('base64'));
  for (const v of values) assert.equal(firstPartition(await client.request(0, 9, produceBody('rs', 0, batchOf([v]), 1))).errorCode, 0);
  // Each fetch asks for one batch (the first comes whole whatever the limit); all are in flight at once, so
  // memory given back too early would be read into by a later fetch before the earlier answer is written.
  for (let round = 0; round < 3; round++) {
    const answers = await Promise.all(values.map((_, i) => client.request(1, 11, fetchBody('rs', [{ partition: 0, fetchOffset: BigInt(i), partitionMaxBytes: 1 }]))));
    answers.forEach((a, i) => {
      const records = fetchPartitions(a)[0]?.records ?? Buffer.alloc(0);
      assert.equal(decodeRecordBatch(records, 0).records[0]?.value?.toString(), values[i], `round ${round}, offset ${i}`);
    });
  }
});
