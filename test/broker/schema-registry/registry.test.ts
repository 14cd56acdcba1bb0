// The registry as a broker service: off with -1 (no _schemas topic), a clear start-up error when its port is
// taken, and a replay that spans many log reads (schemas larger than one read of the log).
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { SCHEMAS_TOPIC } from '../../../broker/schema-registry/schema-log.js';
import { registryClient } from './registry-http.js';

test('schema.registry.port=-1 runs no registry and creates no _schemas topic', async (t) => {
  const b = await startBroker(['--schema.registry.port=-1']);
  t.after(() => b.stop());
  assert.equal(b.broker.schemaRegistryPort, undefined);
  assert.equal(b.broker.services.topics.getTopic(SCHEMAS_TOPIC), undefined);
});

test('a taken port fails the start with a message naming schema.registry.port, and the data dir stays usable', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  const port = (blocker.address() as { port: number }).port;
  const dir = await tempDir('floe-registry-port-');
  await assert.rejects(startBroker([`--schema.registry.port=${port}`, '--schema.registry.host=127.0.0.1'], { dataDir: dir }), /schema registry on 127\.0\.0\.1:\d+ .*schema\.registry\.port/);
  const again = await startBroker(['--schema.registry.port=0', '--schema.registry.host=127.0.0.1'], { dataDir: dir });
  // node:test runs after-hooks in the order they were added: the broker stops before its folder goes.
  t.after(() => again.stop());
  t.after(() => rm(dir, { recursive: true, force: true }));
  assert.ok(again.broker.schemaRegistryPort);
});

test('a replay of many megabytes of schemas reads the whole log', { timeout: 60_000 }, async (t) => {
  const dir = await tempDir('floe-registry-replay-');
  const flags = ['--schema.registry.port=0', '--schema.registry.host=127.0.0.1'];
  const first = await startBroker(flags, { dataDir: dir });
  const c1 = registryClient(`http://127.0.0.1:${first.broker.schemaRegistryPort}`);
  await c1.put('/config', { compatibility: 'NONE' });
  const big = (i: number) => ({ type: 'record', name: `Big${i}`, doc: String(i).repeat(700 * 1024), fields: [{ name: 'a', type: 'int' }] });
  for (let i = 0; i < 6; i++) assert.equal(await c1.register('big-value', big(i)), i + 1);
  const before = (await c1.get('/schemas')).text;
  await first.stop();

  const second = await startBroker(flags, { dataDir: dir });
  t.after(() => second.stop());
  t.after(() => rm(dir, { recursive: true, force: true }));
  const c2 = registryClient(`http://127.0.0.1:${second.broker.schemaRegistryPort}`);
  assert.equal((await c2.get('/schemas')).text, before, 'every schema after the restart');
  assert.deepEqual((await c2.get('/subjects/big-value/versions')).body, [1, 2, 3, 4, 5, 6]);
  assert.deepEqual((await c2.get('/config')).body, { compatibilityLevel: 'NONE' });
});

test('_schemas is one compacted partition that fsyncs every record before the append resolves', async (t) => {
  const plain = await startBroker(['--schema.registry.port=0', '--schema.registry.host=127.0.0.1']);
  t.after(() => plain.stop());
  const topic = plain.broker.services.topics.getTopic(SCHEMAS_TOPIC);
  assert.equal(topic?.partitions, 1);
  assert.deepEqual(topic?.configs, { 'cleanup.policy': 'compact', 'flush.messages': '1', 'iceberg.enabled': 'false' }, 'no table without tiering');
  assert.equal(plain.broker.services.logs.get(SCHEMAS_TOPIC, 0)?.topicConfig.flushMessages, 1);
});
