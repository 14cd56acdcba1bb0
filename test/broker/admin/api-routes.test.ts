// The admin JSON API against a real broker with a tiered topic: topics and tables with their lag and
// files, one table's snapshots, compaction and expiry on demand, topic configs read and altered with the
// same validation as IncrementalAlterConfigs (checked against kafkajs' describeConfigs), and the errors:
// 404 unknown table/topic, 400 bad bodies and invalid configs, 405, 413.
import { test } from 'node:test';
import { waitFor } from '../../helpers/tiered-table.js';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import kafkajs from 'kafkajs';

const { Kafka, logLevel, ConfigResourceTypes } = kafkajs;
import { startBroker, tempDir } from '../../helpers/broker.js';

async function call(url: string, method = 'GET', body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const res = await fetch(url, init);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

test('the admin JSON API shows topics and tables, runs maintenance and alters configs, with JSON errors', { timeout: 120_000 }, async (t) => {
  const root = await tempDir('floe-api-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const b = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--iceberg.commit.interval.ms=500']);
  cleanups.push(() => b.stop());
  const api = `${b.adminUrl ?? ''}/api`;
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-api', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2, configEntries: [{ name: 'internal.segment.bytes', value: '2048' }] }, { topic: 'plain', numPartitions: 1, configEntries: [{ name: 'remote.storage.enable', value: 'false' }, { name: 'iceberg.enabled', value: 'false' }] }] });
  const producer = kafka.producer();
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  for (let round = 0; round < 4; round++) {
    await producer.send({ topic: 'orders', messages: Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, key: i % 4 === 0 ? null : `k${i}`, value: `v${round}-${i}`.padEnd(100, '.') })) });
  }

  const tables = await waitFor('both partitions committed', async () => {
    const r = await call(`${api}/tables`);
    const list = r.json.tables as { topic: string; table: string; records: number; dataFiles: number; snapshots: number; lagRecords: number }[];
    const orders = list.find((x) => x.topic === 'orders');
    return orders !== undefined && orders.records === 80 && orders.lagRecords === 0 ? list : undefined;
  });
  assert.deepEqual(tables.map((x) => x.topic), ['orders'], 'only tiered topics have tables');
  const orders = tables[0];
  assert.equal(orders?.table, 'kafka.orders');
  assert.ok((orders?.dataFiles ?? 0) >= 2 && (orders?.snapshots ?? 0) >= 1);

  const topics = (await call(`${api}/topics`)).json.topics as { name: string; tiered: boolean; partitions: { partition: number; logEndOffset: number; committedOffset?: number; lagRecords?: number }[] }[];
  assert.deepEqual(topics.map((x) => [x.name, x.tiered]), [['orders', true], ['plain', false]]);
  assert.deepEqual(topics[0]?.partitions.map((p) => [p.partition, p.logEndOffset, p.committedOffset, p.lagRecords]), [[0, 40, 39, 0], [1, 40, 39, 0]]);

  for (const name of ['kafka.orders', 'orders']) {
    const detail = await call(`${api}/tables/${encodeURIComponent(name)}`);
    assert.equal(detail.status, 200, name);
    assert.equal(detail.json.table, 'kafka.orders');
    const snaps = detail.json.snapshots as { snapshotId: string; current: boolean; committedOffsets: Record<string, number> }[];
    assert.equal(snaps.filter((s) => s.current).length, 1);
    assert.deepEqual(snaps.find((s) => s.current)?.committedOffsets, { 0: 39, 1: 39 });
  }
  const unknown = await call(`${api}/tables/kafka.nope`);
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.error, 'unknown_table');
  assert.match(String(unknown.json.message), /kafka\.orders/, 'the message names the tables there are');
  assert.equal((await call(`${api}/tables/plain`)).status, 404, 'an untiered topic has no table');

  // Null keys counted at conversion (a quarter of the keys were null, no value was): shown once sampled.
  const quality = await waitFor('the quality signals to be sampled', async () => {
    const q = ((await call(`${api}/tables/orders`)).json.quality ?? {}) as { nullKeyShareBaseline?: number; nullValueShareBaseline?: number };
    return q.nullKeyShareBaseline !== undefined ? q : undefined;
  });
  assert.equal(quality.nullKeyShareBaseline, 0.25);
  assert.equal(quality.nullValueShareBaseline, 0);

  // Compaction on demand merges the small files of each partition; expiry answers with its counts.
  const compacted = await call(`${api}/tables/kafka.orders/compact`, 'POST', { minInputFiles: 2 });
  assert.equal(compacted.status, 200, JSON.stringify(compacted.json));
  const results = compacted.json.results as { partition: number; status: string }[];
  assert.deepEqual(results.map((r) => [r.partition, r.status]), [[0, 'compacted'], [1, 'compacted']]);
  const after = (await call(`${api}/tables/orders`)).json as { dataFiles: number; records: number };
  assert.equal(after.records, 80);
  assert.equal(after.dataFiles, 2, 'one file per partition after compaction');
  const noPartition = await call(`${api}/tables/orders/compact`, 'POST', { partition: 7 });
  assert.deepEqual([noPartition.status, noPartition.json.error], [404, 'unknown_partition']);
  const expired = await call(`${api}/tables/orders/expire`, 'POST');
  assert.equal(expired.status, 200);
  assert.equal(typeof expired.json.expiredSnapshots, 'number');

  // Configs: effective values with their source; PUT validates exactly as IncrementalAlterConfigs does.
  const got = await call(`${api}/configs/topics/orders`);
  const cfg = got.json.configs as Record<string, { value: string; source: string }>;
  assert.deepEqual(cfg['internal.segment.bytes'], { value: '2048', source: 'topic' });
  assert.equal(cfg['retention.ms']?.source, 'default');
  const bad = await call(`${api}/configs/topics/orders`, 'PUT', { set: { 'retention.ms': 'soon' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error, 'invalid_config');
  const kafkaBad = await admin.alterConfigs({ validateOnly: true, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'orders', configEntries: [{ name: 'retention.ms', value: 'soon' }] }] }).then(() => 'accepted', (e: Error) => e.message);
  assert.notEqual(kafkaBad, 'accepted', 'Kafka\'s AlterConfigs refuses it too');
  assert.equal((await call(`${api}/configs/topics/orders`, 'PUT', { set: { 'no.such.config': '1' } })).status, 400);
  const ok = await call(`${api}/configs/topics/orders`, 'PUT', { set: { 'retention.ms': '86400000' }, delete: ['internal.segment.bytes'] });
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'orders', configNames: ['retention.ms'] }] });
  assert.equal(described.resources[0]?.configEntries.find((e) => e.configName === 'retention.ms')?.configValue, '86400000', 'a Kafka client sees the change');
  const now = (await call(`${api}/configs/topics/orders`)).json.configs as Record<string, { value: string; source: string }>;
  assert.notEqual(now['internal.segment.bytes']?.source, 'topic', 'the override is gone');
  assert.deepEqual(now['retention.ms'], { value: '86400000', source: 'topic' });
  assert.deepEqual(Object.values(await call(`${api}/configs/topics/nope`)).map((v) => (typeof v === 'number' ? v : (v as { error: string }).error)), [404, 'unknown_topic']);
  assert.equal((await call(`${api}/configs/topics/nope`, 'PUT', { set: { 'retention.ms': '1' } })).status, 404);

  // Bodies and methods.
  const notJson = await call(`${api}/configs/topics/orders`, 'PUT', '{nope');
  assert.deepEqual([notJson.status, notJson.json.error], [400, 'bad_request']);
  assert.equal((await call(`${api}/configs/topics/orders`, 'PUT', { set: { 'retention.ms': 5 } })).status, 400);
  assert.equal((await call(`${api}/configs/topics/orders`, 'PUT', {})).status, 400);
  const wrong = await call(`${api}/tables/orders/compact`, 'GET');
  assert.deepEqual([wrong.status, wrong.json.error], [405, 'method_not_allowed']);
  const big = await call(`${api}/configs/topics/orders`, 'PUT', { set: { 'retention.ms': 'x'.repeat(2 * 1024 * 1024) } });
  assert.deepEqual([big.status, big.json.error], [413, 'body_too_large']);
  const hideBad = await call(`${api}/tables/orders/hide`, 'POST', { partition: 0, fromOffset: 5 });
  assert.deepEqual([hideBad.status, hideBad.json.error], [400, 'bad_request']);
});
