import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { icebergRead } from 'icebird';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { Table } from '../../../iceberg/table.js';
import { encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import type { LogSegmentData, TopicTieringConfig } from '../../../tiering/plugin/api.js';
import { ConvertCodec } from '../../../tiering/plugin/convert-codec.js';
import { IcebergTieringPlugin } from '../../../tiering/plugin/iceberg-tiering.js';
import { historySnapshots, RENAME_AFTER_SNAPSHOTS, SEGMENTS_PREFIX } from '../../../tiering/plugin/partition-manifest.js';
import { FLOE_TABLE_PROPERTIES } from '../../../tiering/plugin/table-maintenance.js';
import { installWarehouseFetch } from '../../helpers/file-fetch.js';

const TOPIC = 'events';
const ID = { namespace: ['kafka'], name: TOPIC };
const CONFIG: TopicTieringConfig = { enabled: true, namespace: ['kafka'], commitIntervalMs: 60_000, retentionMs: Infinity, retentionBytes: Infinity };

type After = { after: (fn: () => Promise<void> | void) => void };

async function setup(t: After) {
  const dir = await mkdtemp(join(tmpdir(), 'floe-maintenance-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const warehouse = pathToFileURL(join(dir, 'warehouse')).href;
  const open = (maintenance: { orphanWindowMs?: number; orphanIntervalMs?: number } = {}) => {
    const io = new LocalFileIO({ root: warehouse, fsync: false });
    const catalog = new WarehouseCatalog({ io, warehouse });
    const plugin = new IcebergTieringPlugin({ catalog, io, codec: new ConvertCodec(), retryBaseMs: 1, retryMaxMs: 5, maintenanceIntervalMs: 0, maintenance });
    t.after(() => plugin.close());
    return { plugin, catalog, io };
  };
  return { dir, warehouse, open };
}

/** One segment file of one batch of `count` records from `base`, values `p<partition>-<offset>`. */
async function segment(dir: string, partition: number, base: number, count: number): Promise<LogSegmentData> {
  const records = Array.from({ length: count }, (_, i) => ({ key: null, value: Buffer.from(`p${partition}-${base + i}`), timestampDelta: i, headers: [] }));
  const bytes = encodeRecordBatch({ baseOffset: BigInt(base), baseTimestamp: 1_700_000_000_000n + BigInt(base), compression: 'none', records });
  const path = join(dir, `${partition}-${String(base).padStart(20, '0')}.log`);
  await writeFile(path, bytes);
  return { topic: TOPIC, partition, baseOffset: base, lastOffset: base + count - 1, path, sizeInBytes: bytes.length, maxTimestamp: 1_700_000_000_000 + base + count - 1 };
}

/** Every offset a Kafka fetch returns for a partition, from 0 to the end. */
async function kafkaOffsets(plugin: IcebergTieringPlugin, partition: number): Promise<number[]> {
  const out: number[] = [];
  const end = plugin.metadata.highestCommittedOffset({ topic: TOPIC, partition });
  let offset = 0;
  while (offset <= end) {
    const r = await plugin.read({ topic: TOPIC, partition }, offset, 1 << 20, true);
    const batchLast = r.records.length === 0 ? offset : Number(r.records.readBigInt64BE(0)) + r.records.readInt32BE(23);
    for (let o = offset; o <= batchLast; o++) out.push(o);
    offset = batchLast + 1;
  }
  return out;
}

async function icebirdValues(catalog: WarehouseCatalog, io: LocalFileIO): Promise<string[]> {
  const table = await Table.load(catalog, ID, io);
  const restore = installWarehouseFetch(io);
  try {
    const rows = await icebergRead({ tableUrl: table.location, metadataFileName: table.metadataLocation.split('/').pop() as string });
    return rows.map((r) => Buffer.from(r['value'] as Uint8Array).toString()).sort();
  } finally {
    restore();
  }
}

async function filesUnder(io: LocalFileIO, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of io.list(prefix)) out.push(o.location);
  return out;
}

test('Floe creates its tables with the maintenance properties, under Iceberg\'s names', async (t) => {
  const s = await setup(t);
  const { plugin, catalog, io } = s.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  const props = (await Table.load(catalog, ID, io)).metadata.properties;
  for (const [k, v] of Object.entries(FLOE_TABLE_PROPERTIES)) assert.equal(props[k], v, k);
});

test('expiry drops old snapshots and the offset-index manifests only they named, keeps every partition\'s history, and a new process reads everything', async (t) => {
  const s = await setup(t);
  const first = s.open();
  await first.plugin.configureTopic(TOPIC, CONFIG);
  first.plugin.segmentClosed(await segment(s.dir, 0, 0, 5));
  first.plugin.segmentClosed(await segment(s.dir, 1, 0, 3));
  await first.plugin.drain();
  const commits = RENAME_AFTER_SNAPSHOTS + 10;
  for (let i = 1; i <= commits; i++) {
    first.plugin.segmentClosed(await segment(s.dir, 0, i * 5, 5));
    await first.plugin.drain();
  }
  const before = await Table.load(first.catalog, ID, first.io);
  assert.equal(before.metadata.snapshots.length, commits + 1);
  const partition0Manifests = await filesUnder(first.io, `${before.location}/kafka-index/partition=0/segments-`);
  assert.equal(partition0Manifests.length, commits + 1, 'one history object per commit that changed partition 0');

  // Expire everything Iceberg would allow: snapshots of any age, keep one.
  await before.setProperties({ 'history.expire.max-snapshot-age-ms': '0' });
  const result = await first.plugin.maintain(TOPIC);
  assert.ok(result);
  const after = await Table.load(first.catalog, ID, first.io);
  const kept = new Set(after.metadata.snapshots.map((x) => x['snapshot-id']));
  assert.deepEqual(kept, historySnapshots(before.metadata), 'exactly the snapshots naming the current history are kept');
  assert.ok(kept.size <= RENAME_AFTER_SNAPSHOTS);
  assert.equal(result.expiredSnapshots, commits + 1 - kept.size);
  const named = new Set(after.metadata.snapshots.flatMap((x) => Object.entries(x.summary).filter(([k]) => k.startsWith(SEGMENTS_PREFIX)).map(([, v]) => v)));
  const left = await filesUnder(first.io, `${after.location}/kafka-index/partition=0/segments-`);
  assert.deepEqual(left.filter((l) => !named.has(l)), [], 'history objects no kept snapshot names are deleted');
  assert.ok(left.length < partition0Manifests.length);
  await first.plugin.close();

  // A new process, from the warehouse alone: both partitions complete, for Kafka and for table readers.
  const second = s.open();
  await second.plugin.configureTopic(TOPIC, CONFIG);
  assert.deepEqual(await kafkaOffsets(second.plugin, 0), Array.from({ length: (commits + 1) * 5 }, (_, i) => i));
  assert.deepEqual(await kafkaOffsets(second.plugin, 1), [0, 1, 2]);
  const values = await icebirdValues(second.catalog, second.io);
  const expected = [...Array.from({ length: (commits + 1) * 5 }, (_, i) => `p0-${i}`), 'p1-0', 'p1-1', 'p1-2'].sort();
  assert.deepEqual(values, expected);
});

test('orphan removal deletes what a crashed upload left in the table location once it is older than the window, and nothing referenced', async (t) => {
  const s = await setup(t);
  const young = s.open({ orphanWindowMs: 60 * 60 * 1000, orphanIntervalMs: 0 });
  await young.plugin.configureTopic(TOPIC, CONFIG);
  young.plugin.segmentClosed(await segment(s.dir, 0, 0, 5));
  await young.plugin.drain();
  const table = await Table.load(young.catalog, ID, young.io);
  const strays = [`${table.location}/data/partition=0/crashed-upload.parquet`, `${table.location}/kafka-index/partition=0/segments-crashed.json`, `${table.location}/kafka-index/partition=0/crashed.idx`];
  for (const f of strays) await young.io.put(f, Buffer.from('left behind'));
  const everything = await filesUnder(young.io, `${table.location}/`);

  // Inside the window: kept.
  assert.equal((await young.plugin.maintain(TOPIC))?.orphansDeleted, 0);
  for (const f of strays) assert.ok(await young.io.head(f), `${f} is inside the window`);
  await young.plugin.close();

  // Past it (a zero window): exactly the strays go.
  const old = s.open({ orphanWindowMs: 0, orphanIntervalMs: 0 });
  await old.plugin.configureTopic(TOPIC, CONFIG);
  assert.equal((await old.plugin.maintain(TOPIC))?.orphansDeleted, strays.length);
  const left = new Set(await filesUnder(old.io, `${table.location}/`));
  for (const f of strays) assert.equal(left.has(f), false, `${f} is deleted`);
  for (const f of everything) if (!strays.includes(f)) assert.ok(left.has(f), `${f} is referenced and kept`);
  assert.deepEqual(await kafkaOffsets(old.plugin, 0), [0, 1, 2, 3, 4]);
});
