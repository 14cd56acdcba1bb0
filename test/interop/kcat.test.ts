// kcat (librdkafka 2.0) against Floe: every codec, acks 1 and all, idempotence, binary bytes, null keys and
// values, duplicate and null headers; consume by partition and offset; ListOffsets. kcat has no admin API and
// cannot set timestamps: the topic is auto-created by its metadata request (num.partitions=3), timestamps are
// checked against the produce call's window, and the topic is deleted with confluent-kafka-python's admin
// client (the same librdkafka underneath), after which kcat's metadata no longer lists it.
import { test } from 'node:test';
import { startBroker } from '../helpers/broker.js';
import { KcatClient } from './clients/kcat.js';
import { PythonClient } from './clients/python.js';
import { PARTITIONS, runClientSuite } from './clients/scenario.js';

test('kcat interoperates with Floe', async (t) => {
  const broker = await startBroker([`--num.partitions=${PARTITIONS}`]);
  t.after(() => broker.stop());
  const client = new KcatClient(broker.bootstrap);
  t.after(() => client.close());
  const admin = await PythonClient.create('confluent-kafka-python', broker.bootstrap);
  t.after(() => admin.close());
  await runClientSuite(t, client, { port: broker.port, admin });
});
