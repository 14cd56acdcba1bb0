// kafkajs (2.2) against Floe: admin create/delete, none and gzip (its built-in codecs), acks 1 and all,
// idempotence, explicit timestamps, binary and empty bytes, null keys and values, duplicate headers; consume
// by partition and offset (a group consumer seeked to the offset); fetchTopicOffsets and by timestamp.
import { test } from 'node:test';
import { startBroker } from '../helpers/broker.js';
import { KafkajsClient } from './clients/kafkajs.js';
import { runClientSuite } from './clients/scenario.js';

test('kafkajs interoperates with Floe', async (t) => {
  const broker = await startBroker();
  t.after(() => broker.stop());
  const client = new KafkajsClient(broker.bootstrap);
  t.after(() => client.close());
  await runClientSuite(t, client, { port: broker.port });
});
