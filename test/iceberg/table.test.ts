import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { WarehouseCatalog } from '../../iceberg/catalog/warehouse.js';
import { tableSuite } from './table-suite.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as arrow from 'apache-arrow';
import { icebergRead } from 'icebird';
import { Table } from '../../iceberg/table.js';
import { readManifestList } from '../../iceberg/manifest-list.js';
import type { Schema } from '../../iceberg/schema.js';
import { installWarehouseFetch } from '../helpers/file-fetch.js';

tableSuite('local warehouse', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-table-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: dir, fsync: false });
  t.after(() => io.close());
  return { io, catalog: new WarehouseCatalog({ io, warehouse: `file://${dir}/warehouse` }) };
});

test('identity-partitioned appends: partition tuples in manifests, summaries in the list, rows read back by icebird', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-part-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: dir, fsync: false });
  const catalog = new WarehouseCatalog({ io, warehouse: `file://${dir}/wh` });
  await catalog.createNamespace(['kafka']);
  const id = { namespace: ['kafka'], name: 'orders' };
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'partition', required: true, type: 'int' },
      { id: 2, name: 'offset', required: true, type: 'long' },
    ],
  };
  await catalog.createTable(id, { schema, partitionSpec: { 'spec-id': 0, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'partition', transform: 'identity' }] } });
  const table = await Table.load(catalog, id, io);
  const batch = (p: number, offsets: bigint[]): arrow.Table =>
    new arrow.Table({ partition: arrow.vectorFromArray(offsets.map(() => p), new arrow.Int32()), offset: arrow.makeVector(BigInt64Array.from(offsets)) });
  const f0 = await table.writeDataFile(batch(0, [0n, 1n, 2n]), { partition: { partition: 0 } });
  const f1 = await table.writeDataFile(batch(1, [7n]), { partition: { partition: 1 } });
  const snap = await table.commit(table.newAppend().addFile(f0).addFile(f1).set('floe.kafka.offsets', '{"0":2,"1":7}'));
  assert.equal(snap.summary['changed-partition-count'], '2');
  assert.equal(snap.summary['floe.kafka.offsets'], '{"0":2,"1":7}');

  const { dataFiles } = await table.files();
  assert.deepEqual(dataFiles.map((e) => e.data_file.partition['partition']).sort(), [0, 1]);
  const list = readManifestList(await io.get(snap['manifest-list']));
  const summary = list.manifests[0]?.partitions?.[0];
  assert.equal(summary?.contains_null, false);
  assert.deepEqual([...(summary?.lower_bound ?? [])], [0, 0, 0, 0]);
  assert.deepEqual([...(summary?.upper_bound ?? [])], [1, 0, 0, 0]);

  const restore = installWarehouseFetch(io);
  t.after(restore);
  const rows = await icebergRead({ tableUrl: table.location, metadataFileName: table.metadataLocation.slice(table.metadataLocation.lastIndexOf('/') + 1) });
  assert.deepEqual(rows.map((r) => [Number(r['partition']), BigInt(r['offset'] as bigint)]).sort((a, b) => Number(a[1]) - Number(b[1])), [
    [0, 0n],
    [0, 1n],
    [0, 2n],
    [1, 7n],
  ]);
});
