// TopicManager against a real broker's storage: concurrent creates of one name (two clients asking for the
// same new topic at once) end with one topic, and the loser gets Kafka's TOPIC_ALREADY_EXISTS.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode, KafkaError } from '../../../protocol/error-codes.js';
import { startBroker } from '../../helpers/broker.js';

test('concurrent auto-creations of one new topic all see the one topic that was created', async (t) => {
  const b = await startBroker(['--num.partitions=3']);
  t.after(() => b.stop());
  const { topics } = b.broker.services;
  const results = await Promise.all(Array.from({ length: 4 }, () => topics.autoCreate('race-auto')));
  const ids = new Set(results.map((r) => r?.id.toString('hex')));
  assert.equal(ids.size, 1, 'every caller got the same topic');
  assert.equal(results[0]?.partitions, 3);
  for (let p = 0; p < 3; p++) assert.ok(topics.partitionLog('race-auto', p), `partition ${p} has its log`);
});

test('of two concurrent CreateTopics for one name, one wins and the other gets TOPIC_ALREADY_EXISTS', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  const { topics } = b.broker.services;
  const outcomes = await Promise.allSettled([topics.createTopic('race-create', 2), topics.createTopic('race-create', 2)]);
  const won = outcomes.filter((o) => o.status === 'fulfilled');
  const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  assert.equal(won.length, 1);
  assert.equal(lost.length, 1);
  assert.ok(lost[0]?.reason instanceof KafkaError, `got ${String(lost[0]?.reason)}`);
  assert.equal((lost[0]?.reason as KafkaError).code, ErrorCode.TOPIC_ALREADY_EXISTS);
  // The loser dropped no log the winner owns.
  for (let p = 0; p < 2; p++) assert.ok(topics.partitionLog('race-create', p));
});
