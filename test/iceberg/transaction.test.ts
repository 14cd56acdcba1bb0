import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { WarehouseCatalog } from '../../iceberg/catalog/warehouse.js';
import { Table } from '../../iceberg/table.js';
import { latestSummaryProperty } from '../../iceberg/transaction.js';
import { IcebergError } from '../../iceberg/types.js';
import type { Schema } from '../../iceberg/schema.js';

const SCHEMA: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'n', required: true, type: 'long' }] };
const ID = { namespace: ['t'], name: 'x' };

async function table(t: TestContext): Promise<Table> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-transaction-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: dir, fsync: false });
  const catalog = new WarehouseCatalog({ io, warehouse: `file://${dir}/wh` });
  await catalog.createNamespace(['t']);
  await catalog.createTable(ID, { schema: SCHEMA });
  return Table.load(catalog, ID, io);
}

test('a properties-only snapshot commits when allowed: no file changes, the data and totals carried over', async (t) => {
  const tbl = await table(t);
  await assert.rejects(tbl.commit(tbl.newAppend().set('k', 'refused')), (e: unknown) => e instanceof IcebergError && /Nothing to commit/.test(e.message));

  const file = await tbl.writeDataFile(new arrow.Table({ n: arrow.makeVector(BigInt64Array.from([1n, 2n, 3n])) }));
  const first = await tbl.commit(tbl.newAppend().addFile(file).set('k', 'one'));
  const empty = tbl.newAppend().allowNoFileChanges().set('k', 'two');
  assert.equal(empty.isEmpty, true);
  const second = await tbl.commit(empty);

  assert.equal(second['parent-snapshot-id'], first['snapshot-id']);
  assert.equal(second.summary.operation, 'append');
  assert.equal(second.summary['added-data-files'] ?? '0', '0');
  assert.equal(second.summary['total-records'], '3', 'totals carried from the parent');
  assert.equal(second.summary['total-data-files'], '1');
  assert.equal(latestSummaryProperty(tbl.metadata, 'k'), 'two');
  const live = (await tbl.files()).dataFiles.map((e) => e.data_file.file_path);
  assert.deepEqual(live, [file.file_path], 'the live files are unchanged');
});

test('a rewrite is a replace snapshot: same rows in other files; it refuses inputs that are not live and delete files', async (t) => {
  const tbl = await table(t);
  const rows = (ns: bigint[]) => new arrow.Table({ n: arrow.makeVector(BigInt64Array.from(ns)) });
  const a = await tbl.writeDataFile(rows([1n, 2n]));
  const b = await tbl.writeDataFile(rows([3n]));
  await tbl.commit(tbl.newAppend().addFile(a));
  await tbl.commit(tbl.newAppend().addFile(b));
  const merged = await tbl.writeDataFile(rows([1n, 2n, 3n]));
  const snap = await tbl.commit(tbl.newRewrite().deleteFile(a.file_path).deleteFile(b.file_path).addFile(merged));
  assert.equal(snap.summary.operation, 'replace');
  assert.equal(snap.summary['deleted-data-files'], '2');
  assert.equal(snap.summary['added-data-files'], '1');
  assert.equal(snap.summary['total-records'], '3');
  assert.deepEqual((await tbl.files()).dataFiles.map((e) => e.data_file.file_path), [merged.file_path]);

  // The inputs are gone now (a concurrent rewrite or retention got there first): refused, nothing committed.
  const again = await tbl.writeDataFile(rows([1n, 2n, 3n]));
  await assert.rejects(tbl.commit(tbl.newRewrite().deleteFile(a.file_path).addFile(again)), (e: unknown) => e instanceof IcebergError && e.code === 'INVALID_UPDATE');
  await assert.rejects(tbl.commit(tbl.newRewrite().addFile(again)), (e: unknown) => e instanceof IcebergError && /A rewrite replaces data files/.test(e.message));
  assert.equal(tbl.currentSnapshot()?.['snapshot-id'], snap['snapshot-id']);
});
