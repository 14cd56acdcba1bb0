/**
 * The per-client consumer-group scenario (issue 4, "What it must show"):
 * 1. three members of one group, each its own process, consume a 6-partition topic while a producer writes;
 * 2. once the group is Stable with all three and each has consumed, one member is SIGKILLed (no LeaveGroup);
 * 3. the broker notices through the session timeout and the two survivors form a new generation before
 *    twice the session timeout has passed (without session expiry it would take the 5-minute rebalance
 *    timeout, so the bound separates the two by far and does not measure speed);
 * 4. every produced record is consumed at least once and nothing committed is consumed twice (delivery.ts);
 * 5. the client's admin API (where it has one) lists and describes the Stable group, then, after the
 *    survivors leave on SIGTERM and more records arrive, shows the lag end - committed per partition, each
 *    checked against what the broker says over the wire.
 */
import assert from 'node:assert/strict';
import { startBroker } from '../../helpers/broker.js';
import { BackgroundProducer } from './background-producer.js';
import { BrokerTruth, range, type GroupView } from './broker-truth.js';
import { checkDelivery } from './delivery.js';
import { MemberProcess, waitFor } from './member-process.js';

export const SESSION_TIMEOUT_MS = 6000;
export const HEARTBEAT_INTERVAL_MS = 500;
const PARTITIONS = 6;

export interface MemberOptions {
  readonly bootstrap: string;
  readonly group: string;
  readonly topic: string;
  /** Also the member's client.id. */
  readonly name: string;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  /** Print an `assigned` line at every rebalance (confluent_group.py only; others print it always or never). */
  readonly reportAssignments?: boolean;
}

/** A group as a client's admin API shows it. */
export interface AdminGroupView {
  /** Group ids its list call returned. */
  readonly listed: readonly string[];
  readonly state: string;
  readonly members: readonly { clientId: string; partitions: readonly number[] }[];
  /** Per partition, as the client fetched them: committed offset and lag (end offset - committed). */
  readonly committed: readonly number[];
  readonly lag: readonly number[];
}

export interface GroupClientDriver {
  readonly name: string;
  startMember(opts: MemberOptions): MemberProcess;
  /** The client's admin view of one group, or undefined if the client has no admin API. */
  readonly admin: ((bootstrap: string, group: string, topic: string, partitions: number) => Promise<AdminGroupView>) | undefined;
}

interface TestContext {
  after(fn: () => unknown): void;
  diagnostic(message: string): void;
}

export async function runGroupScenario(t: TestContext, driver: GroupClientDriver): Promise<void> {
  const b = await startBroker([`--num.partitions=${PARTITIONS}`]);
  t.after(() => b.stop());
  const truth = await BrokerTruth.open(b.port);
  t.after(() => truth.close());
  const topic = 'orders';
  const group = `${driver.name}-group`;
  await truth.createTopic(topic, PARTITIONS);

  const producer = await BackgroundProducer.connect(b.bootstrap, topic, PARTITIONS);
  t.after(() => producer.close());
  await producer.round();
  producer.start(100, 600);

  const opts = { bootstrap: b.bootstrap, group, topic, sessionTimeoutMs: SESSION_TIMEOUT_MS, heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS };
  const members = ['member-0', 'member-1', 'member-2'].map((name) => driver.startMember({ ...opts, name }));
  t.after(async () => {
    for (const m of members) m.signal('SIGKILL');
    await Promise.all(members.map((m) => m.exited));
  });
  const diagnose = async () => {
    const view = await truth.describe(group, topic).catch((e: unknown) => String(e));
    return `group: ${JSON.stringify(view)}\n${members.map((m) => `--- ${m.name} (${m.count('record')} records, ${m.count('commit')} commits, running ${m.running}):\n${m.output().slice(-3000)}`).join('\n')}`;
  };
  const stableWith = async (names: readonly string[]): Promise<GroupView | undefined> => {
    const v = await truth.describe(group, topic);
    const ids = v.members.map((m) => m.clientId).sort();
    return v.state === 'Stable' && JSON.stringify(ids) === JSON.stringify([...names].sort()) ? v : undefined;
  };
  const consumeMore = async (who: readonly MemberProcess[], what: string) => {
    const before = who.map((m) => m.count('record'));
    await waitFor(what, () => who.every((m, i) => m.count('record') > (before[i] ?? 0)), 15_000, diagnose);
  };

  // 1. Three members, Stable, each consuming.
  await waitFor('a Stable group of the three members', async () => (await stableWith(members.map((m) => m.name))) !== undefined, 30_000, diagnose);
  await consumeMore(members, 'each of the three members to consume');

  // 2. Once the victim has committed on its partitions, kill it; note what it owned and had committed.
  const [survivorA, survivorB, victim] = members as [MemberProcess, MemberProcess, MemberProcess];
  // A client may rebalance more than once while it settles (platformatic-member.ts says why): read the
  // victim's partitions from a Stable generation.
  let before: GroupView | undefined;
  await waitFor('a Stable generation of the three members', async () => (before = await stableWith(members.map((m) => m.name))) !== undefined, 30_000, diagnose);
  const victimPartitions = before?.members.find((m) => m.clientId === victim.name)?.partitions ?? [];
  assert.ok(victimPartitions.length > 0, `the victim owns partitions before it is killed: ${JSON.stringify(before)}`);
  const victimCommitted = async () => {
    const c = await truth.committed(group, topic, PARTITIONS);
    return victimPartitions.every((p) => (c[p] ?? -1) > 0);
  };
  await waitFor('the victim to commit on its partitions', victimCommitted, 15_000, diagnose);
  await consumeMore([victim], 'the victim to consume after its commit');
  victim.signal('SIGKILL');
  await victim.exited;
  const killedAt = Date.now();
  const committedAtKill = await truth.committed(group, topic, PARTITIONS);

  // 3. The session timeout removes it and the survivors rebalance.
  const survivors = [survivorA, survivorB];
  let after: GroupView | undefined;
  await waitFor('the two survivors to form a new Stable generation', async () => (after = await stableWith(survivors.map((m) => m.name))) !== undefined, 2 * SESSION_TIMEOUT_MS, diagnose);
  t.diagnostic(`${driver.name}: rebalanced ${Date.now() - killedAt} ms after the kill (session timeout ${SESSION_TIMEOUT_MS} ms)`);
  const owned = (after?.members ?? []).flatMap((m) => m.partitions).sort((x, y) => x - y);
  assert.deepEqual(owned, range(PARTITIONS), 'the survivors share every partition, the victim\'s included');
  await consumeMore(survivors, 'each survivor to consume after the rebalance');

  // 4. Stop producing; everything is consumed, nothing committed twice.
  await producer.stop();
  const consumedIds = () => new Set(members.flatMap((m) => m.consumed().map((c) => `${c.partition}:${c.offset}`)));
  // Which records are still missing, by partition: a stuck partition and a slow machine look different.
  const missingNow = async () => {
    const seen = consumedIds();
    const byPartition = new Map<string, string[]>();
    for (const id of producer.produced.keys()) if (!seen.has(id)) byPartition.set(id.split(':')[0] ?? '', [...(byPartition.get(id.split(':')[0] ?? '') ?? []), id]);
    return `missing: ${[...byPartition].map(([p, ids]) => `partition ${p}: ${ids.length} (first ${ids[0]})`).join('; ') || 'none'}\n${await diagnose()}`;
  };
  await waitFor('every produced record to be consumed', () => [...producer.produced.keys()].every((id) => consumedIds().has(id)), 45_000, missingNow);
  const report = checkDelivery({ produced: producer.produced, consumed: members.flatMap((m) => m.consumed()), victimPartitions, committedAtKill });
  t.diagnostic(`${driver.name}: ${producer.produced.size} records produced, ${members.map((m) => `${m.name} consumed ${m.count('record')}`).join(', ')}; ${report.allowedDuplicates} uncommitted records re-read after their partition moved (victim owned ${victimPartitions.join(',')}, committed then ${committedAtKill.join(',')})`);
  assert.deepEqual(report.missing, [], 'every produced record is consumed');
  assert.deepEqual(report.wrong, [], 'every record comes with the key it was produced with');
  assert.deepEqual(report.forbiddenDuplicates, [], `nothing committed is consumed twice\n${timelines(members, report.forbiddenDuplicates)}`);
  assert.ok(victim.count('record') > 0 && survivors.every((m) => m.count('record') > 0));

  // 5a. Admin while Stable.
  const end = await truth.endOffsets(topic, PARTITIONS);
  if (driver.admin) {
    const view = await driver.admin(b.bootstrap, group, topic, PARTITIONS);
    const fromBroker = await truth.describe(group, topic);
    assert.ok(view.listed.includes(group), `${driver.name} lists the group: ${JSON.stringify(view.listed)}`);
    assert.equal(view.state, 'Stable');
    assert.deepEqual(
      view.members.map((m) => [m.clientId, [...m.partitions].sort((x, y) => x - y)]).sort(),
      fromBroker.members.map((m) => [m.clientId, m.partitions]).sort(),
      'members and their assignments as the broker has them',
    );
  }

  // 5b. The survivors leave; everything consumed was committed; new records show up as lag.
  await Promise.all(survivors.map((m) => m.stop()));
  assert.deepEqual(await truth.committed(group, topic, PARTITIONS), end, 'survivors committed everything they consumed before leaving');
  assert.equal((await truth.describe(group, topic)).state, 'Empty');
  for (const p of range(PARTITIONS)) await producer.send(p, p + 1);
  if (driver.admin) {
    const view = await driver.admin(b.bootstrap, group, topic, PARTITIONS);
    const committed = await truth.committed(group, topic, PARTITIONS);
    const endNow = await truth.endOffsets(topic, PARTITIONS);
    assert.ok(view.listed.includes(group));
    assert.equal(view.state, 'Empty');
    assert.deepEqual(view.members, []);
    assert.deepEqual(view.committed, committed, 'committed offsets as the broker has them');
    assert.deepEqual(view.lag, range(PARTITIONS).map((p) => p + 1), 'lag is what was produced after the group left');
    assert.deepEqual(view.lag, endNow.map((e, p) => e - (committed[p] ?? 0)), 'lag = end offset - committed');
  }
}

/** Each member's events that concern the partitions of the given `partition:offset` ids, for a failure message. */
function timelines(members: readonly MemberProcess[], ids: readonly string[]): string {
  const partitions = new Set(ids.map((id) => Number(id.split(':')[0])));
  return members
    .flatMap((m) => m.events.filter((ev) => (ev.p === undefined ? ev.e !== 'record' : partitions.has(ev.p))).map((ev) => ({ member: m.name, ev })))
    .sort((x, y) => (x.ev.at ?? 0) - (y.ev.at ?? 0))
    .slice(0, 600)
    .map(({ member, ev }) => `${member} ${JSON.stringify(ev)}`)
    .join('\n');
}
