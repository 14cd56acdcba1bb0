// kafka-python (2.0) against Floe: admin create/delete, every codec its installed libraries provide, acks 1
// and all, explicit timestamps, binary bytes, empty and null keys and values, duplicate and null headers;
// consume by partition and offset (assign + seek); beginning/end offsets and offsets_for_times. kafka-python
// 2.0 has no idempotent producer.
import { test } from 'node:test';
import { startBroker } from '../helpers/broker.js';
import { PythonClient } from './clients/python.js';
import { runClientSuite } from './clients/scenario.js';

test('kafka-python interoperates with Floe', async (t) => {
  const broker = await startBroker();
  t.after(() => broker.stop());
  const client = await PythonClient.create('kafka-python', broker.bootstrap);
  t.after(() => client.close());
  await runClientSuite(t, client, { port: broker.port });
});
