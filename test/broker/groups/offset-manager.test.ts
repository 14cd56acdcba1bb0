import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { GroupCoordinator, type JoinRequest } from '../../../broker/groups/coordinator.js';
import { OffsetManager, type CommitRequest } from '../../../broker/groups/offset-manager.js';
import { OffsetStore } from '../../../broker/groups/offset-store.js';
import { createLogger } from '../../../broker/logger.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { tempDir } from '../../helpers/broker.js';
import { ManualClock } from './manual-clock.js';

const RETENTION_MS = 60 * 60_000;

async function setup(t: { after: (fn: () => Promise<void>) => void }) {
  const dir = await tempDir('floe-offset-manager-');
  const store = await OffsetStore.open(dir);
  t.after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const clock = new ManualClock();
  const log = createLogger('silent');
  const gc = new GroupCoordinator({ minSessionTimeoutMs: 1000, maxSessionTimeoutMs: 60_000, initialRebalanceDelayMs: 0, maxSize: 100, newMemberJoinTimeoutMs: 300_000 }, clock, log);
  const om = new OffsetManager(gc, store, { retentionMs: RETENTION_MS, retentionCheckIntervalMs: 600_000, metadataMaxBytes: 10 }, log);
  return { clock, gc, om, store };
}

/** ConsumerProtocolSubscription v0: int16 version, array of topics, null user data. */
function subscription(...topics: string[]): Buffer {
  const parts = [Buffer.from([0, 0]), Buffer.alloc(4)];
  parts[1]?.writeInt32BE(topics.length);
  for (const t of topics) {
    const len = Buffer.alloc(2);
    len.writeInt16BE(Buffer.byteLength(t));
    parts.push(len, Buffer.from(t));
  }
  parts.push(Buffer.from([0xff, 0xff, 0xff, 0xff]));
  return Buffer.concat(parts);
}

async function member(gc: GroupCoordinator, topics: string[]) {
  const base: JoinRequest = {
    groupId: 'g', memberId: '', groupInstanceId: null, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription(...topics) }], clientId: 'c', clientHost: '/h', requireKnownMemberId: false, supportsSkipAssignment: false,
  };
  const j = await gc.joinGroup(base);
  await gc.syncGroup({ groupId: 'g', generationId: j.generationId, memberId: j.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  return j;
}

const commit = (over: Partial<CommitRequest>): CommitRequest => ({
  groupId: 'g', generationId: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1,
  partitions: [{ topic: 't', partition: 0, offset: 42n, leaderEpoch: 3, metadata: 'm' }], ...over,
});

test('a commit from outside group management is accepted while the group is empty, refused once it has members', async (t) => {
  const { gc, om } = await setup(t);
  assert.deepEqual(await om.commit(commit({})), [ErrorCode.NONE]);
  assert.deepEqual(om.fetch('g', [{ topic: 't', partitions: [0, 1] }]).topics[0]?.partitions, [
    { partition: 0, offset: 42n, leaderEpoch: 3, metadata: 'm' },
    { partition: 1, offset: -1n, leaderEpoch: -1, metadata: '' },
  ]);
  const j = await member(gc, ['t']);
  assert.deepEqual(await om.commit(commit({ partitions: [{ topic: 't', partition: 0, offset: 1n, leaderEpoch: -1, metadata: null }] })), [ErrorCode.UNKNOWN_MEMBER_ID]);
  assert.deepEqual(await om.commit(commit({ generationId: j.generationId, memberId: j.memberId, partitions: [{ topic: 't', partition: 0, offset: 50n, leaderEpoch: -1, metadata: null }] })), [ErrorCode.NONE]);
  assert.equal(om.fetch('g', null).topics[0]?.partitions[0]?.offset, 50n);
});

test('zombie commits are fenced: stale generation gets ILLEGAL_GENERATION, a removed member UNKNOWN_MEMBER_ID', async (t) => {
  const { gc, om, clock } = await setup(t);
  const j = await member(gc, ['t']);
  const mine = (generationId: number, memberId: string, offset: bigint) => commit({ generationId, memberId, partitions: [{ topic: 't', partition: 0, offset, leaderEpoch: -1, metadata: null }] });
  assert.deepEqual(await om.commit(mine(j.generationId, j.memberId, 10n)), [ErrorCode.NONE]);
  assert.deepEqual(await om.commit(mine(j.generationId - 1, j.memberId, 11n)), [ErrorCode.ILLEGAL_GENERATION]);
  assert.deepEqual(await om.commit(mine(5, 'other', 11n)), [ErrorCode.UNKNOWN_MEMBER_ID]);
  assert.deepEqual(await om.commit(commit({ groupId: 'never-joined', generationId: 3, memberId: 'x' })), [ErrorCode.ILLEGAL_GENERATION]);
  clock.advance(10_000); // the member's session expires
  assert.deepEqual(await om.commit(mine(j.generationId, j.memberId, 12n)), [ErrorCode.UNKNOWN_MEMBER_ID]);
  assert.equal(om.fetch('g', null).topics[0]?.partitions[0]?.offset, 10n, 'no fenced commit was stored');
});

test('metadata longer than offset.metadata.max.bytes is refused per partition', async (t) => {
  const { om } = await setup(t);
  const codes = await om.commit(commit({ partitions: [{ topic: 't', partition: 0, offset: 1n, leaderEpoch: -1, metadata: 'x'.repeat(11) }, { topic: 't', partition: 1, offset: 1n, leaderEpoch: -1, metadata: 'ok' }] }));
  assert.deepEqual(codes, [ErrorCode.OFFSET_METADATA_TOO_LARGE, ErrorCode.NONE]);
});

test('offsets of an empty group expire offsets.retention.minutes after the last commit; the group is then forgotten', async (t) => {
  const { gc, om, clock } = await setup(t);
  await om.commit(commit({}));
  clock.advance(RETENTION_MS / 2);
  await om.commit(commit({ partitions: [{ topic: 't', partition: 1, offset: 5n, leaderEpoch: -1, metadata: null }] }));
  clock.advance(RETENTION_MS / 2 - 1);
  await om.expireOffsets();
  assert.equal(om.fetch('g', null).topics[0]?.partitions.length, 2);
  clock.advance(1);
  await om.expireOffsets();
  assert.deepEqual(om.fetch('g', null).topics[0]?.partitions.map((p) => p.partition), [1], 'only the older commit expired');
  clock.advance(RETENTION_MS / 2);
  await om.expireOffsets();
  assert.deepEqual(om.fetch('g', null).topics, []);
  assert.equal(gc.group('g'), undefined);
});

test('offsets of a group with members do not expire; OffsetDelete refuses subscribed topics; DeleteGroups refuses non-empty groups', async (t) => {
  const { gc, om, clock } = await setup(t);
  const j = await member(gc, ['t']);
  const parts = ['t', 'u'].map((topic) => ({ topic, partition: 0, offset: 1n, leaderEpoch: -1, metadata: null }));
  assert.deepEqual(await om.commit(commit({ generationId: j.generationId, memberId: j.memberId, partitions: parts })), [ErrorCode.NONE, ErrorCode.NONE]);
  for (let i = 0; i < (2 * RETENTION_MS) / 5000; i++) {
    clock.advance(5000);
    gc.heartbeat('g', j.memberId, null, j.generationId);
  }
  await om.expireOffsets();
  assert.deepEqual(om.fetch('g', null).topics.map((x) => x.topic), ['t'], 'the unsubscribed topic u expired, the subscribed t did not');

  const del = await om.deleteOffsets('g', [{ topic: 't', partition: 0 }, { topic: 'v', partition: 0 }]);
  assert.deepEqual(del, { errorCode: ErrorCode.NONE, partitions: [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, ErrorCode.NONE] });
  assert.equal(await om.deleteGroup('g'), ErrorCode.NON_EMPTY_GROUP);
  assert.equal(await om.deleteGroup('nope'), ErrorCode.GROUP_ID_NOT_FOUND);

  gc.leaveGroup('g', [{ memberId: j.memberId, groupInstanceId: null }]);
  assert.deepEqual(await om.deleteOffsets('g', [{ topic: 't', partition: 0 }]), { errorCode: ErrorCode.NONE, partitions: [ErrorCode.NONE] });
  await om.commit(commit({}));
  assert.equal(await om.deleteGroup('g'), ErrorCode.NONE);
  assert.equal(gc.group('g'), undefined);
  assert.deepEqual(om.fetch('g', null).topics, []);
});
