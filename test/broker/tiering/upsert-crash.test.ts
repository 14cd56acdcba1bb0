// kill -9 of a broker keeping an upsert table, at the points where the topic table and its `_latest` table
// disagree: the topic table's commit landed and the upsert table's did not start (after-commit), the upsert
// table's delete files are stored and its commit did not start (before-upsert-commit), and inside a commit
// of either (mid-commit). After a restart, `_latest` read by pyiceberg, icebird and DuckDB equals the table
// folded from what the log holds (read back with kcat), and every acknowledged event is in the log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { spawnBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { CdcStream, cdcTopicConfigs, type CdcEvent } from '../../helpers/cdc-stream.js';
import { kcatRead, upsertCaughtUp } from '../../helpers/tiered-table.js';
import { tableEntries } from '../../interop/transactions/table-entries.js';

const { Kafka, logLevel } = kafkajs;
const TOPIC = 'cdc-crash';
const PARTITIONS = 2;

async function stop(p: BrokerProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  await p.exited;
}

/** Sends the stream's events (acks=all, 20 a batch) until the broker dies or `sends` batches went; returns the acknowledged ones. */
async function produceUntilDeath(bootstrap: string, stream: CdcStream, sends: number): Promise<CdcEvent[]> {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'upsert-crash', logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS, configEntries: cdcTopicConfigs({ 'internal.segment.bytes': '4096', 'iceberg.commit.interval.ms': '200' }) }] });
  await admin.disconnect();
  const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
  await producer.connect();
  const acked: CdcEvent[] = [];
  for (let i = 0; i < sends; i++) {
    const events = stream.events(20);
    try {
      await producer.send({ topic: TOPIC, acks: -1, messages: events.map((e) => ({ key: e.key, value: e.value })) });
    } catch {
      break;
    }
    acked.push(...events);
    await new Promise((r) => setTimeout(r, 20));
  }
  await producer.disconnect().catch(() => undefined);
  return acked;
}

for (const point of ['after-commit:3', 'before-upsert-commit:3', 'mid-commit:5']) {
  test(`a broker killed at ${point.split(':')[0]} recovers its upsert table: equal to the log's events folded`, { timeout: 180_000 }, async (t) => {
    const root = await tempDir('floe-upsert-crash-');
    const logDir = join(root, 'log');
    const warehouse = join(root, 'warehouse');
    const flags = ['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1'];
    const brokers: BrokerProcess[] = [];
    t.after(async () => {
      for (const b of brokers) await stop(b).catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    });
    const first = await spawnBroker(logDir, flags, 0, { env: { ...process.env, FLOE_TIERING_CRASH_AT: point } });
    brokers.push(first);
    const stream = new CdcStream(31, 50);
    const acked = await produceUntilDeath(first.bootstrap, stream, 200);
    const ended = await Promise.race([first.exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 60_000))]);
    assert.ok(ended, `the broker died at ${point} (it was still running after the producer stopped)`);
    assert.equal(first.child.signalCode, 'SIGKILL', 'killed by SIGKILL');
    assert.match(first.output(), new RegExp(`FLOE_TIERING_CRASH ${point.replace(':', ' ')}\\n`), `it died at ${point}`);
    assert.ok(acked.length > 0, 'events were acknowledged before the crash');

    const second = await spawnBroker(logDir, flags);
    brokers.push(second);
    const restUrl = second.restUrl ?? '';
    // What the log holds, by partition in offset order (a key's events are all in one partition).
    const logged: CdcEvent[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      for (const r of await kcatRead(second.bootstrap, TOPIC, p, 0)) logged.push({ key: r.key === '' ? null : r.key, value: r.value === '' ? null : r.value });
    }
    const inLog = new Set(logged.map((e) => `${e.key}=${e.value}`));
    for (const e of acked) assert.ok(inLog.has(`${e.key}=${e.value}`), `acknowledged ${e.key}=${e.value} is in the log`);
    await upsertCaughtUp(restUrl, TOPIC, PARTITIONS, logged.length);
    const want = CdcStream.fold(logged);
    const io = new LocalFileIO({ root: warehouse, fsync: false });
    for (const [reader, rows] of Object.entries(await tableEntries(t, restUrl, io, `${TOPIC}_latest`))) {
      assert.deepEqual([...rows].sort(), want, `${reader} reads the upsert table folded from the log`);
    }
    t.diagnostic(`${point}: ${acked.length} acknowledged events, ${logged.length} in the log, ${want.length} rows`);
  });
}
