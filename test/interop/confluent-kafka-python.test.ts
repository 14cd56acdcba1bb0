// confluent-kafka-python (librdkafka 2.0) against Floe: admin create/delete, every codec, acks 1 and all,
// idempotence, explicit timestamps, binary bytes, empty and null keys and values, duplicate and null headers;
// consume by partition and offset (assign); watermarks and offsets_for_times.
import { test } from 'node:test';
import { startBroker } from '../helpers/broker.js';
import { PythonClient } from './clients/python.js';
import { runClientSuite } from './clients/scenario.js';

test('confluent-kafka-python interoperates with Floe', async (t) => {
  const broker = await startBroker();
  t.after(() => broker.stop());
  const client = await PythonClient.create('confluent-kafka-python', broker.bootstrap);
  t.after(() => client.close());
  await runClientSuite(t, client, { port: broker.port });
});
