// The partition's log start when part of it lives in the table: ListOffsets by timestamp below the local log
// start is answered from the table; DeleteRecords below the local log start moves the remote log start (whole
// segments below it leave the table), and above it hides the table's history altogether; deleting a topic
// drops its table with its files (Kafka deletes a deleted topic's data).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { access, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir, type TestBroker } from '../../helpers/broker.js';
import { kcatRead, loadTable, waitFor } from '../../helpers/tiered-table.js';

const T = 1_700_000_000_000;

/** Files (not folders) under `dir`, recursively; empty when it is gone. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((d) => d.isFile()).map((d) => d.name);
}

interface Env {
  b: TestBroker;
  kafka: Kafka;
  warehouse: string;
  cleanups: (() => Promise<unknown>)[];
}

async function env(t: { after: (fn: () => Promise<void>) => void }, restPort: string, flags: readonly string[] = []): Promise<Env> {
  const root = await tempDir('floe-remote-start-');
  const cleanups: (() => Promise<unknown>)[] = [];
  // One hook, newest first: clients and the broker stop before the folders are removed.
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const warehouse = join(root, 'warehouse');
  const b = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, `--iceberg.rest.port=${restPort}`, '--iceberg.rest.host=127.0.0.1', '--log.retention.check.interval.ms=3600000', ...flags], { dataDir: join(root, 'log') });
  cleanups.push(() => b.stop());
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'remote-start', logLevel: logLevel.NOTHING });
  return { b, kafka, warehouse, cleanups };
}

/** 60 records at offsets 0..59 with timestamps T + offset * 1000, all committed, local segments handed off but the last ones. */
async function tieredTopic(e: Env, topic: string): Promise<number> {
  const admin = e.kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: [
    { name: 'internal.segment.bytes', value: '1024' },
    { name: 'local.retention.bytes', value: '2048' },
    { name: 'retention.ms', value: '-1' },
    { name: 'iceberg.commit.interval.ms', value: '3600000' },
    // Table compaction would merge these tiny files meanwhile and lease them while it does; DeleteRecords
    // then leaves a leased file to the next maintenance run, which the file checks here do not wait for.
    { name: 'iceberg.compaction.enabled', value: 'false' },
  ] }] });
  await admin.disconnect();
  const producer = e.kafka.producer();
  await producer.connect();
  for (let i = 0; i < 12; i++) {
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 5 }, (_, j) => ({ key: `k${i * 5 + j}`, value: `v${i * 5 + j}-${'z'.repeat(50)}`, timestamp: String(T + (i * 5 + j) * 1000) })) });
  }
  await producer.disconnect();
  const log = e.b.broker.services.logs.get(topic, 0);
  assert.ok(log);
  await log.roll();
  await e.b.broker.services.tiering?.drain();
  await log.enforceRetention();
  return log.logStartOffset;
}

test('ListOffsets by timestamp below the local log start, and DeleteRecords moving the remote log start', { timeout: 60_000 }, async (t) => {
  const e = await env(t, '-1');
  const topic = 'trim';
  const localStart = await tieredTopic(e, topic);
  assert.ok(localStart > 20, `local segments were handed off (local log start ${localStart})`);
  const tiering = e.b.broker.services.tiering;
  assert.ok(tiering);
  const admin = e.kafka.admin();
  await admin.connect();
  e.cleanups.push(() => admin.disconnect());

  const byTime = async (ts: number) => (await admin.fetchTopicOffsetsByTimestamp(topic, ts))[0]?.offset;
  assert.equal(await byTime(T + 7_500), '8', 'the first record at or after the timestamp, found in the table');
  assert.equal(await byTime(T), '0');
  assert.equal(await byTime(T + (localStart + 2) * 1000), String(localStart + 2), 'above the local log start: the local log answers');
  assert.equal(await byTime(T + 1_000_000), '60', 'after every record: none (-1, which kafkajs turns into the high watermark)');

  const remoteSegments = () => tiering.plugin.metadata.listRemoteLogSegments({ topic, partition: 0 });
  const filesBefore = remoteSegments().flatMap((s) => s.dataFiles);
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '13' }] });
  const [low] = await admin.fetchTopicOffsets(topic);
  assert.equal(low?.low, '13', 'the log start is now 13, though 13 is below the local log start');
  assert.ok(remoteSegments().every((s) => s.lastOffset >= 13), 'segments wholly below 13 left the table');
  const gone = filesBefore.filter((f) => !remoteSegments().some((s) => s.dataFiles.includes(f)));
  assert.ok(gone.length > 0, 'some data files were removed');
  for (const f of gone) await assert.rejects(access(fileURLToPath(f)), 'a removed data file is deleted from the warehouse');
  assert.deepEqual((await kcatRead(e.b.bootstrap, topic, 0, 13)).map((r) => r.offset), Array.from({ length: 47 }, (_, i) => 13 + i), 'reads from the new start: Parquet, then the local log');
  assert.equal(await byTime(T), '13', 'timestamps before the log start answer the log start');

  // Past the local log start: the table's history is hidden altogether.
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(localStart + 3) }] });
  const [after] = await admin.fetchTopicOffsets(topic);
  assert.equal(after?.low, String(localStart + 3));
  assert.deepEqual(remoteSegments().filter((s) => s.lastOffset < localStart + 3), [], 'no remote segment below the new start');
  assert.equal(await byTime(T), String(localStart + 3));
  assert.equal((await kcatRead(e.b.bootstrap, topic, 0, localStart + 3))[0]?.offset, localStart + 3);
});

test('deleting a topic drops its table and purges its files', { timeout: 60_000 }, async (t) => {
  const e = await env(t, '0');
  const topic = 'doomed';
  await tieredTopic(e, topic);
  const url = e.b.broker.services.tiering?.restCatalogUrl?.replace('0.0.0.0', '127.0.0.1');
  assert.ok(url);
  const load = await loadTable(url, topic);
  assert.ok(load, 'the topic is a table');
  const location = fileURLToPath((load['metadata'] as { location: string }).location);
  assert.ok((await filesUnder(location)).some((f) => f.endsWith('.parquet')), 'data files in the table folder');

  const admin = e.kafka.admin();
  await admin.connect();
  e.cleanups.push(() => admin.disconnect());
  await admin.deleteTopics({ topics: [topic] });
  await waitFor('the table to be dropped', async () => ((await loadTable(url, topic)) === undefined ? true : undefined), 10_000, 20);
  await waitFor('the table\'s files to be purged', async () => ((await filesUnder(location)).length === 0 ? true : undefined), 10_000, 20);

  // A topic of the same name starts afresh: a new table, offsets from 0.
  const producer = e.kafka.producer();
  await producer.connect();
  e.cleanups.push(() => producer.disconnect());
  const [meta] = await producer.send({ topic, acks: -1, messages: [{ value: 'reborn' }] });
  assert.equal(meta?.baseOffset, '0');
  const uuid = (l: Record<string, unknown>) => (l['metadata'] as { 'table-uuid': string })['table-uuid'];
  const reborn = await waitFor('a new table for the new topic', async () => loadTable(url, topic), 10_000, 20);
  assert.notEqual(uuid(reborn), uuid(load), 'a new table, not the old one');
});

test('with iceberg.delete.on.topic.delete=false a deleted topic keeps its table and files, and a new topic of that name continues after it', { timeout: 60_000 }, async (t) => {
  const e = await env(t, '0', ['--iceberg.delete.on.topic.delete=false']);
  const topic = 'kept';
  await tieredTopic(e, topic);
  const url = e.b.broker.services.tiering?.restCatalogUrl?.replace('0.0.0.0', '127.0.0.1');
  assert.ok(url);
  const load = await loadTable(url, topic);
  assert.ok(load, 'the topic is a table');
  const location = fileURLToPath((load['metadata'] as { location: string }).location);
  // Files the local FileIO has in flight (a write's temporary, a lock) come and go with background work such
  // as compaction: only the table's own files must stay.
  const inFlight = (f: string) => f.startsWith('.floe-tmp-') || f.endsWith('.floe-lock');
  const before = (await filesUnder(location)).filter((f) => !inFlight(f));

  const admin = e.kafka.admin();
  await admin.connect();
  e.cleanups.push(() => admin.disconnect());
  await admin.deleteTopics({ topics: [topic] });
  await waitFor('the topic to be gone', async () => (!(await admin.listTopics()).includes(topic) ? true : undefined), 10_000, 20);
  const kept = await loadTable(url, topic);
  assert.ok(kept, 'the table is still in the catalog');
  const uuid = (l: Record<string, unknown>) => (l['metadata'] as { 'table-uuid': string })['table-uuid'];
  assert.equal(uuid(kept), uuid(load));
  const after = new Set(await filesUnder(location));
  assert.deepEqual(before.filter((f) => !after.has(f)), [], 'no file of the table was deleted');

  // The same name again: the table's history stays, and the new log continues after its last offset.
  const producer = e.kafka.producer();
  await producer.connect();
  e.cleanups.push(() => producer.disconnect());
  const [meta] = await producer.send({ topic, acks: -1, messages: [{ value: 'again' }] });
  assert.ok(Number(meta?.baseOffset) > 0, `offset ${meta?.baseOffset} continues after the kept table`);
});
