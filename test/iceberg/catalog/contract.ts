/**
 * The catalog contract: every `Catalog` implementation (the built-in WarehouseCatalog, and RestCatalogClient
 * talking to a REST server) must behave the same for namespaces, tables and commits.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { CatalogError, type Catalog } from '../../../iceberg/catalog/catalog.js';
import { CommitConflictError } from '../../../iceberg/table-metadata-builder.js';
import type { Schema } from '../../../iceberg/schema.js';

const SCHEMA: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'v', required: false, type: 'string' }] };

const code = (c: string) => (err: unknown): boolean => {
  assert.ok(err instanceof CatalogError, `expected CatalogError ${c}, got ${String(err)}`);
  assert.equal(err.code, c);
  return true;
};

export function catalogContract(name: string, setup: (t: TestContext) => Promise<Catalog>): void {
  test(`${name}: namespaces`, async (t) => {
    const c = await setup(t);
    assert.deepEqual(await c.listNamespaces(), []);
    await c.createNamespace(['kafka'], { owner: 'floe' });
    await c.createNamespace(['a.b']);
    await c.createNamespace(['x', 'y']);
    await assert.rejects(c.createNamespace(['kafka']), code('ALREADY_EXISTS'));
    assert.deepEqual(await c.listNamespaces(), [['a.b'], ['kafka'], ['x']]);
    assert.deepEqual(await c.listNamespaces(['x']), [['x', 'y']]);
    assert.deepEqual(await c.loadNamespaceProperties(['kafka']), { owner: 'floe' });
    assert.equal(await c.namespaceExists(['a.b']), true);
    assert.equal(await c.namespaceExists(['a']), false);
    await assert.rejects(c.loadNamespaceProperties(['nope']), code('NO_SUCH_NAMESPACE'));
    await assert.rejects(c.dropNamespace(['nope']), code('NO_SUCH_NAMESPACE'));
    await c.dropNamespace(['a.b']);
    assert.equal(await c.namespaceExists(['a.b']), false);
  });

  test(`${name}: tables and commits`, async (t) => {
    const c = await setup(t);
    await c.createNamespace(['db']);
    const id = { namespace: ['db'], name: 'events' };
    await assert.rejects(c.createTable({ namespace: ['none'], name: 't' }, { schema: SCHEMA }), code('NO_SUCH_NAMESPACE'));
    const created = await c.createTable(id, { schema: SCHEMA, properties: { p: '1' } });
    assert.equal(created.metadata.properties['p'], '1');
    await assert.rejects(c.createTable(id, { schema: SCHEMA }), code('ALREADY_EXISTS'));
    assert.deepEqual(await c.listTables(['db']), [id]);
    assert.equal(await c.tableExists(id), true);
    assert.equal(await c.tableExists({ namespace: ['db'], name: 'other' }), false);
    await assert.rejects(c.loadTable({ namespace: ['db'], name: 'other' }), code('NO_SUCH_TABLE'));
    await assert.rejects(c.dropNamespace(['db']), code('NAMESPACE_NOT_EMPTY'));

    const uuid = created.metadata['table-uuid'];
    const out = await c.commitTable(id, [{ type: 'assert-table-uuid', uuid }], [{ action: 'set-properties', updates: { q: '2' } }]);
    assert.notEqual(out.metadataLocation, created.metadataLocation);
    const loaded = await c.loadTable(id);
    assert.equal(loaded.metadataLocation, out.metadataLocation);
    assert.equal(loaded.metadata.properties['q'], '2');
    assert.deepEqual(loaded.metadata['metadata-log'].map((e) => e['metadata-file']), [created.metadataLocation]);

    await assert.rejects(
      c.commitTable(id, [{ type: 'assert-table-uuid', uuid: '00000000-0000-4000-8000-000000000000' }], [{ action: 'set-properties', updates: { q: '3' } }]),
      (err: unknown) => err instanceof CommitConflictError,
    );
    await assert.rejects(c.commitTable({ namespace: ['db'], name: 'other' }, [], []), code('NO_SUCH_TABLE'));

    // Registering the same metadata file under another name: same table, same history.
    const copy = { namespace: ['db'], name: 'events_copy' };
    const registered = await c.registerTable(copy, out.metadataLocation);
    assert.equal(registered.metadata['table-uuid'], uuid);
    assert.equal((await c.loadTable(copy)).metadataLocation, out.metadataLocation);
    await assert.rejects(c.registerTable(copy, out.metadataLocation), code('ALREADY_EXISTS'));
    await assert.rejects(c.registerTable({ namespace: ['none'], name: 'x' }, out.metadataLocation), code('NO_SUCH_NAMESPACE'));
    await c.dropTable(copy);

    await c.dropTable(id);
    assert.equal(await c.tableExists(id), false);
    await assert.rejects(c.dropTable(id), code('NO_SUCH_TABLE'));
    await c.dropNamespace(['db']);
  });
}
