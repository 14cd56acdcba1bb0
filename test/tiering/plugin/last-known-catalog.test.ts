/**
 * LastKnownCatalog over a REST catalog that goes away (Floe's own REST server over a local warehouse, closed
 * mid-test, so the client gets real refused connections): while the catalog answers, every create, load and
 * commit leaves the table's metadata location in the warehouse; once it is unreachable, loads and existence
 * checks are answered from there (the same metadata the catalog last returned), commits still fail, and a
 * table never seen stays an error. A catalog that refuses (404) is never papered over.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogError } from '../../../iceberg/catalog/catalog.js';
import { RestCatalogClient } from '../../../iceberg/catalog/rest-client.js';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { RestCatalogServer } from '../../../iceberg/rest/server.js';
import { Table } from '../../../iceberg/table.js';
import { LastKnownCatalog, POINTERS_FOLDER } from '../../../tiering/plugin/last-known-catalog.js';

const SCHEMA = { type: 'struct' as const, 'schema-id': 0, fields: [{ id: 1, name: 'x', required: false, type: 'int' as const }] };

test('LastKnownCatalog: loads from the last known metadata location while the catalog is unreachable', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-lastknown-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const warehouse = `file://${dir}`;
  const io = new LocalFileIO({ root: dir, fsync: false });
  const server = new RestCatalogServer({ catalog: new WarehouseCatalog({ io, warehouse: `${warehouse}/catalog` }), host: '127.0.0.1', port: 0 });
  const { url } = await server.start();
  t.after(() => server.close());
  const fallbacks: string[] = [];
  const catalog = new LastKnownCatalog(new RestCatalogClient({ uri: url, timeoutMs: 5000 }), io, warehouse, (id) => fallbacks.push(id.name));
  const id = { namespace: ['kafka'], name: 'orders' };

  await catalog.createNamespace(['kafka']);
  await catalog.createTable(id, { schema: SCHEMA });
  const table = await Table.load(catalog, id, io);
  await table.setProperties({ step: 'one' });
  const last = await catalog.loadTable(id);
  assert.equal(last.metadata.properties['step'], 'one');
  const pointer = JSON.parse((await io.get(`${warehouse}/${POINTERS_FOLDER}/kafka/orders.json`)).toString()) as Record<string, unknown>;
  assert.equal(pointer['metadata-location'], last.metadataLocation, 'the pointer names the metadata file the catalog returned last');
  // Refusals are the catalog's answer, not an outage: a table it does not know is not found.
  await assert.rejects(catalog.loadTable({ namespace: ['kafka'], name: 'nope' }), (e: unknown) => e instanceof CatalogError && e.code === 'NO_SUCH_TABLE');
  assert.deepEqual(fallbacks, []);

  await server.close();
  const offline = await catalog.loadTable(id);
  assert.equal(offline.metadataLocation, last.metadataLocation);
  assert.deepEqual(offline.metadata, last.metadata, 'the same metadata, read from the warehouse');
  assert.deepEqual(fallbacks, ['orders']);
  assert.equal(await catalog.tableExists(id), true);
  assert.equal(await catalog.namespaceExists(['kafka']), true);
  const reopened = await Table.load(catalog, id, io);
  await assert.rejects(reopened.setProperties({ step: 'two' }), (e: unknown) => e instanceof CatalogError && e.code === 'SERVICE_ERROR', 'commits need the catalog');
  await assert.rejects(catalog.loadTable({ namespace: ['kafka'], name: 'never-seen' }), (e: unknown) => e instanceof CatalogError && e.code === 'SERVICE_ERROR' && /unreachable/.test(e.message));
  await assert.rejects(catalog.namespaceExists(['elsewhere']), (e: unknown) => e instanceof CatalogError && e.code === 'SERVICE_ERROR');
});
