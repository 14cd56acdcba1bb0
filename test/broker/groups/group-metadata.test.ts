/**
 * Group membership across a restart of the coordinator, with the real committed-offsets log on disk: the
 * coordinator, offset manager and store are closed and opened again on the same directory (Groups.open, as
 * the broker does), with a manual clock for the session timeouts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { JoinRequest, SyncRequest } from '../../../broker/groups/coordinator.js';
import type { JoinResult } from '../../../broker/groups/group.js';
import { Groups, OFFSETS_DIR, type GroupSettings } from '../../../broker/groups/groups.js';
import { createLogger } from '../../../broker/logger.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { tempDir } from '../../helpers/broker.js';
import { ManualClock } from './manual-clock.js';

const SESSION_MS = 10_000;
const SETTINGS: GroupSettings = {
  'group.min.session.timeout.ms': 1000,
  'group.max.session.timeout.ms': 60_000,
  'group.initial.rebalance.delay.ms': 0,
  'group.max.size': 100,
  'offsets.retention.minutes': 60,
  'offsets.retention.check.interval.ms': 600_000,
  'offset.metadata.max.bytes': 4096,
};

interface Ctx {
  after(fn: () => Promise<void>): void;
}

/** A data directory and a clock that outlive each Groups opened on them. */
async function setup(t: Ctx) {
  const dir = await tempDir('floe-group-metadata-');
  const clock = new ManualClock();
  const opened: Groups[] = [];
  t.after(async () => {
    for (const g of opened) await g.close();
    await rm(dir, { recursive: true, force: true });
  });
  const open = async () => {
    const g = await Groups.open(dir, SETTINGS, createLogger('silent'), clock);
    opened.push(g);
    return g;
  };
  return { dir, clock, open };
}

const joinReq = (over: Partial<JoinRequest>): JoinRequest => ({
  groupId: 'g', memberId: '', groupInstanceId: null, sessionTimeoutMs: SESSION_MS, rebalanceTimeoutMs: 30_000, protocolType: 'consumer',
  protocols: [{ name: 'range', metadata: Buffer.from('sub') }, { name: 'roundrobin', metadata: Buffer.from('sub2') }],
  clientId: 'c', clientHost: '/127.0.0.1', requireKnownMemberId: false, supportsSkipAssignment: true, ...over,
});

const sync = (j: JoinResult, assignments: SyncRequest['assignments'] = [], groupInstanceId: string | null = null): SyncRequest => ({
  groupId: 'g', generationId: j.generationId, memberId: j.memberId, groupInstanceId, protocolType: 'consumer', protocolName: 'range', assignments,
});

/** Two members a (leader) and b, Stable at generation 2 with assignments 'A' and 'B'. */
async function stablePair(g: Groups): Promise<{ a: JoinResult; b: JoinResult }> {
  const gc = g.coordinator;
  const a1 = await gc.joinGroup(joinReq({ clientId: 'a' }));
  assert.equal((await gc.syncGroup(sync(a1, [{ memberId: a1.memberId, assignment: Buffer.from('A') }]))).errorCode, ErrorCode.NONE);
  const bJoin = gc.joinGroup(joinReq({ clientId: 'b' }));
  const a = await gc.joinGroup(joinReq({ clientId: 'a', memberId: a1.memberId }));
  const b = await bJoin;
  assert.equal(a.generationId, 2);
  const bSync = gc.syncGroup(sync(b));
  const sa = await gc.syncGroup(sync(a, [{ memberId: a.memberId, assignment: Buffer.from('A') }, { memberId: b.memberId, assignment: Buffer.from('B') }]));
  assert.equal(sa.errorCode, ErrorCode.NONE);
  assert.equal((await bSync).assignment.toString(), 'B');
  assert.equal(gc.group('g')?.state, 'Stable');
  return { a, b };
}

test('a Stable group comes back Stable at the same generation with the same members, leader and assignments; its members carry on without a rebalance', async (t) => {
  const { open } = await setup(t);
  const first = await open();
  const { a, b } = await stablePair(first);
  await first.close();

  const g = await open();
  const gc = g.coordinator;
  const group = gc.group('g');
  assert.equal(group?.state, 'Stable');
  assert.equal(group?.generationId, 2);
  assert.equal(group?.protocolType, 'consumer');
  assert.equal(group?.protocolName, 'range');
  assert.equal(group?.leaderId, a.memberId);
  assert.deepEqual([...(group?.members.keys() ?? [])].sort(), [a.memberId, b.memberId].sort());
  const mb = group?.members.get(b.memberId);
  assert.equal(mb?.assignment.toString(), 'B');
  assert.equal(mb?.clientId, 'b');
  assert.equal(mb?.sessionTimeoutMs, SESSION_MS);
  assert.deepEqual(mb?.protocols.map((p) => [p.name, p.metadata.toString()]), [['range', 'sub'], ['roundrobin', 'sub2']]);

  // The old member ids and generation are valid: heartbeats, commits and a SyncGroup retry all succeed.
  assert.equal(gc.heartbeat('g', a.memberId, null, 2), ErrorCode.NONE);
  assert.equal(gc.heartbeat('g', b.memberId, null, 2), ErrorCode.NONE);
  const commit = await g.offsets.commit({ groupId: 'g', generationId: 2, memberId: b.memberId, groupInstanceId: null, retentionTimeMs: -1, partitions: [{ topic: 't', partition: 0, offset: 5n, leaderEpoch: -1, metadata: null }] });
  assert.deepEqual(commit, [ErrorCode.NONE]);
  assert.equal((await gc.syncGroup(sync(b))).assignment.toString(), 'B');
  // A follower that rejoins with the same protocols gets the current generation back (no rebalance).
  const rejoin = await gc.joinGroup(joinReq({ clientId: 'b', memberId: b.memberId }));
  assert.equal(rejoin.errorCode, ErrorCode.NONE);
  assert.equal(rejoin.generationId, 2);
  assert.equal(gc.group('g')?.state, 'Stable');
});

test('after a restart a member that never heartbeats is removed after its session timeout and the group rebalances without it', async (t) => {
  const { open, clock } = await setup(t);
  const first = await open();
  const { a, b } = await stablePair(first);
  await first.close();
  clock.advance(SESSION_MS * 3); // the broker was down for longer than a session: timers start at load, not before

  const g = await open();
  const gc = g.coordinator;
  assert.equal(gc.group('g')?.state, 'Stable');
  // a heartbeats every half session, b never does.
  for (let i = 0; i < 3; i++) {
    clock.advance(SESSION_MS / 2);
    const code = gc.heartbeat('g', a.memberId, null, 2);
    if (i === 0) assert.equal(code, ErrorCode.NONE, 'within the first session after the restart nobody is removed');
  }
  assert.equal(gc.group('g')?.has(b.memberId), false, 'b is removed once its session expired');
  assert.equal(gc.group('g')?.state, 'PreparingRebalance');
  assert.equal(gc.heartbeat('g', a.memberId, null, 2), ErrorCode.REBALANCE_IN_PROGRESS);
  const ra = await gc.joinGroup(joinReq({ clientId: 'a', memberId: a.memberId }));
  assert.equal(ra.generationId, 3);
  assert.deepEqual(ra.members.map((m) => m.memberId), [a.memberId]);
  assert.equal(gc.heartbeat('g', b.memberId, null, 2), ErrorCode.UNKNOWN_MEMBER_ID);
});

test('an Empty group comes back Empty at its generation with its offsets; a deleted group does not come back', async (t) => {
  const { open } = await setup(t);
  const first = await open();
  const { a, b } = await stablePair(first);
  const commit = { groupId: 'g', generationId: 2, memberId: a.memberId, groupInstanceId: null, retentionTimeMs: -1, partitions: [{ topic: 't', partition: 0, offset: 42n, leaderEpoch: -1, metadata: 'm' }] };
  assert.deepEqual(await first.offsets.commit(commit), [ErrorCode.NONE]);
  first.coordinator.leaveGroup('g', [{ memberId: a.memberId, groupInstanceId: null }, { memberId: b.memberId, groupInstanceId: null }]);
  assert.equal(first.coordinator.group('g')?.state, 'Empty');
  // A second group: formed, left empty, deleted.
  const h = await first.coordinator.joinGroup(joinReq({ groupId: 'h' }));
  await first.coordinator.syncGroup({ ...sync(h, [{ memberId: h.memberId, assignment: Buffer.from('H') }]), groupId: 'h' });
  first.coordinator.leaveGroup('h', [{ memberId: h.memberId, groupInstanceId: null }]);
  assert.equal(await first.offsets.deleteGroup('h'), ErrorCode.NONE);
  await first.close();

  const g = await open();
  const group = g.coordinator.group('g');
  assert.equal(group?.state, 'Empty');
  assert.equal(group?.members.size, 0);
  assert.equal(group?.generationId, 3, 'the generation in which the group became empty');
  assert.equal(g.offsets.fetch('g', null).topics[0]?.partitions[0]?.offset, 42n);
  assert.equal(g.coordinator.group('h'), undefined);
  assert.equal(g.offsets.store.groupMetadata('h'), undefined);
  const next = await g.coordinator.joinGroup(joinReq({ clientId: 'a' }));
  assert.equal(next.generationId, 4);
});

test('a group that was mid-rebalance comes back as its last completed generation: rejoined members must rejoin, new members are unknown', async (t) => {
  const { open } = await setup(t);
  const first = await open();
  const { a, b } = await stablePair(first);
  const gc1 = first.coordinator;
  // c joins, a and b rejoin: generation 3 is CompletingRebalance when the broker stops, before the leader's SyncGroup.
  const cJoin = gc1.joinGroup(joinReq({ clientId: 'c' }));
  const aJoin = gc1.joinGroup(joinReq({ clientId: 'a', memberId: a.memberId }));
  const bJoin = gc1.joinGroup(joinReq({ clientId: 'b', memberId: b.memberId }));
  const [a3, , c3] = await Promise.all([aJoin, bJoin, cJoin]);
  assert.equal(a3.generationId, 3);
  assert.equal(gc1.group('g')?.state, 'CompletingRebalance');
  await first.close();

  const g = await open();
  const gc = g.coordinator;
  assert.equal(gc.group('g')?.state, 'Stable');
  assert.equal(gc.group('g')?.generationId, 2);
  assert.equal(gc.group('g')?.members.get(a.memberId)?.assignment.toString(), 'A');
  assert.equal((await gc.syncGroup(sync(a3, []))).errorCode, ErrorCode.ILLEGAL_GENERATION);
  assert.equal(gc.heartbeat('g', c3.memberId, null, 3), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(gc.heartbeat('g', b.memberId, null, 3), ErrorCode.ILLEGAL_GENERATION);
});

test('static membership survives: the instance keeps its member id, and a new member id taken over while Stable is stored before it is answered', async (t) => {
  const { open } = await setup(t);
  const first = await open();
  const gc1 = first.coordinator;
  const s1 = await gc1.joinGroup(joinReq({ groupInstanceId: 'inst-1', clientId: 's' }));
  assert.equal((await gc1.syncGroup(sync(s1, [{ memberId: s1.memberId, assignment: Buffer.from('S') }], 'inst-1'))).errorCode, ErrorCode.NONE);
  // The static consumer restarts: a join without member id takes over the instance with a new id, no rebalance.
  const s2 = await gc1.joinGroup(joinReq({ groupInstanceId: 'inst-1', clientId: 's' }));
  assert.equal(s2.errorCode, ErrorCode.NONE);
  assert.notEqual(s2.memberId, s1.memberId);
  assert.equal(s2.generationId, 1);
  await first.close();

  const g = await open();
  const gc = g.coordinator;
  assert.equal(gc.group('g')?.state, 'Stable');
  assert.equal(gc.group('g')?.staticMembers.get('inst-1'), s2.memberId);
  assert.equal(gc.heartbeat('g', s2.memberId, 'inst-1', 1), ErrorCode.NONE);
  assert.equal(gc.heartbeat('g', s1.memberId, 'inst-1', 1), ErrorCode.FENCED_INSTANCE_ID);
  assert.equal((await gc.syncGroup(sync(s2, [], 'inst-1'))).assignment.toString(), 'S');
});

test('a torn membership record (kill -9 mid-write) is cut off: the group comes back as the last complete record says', async (t) => {
  const { open, dir } = await setup(t);
  const first = await open();
  const { a } = await stablePair(first);
  await first.close();
  // The head of a record that never finished: a length and CRC, and part of a payload.
  const torn = Buffer.from('{"type":"group","version":1,"group":"g","value":{"generationId":9');
  const header = Buffer.alloc(8);
  header.writeUInt32BE(torn.length + 40, 0);
  await appendFile(join(dir, OFFSETS_DIR, 'offsets.log'), Buffer.concat([header, torn]));

  const g = await open();
  assert.equal(g.coordinator.group('g')?.state, 'Stable');
  assert.equal(g.coordinator.group('g')?.generationId, 2);
  assert.equal(g.coordinator.heartbeat('g', a.memberId, null, 2), ErrorCode.NONE);
});

test('an Empty group whose offsets expired is forgotten with its membership, and does not come back', async (t) => {
  const { open, clock } = await setup(t);
  const first = await open();
  const { a, b } = await stablePair(first);
  assert.deepEqual(await first.offsets.commit({ groupId: 'g', generationId: 2, memberId: a.memberId, groupInstanceId: null, retentionTimeMs: -1, partitions: [{ topic: 't', partition: 0, offset: 1n, leaderEpoch: -1, metadata: null }] }), [ErrorCode.NONE]);
  first.coordinator.leaveGroup('g', [{ memberId: a.memberId, groupInstanceId: null }, { memberId: b.memberId, groupInstanceId: null }]);
  clock.advance(SETTINGS['offsets.retention.minutes'] * 60_000);
  await first.offsets.idle(); // a pass the periodic check started on the way, with an earlier time
  await first.offsets.expireOffsets();
  assert.equal(first.coordinator.group('g'), undefined);
  assert.equal(first.offsets.store.groupMetadata('g'), undefined);
  await first.close();
  const g = await open();
  assert.equal(g.coordinator.group('g'), undefined);
});

test('when the assignment cannot be stored, the SyncGroup waiters get the error and the group rebalances', async (t) => {
  const { open } = await setup(t);
  const g = await open();
  const gc = g.coordinator;
  const a1 = await gc.joinGroup(joinReq({ clientId: 'a' }));
  assert.equal((await gc.syncGroup(sync(a1, [{ memberId: a1.memberId, assignment: Buffer.from('A') }]))).errorCode, ErrorCode.NONE);
  const bJoin = gc.joinGroup(joinReq({ clientId: 'b' }));
  const [a, b] = await Promise.all([gc.joinGroup(joinReq({ clientId: 'a', memberId: a1.memberId })), bJoin]);
  assert.equal(gc.group('g')?.state, 'CompletingRebalance');
  // The log refuses every write from now on (as when the broker is stopping).
  await g.offsets.store.close();
  const follower = gc.syncGroup(sync(b));
  const leader = await gc.syncGroup(sync(a, [{ memberId: a.memberId, assignment: Buffer.from('A') }, { memberId: b.memberId, assignment: Buffer.from('B') }]));
  assert.equal(leader.errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal((await follower).errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(gc.group('g')?.state, 'PreparingRebalance');
  assert.equal(gc.group('g')?.members.get(b.memberId)?.assignment.length, 0, 'nobody got an assignment that was not stored');
});

test('when a static member\'s new member id cannot be stored, its join gets the error and the instance keeps its old id', async (t) => {
  const { open } = await setup(t);
  const g = await open();
  const gc = g.coordinator;
  const s1 = await gc.joinGroup(joinReq({ groupInstanceId: 'inst-1', clientId: 's' }));
  assert.equal((await gc.syncGroup(sync(s1, [{ memberId: s1.memberId, assignment: Buffer.from('S') }], 'inst-1'))).errorCode, ErrorCode.NONE);
  await g.offsets.store.close();
  const s2 = await gc.joinGroup(joinReq({ groupInstanceId: 'inst-1', clientId: 's2', sessionTimeoutMs: 20_000 }));
  assert.equal(s2.errorCode, ErrorCode.NOT_COORDINATOR);
  const group = gc.group('g');
  assert.equal(group?.staticMembers.get('inst-1'), s1.memberId);
  assert.deepEqual([...(group?.members.keys() ?? [])], [s1.memberId]);
  assert.equal(group?.members.get(s1.memberId)?.clientId, 's');
  assert.equal(group?.members.get(s1.memberId)?.sessionTimeoutMs, SESSION_MS);
  assert.equal(gc.heartbeat('g', s1.memberId, 'inst-1', 1), ErrorCode.NONE);
});
