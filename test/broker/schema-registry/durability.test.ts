// The registry's state survives kill -9: a broker process (dist/broker/main.js) registers schemas, sets
// configs and modes, soft- and permanently deletes, and is killed with SIGKILL right after the last
// acknowledged change. Restarted on the same log dir, it serves every schema, id, version, config, mode and
// soft-delete state as before, and a new schema gets an id after the old maximum (also the permanently
// deleted one's).
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import { spawnBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { registryClient } from './registry-http.js';

const FLAGS = ['--schema.registry.port=0', '--schema.registry.host=127.0.0.1'];

async function snapshot(url: string) {
  const c = registryClient(url);
  const out: Record<string, unknown> = {};
  for (const path of [
    '/subjects',
    '/subjects?deleted=true',
    '/schemas?deleted=true',
    '/config',
    '/config/orders-value',
    '/mode',
    '/mode/frozen-value',
    '/subjects/orders-value/versions',
    '/subjects/orders-value/versions?deleted=true',
    '/subjects/orders-value/versions/1?deleted=true',
    '/schemas/ids/1',
    '/schemas/ids/2/subjects',
    '/schemas/ids/5',
    '/subjects/gone-value/versions',
  ]) {
    const r = await c.get(path);
    out[path] = { status: r.status, body: r.body };
  }
  return out;
}

test('every schema, id, version, config, mode and soft delete survives kill -9', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir('floe-registry-kill-');
  let proc: BrokerProcess | undefined;
  t.after(async () => {
    proc?.child.kill('SIGKILL');
    await proc?.ended;
    await rm(dir, { recursive: true, force: true });
  });
  proc = await spawnBroker(dir, FLAGS);
  assert.ok(proc.registryUrl, 'the registry started');
  const c = registryClient(proc.registryUrl);
  const rec = (fields: unknown[]) => ({ type: 'record', name: 'Order', fields });
  assert.equal(await c.register('orders-value', rec([{ name: 'id', type: 'int' }])), 1);
  assert.equal(await c.register('orders-value', rec([{ name: 'id', type: 'long' }])), 2);
  assert.equal(await c.register('copy-value', rec([{ name: 'id', type: 'long' }])), 2, 'the same schema under another subject shares the id');
  assert.equal(await c.register('events-value', { type: 'object', properties: { a: { type: 'string' } } }, 'JSON'), 3);
  assert.equal(await c.register('pings-value', 'syntax = "proto3";\nmessage Ping { string host = 1; }\n', 'PROTOBUF'), 4);
  assert.equal(await c.register('gone-value', rec([{ name: 'x', type: 'string' }])), 5);
  assert.equal((await c.del('/subjects/gone-value')).status, 200);
  assert.equal((await c.del('/subjects/gone-value?permanent=true')).status, 200);
  assert.equal((await c.del('/subjects/orders-value/versions/1')).status, 200, 'soft delete of version 1');
  assert.equal((await c.put('/config', { compatibility: 'FULL_TRANSITIVE' })).status, 200);
  assert.equal((await c.put('/config/orders-value', { compatibility: 'NONE' })).status, 200);
  assert.equal(await c.register('frozen-value', rec([{ name: 'f', type: 'string' }])), 6);
  const lastAck = await c.put('/mode/frozen-value', { mode: 'READONLY' });
  assert.equal(lastAck.status, 200);
  const before = await snapshot(proc.registryUrl);

  proc.child.kill('SIGKILL');
  const end = await proc.ended;
  assert.equal(end.signal, 'SIGKILL');

  proc = await spawnBroker(dir, FLAGS);
  assert.ok(proc.registryUrl);
  const after = await snapshot(proc.registryUrl);
  assert.deepEqual(after, before, 'the restarted registry answers exactly as before the kill');
  assert.equal((after['/schemas/ids/5'] as { status: number }).status, 404, 'a permanently deleted schema stays gone');
  const c2 = registryClient(proc.registryUrl);
  assert.equal(await c2.register('new-value', rec([{ name: 'n', type: 'string' }])), 7, 'new ids continue after the old maximum');
  const frozen = await c2.post('/subjects/frozen-value/versions', { schema: JSON.stringify(rec([{ name: 'f', type: 'string' }, { name: 'g', type: 'string', default: '' }])) });
  assert.equal(frozen.status, 422, 'the READONLY mode is back');
  assert.equal((frozen.body as { error_code: number }).error_code, 42205);
});
