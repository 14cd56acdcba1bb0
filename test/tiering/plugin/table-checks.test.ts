// A topic's table must carry the field ids Floe writes its data files with. A catalog that assigns its own
// ids when it creates a table (Project Nessie numbers nested fields depth-first: kafka=1, kafka.partition=2,
// ...) would leave data files whose ids name other columns; such a table is refused (FOREIGN_TABLE), while
// columns an engine added, or that only Floe's schema has, are fine.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { FLOE_OWNER_PROPERTY } from '../../../iceberg/rest/server.js';
import { serializeTableMetadata } from '../../../iceberg/table-metadata.js';
import type { Schema, StructType, Type } from '../../../iceberg/schema.js';
import { TOPIC_SCHEMA } from '../../../tiering/convert/schema.js';
import { TieringError } from '../../../tiering/plugin/api.js';
import { ConvertCodec } from '../../../tiering/plugin/convert-codec.js';
import { IcebergTopic } from '../../../tiering/plugin/iceberg-topic.js';
import { checkFieldIds, FLOE_OWNER, TOPIC_PROPERTY } from '../../../tiering/plugin/table-checks.js';

/** `schema` with its ids assigned depth-first from 1, as Nessie assigns them to a new table. */
function depthFirst(schema: Schema): Schema {
  let next = 1;
  const visit = (t: Type): Type => {
    if (typeof t === 'string') return t;
    if (t.type === 'struct') return { ...t, fields: t.fields.map((f) => { const id = next++; return { ...f, id, type: visit(f.type) }; }) } as StructType;
    if (t.type === 'list') { const id = next++; return { ...t, 'element-id': id, element: visit(t.element) }; }
    const keyId = next++;
    const key = visit(t.key);
    const valueId = next++;
    return { ...t, 'key-id': keyId, key, 'value-id': valueId, value: visit(t.value) };
  };
  return visit(schema) as Schema;
}

const ID = { namespace: ['kafka'], name: 'orders' };
const foreign = (e: unknown): boolean => e instanceof TieringError && e.code === 'FOREIGN_TABLE';

test('field ids: the same ids pass, added columns pass, a depth-first renumbering is refused with the fields named', () => {
  checkFieldIds('orders', ID, TOPIC_SCHEMA, TOPIC_SCHEMA, 'c');
  const added: Schema = { ...TOPIC_SCHEMA, fields: [...TOPIC_SCHEMA.fields, { id: 1000, name: 'note', required: false, type: 'string' }] };
  checkFieldIds('orders', ID, added, TOPIC_SCHEMA, 'c');
  const renumbered = depthFirst(TOPIC_SCHEMA);
  assert.notDeepEqual(renumbered, TOPIC_SCHEMA, 'the renumbering changes ids');
  assert.throws(() => checkFieldIds('orders', ID, renumbered, TOPIC_SCHEMA, 'nessie'), (e: unknown) => {
    assert.ok(foreign(e));
    assert.match((e as Error).message, /kafka\.orders in catalog nessie does not have the field ids Floe writes .*kafka\.\w+ has id \d+, Floe writes \d+/);
    return true;
  });
});

test('a table the catalog created with its own ids is refused when the topic opens it; one with Floe\'s ids opens', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-table-checks-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const warehouse = pathToFileURL(join(dir, 'wh')).href;
  const io = new LocalFileIO({ root: join(dir, 'wh'), fsync: false });
  t.after(() => io.close());
  const catalog = new WarehouseCatalog({ io, warehouse });
  await catalog.createNamespace(['kafka']);
  // What a renumbering catalog leaves after Floe's create request: Floe's properties, other ids. (This
  // catalog, like Iceberg's, keeps Floe's ids, so the metadata is written here and registered.)
  const made = await catalog.createTable({ namespace: ['kafka'], name: 'scratch' }, { schema: TOPIC_SCHEMA, properties: { [FLOE_OWNER_PROPERTY]: FLOE_OWNER, [TOPIC_PROPERTY]: 'orders' }, formatVersion: 2 });
  const metadata = { ...made.metadata, schemas: [depthFirst(made.metadata.schemas[0] as Schema)] };
  const location = `${warehouse}/kafka/orders/metadata/00000-renumbered.metadata.json`;
  await io.put(location, Buffer.from(serializeTableMetadata(metadata)));
  await catalog.registerTable(ID, location);
  await assert.rejects(IcebergTopic.open({ catalog, io, codec: new ConvertCodec(), topic: 'orders', namespace: ['kafka'] }), foreign);
  const ok = await IcebergTopic.open({ catalog, io, codec: new ConvertCodec(), topic: 'payments', namespace: ['kafka'] });
  assert.equal(ok.id.name, 'payments');
});
