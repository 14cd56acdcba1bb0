import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { createNamespaceIfMissing, createTableIfMissing, type Catalog, type CreateTableRequest } from '../../../iceberg/catalog/catalog.js';

const REQUEST: CreateTableRequest = { schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'x', required: false, type: 'int' }] }, properties: { owner: 'first' } };

async function warehouse(t: import('node:test').TestContext): Promise<WarehouseCatalog> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-catalog-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return new WarehouseCatalog({ io: new LocalFileIO({ root: dir, fsync: false }), warehouse: `file://${dir}/wh` });
}

/** `catalog` as another writer's race makes it look: every existence check answers false. */
function racing(catalog: Catalog): Catalog {
  return new Proxy(catalog, {
    get(target, prop, receiver) {
      if (prop === 'tableExists' || prop === 'namespaceExists') return async () => false;
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

test('createNamespaceIfMissing and createTableIfMissing create what is missing and leave what exists', async (t) => {
  const catalog = await warehouse(t);
  const id = { namespace: ['kafka'], name: 'orders' };
  await createNamespaceIfMissing(catalog, id.namespace);
  await createTableIfMissing(catalog, id, REQUEST);
  assert.equal((await catalog.loadTable(id)).metadata.properties.owner, 'first');
  // A second call (the broker restarting) changes nothing.
  await createNamespaceIfMissing(catalog, id.namespace);
  await createTableIfMissing(catalog, id, { ...REQUEST, properties: { owner: 'second' } });
  assert.equal((await catalog.loadTable(id)).metadata.properties.owner, 'first');
});

test('losing a race to create the namespace or table is not an error; other catalog errors are', async (t) => {
  const catalog = await warehouse(t);
  const id = { namespace: ['kafka'], name: 'orders' };
  await catalog.createNamespace(id.namespace);
  await catalog.createTable(id, REQUEST);
  // Both existence checks said "missing", and the creates then found the namespace and table there.
  await createNamespaceIfMissing(racing(catalog), id.namespace);
  await createTableIfMissing(racing(catalog), id, { ...REQUEST, properties: { owner: 'second' } });
  assert.equal((await catalog.loadTable(id)).metadata.properties.owner, 'first');
  await assert.rejects(createTableIfMissing(catalog, { namespace: ['absent'], name: 't' }, REQUEST), { name: 'CatalogError', code: 'NO_SUCH_NAMESPACE' });
});
