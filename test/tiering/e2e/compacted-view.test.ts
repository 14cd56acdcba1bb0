// The compacted view of a compacted topic's tiered range, over the wire: kafkajs produces updates over a
// few keys, tombstones and unique fillers to a `cleanup.policy=compact` topic with `iceberg.enabled` and
// small segments; the segments are tiered and the log cleaner compacts them on local disk; then
// local.retention.ms/bytes are set to 0 and the broker's own retention schedule deletes every local
// segment (cleaned ones included), so the whole log is below the local log start. Then
// five independent clients (kafkajs, kcat, confluent-kafka from PyPI, @platformatic/kafka, Apache Kafka's
// Java client) read from offset 0 exactly the latest value per key plus the live tombstones at their
// original offsets, with their timestamps and headers, and a fetch inside a removed range starts at the
// next surviving record; the append table, read by DuckDB and icebird, still holds every record.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import kafkajs from 'kafkajs';
import { createFileIO } from '../../../iceberg/io/registry.js';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { waitFor } from '../../helpers/tiered-table.js';
import { JavaClient } from '../../interop/clients/java.js';
import { KafkajsClient } from '../../interop/clients/kafkajs.js';
import { KcatClient } from '../../interop/clients/kcat.js';
import { PlatformaticClient } from '../../interop/clients/platformatic.js';
import { PythonClient } from '../../interop/clients/python.js';
import type { InteropClient } from '../../interop/clients/types.js';
import { compactionWorkload, expected, produceWorkload, view } from '../../helpers/compaction-workload.js';
import { readWithDuckDB, readWithIcebird } from './table-readers.js';
import { EARLIEST, EARLIEST_LOCAL, LATEST, LATEST_TIERED, listOffset } from './wire.js';

const { ConfigResourceTypes, Kafka, logLevel } = kafkajs;
const TOPIC = 'compacted-tiered';
const CONFIGS = [
  { name: 'cleanup.policy', value: 'compact' },
  { name: 'iceberg.enabled', value: 'true' },
  { name: 'iceberg.commit.interval.ms', value: '500' },
  { name: 'internal.segment.bytes', value: '3000' },
  { name: 'min.cleanable.dirty.ratio', value: '0.01' },
  { name: 'min.compaction.lag.ms', value: '0' },
  { name: 'delete.retention.ms', value: String(24 * 3600_000) },
];

test('consumers of every client see the compacted view of a compacted topic\'s tiered range, with original offsets; the table keeps every record', { timeout: 300_000 }, async (t) => {
  const root = await tempDir('floe-e2e-compacted-');
  t.after(() => rm(root, { recursive: true, force: true }));
  const warehouse = join(root, 'wh');
  const io = createFileIO(pathToFileURL(warehouse).href);
  t.after(() => io.close());
  const broker = await startBroker([
    '--remote.log.storage.system.enable=true',
    `--iceberg.warehouse=${warehouse}`,
    '--iceberg.rest.port=0',
    '--log.cleaner.backoff.ms=100',
    '--log.retention.check.interval.ms=300',
  ]);
  t.after(() => broker.stop());
  const kafka = new Kafka({ clientId: 'compacted-tiered', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.createTopics({
    topics: [
      {
        topic: TOPIC,
        numPartitions: 1,
        configEntries: CONFIGS,
      },
    ],
  });

  const producer = new KafkajsClient(broker.bootstrap);
  t.after(() => producer.close());
  const out = compactionWorkload(Date.now() - 60_000);
  await produceWorkload(producer, TOPIC, out);
  const { all, compacted } = expected(out);

  // First on local disk: the broker rolls the active segment each commit interval and tiers every segment,
  // and the log cleaner compacts the tiered ones; local.retention.* is not set, so nothing is deleted.
  const end = out.length;
  const hot = new KafkajsClient(broker.bootstrap);
  t.after(() => hot.close());
  await waitFor('the log cleaner to compact the tiered segments', async () => {
    const got = view(await hot.consume(TOPIC, 0, 0, compacted.length));
    return JSON.stringify(got) === JSON.stringify(compacted) ? true : undefined;
  }, 120_000, 300);
  assert.ok((broker.broker.services.cleaner?.metrics.recordsRemoved ?? 0) > 0, 'the cleaner removed records');
  assert.equal(await listOffset(broker.port, TOPIC, 0, EARLIEST_LOCAL), 0, 'compact alone: the local log keeps its start');

  // Then local.retention.* hands the (cleaned) segments off: the broker's retention schedule deletes each one
  // the table holds, and nothing is left on local disk.
  await admin.alterConfigs({
    validateOnly: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: TOPIC, configEntries: [...CONFIGS, { name: 'local.retention.ms', value: '0' }, { name: 'local.retention.bytes', value: '0' }] }],
  });
  await waitFor('every segment to be tiered and deleted locally', async () => ((await listOffset(broker.port, TOPIC, 0, EARLIEST_LOCAL)) === end ? true : undefined), 120_000, 300);
  assert.equal(await listOffset(broker.port, TOPIC, 0, LATEST_TIERED), end - 1, 'the table holds every offset');
  assert.equal(await listOffset(broker.port, TOPIC, 0, EARLIEST), 0, 'the log starts at 0, in the table');
  assert.equal(await listOffset(broker.port, TOPIC, 0, LATEST), end);

  const clients: InteropClient[] = [new KafkajsClient(broker.bootstrap), new KcatClient(broker.bootstrap), await PythonClient.create('confluent-kafka-pypi', broker.bootstrap), new PlatformaticClient(broker.bootstrap), new JavaClient(broker.bootstrap)];
  for (const c of clients) t.after(() => c.close());
  const first = compacted[0]?.offset ?? 0;
  assert.ok(first > 0);
  for (const c of clients) {
    const got = view(await c.consume(TOPIC, 0, 0, compacted.length));
    assert.deepEqual(got, compacted, `${c.name}: the latest value per key and the live tombstones, at their offsets, from the table`);
    assert.equal((await c.consume(TOPIC, 0, first - 1, 1))[0]?.offset, first, `${c.name}: a fetch inside a gap`);
  }

  // The append table keeps the full history: one row per record ever produced.
  const url = broker.broker.services.tiering?.restCatalogUrl;
  assert.ok(url, 'the REST catalog runs');
  const rows = await readWithDuckDB(t, url, io, ['kafka'], TOPIC);
  assert.deepEqual(
    rows.map((r) => ({ offset: r.offset, key: r.key?.toString() ?? '', value: r.value?.toString() ?? null, timestamp: r.timestamp })),
    all.map((r) => ({ offset: r.offset, key: r.key, value: r.value, timestamp: r.timestamp })),
    'DuckDB: every record, superseded ones included',
  );
  const ice = await readWithIcebird(url, io, ['kafka'], TOPIC);
  assert.deepEqual(ice.map((r) => r.offset), all.map((r) => r.offset), 'icebird: every offset');
});
