/**
 * RestCatalogClient against a running REST catalog (Floe's server over a local warehouse): the same catalog
 * contract and table suite as the built-in catalog, with every commit crossing HTTP (20 concurrent writers
 * get 409 CommitFailedException and retry), plus prefix discovery, bearer tokens and refused commits.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { RestCatalogClient } from '../../../iceberg/catalog/rest-client.js';
import { CatalogError } from '../../../iceberg/catalog/catalog.js';
import { RestCatalogServer, type RestCatalogServerOptions } from '../../../iceberg/rest/server.js';
import { Table } from '../../../iceberg/table.js';
import { catalogContract } from './contract.js';
import { tableSuite } from '../table-suite.js';

async function env(t: TestContext, server: Partial<RestCatalogServerOptions> = {}): Promise<{ io: LocalFileIO; url: string; backing: WarehouseCatalog }> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-restc-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: dir, fsync: false });
  const backing = new WarehouseCatalog({ io, warehouse: `file://${dir}/wh` });
  const s = new RestCatalogServer({ catalog: backing, host: '127.0.0.1', port: 0, ...server });
  const { url } = await s.start();
  t.after(() => s.close());
  return { io, url, backing };
}

catalogContract('RestCatalogClient', async (t) => new RestCatalogClient({ uri: (await env(t)).url }));

tableSuite('REST catalog client', async (t) => {
  const { io, url } = await env(t, { prefix: 'cat/one', token: 'tok' });
  return { io, catalog: new RestCatalogClient({ uri: url, token: 'tok' }) };
});

test('RestCatalogClient: prefix from the config, token errors, refused commits are final', async (t) => {
  const { io, url, backing } = await env(t, { prefix: 'p', token: 'tok' });
  await assert.rejects(new RestCatalogClient({ uri: url }).listNamespaces(), (e: unknown) => e instanceof CatalogError && e.code === 'NOT_AUTHORIZED');
  const client = new RestCatalogClient({ uri: url, token: 'tok' });
  await client.createNamespace(['kafka']);
  assert.deepEqual(await backing.listNamespaces(), [['kafka']]);

  await backing.createTable({ namespace: ['kafka'], name: 'owned' }, { schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'x', required: false, type: 'int' }] }, properties: { 'floe.owner': 'tiering' } });
  const table = await Table.load(client, { namespace: ['kafka'], name: 'owned' }, io);
  await assert.rejects(table.setProperties({ a: 'b' }), (e: unknown) => e instanceof CatalogError && e.code === 'FORBIDDEN' && /read-only/.test(e.message));

  const down = new RestCatalogClient({ uri: 'http://127.0.0.1:1' });
  await assert.rejects(down.listNamespaces(), (e: unknown) => e instanceof CatalogError && e.code === 'SERVICE_ERROR' && /unreachable/.test(e.message));
});
