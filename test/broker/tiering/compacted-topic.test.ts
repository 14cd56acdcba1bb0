// A compacted topic that is also an Iceberg table: its closed segments are tiered like any other, and the
// log cleaner only cleans segments the table already holds (broker.ts wires tiering's canDeleteSegment gate
// into the cleaner). So the table keeps every record ever produced, exactly once, while the local log
// shows the compacted view; after a restart no cleaned (merged) segment is tiered again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir, type TestBroker } from '../../helpers/broker.js';
import { tableRows, waitFor } from '../../helpers/tiered-table.js';
import { readLog } from '../log/cleaner/helpers.js';

const TOPIC = 'compacted-tiered';

test('a compacted topic\'s table keeps every record while the local log is compacted, across a restart', { timeout: 180_000 }, async (t) => {
  const root = await tempDir('floe-compacted-tiered-');
  const warehouse = join(root, 'warehouse');
  const flags = ['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--log.cleaner.backoff.ms=100'];
  const dataDir = join(root, 'log');
  let broker: TestBroker = await startBroker(flags, { dataDir, keepData: true });
  // One hook: the broker stops before its folders are removed.
  t.after(async () => {
    await broker.stop();
    await rm(root, { recursive: true, force: true });
  });
  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'compacted-tiered', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic: TOPIC, numPartitions: 1, configEntries: [
      { name: 'cleanup.policy', value: 'compact' },
      { name: 'iceberg.enabled', value: 'true' },
      { name: 'internal.segment.bytes', value: '3000' },
      { name: 'min.cleanable.dirty.ratio', value: '0.01' },
      { name: 'iceberg.commit.interval.ms', value: '500' },
    ] }],
  });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  const sent: { key: string; value: string }[] = [];
  for (let b = 0; b < 30; b++) {
    const messages = Array.from({ length: 10 }, (_, i) => ({ key: `key-${(b * 10 + i) % 5}`, value: `value-${b * 10 + i}-${'t'.repeat(30)}` }));
    await producer.send({ topic: TOPIC, acks: -1, messages });
    sent.push(...messages);
  }
  await producer.disconnect();
  const restUrl = (): string => broker.broker.services.tiering?.restCatalogUrl ?? '';
  const everything = sent.map((m, offset) => ({ offset, key: m.key, value: m.value }));
  const rowsNow = async () => (await tableRows(restUrl(), TOPIC, warehouse)).map((r) => ({ offset: r.offset, key: r.key?.toString(), value: r.value?.toString() })).sort((a, b) => a.offset - b.offset);
  await waitFor('every record in the table', async () => ((await rowsNow()).length >= sent.length ? true : undefined), 60_000, 200);
  const log = broker.broker.services.logs.get(TOPIC, 0);
  assert.ok(log);
  await waitFor('the local log to be compacted', async () => ((await readLog(log, 0)).length <= 5 + 10 ? true : undefined), 60_000, 200);
  const m = broker.broker.services.cleaner?.metrics;
  t.diagnostic(`cleaner: ${JSON.stringify(m)}; local records ${(await readLog(log, 0)).length}; segments ${log.segmentInfos().length}`);
  assert.ok((m?.recordsRemoved ?? 0) > 0);
  assert.deepEqual(await rowsNow(), everything, 'the table holds every record once, at its offset');
  const local = await readLog(log, 0);
  const latest = new Map<string, number>();
  everything.forEach((r) => latest.set(r.key, r.offset));
  for (const r of local) assert.equal(r.value, sent[r.offset]?.value, `local offset ${r.offset} unchanged`);
  for (const offset of latest.values()) assert.ok(local.some((r) => r.offset === offset), `the latest record of its key (offset ${offset}) is local`);

  // Restart: tiering re-queues only segments the table does not hold; merged, cleaned segments are not among them.
  await broker.stop();
  broker = await startBroker(flags, { dataDir, keepData: true });
  const kafka2 = new Kafka({ brokers: [broker.bootstrap], clientId: 'compacted-tiered-2', logLevel: logLevel.NOTHING });
  const p2 = kafka2.producer();
  await p2.connect();
  await p2.send({ topic: TOPIC, acks: -1, messages: [{ key: 'key-0', value: 'after-restart' }] });
  await p2.disconnect();
  const withNew = [...everything, { offset: sent.length, key: 'key-0', value: 'after-restart' }];
  await waitFor('the new record in the table', async () => ((await rowsNow()).length >= withNew.length ? true : undefined), 60_000, 200);
  assert.deepEqual(await rowsNow(), withNew, 'no record tiered twice, none skipped');
});
