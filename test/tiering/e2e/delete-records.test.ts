// DeleteRecords on a tiered topic: the offset gap it leaves must hold in the remote history as it does in a
// local log. Kafka's rule (KIP-107, and KIP-405 for tiered topics): after DeleteRecords(X) the low watermark
// and ListOffsets earliest are X, a fetch below X is OFFSET_OUT_OF_RANGE, and everything from X on is served
// unchanged, whether X falls in the hot log (before tiering) or inside the tiered range (after hand-off).
//
// Gaps that live INSIDE the stored history (compacted topics, aborted transactions, control records) cannot be
// made through this broker yet (compaction and transactions are refused); the conversion layer covers them:
// test/tiering/convert/segment-fixture.ts builds batches whose offsets skip ranges between and inside batches,
// and parquet-to-batches.test.ts checks that every rebuilt batch keeps its stored offsets and that a fetch at
// an offset inside a gap lands on the next batch.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir, type TestBroker } from '../../helpers/broker.js';
import { assertSameBatches } from './batches.js';
import { EARLIEST, EARLIEST_LOCAL, LATEST_TIERED, deleteRecords, fetchAllBatches, fetchOnce, listOffset } from './wire.js';

const TOPIC = 'gaps';
const RECORDS = 150;
const OFFSET_OUT_OF_RANGE = 1;

async function tieredTopic(t: TestContext): Promise<TestBroker> {
  const root = await tempDir('floe-e2e-gaps-');
  t.after(() => rm(root, { recursive: true, force: true }));
  const b = await startBroker([
    '--remote.log.storage.system.enable=true',
    `--iceberg.warehouse=${join(root, 'wh')}`,
    '--iceberg.rest.port=0',
    '--iceberg.commit.interval.ms=3600000',
    '--log.retention.check.interval.ms=3600000',
  ]);
  t.after(() => b.stop());
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-e2e-gaps', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic: TOPIC, numPartitions: 1, configEntries: [
      { name: 'iceberg.enabled', value: 'true' },
      { name: 'segment.bytes', value: '1024' },
      { name: 'local.retention.bytes', value: '0' },
      { name: 'local.retention.ms', value: '0' },
      { name: 'iceberg.commit.interval.ms', value: '3600000' },
    ] }],
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  t.after(() => producer.disconnect());
  for (let i = 0; i < RECORDS / 5; i++) {
    await producer.send({ topic: TOPIC, messages: Array.from({ length: 5 }, (_, j) => ({ key: `k${i}`, value: `v${i}-${j}-${'x'.repeat(50)}`, timestamp: String(1_700_000_000_000 + i), headers: { h: ['a', 'b'] } })) });
  }
  return b;
}

/** Rolls, commits and hands off every local segment; checks the whole log is remote. */
async function tierAll(b: TestBroker): Promise<void> {
  const log = b.broker.services.logs.get(TOPIC, 0);
  const tiering = b.broker.services.tiering;
  assert.ok(log && tiering);
  await log.roll();
  await tiering.drain();
  await log.enforceRetention();
  assert.equal(await listOffset(b.port, TOPIC, 0, LATEST_TIERED), RECORDS - 1);
  assert.equal(await listOffset(b.port, TOPIC, 0, EARLIEST_LOCAL), RECORDS);
}

async function assertBelowIsGone(b: TestBroker, x: number): Promise<void> {
  assert.equal(await listOffset(b.port, TOPIC, 0, EARLIEST), x, 'ListOffsets earliest is the DeleteRecords offset');
  for (const below of [0, Math.floor(x / 2), x - 1]) {
    const r = await fetchOnce(b.port, TOPIC, 0, below);
    assert.equal(r.errorCode, OFFSET_OUT_OF_RANGE, `a fetch at ${below}, below the deleted range's end ${x}, is OFFSET_OUT_OF_RANGE (got ${r.records.length} bytes)`);
  }
}

test('DeleteRecords in the hot log, then tiering: records from X on are served exactly from the table', async (t) => {
  const b = await tieredTopic(t);
  const hot = await fetchAllBatches(b.port, TOPIC, 0, 0);
  const x = 37;
  assert.deepEqual(await deleteRecords(b.port, TOPIC, 0, x), { errorCode: 0, lowWatermark: x });
  await tierAll(b);
  const first = hot.findIndex((h) => x <= Number(h.batch.baseOffset) + h.batch.lastOffsetDelta);
  assertSameBatches(hot.slice(first), await fetchAllBatches(b.port, TOPIC, 0, x), `from ${x}`);

  await t.test('and the records below X stay deleted', async () => {
    await assertBelowIsGone(b, x);
  });
});

test('DeleteRecords inside the tiered range: records from X on are still served exactly', async (t) => {
  const b = await tieredTopic(t);
  const hot = await fetchAllBatches(b.port, TOPIC, 0, 0);
  await tierAll(b);
  const x = 61;
  const res = await deleteRecords(b.port, TOPIC, 0, x);
  assert.equal(res.errorCode, 0);
  const first = hot.findIndex((h) => x <= Number(h.batch.baseOffset) + h.batch.lastOffsetDelta);
  assertSameBatches(hot.slice(first), await fetchAllBatches(b.port, TOPIC, 0, x), `from ${x}`);

  await t.test('and answers low watermark X, and the records below X are gone', async () => {
    assert.equal(res.lowWatermark, x, 'DeleteRecords answers the new low watermark');
    await assertBelowIsGone(b, x);
  });
});
