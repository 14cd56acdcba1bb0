import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { startBroker } from '../../helpers/broker.js';
import { WireClient } from '../groups/wire-client.js';

type Obj = Record<string, unknown>;

async function setup(t: { after: (fn: () => Promise<void> | void) => void }) {
  const b = await startBroker();
  t.after(() => b.stop());
  const c = await WireClient.open(b.port);
  t.after(() => c.close());
  return { b, c };
}

const protocols = [{ name: 'range', metadata: Buffer.from([0, 0, 0, 0, 0, 0]) }];

test('FindCoordinator names this broker, for single keys (v0-3) and batched keys (v4+)', async (t) => {
  const { b, c } = await setup(t);
  const v0 = await c.send(10, 0, { key: 'g' });
  assert.deepEqual([v0.errorCode, v0.nodeId, v0.host, v0.port], [0, 1, '127.0.0.1', b.port]);
  const v3 = await c.send(10, 3, { key: 'txn', keyType: 1 });
  assert.equal(v3.port, b.port);
  const v4 = await c.send(10, 4, { keyType: 0, coordinatorKeys: ['a', 'b'] });
  assert.deepEqual((v4.coordinators as Obj[]).map((x) => [x.key, x.errorCode, x.port]), [['a', 0, b.port], ['b', 0, b.port]]);
  const bad = await c.send(10, 6, { keyType: 2, coordinatorKeys: ['s'] });
  assert.equal((bad.coordinators as Obj[])[0]?.errorCode, ErrorCode.INVALID_REQUEST);
});

test('JoinGroup v4+ asks for a member id first; the group then forms, syncs, heartbeats and commits over the wire', async (t) => {
  const { c } = await setup(t);
  for (const v of [4, 9]) {
    const groupId = `g${v}`;
    const first = await c.send(11, v, { groupId, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'consumer', protocols });
    assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
    const memberId = first.memberId as string;
    assert.match(memberId, /^wire-test-/);
    const join = await c.send(11, v, { groupId, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId, protocolType: 'consumer', protocols });
    assert.equal(join.errorCode, 0);
    assert.equal(join.generationId, 1);
    assert.equal(join.leader, memberId);
    assert.equal(join.protocolName, 'range');
    const sync = await c.send(14, v >= 9 ? 5 : 3, { groupId, generationId: 1, memberId, protocolType: 'consumer', protocolName: 'range', assignments: [{ memberId, assignment: Buffer.from('a') }] });
    assert.equal(sync.errorCode, 0);
    assert.deepEqual(sync.assignment, Buffer.from('a'));
    assert.equal((await c.send(12, 4, { groupId, generationId: 1, memberId })).errorCode, 0);
    assert.equal((await c.send(12, 4, { groupId, generationId: 0, memberId })).errorCode, ErrorCode.ILLEGAL_GENERATION);

    const described = await c.send(15, 5, { groups: [groupId, 'missing'], includeAuthorizedOperations: false });
    const [g, missing] = described.groups as Obj[];
    assert.deepEqual([g?.groupState, g?.protocolType, g?.protocolData], ['Stable', 'consumer', 'range']);
    assert.deepEqual((g?.members as Obj[]).map((m) => [m.memberId, m.clientId, m.clientHost]), [[memberId, 'wire-test', '/127.0.0.1']]);
    assert.equal(missing?.groupState, 'Dead');

    const left = await c.send(13, 5, { groupId, members: [{ memberId, groupInstanceId: null }] });
    assert.deepEqual([left.errorCode, (left.members as Obj[])[0]?.errorCode], [0, 0]);
    assert.equal((await c.send(12, 4, { groupId, generationId: 1, memberId })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  }
  const listed = await c.send(16, 4, { statesFilter: ['empty'] });
  assert.deepEqual((listed.groups as Obj[]).map((g) => [g.groupId, g.groupState]).sort(), [['g4', 'Empty'], ['g9', 'Empty']]);
  assert.deepEqual((await c.send(16, 4, { statesFilter: ['Stable'] })).groups, []);
});

test('OffsetCommit and OffsetFetch over the wire: unknown topics, zombie generations, batched groups (v8+)', async (t) => {
  const { c } = await setup(t);
  await c.send(19, 4, { topics: [{ name: 't', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
  const commit = (groupId: string, generation: number, memberId: string, topic = 't') =>
    c.send(8, 8, { groupId, generationIdOrMemberEpoch: generation, memberId, topics: [{ name: topic, partitions: [{ partitionIndex: 1, committedOffset: 77n, committedLeaderEpoch: 4, committedMetadata: 'meta' }] }] });
  const codeOf = (r: Obj) => ((r.topics as Obj[])[0]?.partitions as Obj[])[0]?.errorCode;
  assert.equal(codeOf(await commit('simple', -1, '')), 0);
  assert.equal(codeOf(await commit('simple', -1, '', 'nope')), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal(codeOf(await commit('zombie', 3, 'member-1')), ErrorCode.ILLEGAL_GENERATION);

  const v7 = await c.send(9, 7, { groupId: 'simple', topics: [{ name: 't', partitionIndexes: [0, 1] }] });
  assert.deepEqual(((v7.topics as Obj[])[0]?.partitions as Obj[]).map((p) => [p.partitionIndex, p.committedOffset, p.committedLeaderEpoch, p.metadata]), [
    [0, -1n, -1, ''],
    [1, 77n, 4, 'meta'],
  ]);
  const v8 = await c.send(9, 8, { groups: [{ groupId: 'simple', topics: null }, { groupId: 'other', topics: [{ name: 't', partitionIndexes: [1] }] }], requireStable: false });
  const groups = v8.groups as Obj[];
  assert.deepEqual(groups.map((g) => [g.groupId, g.errorCode]), [['simple', 0], ['other', 0]]);
  assert.equal((((groups[0]?.topics as Obj[])[0]?.partitions as Obj[])[0] as Obj).committedOffset, 77n);
  assert.equal((((groups[1]?.topics as Obj[])[0]?.partitions as Obj[])[0] as Obj).committedOffset, -1n);

  const od = await c.send(47, 0, { groupId: 'simple', topics: [{ name: 't', partitions: [{ partitionIndex: 1 }] }] });
  assert.equal(((od.topics as Obj[])[0]?.partitions as Obj[])[0]?.errorCode, 0);
  const del = await c.send(42, 2, { groupsNames: ['simple', 'missing'] });
  assert.deepEqual((del.results as Obj[]).map((r) => [r.groupId, r.errorCode]), [['simple', 0], ['missing', ErrorCode.GROUP_ID_NOT_FOUND]]);
});
