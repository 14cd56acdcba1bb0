// Kafka's own operator tool, kafka-transactions.sh (TransactionsCommand from kafka-tools 4.x), against Floe:
// list and describe (ListTransactions, DescribeTransactions), describe-producers (DescribeProducers) with an
// open transaction, and abort of that transaction from its partition's start offset (DescribeProducers, then
// WriteTxnMarkers): afterwards the LSO is the log end and the transaction is listed as aborted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { fetchBody, fetchPartitions, firstPartition, WireClient } from '../../broker/handlers/wire-client.js';
import { runKafkaScript } from '../clients/kafka-cli.js';

const TOPIC = 'txn-cli';

test('kafka-transactions.sh list, describe, describe-producers and abort work against Floe', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic(TOPIC, 1);
  const cwd = await tempDir();
  const tool = async (args: string) => {
    const r = await runKafkaScript(`kafka-transactions.sh --bootstrap-server localhost:9092 ${args}`, { bootstrap: b.bootstrap, cwd });
    assert.equal(r.code, 0, `${args}: ${r.stderr}\n${r.stdout}`);
    return r.stdout;
  };
  const c = await WireClient.connect(b.port);
  t.after(() => c.close());

  // A plain committed record first, so the open transaction starts at offset 1.
  const init = await c.request(22, 4, { transactionalId: 'cli-tx', transactionTimeoutMs: 600_000, producerId: -1n, producerEpoch: -1 });
  const pid = init.producerId as bigint;
  const plain = await c.request(0, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: encodeRecordBatch({ baseTimestamp: BigInt(Date.now()), records: [{ key: null, value: Buffer.from('p') }] }) }] }] });
  assert.equal(firstPartition(plain).errorCode, ErrorCode.NONE);
  await c.request(24, 3, { v3AndBelowTransactionalId: 'cli-tx', v3AndBelowProducerId: pid, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [{ name: TOPIC, partitions: [0] }] });
  const txnBatch = encodeRecordBatch({ baseTimestamp: BigInt(Date.now()), producerId: pid, producerEpoch: 0, baseSequence: 0, isTransactional: true, records: [{ key: null, value: Buffer.from('t') }] });
  const res = await c.request(0, 9, { transactionalId: 'cli-tx', acks: -1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: txnBatch }] }] });
  assert.equal(firstPartition(res).errorCode, ErrorCode.NONE);

  const list = await tool('list');
  assert.match(list, new RegExp(`cli-tx\\s+\\S+\\s+${pid}\\s+Ongoing`));
  const describe = await tool('describe --transactional-id cli-tx');
  assert.match(describe, /Ongoing/);
  assert.match(describe, new RegExp(`${TOPIC}-0`));
  const producers = await tool(`describe-producers --topic ${TOPIC} --partition 0`);
  assert.match(producers, new RegExp(`^${pid}\\s+0\\s+-1\\s+0\\s+\\d+\\s+1\\s*$`, 'm'), producers);

  await tool(`abort --topic ${TOPIC} --partition 0 --start-offset 1`);
  const p = fetchPartitions(await c.request(1, 12, fetchBody(TOPIC, [{ partition: 0, fetchOffset: 0n }], { isolationLevel: 1 })))[0];
  assert.equal(p?.lastStableOffset, 3n);
  assert.deepEqual(p?.abortedTransactions, [{ producerId: pid, firstOffset: 1n }]);
});
