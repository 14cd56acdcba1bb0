/**
 * A real client's group resumes exactly at its committed position after the broker process is killed with
 * SIGKILL and after a SIGTERM restart (offset-commit.test.ts covers the same for raw commits over the wire
 * and for kafkajs across an in-process restart). Runs the built broker (`spawnBroker`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { spawnBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { ChildRunner } from '../clients/process.js';
import { BackgroundProducer } from './background-producer.js';
import { BrokerTruth } from './broker-truth.js';
import { waitFor } from './member-process.js';
import { pythonGroupDriver } from './python-drivers.js';
import { HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS } from './scenario.js';

test('confluent-kafka-python: a group resumes exactly at its committed position after kill -9 and after SIGTERM of the broker', async (t) => {
  const dir = await tempDir();
  t.after(() => rm(dir, { recursive: true, force: true }));
  let broker: BrokerProcess = await spawnBroker(dir);
  t.after(() => broker.child.kill('SIGKILL'));
  const runner = new ChildRunner();
  t.after(() => runner.killAll());
  const driver = pythonGroupDriver('confluent-kafka-python', runner);
  const topic = 'durable';
  const group = 'durable-group';
  const truth = await BrokerTruth.open(broker.port);
  await truth.createTopic(topic, 3);
  truth.close();

  /** Produces `rounds` records per partition, then runs one member until it has read `want` records and leaves. */
  const cycle = async (rounds: number, want: number) => {
    const producer = await BackgroundProducer.connect(broker.bootstrap, topic, 3);
    try {
      for (let i = 0; i < rounds; i++) await producer.round();
    } finally {
      await producer.close();
    }
    const m = driver.startMember({ bootstrap: broker.bootstrap, group, topic, name: 'resumer', sessionTimeoutMs: SESSION_TIMEOUT_MS, heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS });
    t.after(() => m.signal('SIGKILL'));
    await waitFor(`${want} records`, () => m.count('commit') >= want, 30_000, () => m.output());
    await m.stop();
    // Records are identified by partition:offset (each cycle's producer numbers its keys from k0 again).
    return { produced: [...producer.produced.keys()].sort(), consumed: m.consumed().map((c) => `${c.partition}:${c.offset}`).sort() };
  };

  const first = await cycle(10, 30);
  assert.deepEqual(first.consumed, first.produced);

  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    broker.child.kill(signal);
    await broker.exited;
    broker = await spawnBroker(dir);
    const next = await cycle(2, 6);
    assert.deepEqual(next.consumed, next.produced, `after ${signal}: exactly the records produced since the last commit, each once`);
  }
});
