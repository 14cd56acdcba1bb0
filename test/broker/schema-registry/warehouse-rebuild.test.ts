// A broker rebuilt from the warehouse alone keeps the registry's ids: `_schemas` is an Iceberg topic like
// any other, so once its segments are tiered, a broker with an empty log dir and the old warehouse recreates
// the topic after the table's history and replays that history from the table (Parquet), and every schema
// keeps its id and version. New registrations continue after the old ids and versions.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { registryClient } from './registry-http.js';

test('registry ids and versions survive the loss of the local disk when the warehouse is intact', { timeout: 120_000 }, async (t) => {
  const root = await tempDir('floe-registry-rebuild-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const warehouse = join(root, 'warehouse');
  const flags = [
    '--remote.log.storage.system.enable=true',
    `--iceberg.warehouse=${warehouse}`,
    '--iceberg.rest.port=-1',
    '--iceberg.commit.interval.ms=3600000',
    '--schema.registry.port=0',
    '--schema.registry.host=127.0.0.1',
  ];

  const first = await startBroker(flags, { dataDir: join(root, 'log-1') });
  const c1 = registryClient(`http://127.0.0.1:${first.broker.schemaRegistryPort}`);
  const rec = (fields: unknown[]) => ({ type: 'record', name: 'Sale', fields });
  assert.equal(await c1.register('sales-value', rec([{ name: 'id', type: 'int' }])), 1);
  assert.equal(await c1.register('sales-value', rec([{ name: 'id', type: 'int' }, { name: 'note', type: ['null', 'string'], default: null }])), 2);
  assert.equal(await c1.register('notes-value', { type: 'object', properties: { text: { type: 'string' } } }, 'JSON'), 3);
  assert.equal((await c1.put('/config/sales-value', { compatibility: 'FULL' })).status, 200);
  assert.equal((await c1.del('/subjects/notes-value')).status, 200, 'soft-deleted before the disk is lost');
  const before = { schemas: (await c1.get('/schemas?deleted=true')).body, config: (await c1.get('/config/sales-value')).body };

  // Tier everything the registry wrote, then lose the local disk.
  const plog = first.broker.services.logs.get('_schemas', 0);
  assert.ok(plog, '_schemas is a partition log of the broker');
  await plog.roll();
  await first.broker.services.tiering?.drain();
  assert.equal(first.broker.services.tiering?.lastTieredOffset('_schemas', 0), plog.logEndOffset - 1, 'every registry record is in the table');
  await first.stop();

  const second = await startBroker(flags, { dataDir: join(root, 'log-2') });
  cleanups.push(() => second.stop());
  const log2 = second.broker.services.logs.get('_schemas', 0);
  assert.ok(log2);
  assert.equal(log2.logStartOffset, plog.logEndOffset, 'the new local log starts after the table\'s history');
  const c2 = registryClient(`http://127.0.0.1:${second.broker.schemaRegistryPort}`);
  assert.deepEqual((await c2.get('/schemas?deleted=true')).body, before.schemas, 'every schema, id, version and soft delete, read back from the table');
  assert.deepEqual((await c2.get('/config/sales-value')).body, before.config);
  assert.deepEqual((await c2.get('/subjects')).body, ['sales-value']);
  assert.equal(await c2.register('sales-value', rec([{ name: 'id', type: 'int' }])), 1, 'an existing schema keeps its id');
  assert.equal(await c2.register('fresh-value', rec([{ name: 'z', type: 'string' }])), 4, 'new ids continue after the old ones');
  assert.deepEqual((await c2.get('/subjects/fresh-value/versions')).body, [1]);
});
