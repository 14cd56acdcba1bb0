import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedMetadataStore } from '../../../broker/metadata/embedded-metadata-store.js';
import { MetadataError } from '../../../broker/metadata/metadata-store.js';

async function tempDir(t: { after: (fn: () => Promise<void>) => void }) {
  const dir = await mkdtemp(join(tmpdir(), 'floe-meta-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('topics, ids, configs and producer ids survive reopening', async (t) => {
  const dir = await tempDir(t);
  const a = await EmbeddedMetadataStore.open(dir);
  const orders = await a.createTopic('orders', 3, { 'retention.ms': '1000' });
  await a.createTopic('users', 1, {});
  await a.setPartitionCount('orders', 6);
  await a.alterTopicConfigs('orders', { 'retention.ms': null, 'segment.bytes': '1048576' });
  await a.deleteTopic('users');
  const pids = [await a.allocateProducerId(), await a.allocateProducerId()];
  await a.close();

  const b = await EmbeddedMetadataStore.open(dir);
  assert.equal(b.clusterId, a.clusterId);
  assert.deepEqual(
    b.listTopics().map((x) => x.name),
    ['orders'],
  );
  const reopened = b.getTopic('orders');
  assert.ok(reopened);
  assert.ok(reopened.id.equals(orders.id));
  assert.equal(reopened.id.length, 16);
  assert.equal(reopened.partitions, 6);
  assert.deepEqual(reopened.configs, { 'segment.bytes': '1048576' });
  assert.equal(b.getTopicById(orders.id)?.name, 'orders');
  const next = await b.allocateProducerId();
  assert.ok(pids.every((p) => next > p), 'producer ids are never reused across restarts');
});

test('errors carry codes', async (t) => {
  const dir = await tempDir(t);
  const s = await EmbeddedMetadataStore.open(dir);
  await s.createTopic('x', 1, {});
  await assert.rejects(s.createTopic('x', 1, {}), (e: unknown) => e instanceof MetadataError && e.code === 'TOPIC_EXISTS');
  await assert.rejects(s.deleteTopic('nope'), (e: unknown) => e instanceof MetadataError && e.code === 'UNKNOWN_TOPIC');
});

test('a corrupt metadata file is a clear error, not an empty cluster', async (t) => {
  const dir = await tempDir(t);
  await (await EmbeddedMetadataStore.open(dir)).close();
  await writeFile(join(dir, '__cluster_metadata', 'metadata.json'), '{ torn');
  await assert.rejects(EmbeddedMetadataStore.open(dir), /cannot read cluster metadata/);
});

test('concurrent changes are serialized', async (t) => {
  const dir = await tempDir(t);
  const s = await EmbeddedMetadataStore.open(dir);
  await Promise.all(Array.from({ length: 20 }, (_, i) => s.createTopic(`t${i}`, 1, {})));
  const ids = await Promise.all(Array.from({ length: 50 }, () => s.allocateProducerId()));
  assert.equal(new Set(ids).size, 50);
  const again = await EmbeddedMetadataStore.open(dir);
  assert.equal(again.listTopics().length, 20);
});
