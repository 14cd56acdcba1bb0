// kill -9 of the broker (dist/broker/main.js, FLOE_TIERING_CRASH_AT) around the table commit of segments that
// hold aborted transactions: after the restart the table still holds exactly the committed records. The
// expected records come from the log itself (every data record, resolved by the commit and abort markers
// that follow it, as Kafka's read_committed does), so a transaction the crash left unfinished counts however
// the coordinator settled it; the ones the producer saw commit or abort must be there or absent. A last case
// kills the broker right after it committed a segment holding a transaction still open (its rows hidden as
// undecided): the restart aborts that transaction, and the table never shows its rows.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { decodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { spawnBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { latestProperty, loadTable, waitFor } from '../../helpers/tiered-table.js';
import { readWithDuckDB, readWithIcebird } from '../../tiering/e2e/table-readers.js';
import { fetchBody, fetchPartitions, WireClient } from '../handlers/wire-client.js';

const TOPIC = 'txn-crashy';
const PAD = 'x'.repeat(60);

function flags(warehouse: string): string[] {
  return [
    '--remote.log.storage.system.enable=true',
    `--iceberg.warehouse=${warehouse}`,
    '--iceberg.rest.port=0',
    '--iceberg.rest.host=127.0.0.1',
    '--log.retention.check.interval.ms=200',
    '--transaction.abort.timed.out.transaction.cleanup.interval.ms=200',
  ];
}

async function stop(p: BrokerProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  await p.exited;
}

/** Transactions of 3 records (every third aborted) until the broker dies; what the producer saw end. */
async function produceUntilDeath(bootstrap: string): Promise<{ committed: Set<string>; aborted: Set<string> }> {
  const committed = new Set<string>();
  const aborted = new Set<string>();
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'txn-crash', logLevel: logLevel.NOTHING, retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic: TOPIC, numPartitions: 1, configEntries: [
      { name: 'internal.segment.bytes', value: '2048' },
      { name: 'local.retention.bytes', value: '0' },
      { name: 'iceberg.commit.interval.ms', value: '300' },
    ] }],
  });
  await admin.disconnect();
  // A short timeout: a transaction the crash leaves open is aborted soon after the restart.
  const producer = kafka.producer({ transactionalId: 'txn-crash', maxInFlightRequests: 1, idempotent: true, transactionTimeout: 1000, retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 } });
  await producer.connect();
  try {
    for (let n = 0; n < 5000; n++) {
      const keys = Array.from({ length: 3 }, (_, i) => `t${n}-${i}`);
      const txn = await producer.transaction();
      await txn.send({ topic: TOPIC, messages: keys.map((key) => ({ key, value: `${key}-${PAD}` })) });
      if (n % 3 === 1) {
        await txn.abort();
        for (const k of keys) aborted.add(k);
      } else {
        await txn.commit();
        for (const k of keys) committed.add(k);
      }
    }
  } catch {
    // The broker died.
  }
  await producer.disconnect().catch(() => undefined);
  return { committed, aborted };
}

/** Data records of partition 0 resolved by their markers: committed keys, aborted keys, and undecided ones. */
async function resolveLog(c: WireClient): Promise<{ committed: Set<string>; aborted: Set<string>; undecided: number }> {
  const committed = new Set<string>();
  const aborted = new Set<string>();
  const pending = new Map<bigint, string[]>();
  let offset = 0n;
  for (;;) {
    const p = fetchPartitions(await c.request(1, 12, fetchBody(TOPIC, [{ partition: 0, fetchOffset: offset }], { isolationLevel: 0 })))[0];
    assert.ok(p && p.errorCode === 0, `fetch at ${offset}`);
    const buf = p.records ?? Buffer.alloc(0);
    let next = offset;
    for (const b of iterateBatches(buf)) {
      next = b.lastOffset + 1n;
      const batch = decodeRecordBatch(buf, b.start);
      if (batch.baseOffset < offset) continue;
      if (batch.isControl) {
        const kind = batch.control?.kind;
        for (const k of pending.get(batch.producerId) ?? []) (kind === 'commit' ? committed : aborted).add(k);
        pending.delete(batch.producerId);
        continue;
      }
      const keys = batch.records.map((r) => r.key?.toString() ?? '');
      if (batch.isTransactional) pending.set(batch.producerId, [...(pending.get(batch.producerId) ?? []), ...keys]);
      else for (const k of keys) committed.add(k);
    }
    if (next === offset) break;
    offset = next;
  }
  return { committed, aborted, undecided: [...pending.values()].reduce((n, l) => n + l.length, 0) };
}

for (const point of ['mid-upload:1', 'before-commit:1', 'mid-commit:1', 'after-commit:1']) {
  const name = point.split(':')[0] as string;
  test(`killed at ${name} while tiering aborted transactions: after the restart the table hides them`, { timeout: 120_000 }, async (t) => {
    const root = await tempDir('floe-txn-crash-');
    const cleanups: (() => Promise<unknown>)[] = [];
    t.after(async () => {
      for (const c of cleanups.reverse()) await c().catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    });
    const logDir = join(root, 'log');
    const warehouse = join(root, 'warehouse');
    const first = await spawnBroker(logDir, flags(warehouse), 0, { env: { ...process.env, FLOE_TIERING_CRASH_AT: point } });
    cleanups.push(() => stop(first));
    const seen = await produceUntilDeath(first.bootstrap);
    const ended = await first.ended;
    assert.equal(ended.signal, 'SIGKILL', `the broker died by SIGKILL:\n${first.output()}`);
    assert.match(first.output(), new RegExp(`FLOE_TIERING_CRASH ${name} 1\\n`), `it died at ${name}`);
    assert.ok(seen.aborted.size > 0 && seen.committed.size > 0, 'transactions committed and aborted before the crash');

    const second = await spawnBroker(logDir, flags(warehouse));
    cleanups.push(() => stop(second));
    const restUrl = second.restUrl;
    assert.ok(restUrl);
    const c = await WireClient.connect(second.port);
    cleanups.push(async () => c.close());
    // The coordinator settles what the crash left open (commit, or abort after the 1 s timeout).
    const log = await waitFor('every transaction to be settled', async () => {
      const r = await resolveLog(c);
      return r.undecided === 0 ? r : undefined;
    });
    const end = Number(fetchPartitions(await c.request(1, 12, fetchBody(TOPIC, [{ partition: 0, fetchOffset: 0n }])))[0]?.highWatermark ?? 0);
    // Tiering catches up to the log end (the active segment rolls every commit interval).
    await waitFor('the table to reach the log end', async () => {
      const load = await loadTable(restUrl, TOPIC);
      return load !== undefined && Number(latestProperty(load, 'floe.kafka.committed-offset.0') ?? -1) >= end - 1 ? true : undefined;
    });
    const io = new LocalFileIO({ root: warehouse, fsync: false });
    cleanups.push(() => io.close());
    const duck = (await readWithDuckDB(t, restUrl, io, ['kafka'], TOPIC)).map((r) => r.key?.toString() ?? '').sort();
    const icebird = (await readWithIcebird(restUrl, io, ['kafka'], TOPIC)).map((r) => (r.key === null ? '' : Buffer.from(r.key as Buffer).toString())).sort();
    const want = [...log.committed].sort();
    assert.deepEqual(duck, want, 'DuckDB: exactly the committed records');
    assert.deepEqual(icebird, want, 'icebird: exactly the committed records');
    for (const k of seen.committed) assert.ok(log.committed.has(k), `${k} was committed`);
    for (const k of seen.aborted) assert.ok(log.aborted.has(k), `${k} was aborted`);
    t.diagnostic(`${point}: ${log.committed.size} committed, ${log.aborted.size} aborted records; log end ${end}`);
  });
}

test('killed after committing a segment whose transaction is still open: after the restart that transaction is aborted and its rows stay hidden', { timeout: 120_000 }, async (t) => {
  const root = await tempDir('floe-txn-crash-open-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const logDir = join(root, 'log');
  const warehouse = join(root, 'warehouse');
  const first = await spawnBroker(logDir, flags(warehouse), 0, { env: { ...process.env, FLOE_TIERING_CRASH_AT: 'after-commit:1' } });
  cleanups.push(() => stop(first));
  const kafka = new Kafka({ brokers: [first.bootstrap], clientId: 'txn-crash-open', logLevel: logLevel.NOTHING, retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1, configEntries: [{ name: 'internal.segment.bytes', value: '1024' }, { name: 'iceberg.commit.interval.ms', value: '300' }] }] });
  await admin.disconnect();
  // The open transaction writes first, so every segment (the first committed one too) holds its rows.
  const open = kafka.producer({ transactionalId: 'txn-open', maxInFlightRequests: 1, idempotent: true, transactionTimeout: 60_000, retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 } });
  await open.connect();
  const pending = await open.transaction();
  const openKeys = Array.from({ length: 40 }, (_, i) => `open-${i}`);
  await pending.send({ topic: TOPIC, messages: openKeys.slice(0, 4).map((key) => ({ key, value: `${key}-${PAD}` })) });
  const seen = await (async () => {
    const committed = new Set<string>();
    const plain = kafka.producer({ retry: { retries: 0 } });
    await plain.connect().catch(() => undefined);
    try {
      for (let n = 0; n < 2000; n++) {
        const key = `plain-${n}`;
        await plain.send({ topic: TOPIC, messages: [{ key, value: `${key}-${PAD}` }] });
        committed.add(key);
        if (n % 4 === 0 && n / 4 + 4 < openKeys.length) {
          const k = openKeys[n / 4 + 4] as string;
          await pending.send({ topic: TOPIC, messages: [{ key: k, value: `${k}-${PAD}` }] });
        }
      }
    } catch {
      // The broker died.
    }
    await plain.disconnect().catch(() => undefined);
    await open.disconnect().catch(() => undefined);
    return committed;
  })();
  const ended = await first.ended;
  assert.equal(ended.signal, 'SIGKILL', `the broker died by SIGKILL:\n${first.output()}`);
  assert.match(first.output(), /FLOE_TIERING_CRASH after-commit 1\n/);
  assert.ok(seen.size > 0);

  // The restart aborts the transaction the crash left open; a later commit settles its rows as aborted.
  const second = await spawnBroker(logDir, flags(warehouse));
  cleanups.push(() => stop(second));
  const restUrl = second.restUrl;
  assert.ok(restUrl);
  const c = await WireClient.connect(second.port);
  cleanups.push(async () => c.close());
  const log = await waitFor('every transaction to be settled', async () => {
    const r = await resolveLog(c);
    return r.undecided === 0 ? r : undefined;
  });
  assert.ok([...log.aborted].some((k) => k.startsWith('open-')), 'the open transaction was aborted');
  const end = Number(fetchPartitions(await c.request(1, 12, fetchBody(TOPIC, [{ partition: 0, fetchOffset: 0n }])))[0]?.highWatermark ?? 0);
  await waitFor('the table to reach the log end', async () => {
    const load = await loadTable(restUrl, TOPIC);
    return load !== undefined && Number(latestProperty(load, 'floe.kafka.committed-offset.0') ?? -1) >= end - 1 ? true : undefined;
  });
  const io = new LocalFileIO({ root: warehouse, fsync: false });
  cleanups.push(() => io.close());
  const want = [...log.committed].sort();
  assert.deepEqual((await readWithDuckDB(t, restUrl, io, ['kafka'], TOPIC)).map((r) => r.key?.toString() ?? '').sort(), want, 'DuckDB: exactly the committed records');
  assert.deepEqual((await readWithIcebird(restUrl, io, ['kafka'], TOPIC)).map((r) => (r.key === null ? '' : Buffer.from(r.key as Buffer).toString())).sort(), want, 'icebird: exactly the committed records');
  for (const k of seen) assert.ok(log.committed.has(k), `${k} was acknowledged`);
});
