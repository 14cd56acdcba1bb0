import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { FileIOError, type FileIO, type FileIOCapabilities, type ObjectInfo } from '../../../iceberg/io/file-io.js';
import { metadataFileLocation, metadataFileVersion, WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { catalogContract } from './contract.js';
import { tableSuite } from '../table-suite.js';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Table } from '../../../iceberg/table.js';
import { ancestorsOf } from '../../../iceberg/table-metadata.js';
import { readParquetTable } from '../../../iceberg/parquet/reader.js';

/** A store without conditional writes (like s3rver): conditional calls throw UNSUPPORTED, as the contract says. */
class NoConditionalIO implements FileIO {
  constructor(private readonly inner: FileIO) {}
  get = (l: string): Promise<Buffer> => this.inner.get(l);
  getRange = (l: string, o: number, n: number): Promise<Buffer> => this.inner.getRange(l, o, n);
  head = (l: string): Promise<ObjectInfo | undefined> => this.inner.head(l);
  put = (l: string, d: Buffer): Promise<ObjectInfo> => this.inner.put(l, d);
  list = (p: string): AsyncIterable<ObjectInfo> => this.inner.list(p);
  delete = (l: string): Promise<void> => this.inner.delete(l);
  close = (): Promise<void> => this.inner.close();
  async putIfAbsent(): Promise<ObjectInfo> {
    throw new FileIOError('UNSUPPORTED', 'no conditional writes');
  }
  async putIfMatch(): Promise<ObjectInfo> {
    throw new FileIOError('UNSUPPORTED', 'no conditional writes');
  }
  async capabilities(): Promise<FileIOCapabilities> {
    return { conditionalWrites: false };
  }
}

async function localEnv(t: import('node:test').TestContext, conditional: boolean): Promise<{ io: FileIO; catalog: WarehouseCatalog; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-wh-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const local = new LocalFileIO({ root: dir, fsync: false });
  const io = conditional ? local : new NoConditionalIO(local);
  return { io, dir, catalog: new WarehouseCatalog({ io, warehouse: `file://${dir}/wh` }) };
}

catalogContract('WarehouseCatalog (conditional writes)', async (t) => (await localEnv(t, true)).catalog);
catalogContract('WarehouseCatalog (catalog-held pointer)', async (t) => (await localEnv(t, false)).catalog);
tableSuite('local warehouse, catalog-held pointer', async (t) => localEnv(t, false));

test('metadata file names and the pointer layout', async (t) => {
  const { catalog, dir } = await localEnv(t, true);
  assert.equal(await catalog.usesConditionalWrites(), true);
  assert.match(metadataFileLocation('s3://b/t/', 7), /^s3:\/\/b\/t\/metadata\/00007-[0-9a-f-]{36}\.metadata\.json$/);
  assert.equal(metadataFileVersion('s3://b/t/metadata/00012-0a0b.metadata.json'), 12);
  assert.equal(metadataFileVersion('file:///t/metadata/v3.metadata.json'), 3);
  assert.equal(metadataFileVersion('file:///t/metadata/snap-1.avro'), undefined);

  await catalog.createNamespace(['kafka', 'v.1']);
  const created = await catalog.createTable({ namespace: ['kafka', 'v.1'], name: 'orders' }, { schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'x', required: false, type: 'int' }] } });
  assert.equal(created.metadata.location, `file://${dir}/wh/kafka/v.1/orders`);
  const pointer = JSON.parse(await readFile(join(dir, 'wh/_floe_catalog/tables/kafka.v%2E1/orders.json'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(pointer, { 'metadata-location': created.metadataLocation, version: 0 });
  const hint = await readFile(join(dir, 'wh/kafka/v.1/orders/metadata/version-hint.text'), 'utf8');
  assert.equal(`${created.metadata.location}/metadata/${hint}.metadata.json`, created.metadataLocation);

  // The state is durable: a new catalog over the same warehouse sees everything.
  const again = new WarehouseCatalog({ io: new LocalFileIO({ root: dir, fsync: false }), warehouse: `file://${dir}/wh` });
  assert.deepEqual(await again.listNamespaces(['kafka']), [['kafka', 'v.1']]);
  assert.equal((await again.loadTable({ namespace: ['kafka', 'v.1'], name: 'orders' })).metadataLocation, created.metadataLocation);
});

test('drop with purge removes the table files', async (t) => {
  const { catalog, io } = await localEnv(t, true);
  await catalog.createNamespace(['n']);
  const { metadata } = await catalog.createTable({ namespace: ['n'], name: 't' }, { schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'x', required: false, type: 'int' }] } });
  const before: string[] = [];
  for await (const o of io.list(`${metadata.location}/`)) before.push(o.location);
  assert.ok(before.length >= 2);
  await catalog.dropTable({ namespace: ['n'], name: 't' }, { purge: true });
  const after: string[] = [];
  for await (const o of io.list(`${metadata.location}/`)) after.push(o.location);
  assert.deepEqual(after, []);
});

test('metadata-log keeps write.metadata.previous-versions-max entries, newest last', async (t) => {
  const { catalog } = await localEnv(t, true);
  await catalog.createNamespace(['n']);
  const id = { namespace: ['n'], name: 't' };
  const created = await catalog.createTable(id, {
    schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'x', required: false, type: 'int' }] },
    properties: { 'write.metadata.previous-versions-max': '2' },
  });
  const locations = [created.metadataLocation];
  for (let i = 0; i < 4; i++) locations.push((await catalog.commitTable(id, [], [{ action: 'set-properties', updates: { i: String(i) } }])).metadataLocation);
  const { metadata } = await catalog.loadTable(id);
  assert.deepEqual(metadata['metadata-log'].map((e) => e['metadata-file']), locations.slice(2, 4));
  assert.deepEqual(locations.map(metadataFileVersion), [0, 1, 2, 3, 4]);
});

test('commits from several processes on one warehouse: all land once, on a linear chain', async (t) => {
  const { catalog, dir, io } = await localEnv(t, true);
  await catalog.createNamespace(['db']);
  const id = { namespace: ['db'], name: 'shared' };
  await catalog.createTable(id, { schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'n', required: true, type: 'long' }] } });
  const here = fileURLToPath(import.meta.url);
  const compiled = here.endsWith('.js');
  const script = join(here, '..', compiled ? 'commit-child.js' : 'commit-child.ts');
  const processes = 3;
  const each = 4;
  const exits = Array.from({ length: processes }, (_, p) => {
    const child = fork(script, [dir, `file://${dir}/wh`, String(p * each), String(each)], { execArgv: compiled ? [] : ['--import', 'tsx'], stdio: 'inherit' });
    t.after(() => {
      if (child.exitCode === null) child.kill();
    });
    return once(child, 'exit').then(([code]) => code as number | null);
  });
  assert.deepEqual(await Promise.all(exits), Array.from({ length: processes }, () => 0));

  const table = await Table.load(catalog, id, io);
  const chain = [...ancestorsOf(table.metadata, table.metadata['current-snapshot-id'])];
  assert.equal(table.metadata.snapshots.length, processes * each);
  assert.equal(chain.length, processes * each);
  chain.forEach((s, i) => assert.equal(s['parent-snapshot-id'], chain[i + 1]?.['snapshot-id']));
  const values: bigint[] = [];
  for (const e of (await table.files()).dataFiles) {
    const bytes = await io.get(e.data_file.file_path);
    values.push(...(readParquetTable(bytes).getChild('n')?.toArray() as BigInt64Array));
  }
  assert.deepEqual(values.sort((a, b) => Number(a - b)), Array.from({ length: processes * each }, (_, i) => BigInt(i)));
});

for (const conditional of [true, false]) {
  test(`write.metadata.delete-after-commit.enabled deletes the metadata files that fall off the log (${conditional ? 'conditional writes' : 'catalog-held pointer'})`, async (t) => {
    const { catalog, io } = await localEnv(t, conditional);
    await catalog.createNamespace(['n']);
    const id = { namespace: ['n'], name: 't' };
    const created = await catalog.createTable(id, {
      schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'x', required: false, type: 'int' }] },
      properties: { 'write.metadata.previous-versions-max': '2' },
    });
    const locations = [created.metadataLocation];
    const commit = async (updates: Record<string, string>): Promise<void> => {
      locations.push((await catalog.commitTable(id, [], [{ action: 'set-properties', updates }])).metadataLocation);
    };
    const present = async (): Promise<boolean[]> => Promise.all(locations.map(async (l) => (await io.head(l)) !== undefined));
    // Disabled (Iceberg's default): files that fell off the log stay.
    for (let i = 0; i < 3; i++) await commit({ i: String(i) });
    assert.deepEqual(await present(), [true, true, true, true]);
    // Enabled: the next commit deletes what the old log named and the new one does not (version 1). Version 0
    // fell off while pruning was off and stays (as in Iceberg); orphan removal finds it.
    await commit({ 'write.metadata.delete-after-commit.enabled': 'true' });
    assert.deepEqual(await present(), [true, false, true, true, true]);
    const { metadata } = await catalog.loadTable(id);
    assert.deepEqual(metadata['metadata-log'].map((e) => e['metadata-file']), locations.slice(2, 4));
    await commit({ i: 'again' });
    assert.deepEqual(await present(), [true, false, false, true, true, true]);
    assert.equal((await catalog.loadTable(id)).metadataLocation, locations[5]);
  });
}
