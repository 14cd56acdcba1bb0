/**
 * Group membership survives a broker restart, as in Apache Kafka: two confluent-kafka members (2.x from PyPI
 * with current librdkafka, and Debian's with librdkafka 2.0) consume a topic; the broker is killed with SIGKILL, started again on the same data
 * directory and port, then stopped with SIGTERM and started again. After each restart the members go on
 * with the member ids and generation they had: neither sees another rebalance (librdkafka calls on_assign
 * at every rebalance; the members print a line for each), the broker shows the same Stable group with the
 * same member ids and assignment, their commits with the old generation are accepted, and every record is
 * consumed exactly once (no rebalance, so not even at-least-once re-reads).
 *
 * The members' session timeout (30 s) is longer than a restart takes: a librdkafka member whose coordinator
 * is unreachable for a whole session gives up its member id and rejoins by itself, whatever the broker kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { spawnBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { ChildRunner } from '../clients/process.js';
import { BackgroundProducer } from './background-producer.js';
import { BrokerTruth, range, type GroupView } from './broker-truth.js';
import { waitFor, type MemberProcess } from './member-process.js';
import { pythonGroupDriver } from './python-drivers.js';
import type { PythonClientKind } from '../clients/python.js';

const PARTITIONS = 4;
const SESSION_TIMEOUT_MS = 30_000;

for (const kind of ['confluent-kafka-pypi', 'confluent-kafka-python'] as const satisfies readonly PythonClientKind[]) {
  test(`${kind}: a consuming group keeps its members, generation and assignment across kill -9 and SIGTERM restarts of the broker`, async (t) => {
    const dir = await tempDir();
    t.after(() => rm(dir, { recursive: true, force: true }));
    let broker: BrokerProcess = await spawnBroker(dir);
    t.after(() => broker.child.kill('SIGKILL'));
    const port = broker.port;
    const topic = 'kept';
    const group = 'kept-group';
    let truth = await BrokerTruth.open(port);
    t.after(() => truth.close());
    await truth.createTopic(topic, PARTITIONS);

    const driver = pythonGroupDriver(kind, new ChildRunner());
    const members = ['member-0', 'member-1'].map((name) =>
      driver.startMember({ bootstrap: broker.bootstrap, group, topic, name, sessionTimeoutMs: SESSION_TIMEOUT_MS, heartbeatIntervalMs: 500, reportAssignments: true }),
    );
    t.after(async () => {
      for (const m of members) m.signal('SIGKILL');
      await Promise.all(members.map((m) => m.exited));
    });
    const produced = new Map<string, string>();
    const diagnose = async () => {
      const view = await truth.describe(group, topic).catch((e: unknown) => String(e));
      const committed = await truth.committed(group, topic, PARTITIONS).catch((e: unknown) => String(e));
      return `group: ${JSON.stringify(view)}\ncommitted: ${JSON.stringify(committed)}\n${members.map((m) => `--- ${m.name}: ${JSON.stringify(m.events.filter((e) => e.e !== 'record' && e.e !== 'commit'))}\n${m.output().slice(-3000)}`).join('\n')}`;
    };

    /** Produces `rounds` records per partition and waits until the group has consumed and committed all of them. */
    const produceAndDrain = async (rounds: number) => {
      const producer = await BackgroundProducer.connect(broker.bootstrap, topic, PARTITIONS);
      try {
        for (let i = 0; i < rounds; i++) await producer.round();
      } finally {
        await producer.close();
      }
      for (const [id, key] of producer.produced) produced.set(id, key);
      const end = await truth.endOffsets(topic, PARTITIONS);
      await waitFor('the group to commit everything produced', async () => JSON.stringify(await truth.committed(group, topic, PARTITIONS)) === JSON.stringify(end), 60_000, diagnose);
    };

    /** The broker's view once it is Stable with both members, each owning what its own last on_assign said. */
    const settled = async (): Promise<GroupView | undefined> => {
      const v = await truth.describe(group, topic);
      if (v.state !== 'Stable' || v.members.length !== 2) return undefined;
      const agree = members.every((m) => {
        const last = m.events.filter((e) => e.e === 'assigned').at(-1);
        const mine = v.members.find((x) => x.clientId === m.name);
        const sameId = last?.memberId === undefined || last.memberId === mine?.memberId; // Debian's client cannot tell its id
        return last !== undefined && mine !== undefined && sameId && JSON.stringify(last.partitions) === JSON.stringify(mine.partitions);
      });
      return agree ? v : undefined;
    };

    await produceAndDrain(5);
    let before: GroupView | undefined;
    await waitFor('a Stable group of both members that agree with the broker', async () => (before = await settled()) !== undefined, 60_000, diagnose);
    const stable = before as GroupView;
    assert.deepEqual(stable.members.flatMap((m) => m.partitions).sort(), range(PARTITIONS));
    const rebalancesSeen = members.map((m) => m.count('assigned'));
    const describeSorted = (v: GroupView) => [...v.members].sort((x, y) => x.clientId.localeCompare(y.clientId));

    for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
      truth.close();
      broker.child.kill(signal);
      await broker.exited;
      broker = await spawnBroker(dir, [], port);
      truth = await BrokerTruth.open(port);
      // As soon as the broker is up: the group is as it was stored.
      const loaded = await truth.describe(group, topic);
      assert.equal(loaded.state, 'Stable', `after ${signal}: the group comes back Stable\n${await diagnose()}`);
      assert.deepEqual(describeSorted(loaded), describeSorted(stable), `after ${signal}: the same members with the same assignment`);

      // The members carry on: what is produced now is consumed and committed under the old generation.
      await produceAndDrain(5);
      const now = await truth.describe(group, topic);
      assert.equal(now.state, 'Stable');
      assert.deepEqual(describeSorted(now), describeSorted(stable), `after ${signal}: still the same members and assignment once they consumed`);
      assert.deepEqual(members.map((m) => m.count('assigned')), rebalancesSeen, `after ${signal}: no member saw a rebalance\n${await diagnose()}`);
      assert.ok(members.every((m) => m.running));
    }

    // Every record consumed exactly once, with its key.
    const consumed = members.flatMap((m: MemberProcess) => m.consumed());
    const ids = consumed.map((c) => `${c.partition}:${c.offset}`);
    assert.deepEqual([...new Set(ids)].sort(), [...produced.keys()].sort(), 'every produced record is consumed');
    assert.equal(ids.length, produced.size, 'no record is consumed twice');
    for (const c of consumed) assert.equal(c.key, produced.get(`${c.partition}:${c.offset}`));
    t.diagnostic(`${produced.size} records, ${members.map((m) => `${m.name}: ${m.count('record')} records, ${m.count('commit_error')} commits refused or lost in the restarts`).join('; ')}`);
  });
}
