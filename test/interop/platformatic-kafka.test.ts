// @platformatic/kafka (1.x) against Floe: admin create/delete, every codec it has here, acks 1 and all,
// idempotence, explicit timestamps, binary and empty bytes, null keys and values, duplicate and null headers;
// consume by partition and offset with its own Fetch (by topic id); admin listOffsets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBroker } from '../helpers/broker.js';
import { PlatformaticClient } from './clients/platformatic.js';
import { runClientSuite } from './clients/scenario.js';

test('@platformatic/kafka interoperates with Floe', async (t) => {
  const broker = await startBroker();
  t.after(() => broker.stop());
  const client = new PlatformaticClient(broker.bootstrap);
  t.after(() => client.close());
  await runClientSuite(t, client, { port: broker.port });
});

// @platformatic/kafka sends InitProducerId with producerId 0 and epoch 0 (not -1/-1) when it starts an
// idempotent producer. Kafka ignores those fields when there is no transactional.id and always allocates a new
// producer id; a broker that instead bumps the epoch of the id it was given hands every such producer the same
// (id, epoch), and a second producer's first batch (sequence 0) is then acknowledged as a duplicate and dropped.
test('@platformatic/kafka: two idempotent producers in turn each get their record stored', async (t) => {
  const broker = await startBroker();
  t.after(() => broker.stop());
  const client = new PlatformaticClient(broker.bootstrap);
  t.after(() => client.close());
  await client.createTopic('two-producers', 1);
  const first = await client.produce({ topic: 'two-producers', acks: -1, codec: 'none', idempotent: true, records: [{ partition: 0, key: null, value: Buffer.from('first'), headers: [] }] });
  const second = await client.produce({ topic: 'two-producers', acks: -1, codec: 'none', idempotent: true, records: [{ partition: 0, key: null, value: Buffer.from('second'), headers: [] }] });
  assert.deepEqual([first.offsets, second.offsets], [[0], [1]]);
  const read = await client.consume('two-producers', 0, 0, 2);
  assert.deepEqual(read.map((r) => r.value?.toString()), ['first', 'second']);
});
