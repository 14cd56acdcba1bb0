// Transactions in the compacted view of a tiered compacted topic: kafkajs transactional producers abort
// and commit updates; after the segments are tiered and deleted locally, a read_uncommitted fetch (our
// own wire client, CRCs checked) and kafkajs and kcat consumers see no aborted record (an aborted update
// never supersedes the committed value) and committed ones by the latest-per-key rule, at their offsets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { waitFor } from '../../helpers/tiered-table.js';
import { KafkajsClient } from '../../interop/clients/kafkajs.js';
import { KcatClient } from '../../interop/clients/kcat.js';
import { EARLIEST_LOCAL, LATEST, fetchAllBatches, listOffset } from './wire.js';

const { Kafka, logLevel } = kafkajs;
const TOPIC = 'compacted-tiered-txn';

test('the compacted view of the tiered range drops aborted records and keeps committed ones by offset', { timeout: 180_000 }, async (t) => {
  const root = await tempDir('floe-e2e-compacted-txn-');
  t.after(() => rm(root, { recursive: true, force: true }));
  const broker = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=0', '--log.retention.check.interval.ms=300']);
  t.after(() => broker.stop());
  const kafka = new Kafka({ clientId: 'compacted-tiered-txn', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.createTopics({
    topics: [{ topic: TOPIC, numPartitions: 1, configEntries: [
      { name: 'cleanup.policy', value: 'compact' },
      { name: 'iceberg.enabled', value: 'true' },
      { name: 'iceberg.commit.interval.ms', value: '500' },
      { name: 'internal.segment.bytes', value: '1500' },
      { name: 'local.retention.ms', value: '0' },
      { name: 'local.retention.bytes', value: '0' },
    ] }],
  });
  const plain = kafka.producer();
  await plain.connect();
  t.after(() => plain.disconnect());
  const tx = kafka.producer({ transactionalId: 'compacted-tiered-txn', idempotent: true, maxInFlightRequests: 1 });
  await tx.connect();
  t.after(() => tx.disconnect());

  await plain.send({ topic: TOPIC, acks: -1, messages: [{ key: 'a', value: 'a-plain' }, { key: 'b', value: 'b-plain' }] });
  const aborted = await tx.transaction();
  await aborted.send({ topic: TOPIC, messages: [{ key: 'a', value: 'a-aborted' }, { key: 'c', value: 'c-aborted' }] });
  await aborted.abort();
  const committed = await tx.transaction();
  await committed.send({ topic: TOPIC, messages: [{ key: 'b', value: 'b-committed' }, { key: 'd', value: 'd-committed' }] });
  await committed.commit();
  for (let i = 0; i < 20; i++) await plain.send({ topic: TOPIC, acks: -1, messages: [{ key: `g${i % 5}`, value: `g-${i}` }] });

  const end = await listOffset(broker.port, TOPIC, 0, LATEST);
  await waitFor('every segment to be tiered and deleted locally', async () => ((await listOffset(broker.port, TOPIC, 0, EARLIEST_LOCAL)) === end ? true : undefined), 120_000, 300);

  // read_uncommitted, straight from the broker: data records only (markers are control batches).
  const batches = await fetchAllBatches(broker.port, TOPIC, 0, 0);
  const data = batches.filter((b) => !b.batch.isControl).flatMap((b) => b.batch.records.map((r) => `${r.key?.toString()}=${r.value?.toString()}`));
  const want = ['a=a-plain', 'b=b-committed', 'd=d-committed', ...[15, 16, 17, 18, 19].map((i) => `g${i % 5}=g-${i}`)];
  assert.deepEqual(data, want, 'read_uncommitted: no aborted record, the latest committed value per key');
  assert.ok(batches.some((b) => b.batch.isControl), 'the transaction markers are still there');

  for (const c of [new KafkajsClient(broker.bootstrap), new KcatClient(broker.bootstrap)]) {
    t.after(() => c.close());
    const got = await c.consume(TOPIC, 0, 0, want.length);
    assert.deepEqual(got.map((r) => `${r.key?.toString()}=${r.value?.toString()}`), want, c.name);
    const offsets = got.map((r) => r.offset);
    assert.deepEqual(offsets, [...offsets].sort((x, y) => x - y), `${c.name}: offsets ascending`);
    assert.equal(offsets[0], 0, `${c.name}: the plain a keeps offset 0`);
  }
});
