// Apache Kafka's Java client (kafka-clients 4.x, Maven Central) against Floe: admin create/delete, every codec
// (none, gzip, snappy, lz4, zstd), acks 1 and all, idempotence, explicit timestamps, binary and empty bytes,
// null keys and values, duplicate and null headers; consume by partition and offset (assign and seek);
// beginningOffsets, endOffsets and offsetsForTimes.
import { test } from 'node:test';
import { startBroker } from '../helpers/broker.js';
import { JavaClient } from './clients/java.js';
import { runClientSuite } from './clients/scenario.js';

test('Apache Kafka Java client interoperates with Floe', async (t) => {
  const broker = await startBroker();
  t.after(() => broker.stop());
  const client = new JavaClient(broker.bootstrap);
  t.after(() => client.close());
  await runClientSuite(t, client, { port: broker.port });
});
