import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCoordinator, type GroupConfig, type JoinRequest } from '../../../broker/groups/coordinator.js';
import type { JoinResult, SyncResult } from '../../../broker/groups/group.js';
import { createLogger } from '../../../broker/logger.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ManualClock } from './manual-clock.js';

const CONFIG: GroupConfig = { minSessionTimeoutMs: 1000, maxSessionTimeoutMs: 60_000, initialRebalanceDelayMs: 0, maxSize: 100, newMemberJoinTimeoutMs: 300_000 };

function setup(config: Partial<GroupConfig> = {}) {
  const clock = new ManualClock();
  const gc = new GroupCoordinator({ ...CONFIG, ...config }, clock, createLogger('silent'));
  return { clock, gc };
}

function req(over: Partial<JoinRequest> = {}): JoinRequest {
  return {
    groupId: 'g',
    memberId: '',
    groupInstanceId: null,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 30_000,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('m') }],
    clientId: 'c',
    clientHost: '/127.0.0.1',
    requireKnownMemberId: true,
    supportsSkipAssignment: true,
    ...over,
  };
}

/** Tracks whether a promise settled, so tests can assert that a JoinGroup or SyncGroup is still waiting. */
function track<T>(p: Promise<T>): { done: () => boolean; value: () => T; promise: Promise<T> } {
  let settled = false;
  let v: T | undefined;
  const promise = p.then((x) => ((settled = true), (v = x), x));
  return { done: () => settled, value: () => v as T, promise };
}

const flush = () => new Promise<void>((r) => setImmediate(r));

/** MEMBER_ID_REQUIRED round trip, then the join with the given id; returns the (possibly pending) join. */
async function joinNew(gc: GroupCoordinator, over: Partial<JoinRequest> = {}) {
  const first = await gc.joinGroup(req(over));
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.match(first.memberId, /^c-/);
  return track(gc.joinGroup(req({ ...over, memberId: first.memberId })));
}

async function stableGroupOfOne(gc: GroupCoordinator): Promise<JoinResult> {
  const j = await (await joinNew(gc)).promise;
  assert.equal(j.errorCode, ErrorCode.NONE);
  const s = await gc.syncGroup({ groupId: 'g', generationId: j.generationId, memberId: j.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [{ memberId: j.memberId, assignment: Buffer.from('A') }] });
  assert.equal(s.errorCode, ErrorCode.NONE);
  return j;
}

test('a single member: MEMBER_ID_REQUIRED, join as leader of generation 1, sync to Stable with its assignment', async () => {
  const { gc } = setup();
  const join = await (await joinNew(gc)).promise;
  assert.equal(join.errorCode, ErrorCode.NONE);
  assert.equal(join.generationId, 1);
  assert.equal(join.leader, join.memberId);
  assert.equal(join.protocolName, 'range');
  assert.deepEqual(join.members.map((m) => m.memberId), [join.memberId]);
  assert.equal(gc.group('g')?.state, 'CompletingRebalance');
  const sync = await gc.syncGroup({ groupId: 'g', generationId: 1, memberId: join.memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [{ memberId: join.memberId, assignment: Buffer.from('P0') }] });
  assert.equal(sync.errorCode, ErrorCode.NONE);
  assert.equal(sync.assignment.toString(), 'P0');
  assert.equal(gc.group('g')?.state, 'Stable');
  assert.equal(gc.heartbeat('g', join.memberId, null, 1), ErrorCode.NONE);
});

test('a v0-v3 join without member id is admitted directly; an abandoned MEMBER_ID_REQUIRED id expires with its session', async () => {
  const { gc, clock } = setup();
  const j = await gc.joinGroup(req({ requireKnownMemberId: false }));
  assert.equal(j.errorCode, ErrorCode.NONE);
  const first = await gc.joinGroup(req({ groupId: 'h' }));
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.equal(gc.group('h')?.pendingMembers.size, 1);
  clock.advance(10_000);
  assert.equal(gc.group('h'), undefined, 'the never-formed group is forgotten');
  const late = await gc.joinGroup(req({ groupId: 'h', memberId: first.memberId }));
  assert.equal(late.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('the initial rebalance delay waits for more members, and leader and followers get their join responses together', async () => {
  const { gc, clock } = setup({ initialRebalanceDelayMs: 3000 });
  const a = await joinNew(gc);
  clock.advance(2000);
  await flush();
  assert.equal(a.done(), false, 'still inside the initial delay');
  const b = await joinNew(gc, { clientId: 'c' });
  clock.advance(1000);
  await flush();
  assert.equal(a.done(), false, 'a new arrival during the delay extends it by another delay');
  clock.advance(2999);
  await flush();
  assert.equal(a.done(), false);
  clock.advance(1);
  const [ja, jb] = await Promise.all([a.promise, b.promise]);
  assert.equal(ja.generationId, 1);
  assert.equal(jb.generationId, 1);
  assert.equal(ja.leader, ja.memberId);
  assert.equal(jb.leader, ja.memberId);
  assert.equal(ja.members.length, 2, 'the leader sees every member');
  assert.equal(jb.members.length, 0, 'followers see none');

  // The follower's SyncGroup waits for the leader's, then gets the assignment the leader chose for it.
  const sb = track(gc.syncGroup({ groupId: 'g', generationId: 1, memberId: jb.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] }));
  await flush();
  assert.equal(sb.done(), false);
  const sa = await gc.syncGroup({
    groupId: 'g', generationId: 1, memberId: ja.memberId, groupInstanceId: null, protocolType: null, protocolName: null,
    assignments: [{ memberId: ja.memberId, assignment: Buffer.from('A') }, { memberId: jb.memberId, assignment: Buffer.from('B') }],
  });
  assert.equal(sa.assignment.toString(), 'A');
  assert.equal((await sb.promise).assignment.toString(), 'B');
});

test('a member that stops heartbeating is removed after its session timeout and the group rebalances without it', async () => {
  const { gc, clock } = setup();
  const a = await joinNew(gc);
  const ja = await a.promise;
  const b = await joinNew(gc);
  // b's arrival starts a rebalance: a learns it from its heartbeat and rejoins.
  assert.equal(gc.heartbeat('g', ja.memberId, null, 1), ErrorCode.REBALANCE_IN_PROGRESS);
  const ra = track(gc.joinGroup(req({ memberId: ja.memberId })));
  const [ja2, jb2] = await Promise.all([ra.promise, b.promise]);
  assert.equal(ja2.generationId, 2);
  const assignments = [{ memberId: ja2.memberId, assignment: Buffer.from('A') }, { memberId: jb2.memberId, assignment: Buffer.from('B') }];
  const sb = gc.syncGroup({ groupId: 'g', generationId: 2, memberId: jb2.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  await gc.syncGroup({ groupId: 'g', generationId: 2, memberId: ja2.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments });
  await sb;
  assert.equal(gc.group('g')?.state, 'Stable');

  // a keeps heartbeating, b goes silent.
  for (let i = 0; i < 3; i++) {
    clock.advance(4000);
    assert.equal(gc.heartbeat('g', ja.memberId, null, 2), i < 2 ? ErrorCode.NONE : ErrorCode.REBALANCE_IN_PROGRESS);
  }
  const group = gc.group('g');
  assert.equal(group?.has(jb2.memberId), false, 'b was removed after 10 s without a heartbeat');
  assert.equal(group?.state, 'PreparingRebalance');
  assert.equal(gc.heartbeat('g', jb2.memberId, null, 2), ErrorCode.UNKNOWN_MEMBER_ID);
  const ja3 = await gc.joinGroup(req({ memberId: ja.memberId }));
  assert.equal(ja3.generationId, 3);
  assert.deepEqual(ja3.members.map((m) => m.memberId), [ja.memberId]);
});

test('members that do not rejoin within the rebalance timeout are dropped from the new generation', async () => {
  const { gc, clock } = setup();
  const ja = await (await joinNew(gc)).promise;
  const b = await joinNew(gc, { rebalanceTimeoutMs: 20_000 });
  clock.advance(5000);
  gc.heartbeat('g', ja.memberId, null, 1);
  clock.advance(5000);
  gc.heartbeat('g', ja.memberId, null, 1);
  await flush();
  assert.equal(b.done(), false, 'waits for a to rejoin');
  clock.advance(20_000); // the rebalance timeout is the largest member's (a's 30 s)
  const jb = await b.promise;
  assert.equal(jb.errorCode, ErrorCode.NONE);
  assert.equal(jb.generationId, 2);
  assert.equal(jb.leader, jb.memberId, 'the leader is re-elected among members that rejoined');
  assert.equal(gc.group('g')?.has(ja.memberId), false);
});

test('a follower that never syncs is removed after the rebalance timeout and the group rebalances', async () => {
  const { gc, clock } = setup({ initialRebalanceDelayMs: 100 });
  const a = await joinNew(gc);
  const b = await joinNew(gc);
  clock.advance(1000);
  const [ja, jb] = await Promise.all([a.promise, b.promise]);
  const leader = ja.leader === ja.memberId ? ja : jb;
  const follower = leader === ja ? jb : ja;
  await gc.syncGroup({ groupId: 'g', generationId: leader.generationId, memberId: leader.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  assert.equal(gc.group('g')?.state, 'Stable');
  for (let i = 0; i < 4; i++) {
    clock.advance(8000);
    gc.heartbeat('g', leader.memberId, null, leader.generationId);
    gc.heartbeat('g', follower.memberId, null, follower.generationId);
  }
  assert.equal(gc.group('g')?.has(follower.memberId), false);
  assert.equal(gc.group('g')?.state, 'PreparingRebalance');
});

test('generation and member fencing: stale generation, unknown member, rebalance in progress', async () => {
  const { gc } = setup();
  const j = await stableGroupOfOne(gc);
  assert.equal(gc.heartbeat('g', j.memberId, null, j.generationId - 1), ErrorCode.ILLEGAL_GENERATION);
  assert.equal(gc.heartbeat('g', 'nobody', null, j.generationId), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(gc.heartbeat('nogroup', j.memberId, null, 1), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(gc.heartbeat('', j.memberId, null, 1), ErrorCode.INVALID_GROUP_ID);
  const stale = await gc.syncGroup({ groupId: 'g', generationId: 7, memberId: j.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  assert.equal(stale.errorCode, ErrorCode.ILLEGAL_GENERATION);
  const wrongProtocol = await gc.syncGroup({ groupId: 'g', generationId: j.generationId, memberId: j.memberId, groupInstanceId: null, protocolType: 'connect', protocolName: null, assignments: [] });
  assert.equal(wrongProtocol.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  void joinNew(gc);
  await flush();
  assert.equal(gc.heartbeat('g', j.memberId, null, j.generationId), ErrorCode.REBALANCE_IN_PROGRESS);
  const sync = await gc.syncGroup({ groupId: 'g', generationId: j.generationId, memberId: j.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  assert.equal(sync.errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
});

test('session timeout bounds, protocol type and protocol compatibility are checked on join', async () => {
  const { gc } = setup();
  assert.equal((await gc.joinGroup(req({ sessionTimeoutMs: 999 }))).errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
  assert.equal((await gc.joinGroup(req({ sessionTimeoutMs: 60_001 }))).errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
  assert.equal((await gc.joinGroup(req({ groupId: '' }))).errorCode, ErrorCode.INVALID_GROUP_ID);
  assert.equal((await gc.joinGroup(req({ protocols: [] }))).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  await stableGroupOfOne(gc);
  assert.equal((await gc.joinGroup(req({ protocolType: 'connect' }))).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal((await gc.joinGroup(req({ protocols: [{ name: 'sticky', metadata: Buffer.alloc(0) }] }))).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal((await gc.joinGroup(req({ memberId: 'unknown' }))).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('protocol selection: among protocols all members support, the members\' first choices vote', async () => {
  const { gc, clock } = setup({ initialRebalanceDelayMs: 100 });
  const p = (...names: string[]) => names.map((name) => ({ name, metadata: Buffer.from(name) }));
  const joins = [
    await joinNew(gc, { protocols: p('range', 'roundrobin', 'sticky') }),
    await joinNew(gc, { protocols: p('sticky', 'roundrobin') }),
    await joinNew(gc, { protocols: p('roundrobin', 'sticky') }),
  ];
  clock.advance(1000);
  const results = await Promise.all(joins.map((j) => j.promise));
  // range is not supported by all; among roundrobin and sticky, members 1 and 3 prefer roundrobin, member 2 sticky.
  for (const r of results) assert.equal(r.protocolName, 'roundrobin');
  const leader = results.find((r) => r.members.length > 0);
  assert.deepEqual(leader?.members.map((m) => m.metadata.toString()), ['roundrobin', 'roundrobin', 'roundrobin'], 'the leader gets each member\'s metadata for the chosen protocol');
});

test('static membership: a restarted instance takes over its member id without a rebalance, and the old id is fenced', async () => {
  const { gc } = setup();
  const j1 = await gc.joinGroup(req({ groupInstanceId: 'i1' }));
  assert.equal(j1.errorCode, ErrorCode.NONE, 'static members need no MEMBER_ID_REQUIRED round trip');
  await gc.syncGroup({ groupId: 'g', generationId: 1, memberId: j1.memberId, groupInstanceId: 'i1', protocolType: null, protocolName: null, assignments: [{ memberId: j1.memberId, assignment: Buffer.from('X') }] });
  assert.equal(gc.group('g')?.state, 'Stable');

  const j2 = await gc.joinGroup(req({ groupInstanceId: 'i1' }));
  assert.equal(j2.errorCode, ErrorCode.NONE);
  assert.notEqual(j2.memberId, j1.memberId);
  assert.equal(j2.generationId, 1, 'same generation: no rebalance');
  assert.equal(gc.group('g')?.state, 'Stable');
  assert.equal(j2.skipAssignment, true, 'the rejoining leader is told not to reassign (v9)');
  const s2 = await gc.syncGroup({ groupId: 'g', generationId: 1, memberId: j2.memberId, groupInstanceId: 'i1', protocolType: null, protocolName: null, assignments: [] });
  assert.equal(s2.assignment.toString(), 'X', 'the instance keeps its assignment');
  assert.equal(gc.heartbeat('g', j1.memberId, 'i1', 1), ErrorCode.FENCED_INSTANCE_ID);
  assert.equal(gc.heartbeat('g', j2.memberId, 'i1', 1), ErrorCode.NONE);

  const left = gc.leaveGroup('g', [{ memberId: '', groupInstanceId: 'i1' }, { memberId: '', groupInstanceId: 'nope' }]);
  assert.deepEqual(left.members.map((m) => m.errorCode), [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]);
  assert.equal(gc.group('g')?.state, 'Empty');
});

test('LeaveGroup removes members (batched), rebalancing the rest; an empty group ends Empty with a new generation', async () => {
  const { gc, clock } = setup({ initialRebalanceDelayMs: 100 });
  const a = await joinNew(gc);
  const b = await joinNew(gc);
  clock.advance(1000);
  const [ja, jb] = await Promise.all([a.promise, b.promise]);
  const r = gc.leaveGroup('g', [{ memberId: ja.memberId, groupInstanceId: null }, { memberId: 'ghost', groupInstanceId: null }]);
  assert.equal(r.errorCode, ErrorCode.NONE);
  assert.deepEqual(r.members.map((m) => m.errorCode), [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]);
  assert.equal(gc.group('g')?.state, 'PreparingRebalance');
  const jb2 = await gc.joinGroup(req({ memberId: jb.memberId }));
  assert.equal(jb2.generationId, 2);
  gc.leaveGroup('g', [{ memberId: jb.memberId, groupInstanceId: null }]);
  assert.equal(gc.group('g')?.state, 'Empty');
  assert.equal(gc.group('g')?.generationId, 3);
});

test('shutdown answers waiting joins with NOT_COORDINATOR and leaves no timers behind', async () => {
  const { gc, clock } = setup({ initialRebalanceDelayMs: 3000 });
  const a = await joinNew(gc);
  gc.shutdown();
  const r: JoinResult = await a.promise;
  assert.equal(r.errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(clock.pending(), 0);
  const s: SyncResult = await gc.syncGroup({ groupId: 'g', generationId: 1, memberId: 'x', groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  assert.equal(s.errorCode, ErrorCode.NOT_COORDINATOR);
});
