// DescribeTopicPartitions (KIP-966) over the wire: topics in name order, pagination by the partition limit
// and the cursor (cut inside a topic and exactly at a topic's end), unknown and illegal names, and a cursor
// on a topic the request does not name (INVALID_REQUEST, as Kafka answers).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { startBroker } from '../../helpers/broker.js';
import { WireClient, type Body } from './wire-client.js';

interface Topic {
  errorCode: number;
  name: string;
  topicId: Buffer;
  partitions: { partitionIndex: number; leaderId: number; replicaNodes: number[]; isrNodes: number[]; eligibleLeaderReplicas: number[] | null }[];
}
interface Response {
  topics: Topic[];
  nextCursor: { topicName: string; partitionIndex: number } | null;
}

test('DescribeTopicPartitions pages topics in name order by partition limit and cursor', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  const topics = b.broker.services.topics;
  await topics.createTopic('b', 3);
  await topics.createTopic('a', 2);
  await topics.createTopic('c', 1);
  const c = await WireClient.connect(b.port);
  t.after(() => c.close());
  const ask = async (body: Body): Promise<Response> => (await c.request(75, 0, { topics: [], responsePartitionLimit: 2000, cursor: null, ...body })) as unknown as Response;
  const shape = (r: Response) => ({ topics: r.topics.map((tp) => [tp.name, tp.errorCode, tp.partitions.map((p) => p.partitionIndex)]), next: r.nextCursor });

  const whole = await ask({});
  assert.deepEqual(shape(whole), { topics: [['a', 0, [0, 1]], ['b', 0, [0, 1, 2]], ['c', 0, [0]]], next: null });
  const node = b.broker.services.identity.nodeId;
  assert.deepEqual(whole.topics[1]?.partitions[2], { errorCode: 0, partitionIndex: 2, leaderId: node, leaderEpoch: 0, replicaNodes: [node], isrNodes: [node], eligibleLeaderReplicas: [], lastKnownElr: [], offlineReplicas: [] });
  assert.ok(whole.topics[0]?.topicId.equals(topics.getTopic('a')?.id ?? Buffer.alloc(0)));

  const first = await ask({ responsePartitionLimit: 4 });
  assert.deepEqual(shape(first), { topics: [['a', 0, [0, 1]], ['b', 0, [0, 1]]], next: { topicName: 'b', partitionIndex: 2 } });
  const second = await ask({ responsePartitionLimit: 4, cursor: first.nextCursor });
  assert.deepEqual(shape(second), { topics: [['b', 0, [2]], ['c', 0, [0]]], next: null });
  const exact = await ask({ responsePartitionLimit: 2 });
  assert.deepEqual(shape(exact), { topics: [['a', 0, [0, 1]]], next: { topicName: 'b', partitionIndex: 0 } });

  const named = await ask({ topics: [{ name: 'c' }, { name: 'absent' }, { name: 'a' }, { name: 'bad/name' }] });
  assert.deepEqual(shape(named), { topics: [['a', 0, [0, 1]], ['absent', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []], ['bad/name', ErrorCode.INVALID_TOPIC_EXCEPTION, []], ['c', 0, [0]]], next: null });
  assert.equal(topics.getTopic('absent'), undefined, 'never auto-created');

  const stray = await ask({ topics: [{ name: 'a' }, { name: 'c' }], cursor: { topicName: 'b', partitionIndex: 0 } });
  assert.deepEqual(shape(stray), { topics: [['a', ErrorCode.INVALID_REQUEST, []], ['c', ErrorCode.INVALID_REQUEST, []]], next: null });
});
