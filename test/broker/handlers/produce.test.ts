import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { BATCH_OFFSETS } from '../../../protocol/record-batch/header.js';
import { startBroker } from '../../helpers/broker.js';
import { WireClient, batchOf, fetchBody, fetchPartitions, firstPartition, produceBody, readAll } from './wire-client.js';

async function setup(t: { after(fn: () => Promise<void> | void): void }, flags: string[] = []) {
  const broker = await startBroker(flags);
  const client = await WireClient.connect(broker.port);
  t.after(async () => {
    client.close();
    await broker.stop();
  });
  return { broker, client };
}

test('acks 1 and -1 append and answer offsets, logStartOffset and logAppendTime -1 for CreateTime', async (t) => {
  const { client } = await setup(t);
  const a = firstPartition(await client.request(0, 9, produceBody('p1', 0, batchOf(['a', 'b', 'c']), 1)));
  const b = firstPartition(await client.request(0, 11, produceBody('p1', 0, batchOf(['d']), -1)));
  const c = firstPartition(await client.request(0, 3, produceBody('p1', 0, batchOf(['e']), -1)));
  assert.deepEqual([a.errorCode, a.baseOffset, a.logAppendTimeMs, a.logStartOffset], [0, 0n, -1n, 0n]);
  assert.deepEqual([b.errorCode, b.baseOffset], [0, 3n]);
  assert.deepEqual([c.errorCode, c.baseOffset], [0, 4n]);
});

test('acks=0 gets no response but appends; a failed acks=0 produce closes the connection', async (t) => {
  const { broker, client } = await setup(t);
  client.send(0, 9, produceBody('p0', 0, batchOf(['x']), 0));
  const after = firstPartition(await client.request(0, 9, produceBody('p0', 0, batchOf(['y']), 1)));
  assert.equal(after.errorMessage, null);
  assert.equal(after.baseOffset, 1n, 'the acks=0 batch was appended first, and no response was sent for it');
  client.send(0, 9, produceBody('p0', 7, batchOf(['x']), 0));
  await client.closed;
  const other = await WireClient.connect(broker.port);
  t.after(() => other.close());
  assert.equal(firstPartition(await other.request(0, 9, produceBody('p0', 0, batchOf(['z']), 1))).baseOffset, 2n);
});

test('LogAppendTime topics get the broker time in the response and in the stored batch', async (t) => {
  const { client } = await setup(t, ['--log.message.timestamp.type=LogAppendTime']);
  const before = Date.now();
  const r = firstPartition(await client.request(0, 9, produceBody('lat', 0, batchOf(['a']))));
  assert.ok(r.logAppendTimeMs >= BigInt(before) && r.logAppendTimeMs <= BigInt(Date.now()));
  const [p] = fetchPartitions(await client.request(1, 11, fetchBody('lat', [{ partition: 0, fetchOffset: 0n }])));
  assert.equal(p?.records?.readBigInt64BE(BATCH_OFFSETS.maxTimestamp), r.logAppendTimeMs);
  assert.equal((p?.records?.readInt16BE(BATCH_OFFSETS.attributes) ?? 0) & 0x08, 0x08);
});

test('bad input gets Kafka error codes and the broker keeps serving other clients', async (t) => {
  const { broker, client } = await setup(t, ['--message.max.bytes=2000', '--auto.create.topics.enable=false']);
  await client.request(19, 7, { topics: [{ name: 'bad', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
  const code = async (body: Record<string, unknown>, version = 9) => firstPartition(await client.request(0, version, body)).errorCode;

  const corrupt = batchOf(['hello']);
  corrupt.writeUInt8(corrupt.readUInt8(corrupt.length - 1) ^ 0xff, corrupt.length - 1);
  assert.equal(await code(produceBody('bad', 0, corrupt)), ErrorCode.CORRUPT_MESSAGE);
  assert.equal(await code(produceBody('bad', 0, batchOf(['x'.repeat(3000)]))), ErrorCode.MESSAGE_TOO_LARGE);
  assert.equal(await code(produceBody('bad name!', 0, batchOf(['x']))), ErrorCode.INVALID_TOPIC_EXCEPTION);
  assert.equal(await code(produceBody('missing', 0, batchOf(['x']))), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'auto-creation is off');
  assert.equal(await code(produceBody('bad', 2, batchOf(['x']))), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'partition out of range');
  assert.equal(await code(produceBody('bad', 0, batchOf(['x']), 2)), ErrorCode.INVALID_REQUIRED_ACKS);
  assert.equal(await code(produceBody('bad', 0, batchOf(['x']), 1), 2), ErrorCode.UNSUPPORTED_VERSION, 'v0-2 are advertised but refused');
  assert.equal(await code(produceBody('bad', 0, null)), ErrorCode.INVALID_RECORD);
  assert.equal(await code(produceBody('bad', 0, Buffer.concat([batchOf(['a']), batchOf(['b'])]))), ErrorCode.INVALID_RECORD, 'one batch per partition');
  assert.equal(await code(produceBody('bad', 0, batchOf(['a'], { isControl: true }))), ErrorCode.INVALID_RECORD);
  assert.equal(await code(produceBody('bad', 0, batchOf(['a'], { isTransactional: true, producerId: 1n, producerEpoch: 0, baseSequence: 0 }))), ErrorCode.INVALID_TXN_STATE);
  const legacy = batchOf(['a']);
  legacy[BATCH_OFFSETS.magic] = 1;
  assert.equal(await code(produceBody('bad', 0, legacy)), ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT);

  const other = await WireClient.connect(broker.port);
  t.after(() => other.close());
  const ok = firstPartition(await other.request(0, 9, produceBody('bad', 1, batchOf(['fine']))));
  assert.deepEqual([ok.errorCode, ok.baseOffset], [0, 0n]);
  assert.equal(firstPartition(await client.request(0, 9, produceBody('bad', 0, batchOf(['fine'])))).baseOffset, 0n, 'nothing was appended by the rejected batches');
});

test('idempotent produce: a resent batch gets its original offset; stale epoch and gaps are refused', async (t) => {
  const { client } = await setup(t);
  const init = await client.request(22, 4, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 });
  assert.equal(init.errorCode, 0);
  const producerId = init.producerId as bigint;
  assert.ok(producerId >= 0n);
  assert.equal(init.producerEpoch, 0);
  const send = async (values: string[], baseSequence: number, producerEpoch = 0) =>
    firstPartition(await client.request(0, 9, produceBody('idem', 0, batchOf(values, { producerId, producerEpoch, baseSequence }))));
  assert.equal((await send(['a', 'b'], 0)).baseOffset, 0n);
  assert.equal((await send(['c'], 2)).baseOffset, 2n);
  const dup = await send(['a', 'b'], 0);
  assert.deepEqual([dup.errorCode, dup.baseOffset], [0, 0n]);
  assert.equal((await send(['z'], 9)).errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  // Without a transactional id, Kafka never hands back the id a client presents: re-initialising gives a
  // fresh id at epoch 0, so no client can take over another producer's sequence state.
  const again = await client.request(22, 4, { transactionalId: null, transactionTimeoutMs: 60000, producerId, producerEpoch: 0 });
  assert.equal(again.errorCode, 0);
  assert.notEqual(again.producerId, producerId);
  assert.equal(again.producerEpoch, 0);
  // A batch with a newer epoch starts a new sequence at 0; the older epoch is then fenced.
  assert.equal((await send(['d'], 0, 1)).baseOffset, 3n);
  assert.equal((await send(['e'], 1, 0)).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  const other = await client.request(22, 1, { transactionalId: null, transactionTimeoutMs: 60000 });
  assert.notEqual(other.producerId, producerId, 'a new producer gets a new id');
});

test('InitProducerId with a transactional id gets an id from the transaction coordinator; the same id again bumps the epoch', async (t) => {
  const { client } = await setup(t);
  const r = await client.request(22, 4, { transactionalId: 'tx-1', transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 });
  assert.equal(r.errorCode, ErrorCode.NONE);
  assert.equal(r.producerEpoch, 0);
  const again = await client.request(22, 4, { transactionalId: 'tx-1', transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 });
  assert.deepEqual([again.errorCode, again.producerId, again.producerEpoch], [ErrorCode.NONE, r.producerId, 1]);
});

test('pipelined produce requests of large batches are stored exactly, and read back, while request and record-set memory is reused', async (t) => {
  const { broker, client } = await setup(t);
  const values = Array.from({ length: 40 }, () => Array.from({ length: 3 }, () => randomBytes(75_000).toString('base64')));
  const produce = (from: number, to: number) => Promise.all(values.slice(from, to).map((v) => client.request(0, 9, produceBody('big', 0, batchOf(v), 1))));
  // The first request creates the topic; then many are in flight at once on one connection, each ~300 KB
  // (written to the log on the thread pool, so a request's memory is in use while later ones arrive).
  assert.equal(firstPartition((await produce(0, 1))[0] ?? {}).errorCode, 0);
  for (const r of [...(await produce(1, 20)), ...(await produce(20, 40))]) assert.equal(firstPartition(r).errorCode, 0);
  const stored = await readAll(client, 'big', 0);
  assert.deepEqual(
    stored.map(([, v]) => v),
    values.flat(),
  );
  const metrics = await (await fetch(`${broker.adminUrl}/metrics`)).text();
  for (const pool of ['requests', 'record_sets']) {
    const reused = Number(new RegExp(`^floe_buffers_total\\{pool="${pool}",source="reused"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
    assert.ok(reused > 0, `${pool} memory was reused (${reused} times)`);
  }
});
