// The upsert table against the topic table's own upkeep, on the plugin (no broker): DeleteRecords and
// compaction change the files it names, snapshot expiry and retention delete files, and the upsert table
// must keep naming only files that exist, with exactly the rows it should have. Its rows are read by DuckDB
// over the live data files with the live position deletes anti-joined (nothing of Floe's reading code).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import type { WarehouseCatalog } from '../../../../iceberg/catalog/warehouse.js';
import type { FileIO } from '../../../../iceberg/io/file-io.js';
import { Table } from '../../../../iceberg/table.js';
import { decodeRecordBatch } from '../../../../protocol/record-batch/record-batch.js';
import { iterateBatches } from '../../../../protocol/record-batch/batches.js';
import { CONFIG, env, ID, segments, TOPIC } from '../compaction-fixture.js';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeRecordBatch } from '../../../../protocol/record-batch/record-batch.js';
import { MAX_DELETE_FILES } from '../../../../tiering/plugin/latest/latest-table.js';
import type { LogSegmentData } from '../../../../tiering/plugin/api.js';

const LATEST = { namespace: ID.namespace, name: `${ID.name}_latest` };
const tp0 = { topic: TOPIC, partition: 0 };

/** `partition/offset` of the rows a table shows: live data files minus live position deletes, by DuckDB. */
async function tableRows(t: TestContext, catalog: WarehouseCatalog, io: FileIO, id: typeof LATEST): Promise<string[]> {
  const table = await Table.load(catalog, id, io);
  const { dataFiles, deleteFiles } = await table.files();
  if (dataFiles.length === 0) return [];
  const list = (paths: string[]): string => paths.map((p) => `'${fileURLToPath(p)}'`).join(', ');
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  t.after(() => {
    conn.closeSync();
    db.closeSync();
  });
  const data = `select kafka.partition as p, kafka."offset" as o, filename as f, file_row_number as r from read_parquet([${list(dataFiles.map((e) => e.data_file.file_path))}], filename = true, file_row_number = true)`;
  const sql = deleteFiles.length === 0
    ? `select p, o from (${data}) order by p, o`
    : `select p, o from (${data}) d where not exists (select 1 from read_parquet([${list(deleteFiles.map((e) => e.data_file.file_path))}]) x where x.file_path = 'file://' || d.f and x.pos = d.r) order by p, o`;
  const rows = await conn.runAndReadAll(sql);
  return rows.getRowObjectsJson().map((r) => `${String(r['p'])}/${String(r['o'])}`);
}

/** The expected upsert rows: per partition, each key's last record, unless it is a tombstone; keyless records never. */
async function expectedRows(segs: readonly LogSegmentData[], from = new Map<number, number>()): Promise<string[]> {
  const latest = new Map<string, { p: number; o: number; tombstone: boolean }>();
  for (const s of segs) {
    const bytes = await readFile(s.path);
    for (const b of iterateBatches(bytes)) {
      const batch = decodeRecordBatch(bytes.subarray(b.start, b.end));
      batch.records.forEach((r) => {
        const o = Number(batch.baseOffset) + r.offsetDelta;
        if (r.key === null || o < (from.get(s.partition) ?? 0)) return;
        latest.set(`${s.partition}:${r.key.toString('hex')}`, { p: s.partition, o, tombstone: r.value === null });
      });
    }
  }
  return [...latest.values()].filter((x) => !x.tombstone).sort((a, b) => a.p - b.p || a.o - b.o).map((x) => `${x.p}/${x.o}`);
}

async function exists(path: string): Promise<boolean> {
  return access(fileURLToPath(path)).then(() => true, () => false);
}

test('the upsert table follows DeleteRecords, compaction and snapshot expiry of its topic table, naming only files that exist', async (t) => {
  const e = await env(t);
  // Maintenance runs as if two days had passed: snapshot expiry (a day by default) takes every old snapshot.
  const { plugin, catalog, io } = e.open({ plugin: { maintenance: { now: () => Date.now() + 2 * 24 * 3600 * 1000 } } });
  await plugin.configureTopic(TOPIC, { ...CONFIG, upsert: { cdc: 'none' } });
  const p0 = await segments(e.dir, 0, 0, 12);
  // One partition: the topic table's expiry keeps every snapshot that names a partition's current history,
  // and a second partition's would keep the compaction inputs reachable (topic-table behaviour, not the upsert table's).
  for (const s of p0.segs) {
    plugin.segmentClosed(s);
    await plugin.drain();
  }
  const all = p0.segs;
  // A serial operation after the last commit: its chain ran the upsert sync first.
  await plugin.maintain(TOPIC);
  assert.deepEqual(await tableRows(t, catalog, io, LATEST), await expectedRows(all));
  const topicFiles = async (): Promise<Set<string>> => new Set((await (await Table.load(catalog, ID, io)).files()).dataFiles.map((x) => x.data_file.file_path));
  const latestFiles = async (): Promise<string[]> => (await (await Table.load(catalog, LATEST, io)).files()).dataFiles.map((x) => x.data_file.file_path);
  const before = await latestFiles();
  assert.ok(before.length > 0);
  for (const f of before) assert.ok((await topicFiles()).has(f), `${f} is one of the topic table's data files`);

  // DeleteRecords past the first three segments of partition 0: their files leave the topic table, and are
  // deleted once the upsert table no longer names them; its rows below the cut are gone too.
  const cut = (p0.segs[3]?.baseOffset ?? 0) + 1;
  const doomed = p0.segs.slice(0, 3).map((s) => s.baseOffset);
  await plugin.deleteRecordsBefore(tp0, cut);
  await plugin.maintain(TOPIC);
  const after = await latestFiles();
  for (const f of after) {
    assert.ok((await topicFiles()).has(f), `${f} is still one of the topic table's data files`);
    assert.ok(await exists(f), `${f} exists`);
  }
  const gone = before.filter((f) => !after.includes(f));
  assert.ok(gone.length >= doomed.length, `files below the cut left the upsert table: ${gone.length}`);
  for (const f of gone) if (!(await topicFiles()).has(f)) assert.equal(await exists(f), false, `${f}: deleted once neither table named it`);
  assert.deepEqual(await tableRows(t, catalog, io, LATEST), await expectedRows(all, new Map([[0, cut]])));

  // Compaction merges partition 0's files: the upsert table is rebuilt on the merged file.
  const beforeCompaction = await topicFiles();
  const outcome = await plugin.compact(tp0, { targetFileSizeBytes: 8 << 20 });
  assert.equal(outcome.status, 'compacted');
  await plugin.maintain(TOPIC);
  const merged = await latestFiles();
  for (const f of merged) assert.ok((await topicFiles()).has(f), `${f}: after compaction, one of the topic table's data files`);
  assert.deepEqual(await tableRows(t, catalog, io, LATEST), await expectedRows(all, new Map([[0, cut]])));

  // Snapshot expiry of the topic table (everything older than now) deletes the compacted-away inputs, but
  // never a file the upsert table names; the upsert table keeps only its current snapshot.
  await plugin.maintain(TOPIC);
  for (const f of await latestFiles()) assert.ok(await exists(f), `${f} exists after the topic table's expiry`);
  const replaced = [...beforeCompaction].filter((f) => !merged.includes(f) && f.includes('partition=0'));
  assert.ok(replaced.length >= 5, `compaction replaced partition 0's files: ${replaced.length}`);
  for (const f of replaced) assert.equal(await exists(f), false, `${f}: a compaction input neither table names any more is deleted by expiry`);
  assert.equal((await Table.load(catalog, LATEST, io)).metadata.snapshots.length, 1, 'the upsert table keeps its current snapshot only');
  assert.deepEqual(await tableRows(t, catalog, io, LATEST), await expectedRows(all, new Map([[0, cut]])));
});

test('the upsert table\'s deletes are compacted: a partition that gathered MAX_DELETE_FILES delete files is rebuilt into one', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, { ...CONFIG, upsert: { cdc: 'none' } });
  // Keys repeat across segments (k<offset % 7>), so every commit hides rows of earlier files.
  const segs: LogSegmentData[] = [];
  let next = 0;
  const deleteFiles = async (): Promise<number> => (await (await Table.load(catalog, LATEST, io)).files()).deleteFiles.length;
  let most = 0;
  for (let i = 0; i < MAX_DELETE_FILES + 6; i++) {
    const s = await keyedSegment(e.dir, next, 6, 7);
    segs.push(s);
    next = s.lastOffset + 1;
    plugin.segmentClosed(s);
    await plugin.drain();
    await plugin.maintain(TOPIC);
    most = Math.max(most, await deleteFiles());
  }
  assert.ok(most <= MAX_DELETE_FILES, `at most ${MAX_DELETE_FILES} delete files at any time (saw ${most})`);
  assert.ok(most >= MAX_DELETE_FILES - 1, `the deletes piled up before they were compacted (saw ${most})`);
  assert.deepEqual(await tableRows(t, catalog, io, LATEST), await expectedRows(segs));
});

/** A segment of partition 0 from `base`: `count` records keyed k<offset % keys>, one batch. */
async function keyedSegment(dir: string, base: number, count: number, keys: number): Promise<LogSegmentData> {
  const records = Array.from({ length: count }, (_, i) => ({ key: Buffer.from(`k${(base + i) % keys}`), value: Buffer.from(`v${base + i}`), timestampDelta: i, headers: [] }));
  const bytes = encodeRecordBatch({ baseOffset: BigInt(base), baseTimestamp: 1_700_000_000_000n + BigInt(base), compression: 'none', records });
  const path = join(dir, `0-${String(base).padStart(20, '0')}.log`);
  await writeFile(path, bytes);
  return { topic: TOPIC, partition: 0, baseOffset: base, lastOffset: base + count - 1, path, sizeInBytes: bytes.length, maxTimestamp: 1_700_000_000_000 + base + count - 1 };
}
