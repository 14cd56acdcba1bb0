import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { icebergRead } from 'icebird';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { Table } from '../../../iceberg/table.js';
import { decodeRecordBatch, encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { readFile } from 'node:fs/promises';
import type { LogSegmentData, TopicTieringConfig } from '../../../tiering/plugin/api.js';
import { ConvertCodec } from '../../../tiering/plugin/convert-codec.js';
import { IcebergTieringPlugin } from '../../../tiering/plugin/iceberg-tiering.js';
import { COMMITTED_OFFSET_PREFIX, RENAME_AFTER_SNAPSHOTS, SEGMENTS_PREFIX, historyDepths, historySnapshots } from '../../../tiering/plugin/partition-manifest.js';
import { latestSummaryProperty } from '../../../iceberg/transaction.js';
import { installWarehouseFetch } from '../../helpers/file-fetch.js';

const TOPIC = 'orders';
const CONFIG: TopicTieringConfig = { enabled: true, namespace: ['kafka'], commitIntervalMs: 60_000, retentionMs: Infinity, retentionBytes: Infinity };

interface Env {
  dir: string;
  warehouse: string;
  /** A plugin over the warehouse; `codec` defaults to the broker's (one data file per 64 MiB of log). */
  open(codec?: ConvertCodec): { plugin: IcebergTieringPlugin; catalog: WarehouseCatalog; io: LocalFileIO };
}

async function env(t: { after: (fn: () => Promise<void> | void) => void }): Promise<Env> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-tiering-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const warehouse = pathToFileURL(join(dir, 'warehouse')).href;
  return {
    dir,
    warehouse,
    open(codec = new ConvertCodec()) {
      const io = new LocalFileIO({ root: warehouse, fsync: false });
      const catalog = new WarehouseCatalog({ io, warehouse });
      const plugin = new IcebergTieringPlugin({ catalog, io, codec, retryBaseMs: 1, retryMaxMs: 5 });
      t.after(() => plugin.close());
      return { plugin, catalog, io };
    },
  };
}

/** A segment file of `batches` batches of `per` records from `base`, values `p<partition>-<offset>`. */
async function segment(dir: string, partition: number, base: number, batches: number, per: number, baseTimestamp = 1_700_000_000_000): Promise<LogSegmentData> {
  const parts: Buffer[] = [];
  let offset = base;
  for (let b = 0; b < batches; b++) {
    const records = Array.from({ length: per }, (_, i) => ({
      key: i % 3 === 0 ? null : Buffer.from(`k${offset + i}`),
      value: Buffer.from(`p${partition}-${offset + i}`),
      timestampDelta: i,
      headers: [
        { key: 'h', value: Buffer.from('1') },
        { key: 'h', value: null },
      ],
    }));
    parts.push(encodeRecordBatch({ baseOffset: BigInt(offset), baseTimestamp: BigInt(baseTimestamp + offset), compression: b % 2 === 0 ? 'zstd' : 'none', producerId: 7n, producerEpoch: 0, baseSequence: offset, records }));
    offset += per;
  }
  const path = join(dir, `${partition}-${String(base).padStart(20, '0')}.log`);
  const bytes = Buffer.concat(parts);
  await writeFile(path, bytes);
  return { topic: TOPIC, partition, baseOffset: base, lastOffset: offset - 1, path, sizeInBytes: bytes.length, maxTimestamp: baseTimestamp + offset - 1 };
}

/** The table's rows as DuckDB reads them, position deletes applied (anti-join on the file's row numbers). */
async function tableRows(warehouse: string, catalog: WarehouseCatalog, io: LocalFileIO, t: { after: (fn: () => void) => void }): Promise<{ partition: number; offset: number; value: string }[]> {
  const table = await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io);
  const live = await table.files();
  const files = live.dataFiles.map((e) => fileURLToPath(e.data_file.file_path));
  if (files.length === 0) return [];
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  t.after(() => {
    conn.closeSync();
    db.closeSync();
  });
  const list = files.map((f) => `'${f}'`).join(', ');
  const deletes = live.deleteFiles.map((e) => `'${fileURLToPath(e.data_file.file_path)}'`).join(', ');
  const hidden = deletes === '' ? '' : `anti join (select file_path, pos from read_parquet([${deletes}])) d on d.file_path = 'file://' || t.filename and d.pos = t.file_row_number`;
  const rows = (await conn.runAndReadAll(`select kafka.partition as p, kafka."offset" as o, decode(value) as v from read_parquet([${list}], filename = true, file_row_number = true) t ${hidden} order by p, o`)).getRowObjectsJson();
  void warehouse;
  return rows.map((r) => ({ partition: Number(r['p']), offset: Number(r['o']), value: String(r['v']) }));
}

function expected(ranges: [number, number, number][]): { partition: number; offset: number; value: string }[] {
  const out = [];
  for (const [p, from, to] of ranges) for (let o = from; o <= to; o++) out.push({ partition: p, offset: o, value: `p${p}-${o}` });
  return out;
}

test('segments of several partitions land in one snapshot with per-partition committed offsets; DuckDB sees one row per record', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  const segs = [await segment(e.dir, 0, 0, 2, 5), await segment(e.dir, 0, 10, 1, 4), await segment(e.dir, 1, 0, 3, 3)];
  for (const s of segs) plugin.segmentClosed(s);
  await plugin.drain();

  const table = await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io);
  const snapshots = table.metadata.snapshots;
  assert.equal(snapshots.length, 1, 'one commit for three segments of two partitions');
  assert.equal(snapshots[0]?.summary[COMMITTED_OFFSET_PREFIX + 0], '13');
  assert.equal(snapshots[0]?.summary[COMMITTED_OFFSET_PREFIX + 1], '8');
  assert.equal(table.metadata.properties['floe.owner'], 'floe-tiering');
  assert.equal(plugin.metadata.highestCommittedOffset({ topic: TOPIC, partition: 0 }), 13);
  assert.equal(plugin.metadata.remoteLogStartOffset({ topic: TOPIC, partition: 1 }), 0);
  assert.deepEqual(plugin.metadata.listRemoteLogSegments({ topic: TOPIC, partition: 0 }).map((s) => [s.baseOffset, s.lastOffset]), [[0, 9], [10, 13]]);
  assert.equal(plugin.metadata.remoteLogSegmentFor({ topic: TOPIC, partition: 0 }, 11)?.baseOffset, 10);
  assert.deepEqual(await tableRows(e.warehouse, catalog, io, t), expected([[0, 0, 13], [1, 0, 8]]));
});

test('a restarted plugin resumes from the table: re-queued segments add no rows, new ones continue the history', async (t) => {
  const e = await env(t);
  const first = e.open();
  await first.plugin.configureTopic(TOPIC, CONFIG);
  const s0 = await segment(e.dir, 0, 0, 2, 5);
  first.plugin.segmentClosed(s0);
  await first.plugin.drain();
  await first.plugin.close();

  // A new process: nothing in memory, only the warehouse.
  const second = e.open();
  await second.plugin.configureTopic(TOPIC, CONFIG);
  assert.equal(second.plugin.metadata.highestCommittedOffset({ topic: TOPIC, partition: 0 }), 9);
  second.plugin.segmentClosed(s0); // the broker re-queues what its disk still holds
  second.plugin.segmentClosed(await segment(e.dir, 0, 10, 1, 5));
  await second.plugin.drain();
  const table = await Table.load(second.catalog, { namespace: ['kafka'], name: TOPIC }, second.io);
  assert.equal(table.metadata.snapshots.length, 2);
  assert.deepEqual(await tableRows(e.warehouse, second.catalog, second.io, t), expected([[0, 0, 14]]));
});

test('a partition that stops changing is named again within the newest snapshots, so expiry can keep only those', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  plugin.segmentClosed(await segment(e.dir, 0, 0, 1, 5));
  plugin.segmentClosed(await segment(e.dir, 1, 0, 1, 3));
  await plugin.drain();
  const first = (await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io)).metadata.snapshots[0]?.summary[SEGMENTS_PREFIX + 1];
  const commits = RENAME_AFTER_SNAPSHOTS * 2 + 3;
  const namedBy: number[] = [];
  for (let i = 0; i < commits; i++) {
    plugin.segmentClosed(await segment(e.dir, 0, 5 + i * 5, 1, 5));
    await plugin.drain();
    const md = (await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io)).metadata;
    const depth = historyDepths(md).get(1);
    assert.ok(depth !== undefined && depth < RENAME_AFTER_SNAPSHOTS, `partition 1 named ${String(depth)} snapshots back after commit ${i}`);
    assert.ok(historySnapshots(md).size <= RENAME_AFTER_SNAPSHOTS);
    if (md.snapshots.at(-1)?.summary[SEGMENTS_PREFIX + 1] !== undefined) namedBy.push(i);
  }
  assert.equal(namedBy.length, 2, `named again only when due, not by every commit (${namedBy.join(', ')})`);
  const md = (await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io)).metadata;
  assert.equal(latestSummaryProperty(md, SEGMENTS_PREFIX + 1), first, 'the same history, named again');
  assert.equal(latestSummaryProperty(md, COMMITTED_OFFSET_PREFIX + 1), '2');
});

test('a commit whose offsets the table already holds is refused and settled from the table, without duplicate rows', async (t) => {
  const e = await env(t);
  const a = e.open();
  const b = e.open();
  await a.plugin.configureTopic(TOPIC, CONFIG);
  await b.plugin.configureTopic(TOPIC, CONFIG);
  const s0 = await segment(e.dir, 0, 0, 1, 6);
  // Both copy the same segment (as a crashed broker and its restart would); a commits first.
  const copiedByA = await a.plugin.storage.copyLogSegmentData(s0);
  const copiedByB = await b.plugin.storage.copyLogSegmentData(s0);
  await a.plugin.metadata.commitRemoteLogSegments([copiedByA]);
  await b.plugin.metadata.commitRemoteLogSegments([copiedByB]); // stale view: validate refuses, reload shows it landed
  assert.equal(b.plugin.metadata.highestCommittedOffset({ topic: TOPIC, partition: 0 }), 5);
  const table = await Table.load(a.catalog, { namespace: ['kafka'], name: TOPIC }, a.io);
  assert.equal(table.metadata.snapshots.length, 1);
  assert.deepEqual(await tableRows(e.warehouse, a.catalog, a.io, t), expected([[0, 0, 5]]));
});

test('total retention removes the oldest segments rows, files and index in one commit and moves the remote log start', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, { ...CONFIG, retentionMs: 1000 });
  const old = await segment(e.dir, 0, 0, 1, 4);
  const recent = await segment(e.dir, 0, 4, 1, 4, 1_700_000_010_000);
  plugin.segmentClosed(old);
  plugin.segmentClosed(recent);
  await plugin.drain();
  const [oldMeta] = plugin.metadata.listRemoteLogSegments({ topic: TOPIC, partition: 0 });
  assert.ok(oldMeta);
  // "now" is within a second of the recent segment's max timestamp, 10 s after the old one's.
  const removed = await plugin.enforceRetention(TOPIC, recent.maxTimestamp + 500);
  assert.equal(removed, 1);
  assert.equal(plugin.metadata.remoteLogStartOffset({ topic: TOPIC, partition: 0 }), 4);
  assert.deepEqual(await tableRows(e.warehouse, catalog, io, t), expected([[0, 4, 7]]));
  for (const f of [...oldMeta.dataFiles, ...oldMeta.indexFiles]) assert.equal(await io.head(f), undefined, `${f} is deleted`);
  const table = await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io);
  assert.equal(table.currentSnapshot()?.summary['operation'], 'delete');
});

/** Every record of a buffer of batches (CRC checked), with its absolute offset and timestamp. */
function records(buf: Buffer): { offset: number; timestamp: number; key: string | null; value: string | null; headers: string; producer: string }[] {
  const out = [];
  for (const bounds of iterateBatches(buf)) {
    const b = decodeRecordBatch(buf, bounds.start, { verifyCrc: true });
    for (const r of b.records) {
      out.push({
        offset: Number(b.baseOffset) + r.offsetDelta,
        timestamp: Number(b.baseTimestamp) + r.timestampDelta,
        key: r.key === null ? null : r.key.toString('hex'),
        value: r.value === null ? null : r.value.toString('hex'),
        headers: JSON.stringify(r.headers.map((h) => [h.key, h.value === null ? null : h.value.toString('hex')])),
        producer: `${b.producerId}/${b.producerEpoch}/${b.baseSequence}/${b.timestampType}`,
      });
    }
  }
  return out;
}

test('fetches from the table return the stored records with their offsets, timestamps, headers and producer fields, from any offset', async (t) => {
  const e = await env(t);
  const { plugin } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  const segs = [await segment(e.dir, 0, 0, 3, 7), await segment(e.dir, 0, 21, 2, 5)];
  for (const s of segs) plugin.segmentClosed(s);
  await plugin.drain();
  const original = records(Buffer.concat(await Promise.all(segs.map((s) => readFile(s.path)))));
  const tp = { topic: TOPIC, partition: 0 };
  const readAll = async (from: number) => {
    const got = [];
    for (let offset = from; offset <= 30; ) {
      const r = await plugin.read(tp, offset, 200, true);
      assert.ok(r.records.length > 0, `data at ${offset}`);
      got.push(...records(r.records));
      assert.ok(r.nextOffset > offset);
      offset = r.nextOffset;
    }
    return got.filter((r) => r.offset >= from);
  };
  assert.deepEqual(await readAll(0), original);
  for (const from of [1, 6, 7, 13, 20, 21, 29, 30]) assert.deepEqual(await readAll(from), original.filter((r) => r.offset >= from), `from ${from}`);
  await assert.rejects(plugin.read(tp, 31, 200, true), { code: 'OFFSET_OUT_OF_RANGE' });
});

/** A segment of one transaction marker (COMMIT) at `offset`: a control batch, no data records. */
async function markerSegment(dir: string, partition: number, offset: number): Promise<LogSegmentData> {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0); // version
  key.writeInt16BE(1, 2); // type: COMMIT
  const value = Buffer.alloc(6); // version 0, coordinator epoch 0
  const bytes = encodeRecordBatch({
    baseOffset: BigInt(offset),
    baseTimestamp: 1_700_000_000_000n,
    compression: 'none',
    producerId: 7n,
    producerEpoch: 0,
    baseSequence: -1,
    isTransactional: true,
    isControl: true,
    records: [{ key, value, timestampDelta: 0, headers: [] }],
  });
  const path = join(dir, `${partition}-${String(offset).padStart(20, '0')}-marker.log`);
  await writeFile(path, bytes);
  return { topic: TOPIC, partition, baseOffset: offset, lastOffset: offset, path, sizeInBytes: bytes.length, maxTimestamp: 1_700_000_000_000 };
}

test('a segment of control batches only commits on its own: a snapshot without files moves the committed offset', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  plugin.segmentClosed(await segment(e.dir, 0, 0, 1, 5));
  await plugin.drain();
  plugin.segmentClosed(await markerSegment(e.dir, 0, 5));
  await plugin.drain();

  assert.equal(plugin.metadata.highestCommittedOffset({ topic: TOPIC, partition: 0 }), 5, 'the marker is committed (so its local copy may go)');
  assert.deepEqual(plugin.metadata.listRemoteLogSegments({ topic: TOPIC, partition: 0 }).map((s) => [s.baseOffset, s.lastOffset, s.dataFiles.length]), [[0, 4, 1], [5, 5, 0]]);
  const table = await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io);
  assert.equal(table.metadata.snapshots.length, 2);
  const last = table.metadata.snapshots[1];
  assert.equal(last?.summary[COMMITTED_OFFSET_PREFIX + 0], '5');
  assert.equal(last?.summary['total-records'], '5', 'no rows for the marker: Iceberg readers never see control records');
  assert.deepEqual(await tableRows(e.warehouse, catalog, io, t), expected([[0, 0, 4]]));

  // A new process finds the marker segment in the committed history.
  const again = e.open();
  await again.plugin.configureTopic(TOPIC, CONFIG);
  assert.equal(again.plugin.metadata.highestCommittedOffset({ topic: TOPIC, partition: 0 }), 5);
});

test('deleteRecordsBefore moves the remote log start in a commit, removes whole segments below it, and survives a restart', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  for (const s of [await segment(e.dir, 0, 0, 1, 5), await segment(e.dir, 0, 5, 1, 5), await segment(e.dir, 0, 10, 1, 5)]) plugin.segmentClosed(s);
  await plugin.drain();
  const tp = { topic: TOPIC, partition: 0 };
  const [first] = plugin.metadata.listRemoteLogSegments(tp);
  assert.ok(first);

  assert.equal(await plugin.deleteRecordsBefore(tp, 7), 7);
  assert.deepEqual(plugin.metadata.listRemoteLogSegments(tp).map((s) => s.baseOffset), [5, 10], 'the segment wholly below 7 is gone');
  for (const f of [...first.dataFiles, ...first.indexFiles]) assert.equal(await io.head(f), undefined, `${f} is deleted`);
  assert.deepEqual(await tableRows(e.warehouse, catalog, io, t), expected([[0, 7, 14]]), 'rows of the segment holding 7 from 7 on stay, the ones below are hidden');
  await assert.rejects(plugin.read(tp, 6, 1 << 20, true), { code: 'OFFSET_OUT_OF_RANGE' });
  assert.equal(records((await plugin.read(tp, 7, 1 << 20, true)).records)[0]?.offset, 5, 'the batch holding the start comes whole');
  assert.equal(await plugin.deleteRecordsBefore(tp, 3), 7, 'never moves backwards');
  assert.deepEqual(await plugin.offsetForTimestamp(tp, 0), { offset: 7, timestamp: 1_700_000_000_000 + 7 }, 'timestamps below the start answer the start');

  // A later commit keeps the start; a new process reads it from the table.
  plugin.segmentClosed(await segment(e.dir, 0, 15, 1, 5));
  await plugin.drain();
  const again = e.open();
  await again.plugin.configureTopic(TOPIC, CONFIG);
  assert.equal(again.plugin.metadata.remoteLogStartOffset(tp), 7);
  assert.equal(again.plugin.metadata.highestCommittedOffset(tp), 19);

  // Past everything committed: no remote segment is left, and none comes back from a restart.
  assert.equal(await again.plugin.deleteRecordsBefore(tp, 25), undefined);
  const third = e.open();
  await third.plugin.configureTopic(TOPIC, CONFIG);
  assert.deepEqual(third.plugin.metadata.listRemoteLogSegments(tp), []);
  assert.deepEqual(await tableRows(e.warehouse, third.catalog, third.io, t), []);
});

test('offsetForTimestamp finds the first record at or after a timestamp in the table, skipping segments by their max timestamp', async (t) => {
  const e = await env(t);
  const { plugin } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  // The record at offset o has timestamp T + o; the first segment's max timestamp (T + 9) is below T + 12.
  for (const s of [await segment(e.dir, 0, 0, 2, 5, 1_700_000_000_000), await segment(e.dir, 0, 10, 2, 5, 1_700_000_000_000)]) plugin.segmentClosed(s);
  await plugin.drain();
  const tp = { topic: TOPIC, partition: 0 };
  const T = 1_700_000_000_000;
  assert.deepEqual(await plugin.offsetForTimestamp(tp, T), { offset: 0, timestamp: T });
  assert.deepEqual(await plugin.offsetForTimestamp(tp, T + 3), { offset: 3, timestamp: T + 3 });
  assert.deepEqual(await plugin.offsetForTimestamp(tp, T + 12), { offset: 12, timestamp: T + 12 }, 'in the second segment');
  assert.deepEqual(await plugin.offsetForTimestamp(tp, T + 19), { offset: 19, timestamp: T + 19 }, 'the last record');
  assert.equal(await plugin.offsetForTimestamp(tp, T + 1000), undefined);
});

test('removeTopic with dropTable drops and purges the topic table, and leaves another owner\'s table alone', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  plugin.segmentClosed(await segment(e.dir, 0, 0, 1, 5));
  await plugin.drain();
  const id = { namespace: ['kafka'], name: TOPIC };
  const location = (await Table.load(catalog, id, io)).location;
  await plugin.removeTopic(TOPIC, { dropTable: true });
  assert.equal(await catalog.tableExists(id), false);
  const left: string[] = [];
  for await (const o of io.list(`${location}/`)) left.push(o.location);
  assert.deepEqual(left, [], 'no object of the table is left');

  // A same-named table that Floe's tiering does not own stays.
  await catalog.createTable({ namespace: ['kafka'], name: 'foreign' }, { schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'n', required: true, type: 'long' }] } });
  await plugin.removeTopic('foreign', { dropTable: true });
  assert.equal(await catalog.tableExists({ namespace: ['kafka'], name: 'foreign' }), true);
});

/** (partition, offset) of every row icebird reads from the table (it applies position deletes). */
async function icebirdOffsets(catalog: WarehouseCatalog, io: LocalFileIO): Promise<number[]> {
  const table = await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io);
  const restore = installWarehouseFetch(io);
  try {
    const loc = table.metadataLocation;
    const rows = await icebergRead({ tableUrl: table.location, metadataFileName: loc.slice(loc.lastIndexOf('/') + 1) });
    return rows.map((r: Record<string, unknown>) => Number((r['kafka'] as Record<string, unknown>)['offset'])).sort((a, b) => a - b);
  } finally {
    restore();
  }
}

async function liveFiles(catalog: WarehouseCatalog, io: LocalFileIO): Promise<{ data: string[]; deletes: { path: string; target: string | null | undefined; rows: bigint }[] }> {
  const table = await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io);
  const { dataFiles, deleteFiles } = await table.files();
  return {
    data: dataFiles.map((e) => e.data_file.file_path).sort(),
    deletes: deleteFiles.map((e) => ({ path: e.data_file.file_path, target: e.data_file.referenced_data_file, rows: e.data_file.record_count })),
  };
}

const span = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

test('DeleteRecords inside a batch of a tiered segment: table readers see exactly the records from X on, Kafka reads are unchanged', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  // Segments 0..9 and 10..19 with batches of 5 records; 20..24 with one batch.
  const segs = [await segment(e.dir, 0, 0, 2, 5), await segment(e.dir, 0, 10, 2, 5), await segment(e.dir, 0, 20, 1, 5)];
  for (const s of segs) plugin.segmentClosed(s);
  await plugin.drain();
  const tp = { topic: TOPIC, partition: 0 };
  const before = records((await plugin.read(tp, 5, 1 << 20, true)).records);

  // 7 is inside the batch 5..9: rows 0..6 of the first data file are hidden (the batch's 5 and 6 too).
  assert.equal(await plugin.deleteRecordsBefore(tp, 7), 7);
  const [first, second] = plugin.metadata.listRemoteLogSegments(tp);
  assert.ok(first && second);
  assert.equal(first.deleteFiles?.length, 1);
  let files = await liveFiles(catalog, io);
  assert.deepEqual(files.deletes, [{ path: first.deleteFiles?.[0], target: first.dataFiles[0], rows: 7n }]);
  assert.deepEqual(await icebirdOffsets(catalog, io), span(7, 24), 'icebird');
  assert.deepEqual((await tableRows(e.warehouse, catalog, io, t)).map((r) => r.offset), span(7, 24), 'DuckDB with the deletes anti-joined');
  assert.deepEqual(records((await plugin.read(tp, 7, 1 << 20, true)).records), before, 'Kafka still gets the whole batch holding 7 and everything after');
  const table = await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io);
  assert.equal(table.currentSnapshot()?.summary['total-position-deletes'], '7');

  // A retried DeleteRecords at the same offset changes nothing.
  const snapshots = table.metadata.snapshots.length;
  assert.equal(await plugin.deleteRecordsBefore(tp, 7), 7);
  assert.equal((await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io)).metadata.snapshots.length, snapshots);

  // Further into the same segment: the delete file is replaced (one per data file), the old object goes.
  const old = first.deleteFiles?.[0] as string;
  await plugin.deleteRecordsBefore(tp, 9);
  files = await liveFiles(catalog, io);
  assert.equal(files.deletes.length, 1);
  assert.equal(files.deletes[0]?.rows, 9n);
  assert.notEqual(files.deletes[0]?.path, old);
  assert.equal(await io.head(old), undefined, 'the replaced delete file is deleted');
  assert.deepEqual(await icebirdOffsets(catalog, io), span(9, 24));

  // Into the next segment, on a batch boundary (15): the first segment leaves the table with its delete file in
  // one commit; the second gets its own, over the whole batch 10..14 and nothing of the batch 15..19.
  const replaced = plugin.metadata.listRemoteLogSegments(tp)[0]?.deleteFiles?.[0] as string;
  await plugin.deleteRecordsBefore(tp, 15);
  files = await liveFiles(catalog, io);
  assert.deepEqual(files.data, [...second.dataFiles, ...(plugin.metadata.listRemoteLogSegments(tp)[1]?.dataFiles ?? [])].sort());
  assert.deepEqual(files.deletes.map((d) => [d.target, d.rows]), [[second.dataFiles[0], 5n]]);
  for (const f of [...first.dataFiles, ...first.indexFiles, replaced]) assert.equal(await io.head(f), undefined, `${f} is deleted`);
  assert.deepEqual(await icebirdOffsets(catalog, io), span(15, 24));
  assert.deepEqual((await tableRows(e.warehouse, catalog, io, t)).map((r) => r.offset), span(15, 24));

  // Total retention removes the cut segment: its delete file leaves with it, nothing dangles.
  await plugin.configureTopic(TOPIC, { ...CONFIG, retentionBytes: segs[2]?.sizeInBytes ?? 0 });
  assert.equal(await plugin.enforceRetention(TOPIC, Date.now()), 1);
  files = await liveFiles(catalog, io);
  assert.deepEqual(files.deletes, []);
  assert.deepEqual(await icebirdOffsets(catalog, io), span(20, 24));
  const last = await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io);
  assert.equal(last.currentSnapshot()?.summary['total-delete-files'], '0');
});

test('DeleteRecords before tiering: a later commit hides the rows below the start, drops segments wholly below it, and a new process keeps both', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  const tp = { topic: TOPIC, partition: 0 };
  const segs = [await segment(e.dir, 0, 0, 1, 5), await segment(e.dir, 0, 5, 2, 5), await segment(e.dir, 0, 15, 1, 5)];
  // The local log moved its start to 8 before any of these were tiered (the broker tells the plugin first).
  assert.equal(await plugin.deleteRecordsBefore(tp, 8), undefined, 'nothing remote yet');
  // The segment wholly below 8 was copied before the local log deleted it (a race): the commit drops it.
  const early = await plugin.storage.copyLogSegmentData(segs[0] as LogSegmentData);
  assert.deepEqual([early.dataFiles, early.indexFiles], [[], []], 'nothing converted for a segment wholly below the start');
  await plugin.metadata.commitRemoteLogSegments([early]);
  for (const s of segs.slice(1)) plugin.segmentClosed(s);
  await plugin.drain();

  assert.equal(plugin.metadata.remoteLogStartOffset(tp), 8);
  assert.equal(plugin.metadata.highestCommittedOffset(tp), 19);
  assert.deepEqual(plugin.metadata.listRemoteLogSegments(tp).map((s) => [s.baseOffset, s.deleteFiles?.length ?? 0]), [[5, 1], [15, 0]]);
  assert.deepEqual(await icebirdOffsets(catalog, io), span(8, 19));
  assert.deepEqual((await tableRows(e.warehouse, catalog, io, t)).map((r) => r.offset), span(8, 19));
  assert.equal(records((await plugin.read(tp, 8, 1 << 20, true)).records)[0]?.offset, 5, 'Kafka gets the batch holding 8 whole');

  // A new process from the warehouse alone: same history, and a further DeleteRecords replaces the delete file.
  const again = e.open();
  await again.plugin.configureTopic(TOPIC, CONFIG);
  const [cut] = again.plugin.metadata.listRemoteLogSegments(tp);
  assert.equal(cut?.deleteFiles?.length, 1);
  await again.plugin.deleteRecordsBefore(tp, 12);
  const files = await liveFiles(again.catalog, again.io);
  assert.deepEqual(files.deletes.map((d) => d.rows), [7n]);
  assert.equal(await again.io.head(cut?.deleteFiles?.[0] as string), undefined);
  assert.deepEqual(await icebirdOffsets(again.catalog, again.io), span(12, 19));
});

/** A codec that closes a data file at every batch boundary, so one segment spans many data files. */
const filePerBatch = () => new ConvertCodec({ convert: { targetFileBytes: 1 } });

test('DeleteRecords past whole data files of a segment removes those files from the table instead of hiding all their rows', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open(filePerBatch());
  await plugin.configureTopic(TOPIC, CONFIG);
  const tp = { topic: TOPIC, partition: 0 };
  // One segment 0..29 of six batches of 5: six data files.
  plugin.segmentClosed(await segment(e.dir, 0, 0, 6, 5));
  await plugin.drain();
  const [whole] = plugin.metadata.listRemoteLogSegments(tp);
  assert.equal(whole?.dataFiles.length, 6);
  const kafkaBefore = records((await plugin.read(tp, 15, 1 << 20, true)).records);

  // 17 is inside the fourth batch (15..19): the first three files leave, the fourth hides rows 15 and 16.
  assert.equal(await plugin.deleteRecordsBefore(tp, 17), 17);
  const [cut] = plugin.metadata.listRemoteLogSegments(tp);
  assert.deepEqual(cut?.dataFiles, whole?.dataFiles.slice(3));
  assert.deepEqual(cut?.indexFiles, whole?.indexFiles.slice(3));
  const files = await liveFiles(catalog, io);
  assert.deepEqual(files.data, [...(whole?.dataFiles.slice(3) ?? [])].sort());
  assert.deepEqual(files.deletes.map((d) => [d.target, d.rows]), [[whole?.dataFiles[3], 2n]]);
  const entries = await (await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io)).files();
  assert.deepEqual(entries.deleteFiles.map((d) => d.data_file.partition), [{ kafka_partition: 0 }], 'the delete file carries its data file\'s tuple');
  for (const f of [...(whole?.dataFiles.slice(0, 3) ?? []), ...(whole?.indexFiles.slice(0, 3) ?? [])]) assert.equal(await io.head(f), undefined, `${f} is deleted`);
  assert.deepEqual(await icebirdOffsets(catalog, io), span(17, 29), 'icebird');
  assert.deepEqual((await tableRows(e.warehouse, catalog, io, t)).map((r) => r.offset), span(17, 29), 'DuckDB');
  assert.deepEqual(records((await plugin.read(tp, 17, 1 << 20, true)).records), kafkaBefore, 'Kafka gets the batch holding 17 whole, and the rest');
  const table = await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io);
  assert.equal(table.currentSnapshot()?.summary['total-data-files'], '3');

  // A new process from the warehouse alone serves the same history.
  const again = e.open(filePerBatch());
  await again.plugin.configureTopic(TOPIC, CONFIG);
  assert.deepEqual(again.plugin.metadata.listRemoteLogSegments(tp), plugin.metadata.listRemoteLogSegments(tp));
  assert.deepEqual(records((await again.plugin.read(tp, 17, 1 << 20, true)).records), kafkaBefore);
});

test('DeleteRecords in a table whose partition spec was evolved by another engine finds each data file\'s tuple in the manifests', async (t) => {
  const e = await env(t);
  const first = e.open(filePerBatch());
  await first.plugin.configureTopic(TOPIC, CONFIG);
  const tp = { topic: TOPIC, partition: 3 };
  first.plugin.segmentClosed(await segment(e.dir, 3, 0, 4, 5));
  await first.plugin.drain();
  // Another engine adds a second spec (not the default): Floe can no longer assume every file's tuple.
  const id = { namespace: ['kafka'], name: TOPIC };
  await first.catalog.commitTable(id, [], [{ action: 'add-spec', spec: { 'spec-id': 1, fields: [{ 'source-id': 3, 'field-id': 1001, name: 'p_again', transform: 'identity' }] } }]);
  const { plugin, catalog, io } = e.open(filePerBatch());
  await plugin.configureTopic(TOPIC, CONFIG);
  assert.equal((await Table.load(catalog, id, io)).metadata['partition-specs'].length, 2);
  await plugin.deleteRecordsBefore(tp, 12);
  const table = await Table.load(catalog, id, io);
  const { dataFiles, deleteFiles } = await table.files();
  assert.equal(deleteFiles.length, 1);
  const target = dataFiles.find((d) => d.data_file.file_path === deleteFiles[0]?.data_file.referenced_data_file);
  assert.deepEqual(deleteFiles[0]?.data_file.partition, target?.data_file.partition, 'the delete file carries its data file\'s tuple');
  assert.deepEqual(deleteFiles[0]?.data_file.partition, { kafka_partition: 3 });
  assert.deepEqual(await icebirdOffsets(catalog, io), span(12, 19));
});

test('DeleteRecords before tiering past whole data files of a segment: the commit leaves those files out and deletes them', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open(filePerBatch());
  await plugin.configureTopic(TOPIC, CONFIG);
  const tp = { topic: TOPIC, partition: 0 };
  assert.equal(await plugin.deleteRecordsBefore(tp, 12), undefined, 'nothing remote yet');
  const seg = await segment(e.dir, 0, 0, 4, 5);
  const copied = await plugin.storage.copyLogSegmentData(seg);
  assert.equal(copied.dataFiles.length, 4);
  await plugin.metadata.commitRemoteLogSegments([copied]);
  const [entry] = plugin.metadata.listRemoteLogSegments(tp);
  assert.deepEqual(entry?.dataFiles, copied.dataFiles.slice(2));
  assert.deepEqual(entry?.indexFiles, copied.indexFiles.slice(2));
  const files = await liveFiles(catalog, io);
  assert.deepEqual(files.data, copied.dataFiles.slice(2).sort());
  assert.deepEqual(files.deletes.map((d) => [d.target, d.rows]), [[copied.dataFiles[2], 2n]]);
  for (const f of [...copied.dataFiles.slice(0, 2), ...copied.indexFiles.slice(0, 2)]) assert.equal(await io.head(f), undefined, `${f} is deleted`);
  assert.deepEqual(await icebirdOffsets(catalog, io), span(12, 19));
  assert.equal(records((await plugin.read(tp, 12, 1 << 20, true)).records)[0]?.offset, 10, 'Kafka gets the batch holding 12 whole');
});

test('a DeleteRecords that landed without its caller knowing is not applied twice: the stale process is refused, reloads, and its retry is a no-op', async (t) => {
  const e = await env(t);
  const a = e.open();
  const b = e.open();
  await a.plugin.configureTopic(TOPIC, CONFIG);
  a.plugin.segmentClosed(await segment(e.dir, 0, 0, 2, 5));
  await a.plugin.drain();
  await b.plugin.configureTopic(TOPIC, CONFIG);
  const tp = { topic: TOPIC, partition: 0 };
  await a.plugin.deleteRecordsBefore(tp, 3);
  // b's view predates that commit: building on it would add a second delete file for rows 0..2.
  await assert.rejects(b.plugin.deleteRecordsBefore(tp, 3), { code: 'HISTORY_CHANGED' });
  assert.equal(await b.plugin.deleteRecordsBefore(tp, 3), 3);
  const files = await liveFiles(a.catalog, a.io);
  assert.deepEqual(files.deletes.map((d) => d.rows), [3n]);
  assert.deepEqual(await icebirdOffsets(a.catalog, a.io), span(3, 9));
});

test('maxTimestampOffset: the largest timestamp in the table and the earliest offset carrying it, from the remote log start', async (t) => {
  const e = await env(t);
  const { plugin } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  const tp = { topic: TOPIC, partition: 0 };
  assert.equal(await plugin.maxTimestampOffset(tp), undefined, 'nothing tiered');
  const T = 1_700_000_000_000;
  // segment() gives record o the timestamp baseTimestamp + o: A (0..9) T..T+9, B (10..19) T-90..T-81, C (20..24) T..T+4.
  const segs = [await segment(e.dir, 0, 0, 2, 5, T), await segment(e.dir, 0, 10, 2, 5, T - 100), await segment(e.dir, 0, 20, 1, 5, T - 20)];
  for (const s of segs) plugin.segmentClosed(s);
  await plugin.drain();
  // A's T+9 at offset 9 wins; B is never read (its max timestamp cannot beat it).
  assert.deepEqual(await plugin.maxTimestampOffset(tp), { offset: 9, timestamp: T + 9 });
  // Below the start records do not count: after DeleteRecords(10) the max is in C.
  await plugin.deleteRecordsBefore(tp, 10);
  assert.deepEqual(await plugin.maxTimestampOffset(tp), { offset: 24, timestamp: T + 4 });

  // Ties: the earliest offset wins, across segments.
  const e2 = await env(t);
  const other = e2.open();
  await other.plugin.configureTopic(TOPIC, CONFIG);
  // Segment 0..4 at T..T+4 and segment 5..9 at T..T+4 too: T+4 at offsets 4 and 9.
  for (const s of [await segment(e2.dir, 0, 0, 1, 5, T), await segment(e2.dir, 0, 5, 1, 5, T - 5)]) other.plugin.segmentClosed(s);
  await other.plugin.drain();
  assert.deepEqual(await other.plugin.maxTimestampOffset(tp), { offset: 4, timestamp: T + 4 });
  // A start inside the first segment past its max: the tie is gone, the second segment's record counts.
  await other.plugin.deleteRecordsBefore(tp, 5);
  assert.deepEqual(await other.plugin.maxTimestampOffset(tp), { offset: 9, timestamp: T + 4 });
});
