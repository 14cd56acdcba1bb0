// Loss of the local disk: a broker whose log dir is gone but whose warehouse is intact recovers a partition's
// remote history from the table alone. A producer auto-creating the topic right away gets the offset after
// the table's highest committed offset (offsets are never reused), ListOffsets earliest is the remote log
// start, and kcat reads every record from offset 0, the old ones out of Parquet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { kcatRead } from '../../helpers/tiered-table.js';

const TOPIC = 'history';

test('a broker with an empty log dir and the old warehouse serves the partition history from the table', { timeout: 60_000 }, async (t) => {
  const root = await tempDir('floe-recovery-');
  const cleanups: (() => Promise<unknown>)[] = [];
  // One hook, newest first: clients and brokers stop before their folders are removed.
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const warehouse = join(root, 'warehouse');
  const flags = ['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=-1', '--log.retention.check.interval.ms=3600000'];
  const configEntries = [
    { name: 'internal.segment.bytes', value: '1024' },
    { name: 'iceberg.commit.interval.ms', value: '3600000' },
  ];

  // The first broker: 60 records, all committed to the table.
  const first = await startBroker(flags, { dataDir: join(root, 'log-1') });
  const k1 = new Kafka({ brokers: [first.bootstrap], clientId: 'recovery-1', logLevel: logLevel.NOTHING });
  const a1 = k1.admin();
  await a1.connect();
  await a1.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1, configEntries }] });
  const p1 = k1.producer();
  await p1.connect();
  for (let i = 0; i < 12; i++) {
    await p1.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 5 }, (_, j) => ({ key: `k${i}-${j}`, value: `v${i}-${j}-${'y'.repeat(50)}` })) });
  }
  await p1.disconnect();
  await a1.disconnect();
  await first.broker.services.logs.get(TOPIC, 0)?.roll();
  await first.broker.services.tiering?.drain();
  assert.equal(first.broker.services.tiering?.lastTieredOffset(TOPIC, 0), 59, 'everything is in the table');
  const before = await kcatRead(first.bootstrap, TOPIC, 0, 0);
  assert.equal(before.length, 60);
  await first.stop();

  // The local disk is lost: a new log dir, the same warehouse.
  const second = await startBroker(flags, { dataDir: join(root, 'log-2') });
  cleanups.push(() => second.stop());
  const k2 = new Kafka({ brokers: [second.bootstrap], clientId: 'recovery-2', logLevel: logLevel.NOTHING });
  const a2 = k2.admin();
  await a2.connect();
  cleanups.push(() => a2.disconnect());
  // A producer writes at once, auto-creating the topic: the table is loaded before the topic is visible, so the
  // first new record already continues after the table's history.
  const p2 = k2.producer();
  await p2.connect();
  cleanups.push(() => p2.disconnect());
  const [meta] = await p2.send({ topic: TOPIC, acks: -1, messages: [{ key: 'new', value: 'after-recovery' }] });
  assert.equal(meta?.baseOffset, '60', 'new records continue the offsets');
  const log = second.broker.services.logs.get(TOPIC, 0);
  assert.ok(log);
  assert.equal(log.logStartOffset, 60, 'the local log starts after the highest committed offset');
  const offsets = await a2.fetchTopicOffsets(TOPIC);
  assert.deepEqual(offsets.map((o) => ({ low: o.low, high: o.high })), [{ low: '0', high: '61' }], 'ListOffsets: earliest is the remote log start, latest the log end');

  assert.deepEqual(await kcatRead(second.bootstrap, TOPIC, 0, 0), [...before, { offset: 60, key: 'new', value: 'after-recovery' }], 'every record from offset 0: the remote history from Parquet, then the new local record');
  assert.deepEqual(await kcatRead(second.bootstrap, TOPIC, 0, 37), [...before.slice(37), { offset: 60, key: 'new', value: 'after-recovery' }], 'from an offset inside the remote history');
});
