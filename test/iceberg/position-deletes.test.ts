import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { icebergRead } from 'icebird';
import { WarehouseCatalog } from '../../iceberg/catalog/warehouse.js';
import { DataFileContent, ManifestEntryStatus } from '../../iceberg/data-file.js';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { readManifest } from '../../iceberg/manifest.js';
import { readManifestList, ManifestContent } from '../../iceberg/manifest-list.js';
import { fromSingleValue } from '../../iceberg/metrics.js';
import { DELETE_FILE_PATH_ID, DELETE_POS_ID, normalizeRanges, writePositionDeletes } from '../../iceberg/position-deletes.js';
import type { Schema } from '../../iceberg/schema.js';
import { Table } from '../../iceberg/table.js';
import { IcebergError } from '../../iceberg/types.js';
import { installWarehouseFetch } from '../helpers/file-fetch.js';
import { duck } from '../helpers/duckdb.js';

const SCHEMA: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'n', required: true, type: 'long' }] };
const ID = { namespace: ['t'], name: 'x' };

async function setup(t: TestContext): Promise<{ dir: string; io: LocalFileIO; table: Table }> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-posdel-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: dir, fsync: false });
  const catalog = new WarehouseCatalog({ io, warehouse: `file://${dir}/wh` });
  await catalog.createNamespace(['t']);
  await catalog.createTable(ID, { schema: SCHEMA, formatVersion: 2 });
  return { dir, io, table: await Table.load(catalog, ID, io) };
}

const rows = (from: number, to: number): arrow.Table => new arrow.Table({ n: arrow.makeVector(BigInt64Array.from({ length: to - from }, (_, i) => BigInt(from + i))) });


async function icebird(io: LocalFileIO, table: Table): Promise<number[]> {
  const restore = installWarehouseFetch(io);
  try {
    const loc = table.metadataLocation;
    const got = await icebergRead({ tableUrl: table.location, metadataFileName: loc.slice(loc.lastIndexOf('/') + 1) });
    return got.map((r: Record<string, unknown>) => Number(r['n'])).sort((a, b) => a - b);
  } finally {
    restore();
  }
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

test('normalizeRanges sorts by path then position, merges touching ranges, drops empty ones and refuses bad ones', () => {
  assert.deepEqual(
    normalizeRanges([
      { path: 'b', start: 5n, end: 7n },
      { path: 'a', start: 3n, end: 4n },
      { path: 'a', start: 0n, end: 3n },
      { path: 'a', start: 9n, end: 9n },
      { path: 'b', start: 0n, end: 6n },
    ]),
    [
      { path: 'a', start: 0n, end: 4n },
      { path: 'b', start: 0n, end: 7n },
    ],
  );
  assert.throws(() => normalizeRanges([{ path: 'a', start: 3n, end: 2n }]), (e: unknown) => e instanceof IcebergError && e.code === 'INVALID_UPDATE');
  assert.throws(() => normalizeRanges([{ path: 'a', start: -1n, end: 2n }]), /0 <= start <= end/);
  assert.throws(() => normalizeRanges([{ path: '', start: 0n, end: 2n }]), /data file path/);
});

test('a position delete file: sorted (file_path, pos) rows with the reserved field ids, exact metrics and full file_path bounds', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-posdel-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: dir, fsync: false });
  const long = `file://${dir}/wh/t/x/data/partition=0/${'0'.repeat(20)}-${'9'.repeat(20)}.parquet`;
  const other = `file://${dir}/wh/t/x/data/partition=0/zzz.parquet`;
  // 200,000 rows of one file: several generated slices; plus two single rows of another file, given out of order.
  const loc = `file://${dir}/d1.parquet`;
  const f = await writePositionDeletes(
    io,
    loc,
    [
      { path: other, start: 7n, end: 8n },
      { path: long, start: 0n, end: 200_000n },
      { path: other, start: 2n, end: 3n },
    ],
    { partition: { p: 0 } },
  );
  assert.equal(f.content, DataFileContent.POSITION_DELETES);
  assert.equal(f.record_count, 200_002n);
  assert.equal(f.referenced_data_file, null, 'two data files: no single referenced file');
  assert.deepEqual(f.partition, { p: 0 });
  assert.equal(fromSingleValue('string', f.lower_bounds?.get(DELETE_FILE_PATH_ID) as Uint8Array), long, 'lower bound: the whole first path, not truncated');
  assert.equal(fromSingleValue('string', f.upper_bounds?.get(DELETE_FILE_PATH_ID) as Uint8Array), other);
  assert.equal(fromSingleValue('long', f.lower_bounds?.get(DELETE_POS_ID) as Uint8Array), 0n);
  assert.equal(fromSingleValue('long', f.upper_bounds?.get(DELETE_POS_ID) as Uint8Array), 199_999n);
  assert.equal(BigInt((await io.head(loc))?.size ?? -1), f.file_size_in_bytes);

  const q = await duck(t);
  const path = join(dir, 'copy.parquet');
  await writeFile(path, await io.get(loc));
  const ids = await q(`SELECT name, field_id FROM parquet_schema('${path}') WHERE name IN ('file_path', 'pos') ORDER BY name`);
  assert.deepEqual(ids.map((r) => [r['name'], Number(r['field_id'])]), [['file_path', DELETE_FILE_PATH_ID], ['pos', DELETE_POS_ID]]);
  const all = await q(`SELECT file_path, pos FROM read_parquet('${path}')`);
  assert.equal(all.length, 200_002);
  // Sorted by file_path then pos, as the spec requires, in file order.
  for (let i = 1; i < all.length; i++) {
    const a = all[i - 1] as Record<string, unknown>;
    const b = all[i] as Record<string, unknown>;
    const ok = String(a['file_path']) < String(b['file_path']) || (a['file_path'] === b['file_path'] && BigInt(String(a['pos'])) < BigInt(String(b['pos'])));
    if (!ok) assert.fail(`row ${i} is out of order: ${JSON.stringify(a)} then ${JSON.stringify(b)}`);
  }
  assert.deepEqual(all.slice(-2).map((r) => Number(r['pos'])), [2, 7]);

  const single = await writePositionDeletes(io, `file://${dir}/d2.parquet`, [{ path: long, start: 3n, end: 5n }]);
  assert.equal(single.referenced_data_file, long);
  await assert.rejects(writePositionDeletes(io, `file://${dir}/d3.parquet`, [{ path: long, start: 3n, end: 3n }]), /at least one row/);
});

test('row delta: a position delete hides rows of older data files, icebird applies it; replaced and removed with their data file', async (t) => {
  const { io, table } = await setup(t);
  const a = await table.writeDataFile(rows(0, 10));
  const s1 = await table.commit(table.newAppend().addFile(a));

  // Rows 0..3 of a; the delete file gets the new snapshot's sequence number, above a's.
  const d1 = await table.writePositionDeletes([{ path: a.file_path, start: 0n, end: 4n }], { location: `${table.location}/data/a-deletes-4.parquet` });
  const s2 = await table.commit(table.newRowDelta().addDeleteFile(d1));
  assert.equal(s2.summary.operation, 'delete');
  assert.equal(s2.summary['added-position-deletes'], '4');
  assert.equal(s2.summary['total-delete-files'], '1');
  const list = readManifestList(await io.get(s2['manifest-list']));
  const deletesManifest = list.manifests.find((m) => m.content === ManifestContent.DELETES);
  assert.ok(deletesManifest, 'the delete file is in a delete manifest');
  const m = readManifest(await io.get(deletesManifest.manifest_path));
  assert.equal(m.metadata.content, 'deletes');
  let { dataFiles, deleteFiles } = await table.files();
  assert.deepEqual(dataFiles.map((e) => e.sequence_number), [BigInt(s1['sequence-number'])]);
  assert.deepEqual(deleteFiles.map((e) => [e.data_file.file_path, e.sequence_number, e.data_file.referenced_data_file]), [[d1.file_path, BigInt(s2['sequence-number']), a.file_path]]);
  assert.ok((deleteFiles[0]?.sequence_number ?? 0n) >= (dataFiles[0]?.sequence_number ?? 1n), 'a position delete applies to data files with a sequence number <= its own');
  assert.deepEqual(await icebird(io, table), range(4, 10));

  // A later data file (higher sequence number) is untouched; a delete added in the same commit as its data file applies (equal numbers).
  const b = await table.writeDataFile(rows(100, 105));
  const db = await table.writePositionDeletes([{ path: b.file_path, pos: 0n }]);
  const s3 = await table.commit(table.newRowDelta().addFile(b).addDeleteFile(db));
  assert.equal(s3.summary.operation, 'overwrite');
  ({ deleteFiles } = await table.files());
  assert.equal(deleteFiles.find((e) => e.data_file.file_path === db.file_path)?.sequence_number, BigInt(s3['sequence-number']));
  assert.deepEqual(await icebird(io, table), [...range(4, 10), ...range(101, 105)]);

  // A wider delete replaces the first one in one commit: one delete file for a, over rows 0..5.
  const d2 = await table.writePositionDeletes([{ path: a.file_path, start: 0n, end: 6n }]);
  const s4 = await table.commit(table.newRowDelta().addDeleteFile(d2).deleteFile(d1.file_path));
  assert.equal(s4.summary['removed-delete-files'], '1');
  assert.equal(s4.summary['total-delete-files'], '2');
  assert.equal(s4.summary['total-position-deletes'], String(6 + 1));
  ({ deleteFiles } = await table.files());
  assert.deepEqual(deleteFiles.map((e) => e.data_file.file_path).sort(), [d2.file_path, db.file_path].sort());
  assert.deepEqual(await icebird(io, table), [...range(6, 10), ...range(101, 105)]);
  // The rewritten delete manifest keeps the other delete file with its own sequence number, and records the removal.
  const s4list = readManifestList(await io.get(s4['manifest-list']));
  const removals = [];
  for (const mf of s4list.manifests.filter((x) => x.content === ManifestContent.DELETES)) {
    for (const e of readManifest(await io.get(mf.manifest_path)).entries) if (e.status === ManifestEntryStatus.DELETED) removals.push(e.data_file.file_path);
  }
  assert.deepEqual(removals, [d1.file_path]);

  // a leaves the table with its delete file in one commit: no dangling delete file.
  const s5 = await table.commit(table.newOverwrite().deleteFile(a).deleteFile(d2));
  assert.equal(s5.summary['deleted-data-files'], '1');
  assert.equal(s5.summary['removed-delete-files'], '1');
  assert.equal(s5.summary['total-delete-files'], '1');
  ({ dataFiles, deleteFiles } = await table.files());
  assert.deepEqual(dataFiles.map((e) => e.data_file.file_path), [b.file_path]);
  assert.deepEqual(deleteFiles.map((e) => e.data_file.file_path), [db.file_path]);
  assert.deepEqual(await icebird(io, table), range(101, 105));
  await assert.rejects(table.commit(table.newOverwrite().deleteFile(d2)), /not a live data file/);
});
