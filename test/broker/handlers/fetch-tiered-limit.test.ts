// A Fetch of two tiered partitions whose second one's next tiered batch does not fit what is left of the
// response's max_bytes: that partition comes back empty (its consumer fetches it again), never with local
// batches past the tiered range it has not read yet (which would make the consumer skip those offsets).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { KafkajsClient } from '../../interop/clients/kafkajs.js';
import { EARLIEST_LOCAL, listOffset } from '../../tiering/e2e/wire.js';
import { WireClient, fetchBody, fetchPartitions } from './wire-client.js';

const { Kafka, logLevel } = kafkajs;
const TOPIC = 'tiered-limit';

test('a tiered batch over the remaining max_bytes leaves its partition empty rather than skipping to the local log', { timeout: 120_000 }, async (t) => {
  const root = await tempDir('floe-fetch-limit-');
  t.after(() => rm(root, { recursive: true, force: true }));
  const broker = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=0', '--log.retention.check.interval.ms=3600000']);
  t.after(() => broker.stop());
  const admin = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.createTopics({
    topics: [{ topic: TOPIC, numPartitions: 2, configEntries: [{ name: 'iceberg.enabled', value: 'true' }, { name: 'iceberg.commit.interval.ms', value: '3600000' }, { name: 'local.retention.ms', value: '0' }, { name: 'local.retention.bytes', value: '0' }] }],
  });
  const producer = new KafkajsClient(broker.bootstrap);
  t.after(() => producer.close());
  // One 1000-byte record per partition, tiered and deleted locally; then a small local record in partition 1.
  for (const partition of [0, 1]) await producer.produce({ topic: TOPIC, acks: -1, codec: 'none', idempotent: false, records: [{ partition, key: Buffer.from('k'), value: Buffer.alloc(1000, 0x61), headers: [] }] });
  const tiering = broker.broker.services.tiering;
  assert.ok(tiering);
  for (const partition of [0, 1]) await broker.broker.services.logs.get(TOPIC, partition)?.roll();
  await tiering.drain();
  for (const partition of [0, 1]) {
    await broker.broker.services.logs.get(TOPIC, partition)?.enforceRetention();
    assert.equal(await listOffset(broker.port, TOPIC, partition, EARLIEST_LOCAL), 1, `partition ${partition}: offset 0 is only in the table`);
  }
  await producer.produce({ topic: TOPIC, acks: -1, codec: 'none', idempotent: false, records: [{ partition: 1, key: Buffer.from('k'), value: Buffer.from('small'), headers: [] }] });

  const client = await WireClient.connect(broker.port);
  t.after(() => client.close());
  const res = await client.request(1, 12, fetchBody(TOPIC, [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1500 }, { partition: 1, fetchOffset: 0n, partitionMaxBytes: 1500 }], { maxBytes: 1500 }));
  const [p0, p1] = fetchPartitions(res);
  const bases = (records: Buffer | null | undefined) => [...iterateBatches(records ?? Buffer.alloc(0))].map((b) => Number(b.baseOffset));
  assert.deepEqual(bases(p0?.records), [0], 'partition 0: its tiered batch, the first of the response');
  assert.deepEqual(bases(p1?.records), [], 'partition 1: nothing (its tiered batch does not fit), not the local batch at 1');
  // Asked first, partition 1 gets its tiered batch.
  const alone = await client.request(1, 12, fetchBody(TOPIC, [{ partition: 1, fetchOffset: 0n, partitionMaxBytes: 1500 }], { maxBytes: 1500 }));
  assert.deepEqual(bases(fetchPartitions(alone)[0]?.records), [0]);
});
