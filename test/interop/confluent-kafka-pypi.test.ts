// confluent-kafka 2.x from PyPI (the current librdkafka, 2.16 here) against Floe: the same suite as Debian's
// confluent-kafka-python (librdkafka 2.0). librdkafka 2.12+ sends its all-topics Metadata v12 with three bytes
// after the body, which Floe ignores as Kafka does: the suite's partition counts come from list_topics() (an
// all-topics request), and the broker counts the requests that carried those bytes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBroker } from '../helpers/broker.js';
import { PythonClient } from './clients/python.js';
import { runClientSuite } from './clients/scenario.js';

test('confluent-kafka 2.x (PyPI) interoperates with Floe', async (t) => {
  const broker = await startBroker();
  t.after(() => broker.stop());
  const client = await PythonClient.create('confluent-kafka-pypi', broker.bootstrap);
  t.after(() => client.close());
  await runClientSuite(t, client, { port: broker.port });
  await t.test('list_topics() works although its Metadata requests carry trailing bytes, and they are counted', async () => {
    await client.createTopic('pypi-listed', 2);
    assert.equal(await client.partitionCount('pypi-listed'), 2);
    assert.ok((broker.broker.router.requestsWithTrailingBytes().get(3) ?? 0) > 0, 'Metadata requests with trailing bytes were counted');
  });
});
