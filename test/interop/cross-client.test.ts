// Cross-client: what each client produced (librdkafka 2.0 from Debian and 2.x from PyPI count as two), every
// client reads identically: the same offsets, key, value and header bytes (order and duplicates), and timestamps. Each writer produces to its own
// 3-partition topic with the most demanding codec every reader can decompress (gzip, given kafkajs); then every client reads every partition of every topic.
// Header values are text here because kcat can only print text headers.
import { test } from 'node:test';
import { startBroker } from '../helpers/broker.js';
import { KafkajsClient } from './clients/kafkajs.js';
import { KcatClient } from './clients/kcat.js';
import { PlatformaticClient } from './clients/platformatic.js';
import { PythonClient } from './clients/python.js';
import { assertReads, PARTITIONS, recordsFor, TopicModel } from './clients/scenario.js';
import type { InteropClient } from './clients/types.js';

test('every client reads what every other client produced, identically', async (t) => {
  const broker = await startBroker([`--num.partitions=${PARTITIONS}`]);
  t.after(() => broker.stop());
  const clients: InteropClient[] = [
    new KcatClient(broker.bootstrap),
    await PythonClient.create('confluent-kafka-python', broker.bootstrap),
    await PythonClient.create('confluent-kafka-pypi', broker.bootstrap),
    await PythonClient.create('kafka-python', broker.bootstrap),
    new KafkajsClient(broker.bootstrap),
    new PlatformaticClient(broker.bootstrap),
  ];
  for (const c of clients) t.after(() => c.close());
  const binaryHeaders = clients.every((c) => c.capabilities.binaryHeaderValues);
  const nullHeaders = clients.every((c) => c.capabilities.nullHeaderValues);

  const topics: { writer: InteropClient; topic: string; model: TopicModel }[] = [];
  for (const [i, writer] of clients.entries()) {
    await t.test(`${writer.name} produces`, async () => {
      const topic = `cross-${writer.name}`;
      await writer.createTopic(topic, PARTITIONS);
      const caps = { ...writer.capabilities, nullHeaderValues: writer.capabilities.nullHeaderValues && nullHeaders };
      const records = recordsFor(caps, 100 + i, binaryHeaders);
      // The most demanding codec every client can decompress (kafkajs has only gzip, @platformatic/kafka no zstd here).
      const codec = caps.codecs.filter((k) => clients.every((c) => c.capabilities.codecs.includes(k))).at(-1) ?? 'none';
      const model = new TopicModel();
      const before = Date.now();
      await writer.produce({ topic, acks: -1, codec, idempotent: false, records });
      model.add(records, [before, Date.now()]);
      // The writer's own reading fixes the timestamps it could not choose (kcat); the others must then agree.
      for (let p = 0; p < PARTITIONS; p++) model.settleTimestamps(p, await assertReads(writer, topic, p, model.partitions[p] ?? [], 'its own records'));
      topics.push({ writer, topic, model });
    });
  }

  for (const reader of clients) {
    await t.test(`${reader.name} reads every other client's records identically`, async () => {
      for (const { writer, topic, model } of topics) {
        if (writer === reader) continue;
        for (let p = 0; p < PARTITIONS; p++) await assertReads(reader, topic, p, model.partitions[p] ?? [], `what ${writer.name} produced to`);
      }
    });
  }
});
