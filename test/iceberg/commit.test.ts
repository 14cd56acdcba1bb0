import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { WarehouseCatalog } from '../../iceberg/catalog/warehouse.js';
import { commitWithRetry } from '../../iceberg/commit.js';
import { Table } from '../../iceberg/table.js';
import { latestSummaryProperty } from '../../iceberg/transaction.js';
import { IcebergError } from '../../iceberg/types.js';
import { CommitConflictError } from '../../iceberg/table-metadata-builder.js';
import type { Schema } from '../../iceberg/schema.js';

const SCHEMA: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'n', required: true, type: 'long' }] };
const ID = { namespace: ['t'], name: 'x' };

async function setup(t: TestContext): Promise<{ io: LocalFileIO; catalog: WarehouseCatalog }> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-commit-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: dir, fsync: false });
  const catalog = new WarehouseCatalog({ io, warehouse: `file://${dir}/wh` });
  await catalog.createNamespace(['t']);
  await catalog.createTable(ID, { schema: SCHEMA });
  return { io, catalog };
}

const rows = (...n: bigint[]): arrow.Table => new arrow.Table({ n: arrow.makeVector(BigInt64Array.from(n)) });

test('a commit that loses the race rebuilds against the new base: new parent, new sequence number, same data manifest', async (t) => {
  const { io, catalog } = await setup(t);
  const a = await Table.load(catalog, ID, io);
  const b = await Table.load(catalog, ID, io);
  const update = b.newAppend().addFile(await b.writeDataFile(rows(2n)));
  const stale = await update.prepare(b.metadata); // built against the empty table, as b saw it

  const first = await a.commit(a.newAppend().addFile(await a.writeDataFile(rows(1n))));
  await assert.rejects(catalog.commitTable(ID, stale.requirements, stale.updates), (e: unknown) => e instanceof CommitConflictError);

  let conflicts = 0;
  const out = await commitWithRetry(catalog, ID, (base) => update.prepare(base.metadata), {
    onConflict: async () => {
      conflicts++;
    },
  });
  assert.equal(out.attempts, 1, 'the retry loop reloads before building, so it starts from the new base');
  assert.equal(conflicts, 0);
  const snap = out.prepared.snapshot;
  assert.equal(snap['parent-snapshot-id'], first['snapshot-id']);
  assert.equal(snap['sequence-number'], 2);
  assert.notEqual(snap['manifest-list'], stale.snapshot['manifest-list']);
  const fresh = await b.refresh();
  const { dataFiles } = await fresh.files();
  assert.equal(dataFiles.length, 2);
  // Inherited sequence numbers: each file has the sequence number of the snapshot that added it.
  assert.deepEqual(dataFiles.map((e) => e.sequence_number).sort(), [1n, 2n]);
});

test('commitWithRetry retries conflicts with backoff and gives up with a clear error', async (t) => {
  const { catalog } = await setup(t);
  let calls = 0;
  await assert.rejects(
    commitWithRetry(
      catalog,
      ID,
      async () => {
        calls++;
        return { requirements: [{ type: 'assert-current-schema-id' as const, 'current-schema-id': 99 }], updates: [] };
      },
      { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    ),
    (e: unknown) => e instanceof IcebergError && e.code === 'COMMIT_CONFLICT' && /Gave up after 3 attempts/.test(e.message),
  );
  assert.equal(calls, 3);
});

test('snapshot operations and refused changes', async (t) => {
  const { io, catalog } = await setup(t);
  const table = await Table.load(catalog, ID, io);
  const f1 = await table.writeDataFile(rows(1n, 2n));
  assert.equal(table.newAppend().addFile(f1).operation(), 'append');
  assert.equal(table.newOverwrite().deleteFile(f1).operation(), 'delete');
  assert.equal(table.newOverwrite().deleteFile(f1).addFile(f1).operation(), 'overwrite');
  await assert.rejects(table.newAppend().prepare(table.metadata), (e: unknown) => e instanceof IcebergError && /Nothing to commit/.test(e.message));
  assert.throws(() => table.newAppend().addDeleteFile(f1), /is a data file/);

  await table.commit(table.newAppend().addFile(f1));
  const del = await table.writePositionDeletes([{ path: f1.file_path, pos: 1n }]);
  assert.throws(() => table.newAppend().addFile(del), /is a delete file/);
  await assert.rejects(table.commit(table.newOverwrite().deleteFile('file:///nowhere.parquet')), /not a live data file/);

  // Removing a file and re-reading: the file is gone from the live set, the removal is in the summary.
  const snap = await table.commit(table.newOverwrite().deleteFile(f1));
  assert.equal(snap.summary.operation, 'delete');
  assert.equal(snap.summary['deleted-records'], '2');
  assert.equal(snap.summary['total-records'], '0');
  assert.deepEqual((await table.files()).dataFiles, []);
  await assert.rejects(table.commit(table.newOverwrite().deleteFile(f1)), /not a live data file/);
});

test('format v3: snapshots carry first-row-id and added-rows, next-row-id advances, manifests get row ids', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-v3-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: dir, fsync: false });
  const catalog = new WarehouseCatalog({ io, warehouse: `file://${dir}/wh` });
  await catalog.createNamespace(['t']);
  await catalog.createTable(ID, { schema: SCHEMA, formatVersion: 3 });
  const table = await Table.load(catalog, ID, io);
  const s1 = await table.commit(table.newAppend().addFile(await table.writeDataFile(rows(1n, 2n, 3n))));
  const s2 = await table.commit(table.newAppend().addFile(await table.writeDataFile(rows(4n, 5n))));
  assert.equal(table.metadata['format-version'], 3);
  assert.deepEqual([s1['first-row-id'], s1['added-rows'], s2['first-row-id'], s2['added-rows']], [0, 3, 3, 2]);
  assert.equal(table.metadata['next-row-id'], 5);
  const { dataFiles } = await table.files();
  assert.deepEqual(dataFiles.map((e) => e.data_file.first_row_id).sort(), [0n, 3n]);
});

test('validate runs against every base: an idempotent writer stops when its offsets are already committed', async (t) => {
  const { io, catalog } = await setup(t);
  const a = await Table.load(catalog, ID, io);
  const b = await Table.load(catalog, ID, io);
  const KEY = 'floe.kafka.offsets';
  const notYet = (want: string) => (base: Parameters<typeof latestSummaryProperty>[0]): void => {
    if (latestSummaryProperty(base, KEY) === want) throw new IcebergError('INVALID_UPDATE', `offsets ${want} are already committed`);
  };
  // Two writers race to commit the same segment; the loser rebuilds on the winner's base and stops.
  const fa = await a.writeDataFile(rows(1n));
  const fb = await b.writeDataFile(rows(1n));
  await a.commit(a.newAppend().addFile(fa).set(KEY, '0:1').validate(notYet('0:1')));
  await assert.rejects(b.commit(b.newAppend().addFile(fb).set(KEY, '0:1').validate(notYet('0:1'))), /already committed/);
  await b.refresh();
  assert.equal(latestSummaryProperty(b.metadata, KEY), '0:1');
  assert.equal((await b.files()).dataFiles.length, 1);
  // Later snapshots without the key don't hide it.
  await b.commit(b.newAppend().addFile(await b.writeDataFile(rows(2n))));
  assert.equal(latestSummaryProperty(b.metadata, KEY), '0:1');
});
