/**
 * Members that stop heartbeating, and zombies:
 * - a confluent-kafka-python member frozen with SIGSTOP (librdkafka heartbeats from its own thread, so only
 *   freezing the whole process silences it) is removed by the session timeout and the group rebalances to
 *   the other member; after SIGCONT it finds itself fenced, rejoins, and the group is Stable with both again;
 * - over the wire, through real rebalances: a member's commit with the generation it had before the group
 *   moved on is refused with ILLEGAL_GENERATION, and after its session expired with UNKNOWN_MEMBER_ID, and
 *   neither zombie commit overwrites the live member's offset.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { startBroker } from '../../helpers/broker.js';
import { WireClient } from '../../broker/handlers/wire-client.js';
import { ChildRunner } from '../clients/process.js';
import { BackgroundProducer } from './background-producer.js';
import { BrokerTruth, range } from './broker-truth.js';
import { checkDelivery } from './delivery.js';
import { waitFor, type Consumption } from './member-process.js';
import { pythonGroupDriver } from './python-drivers.js';
import { HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS } from './scenario.js';

type Obj = Record<string, unknown>;

test('confluent-kafka-python: a SIGSTOPped member is removed after the session timeout and the group rebalances; after SIGCONT it rejoins', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  const truth = await BrokerTruth.open(b.port);
  t.after(() => truth.close());
  const topic = 'frozen';
  const group = 'frozen-group';
  await truth.createTopic(topic, 6);
  const producer = await BackgroundProducer.connect(b.bootstrap, topic, 6);
  t.after(() => producer.close());
  await producer.round();
  producer.start(100, 600);

  const runner = new ChildRunner();
  t.after(() => runner.killAll());
  const driver = pythonGroupDriver('confluent-kafka-python', runner);
  const opts = { bootstrap: b.bootstrap, group, topic, sessionTimeoutMs: SESSION_TIMEOUT_MS, heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS };
  const live = driver.startMember({ ...opts, name: 'live' });
  const frozen = driver.startMember({ ...opts, name: 'frozen' });
  t.after(async () => {
    for (const m of [live, frozen]) {
      m.signal('SIGCONT');
      m.signal('SIGKILL');
    }
    await Promise.all([live.exited, frozen.exited]);
  });
  const diagnose = async () => `${JSON.stringify(await truth.describe(group, topic))}\n${live.output()}\n${frozen.output()}`;
  const membersNow = async () => {
    const v = await truth.describe(group, topic);
    return v.state === 'Stable' ? v.members.map((m) => m.clientId).sort().join(',') : v.state;
  };

  await waitFor('a Stable group of both members', async () => (await membersNow()) === 'frozen,live', 30_000, diagnose);
  const countBefore = frozen.count('record');
  await waitFor('the member to be frozen to consume', () => frozen.count('record') > countBefore, 15_000, diagnose);
  const frozenPartitions = (await truth.describe(group, topic)).members.find((m) => m.clientId === 'frozen')?.partitions ?? [];
  frozen.signal('SIGSTOP');
  const committedAtStop = await truth.committed(group, topic, 6);

  await waitFor('the group to rebalance without the silent member', async () => (await membersNow()) === 'live', 2 * SESSION_TIMEOUT_MS, diagnose);
  const alone = await truth.describe(group, topic);
  assert.deepEqual(alone.members[0]?.partitions, range(6), 'the live member took over every partition');
  const liveBefore = live.count('record');
  await waitFor('the live member to consume alone', () => live.count('record') > liveBefore, 15_000, diagnose);

  const thawedAt = Date.now();
  const eventsBeforeThaw = frozen.events.length;
  frozen.signal('SIGCONT');
  await waitFor('the thawed member to rejoin', async () => (await membersNow()) === 'frozen,live', 30_000, diagnose);
  const thawedBefore = frozen.count('record');
  await waitFor('the thawed member to consume again', () => frozen.count('record') > thawedBefore, 15_000, diagnose);

  await producer.stop();
  const consumedIds = () => new Set([live, frozen].flatMap((m) => m.consumed().map((c) => `${c.partition}:${c.offset}`)));
  await waitFor('every produced record to be consumed', () => [...producer.produced.keys()].every((id) => consumedIds().has(id)), 20_000, diagnose);
  // Thawed, the member still believes it holds its old partitions and may hand out records it fetched before
  // the freeze (or print one it polled just before SIGSTOP) until it learns it was removed: zombie reads,
  // allowed when the broker refused their commit.
  const zombieRead = (c: Consumption) => c.member === 'frozen' && (c.at ?? 0) >= thawedAt;
  const report = checkDelivery({ produced: producer.produced, consumed: [live, frozen].flatMap((m) => m.consumed()), victimPartitions: frozenPartitions, committedAtKill: committedAtStop, zombieRead });
  assert.deepEqual([report.missing, report.wrong, report.forbiddenDuplicates], [[], [], []]);
  if (report.zombieReads > 0) {
    const refusedAfterThaw = frozen.events.slice(eventsBeforeThaw).some((ev) => ev.e === 'commit_error');
    assert.ok(refusedAfterThaw, `${report.zombieReads} zombie read(s) after the thaw, yet the broker refused none of the thawed member's commits`);
  }
  t.diagnostic(`${report.allowedDuplicates} re-read(s) allowed, ${report.zombieReads} of them zombie reads of the thawed member (its commits refused)`);
});

const protocols = [{ name: 'range', metadata: Buffer.from([0, 0, 0, 0, 0, 0]) }];

/** One member on its own connection (a JoinGroup waits for the rebalance, so members must not share one). */
class WireMember {
  memberId = '';
  generation = -1;
  private constructor(
    readonly c: WireClient,
    private readonly group: string,
  ) {}

  static async open(port: number, group: string): Promise<WireMember> {
    return new WireMember(await WireClient.connect(port), group);
  }

  /** JoinGroup v5 (a new member first gets MEMBER_ID_REQUIRED), resolving when the join phase completes. */
  async join(): Promise<Obj> {
    const send = () => this.c.request(11, 5, { groupId: this.group, sessionTimeoutMs: 1000, rebalanceTimeoutMs: 5000, memberId: this.memberId, groupInstanceId: null, protocolType: 'consumer', protocols });
    let r = await send();
    if (r.errorCode === ErrorCode.MEMBER_ID_REQUIRED) {
      this.memberId = r.memberId as string;
      r = await send();
    }
    assert.equal(r.errorCode, 0, `JoinGroup: ${String(r.errorCode)}`);
    this.memberId = r.memberId as string;
    this.generation = r.generationId as number;
    return r;
  }

  async sync(assignments: { memberId: string; assignment: Buffer }[] = []): Promise<number> {
    const r = await this.c.request(14, 3, { groupId: this.group, generationId: this.generation, memberId: this.memberId, groupInstanceId: null, assignments });
    return r.errorCode as number;
  }

  async heartbeat(): Promise<number> {
    const r = await this.c.request(12, 3, { groupId: this.group, generationId: this.generation, memberId: this.memberId, groupInstanceId: null });
    return r.errorCode as number;
  }

  /** OffsetCommit v7 of partition 0 with the given generation (defaults to the member's own). */
  async commit(offset: bigint, generation = this.generation): Promise<number> {
    const r = await this.c.request(8, 7, { groupId: this.group, generationIdOrMemberEpoch: generation, memberId: this.memberId, groupInstanceId: null, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }] });
    return ((r.topics as Obj[])[0]?.partitions as Obj[])[0]?.errorCode as number;
  }
}

test('zombie commits through real rebalances: a stale generation gets ILLEGAL_GENERATION, an expired member UNKNOWN_MEMBER_ID, and neither lands', async (t) => {
  const b = await startBroker(['--group.min.session.timeout.ms=1000']);
  t.after(() => b.stop());
  const truth = await BrokerTruth.open(b.port);
  t.after(() => truth.close());
  await truth.createTopic('t', 1);
  const group = 'zombies';
  const a = await WireMember.open(b.port, group);
  const z = await WireMember.open(b.port, group);
  t.after(() => {
    a.c.close();
    z.c.close();
  });

  // Generation 1: the zombie-to-be alone; it commits legitimately.
  await z.join();
  assert.equal(z.generation, 1);
  assert.equal(await z.sync([{ memberId: z.memberId, assignment: Buffer.alloc(0) }]), 0);
  assert.equal(await z.commit(10n), 0);

  // A second member joins; the zombie rejoins when its heartbeat says so; generation 2 has both.
  const aJoined = a.join();
  await waitFor('the zombie to be told to rejoin', async () => (await z.heartbeat()) === ErrorCode.REBALANCE_IN_PROGRESS, 5000);
  const zombieGeneration = z.generation;
  await Promise.all([aJoined, z.join()]);
  assert.equal(a.generation, 2);
  const leader = a.memberId < z.memberId ? a : z;
  const follower = leader === a ? z : a;
  const followerSynced = follower.sync();
  assert.equal(await leader.sync([{ memberId: a.memberId, assignment: Buffer.alloc(0) }, { memberId: z.memberId, assignment: Buffer.alloc(0) }]), 0);
  assert.equal(await followerSynced, 0);
  assert.equal(await a.commit(20n), 0);
  // A commit carrying the generation the zombie had before the rebalance.
  assert.equal(await z.commit(11n, zombieGeneration), ErrorCode.ILLEGAL_GENERATION);

  // The zombie goes silent; `a` keeps heartbeating, is told to rejoin, and generation 3 is `a` alone.
  await waitFor('the silent member\'s session to expire', async () => (await a.heartbeat()) === ErrorCode.REBALANCE_IN_PROGRESS, 10_000);
  await a.join();
  assert.equal(a.generation, 3);
  assert.equal(await a.sync([{ memberId: a.memberId, assignment: Buffer.alloc(0) }]), 0);
  const view = await truth.describe(group, 't');
  assert.deepEqual([view.state, view.members.map((m) => m.memberId)], ['Stable', [a.memberId]]);
  assert.equal(await z.commit(12n), ErrorCode.UNKNOWN_MEMBER_ID, 'the expired member\'s commit with its last generation');
  assert.equal(await z.commit(12n, 3), ErrorCode.UNKNOWN_MEMBER_ID, 'even with the current generation');
  assert.deepEqual(await truth.committed(group, 't', 1), [20], 'the live member\'s commit stands');
  assert.equal(await a.commit(30n), 0);
  assert.deepEqual(await truth.committed(group, 't', 1), [30]);
});
