// Compacted topics over the wire: updates over a few keys produced by kafkajs, the broker's log cleaner
// compacts the closed segments, and five independent clients (kafkajs, kcat, confluent-kafka from PyPI,
// @platformatic/kafka, Apache Kafka's Java client) read from offset 0 exactly the latest value per key plus
// the live tombstones, at their original offsets, with their timestamps and headers; after
// delete.retention.ms the tombstones are gone too. A record without a key is refused (INVALID_RECORD).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker } from '../../../helpers/broker.js';
import { waitFor } from '../../../helpers/tiered-table.js';
import { JavaClient } from '../../../interop/clients/java.js';
import { KafkajsClient } from '../../../interop/clients/kafkajs.js';
import { KcatClient } from '../../../interop/clients/kcat.js';
import { PlatformaticClient } from '../../../interop/clients/platformatic.js';
import { PythonClient } from '../../../interop/clients/python.js';
import type { InteropClient } from '../../../interop/clients/types.js';
import { compactionWorkload, expected, produceWorkload, view } from '../../../helpers/compaction-workload.js';

const TOPIC = 'compacted-wire';
const DELETE_RETENTION_MS = 15_000;

test('consumers of every client see the compacted view of a compacted topic, with original offsets', { timeout: 240_000 }, async (t) => {
  const broker = await startBroker(['--log.cleaner.backoff.ms=100']);
  t.after(() => broker.stop());
  const kafka = new Kafka({ clientId: 'compaction-wire', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.createTopics({
    topics: [
      {
        topic: TOPIC,
        numPartitions: 1,
        configEntries: [
          { name: 'cleanup.policy', value: 'compact' },
          { name: 'internal.segment.bytes', value: '3000' },
          { name: 'min.cleanable.dirty.ratio', value: '0.01' },
          { name: 'min.compaction.lag.ms', value: '0' },
          { name: 'delete.retention.ms', value: String(DELETE_RETENTION_MS) },
        ],
      },
    ],
  });

  const producer = new KafkajsClient(broker.bootstrap);
  t.after(() => producer.close());
  const out = compactionWorkload(Date.now() - 60_000);
  await produceWorkload(producer, TOPIC, out);
  // The reference: the last record per key of everything produced (every update lies in closed segments).
  const { compacted } = expected(out);

  // A record without a key is refused on a compacted topic, as Kafka's LogValidator does.
  const raw = kafka.producer();
  await raw.connect();
  t.after(() => raw.disconnect());
  await assert.rejects(raw.send({ topic: TOPIC, acks: -1, messages: [{ key: null, value: 'no key' }] }), (err: Error & { type?: string }) => {
    assert.match(`${err.message} ${err.type ?? ''}`, /INVALID_RECORD|without key/i);
    return true;
  });

  const reader = new KafkajsClient(broker.bootstrap);
  t.after(() => reader.close());
  await waitFor('the cleaner to compact the updates', async () => {
    const got = view(await reader.consume(TOPIC, 0, 0, compacted.length));
    return JSON.stringify(got) === JSON.stringify(compacted) ? true : undefined;
  }, 60_000, 300);
  // A fetch sees a cleaned group as soon as PartitionLog.replaceSegments swaps it into the segment list,
  // while the pass still finishes its file work (swap completion, indexes, old segments) before counting
  // itself: wait for the count rather than read it at once (CI once read it in between).
  const cleaner = broker.broker.services.cleaner;
  assert.ok(cleaner !== undefined);
  await waitFor('the cleaner to count its passes', async () => (cleaner.metrics.recordsRemoved >= 600 - 6 ? true : undefined), 30_000, 50);
  assert.ok(cleaner.metrics.passes > 0);
  if (broker.adminUrl !== undefined) {
    const metrics = await (await fetch(`${broker.adminUrl}/metrics`)).text();
    assert.match(metrics, /^floe_log_cleaner_passes_total [1-9]/m);
    assert.match(metrics, /^floe_log_cleaner_removed_records_total [1-9]/m);
  }

  const clients: InteropClient[] = [new KcatClient(broker.bootstrap), await PythonClient.create('confluent-kafka-pypi', broker.bootstrap), new PlatformaticClient(broker.bootstrap), new JavaClient(broker.bootstrap)];
  for (const c of clients) t.after(() => c.close());
  for (const c of [reader, ...clients]) {
    const got = view(await c.consume(TOPIC, 0, 0, compacted.length));
    assert.deepEqual(got, compacted, `${c.name}: the latest value per key and the live tombstones, at their offsets`);
    // Reading from an offset that was cleaned away starts at the next surviving record.
    const gap = (compacted[0]?.offset ?? 1) - 1;
    if (gap >= 0) assert.equal((await c.consume(TOPIC, 0, gap, 1))[0]?.offset, compacted[0]?.offset, `${c.name}: a fetch inside a gap`);
  }

  // After delete.retention.ms (counted from the clean that first kept them) the tombstones go.
  const final = compacted.filter((r) => r.value !== null);
  const kcat = clients[0] as InteropClient;
  await waitFor('the tombstones to expire', async () => {
    const got = view(await kcat.consume(TOPIC, 0, 0, final.length + 1)); // kcat stops at the log end
    return JSON.stringify(got) === JSON.stringify(final) ? true : undefined;
  }, DELETE_RETENTION_MS + 60_000, 500);
  assert.deepEqual(view(await reader.consume(TOPIC, 0, 0, final.length)), final, 'kafkajs: no tombstones left');
});
