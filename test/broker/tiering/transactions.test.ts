// Transactions on a tiered topic: kafkajs commits and aborts transactions, the segments (data, commit and
// abort markers) go to the table and local retention deletes them; read_committed Fetch from offset 0 is
// then served from Parquet with the same aborted-transaction list as the hot log had, so a kafkajs
// read_committed consumer still sees exactly the committed records, and read_uncommitted sees all of them.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { consumeKeys } from '../../interop/transactions/verify.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { fetchBody, fetchPartitions, WireClient } from '../handlers/wire-client.js';

const TOPIC = 'tiered-txn';

/** read_committed Fetch from offset 0 to the end: every response's aborted list, and how many were served below `localStart`. */
async function sweep(c: WireClient, localStart: number): Promise<{ aborted: string[]; remoteResponses: number }> {
  const aborted: string[] = [];
  let remoteResponses = 0;
  let offset = 0n;
  for (;;) {
    const p = fetchPartitions(await c.request(1, 12, fetchBody(TOPIC, [{ partition: 0, fetchOffset: offset }], { isolationLevel: 1 })))[0];
    assert.ok(p && p.errorCode === 0, `fetch at ${offset}`);
    let next = offset;
    for (const batch of iterateBatches(p.records ?? Buffer.alloc(0))) next = batch.lastOffset + 1n;
    if (next === offset) break;
    if (offset < BigInt(localStart)) remoteResponses++;
    for (const a of (p.abortedTransactions ?? []) as { producerId: bigint; firstOffset: bigint }[]) aborted.push(`${offset}:${a.producerId}@${a.firstOffset}`);
    offset = next;
  }
  return { aborted, remoteResponses };
}

test('read_committed from tiered storage: the aborted list and the committed records are those of the hot log', async (t) => {
  const root = await tempDir('floe-warehouse-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const b = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--log.retention.check.interval.ms=3600000']);
  cleanups.push(() => b.stop());
  await b.broker.services.topics.createTopic(TOPIC, 1, -1, {
    'remote.storage.enable': 'true',
    'internal.segment.bytes': '1024',
    'local.retention.bytes': '0',
    'iceberg.commit.interval.ms': '3600000',
  });
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'tiered-txn', logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ transactionalId: 'tiered-tx', maxInFlightRequests: 1, idempotent: true });
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  const committed = new Set<string>();
  const aborted = new Set<string>();
  for (let n = 0; n < 24; n++) {
    const txn = await producer.transaction();
    const keys = Array.from({ length: 3 }, (_, i) => `t${n}-${i}`);
    await txn.send({ topic: TOPIC, messages: keys.map((key) => ({ key, value: `${key}-${'x'.repeat(60)}` })) });
    if (n % 3 === 1) {
      await txn.abort();
      for (const k of keys) aborted.add(k);
    } else {
      await txn.commit();
      for (const k of keys) committed.add(k);
    }
  }

  const c = await WireClient.connect(b.port);
  cleanups.push(async () => c.close());
  const hot = await sweep(c, 0);
  assert.equal(new Set(hot.aborted.map((a) => a.split(':')[1])).size, 8, 'eight aborted transactions in the hot log');

  const tiering = b.broker.services.tiering;
  assert.ok(tiering);
  await tiering.drain();
  const log = b.broker.services.logs.get(TOPIC, 0);
  assert.ok(log);
  assert.ok((await log.enforceRetention()) > 0, 'local segments were handed off');
  assert.ok(log.logStartOffset > 20, `most of the log is remote (local start ${log.logStartOffset})`);

  // The same fetches, now served from the table below the local log start, carry the same aborted lists.
  const tiered = await sweep(c, log.logStartOffset);
  assert.ok(tiered.remoteResponses > 5, `${tiered.remoteResponses} responses came from tiered storage`);
  assert.deepEqual(tiered.aborted, hot.aborted);

  const rc = await consumeKeys(kafka, TOPIC, { readUncommitted: false, until: committed });
  assert.deepEqual(rc.duplicates, []);
  assert.deepEqual(new Set(rc.seen), committed, 'read_committed across the tiered and local ranges');
  const ru = await consumeKeys(kafka, TOPIC, { readUncommitted: true, until: new Set([...committed, ...aborted]) });
  assert.deepEqual(new Set(ru.seen), new Set([...committed, ...aborted]));
});
