import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Table } from '../../../iceberg/table.js';
import { latestSummaryProperty } from '../../../iceberg/transaction.js';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { COMMITTED_OFFSET_PREFIX, SEGMENTS_PREFIX } from '../../../tiering/plugin/partition-manifest.js';
import { TARGET_FILE_SIZE_PROPERTY } from '../../../tiering/plugin/compaction-plan.js';
import { IcebergTopic } from '../../../tiering/plugin/iceberg-topic.js';
import { ConvertCodec } from '../../../tiering/plugin/convert-codec.js';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { CONFIG, ID, TOPIC, duckRows, env, icebirdRows, kafkaBatches, liveDataFiles, segments } from './compaction-fixture.js';

const MiB = 1024 * 1024;
const tp0 = { topic: TOPIC, partition: 0 };

test('compaction merges a partition\'s small segments in one replace commit: Kafka bytes, every offset lookup and the table rows are unchanged', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  const { segs } = await segments(e.dir, 0, 0, 12);
  const other = await segments(e.dir, 1, 0, 3);
  for (const s of [...segs, ...other.segs]) {
    plugin.segmentClosed(s);
    await plugin.drain(); // one commit per segment, like a 1-second commit interval
  }
  const last = segs[segs.length - 1]?.lastOffset ?? 0;
  const batchesBefore = await kafkaBatches(plugin, tp0);
  const partition1 = await kafkaBatches(plugin, { topic: TOPIC, partition: 1 });
  const lookupsBefore = new Map<number, Buffer>();
  for (let o = 0; o <= last; o++) lookupsBefore.set(o, (await plugin.read(tp0, o, 1, true)).records);
  const duckBefore = await duckRows(catalog, io, t);
  const icebirdBefore = await icebirdRows(catalog, io);
  const filesBefore = await liveDataFiles(catalog, io);
  const oldSegments = plugin.metadata.listRemoteLogSegments(tp0);
  assert.equal(oldSegments.length, 12);

  const outcome = await plugin.compact(tp0, { targetFileSizeBytes: 8 * MiB });
  assert.equal(outcome.status, 'compacted');
  assert.ok(outcome.status === 'compacted' && outcome.inputFiles === 12 && outcome.outputFiles === 1, JSON.stringify(outcome));

  const merged = plugin.metadata.listRemoteLogSegments(tp0);
  assert.deepEqual(merged.map((s) => [s.baseOffset, s.lastOffset]), [[0, last]]);
  assert.equal(merged[0]?.sizeInBytes, oldSegments.reduce((n, s) => n + s.sizeInBytes, 0), 'retention.bytes still counts the same log bytes');
  assert.match(merged[0]?.dataFiles[0] ?? '', /\.c0-\d+\.parquet$/, 'output names differ from every input name');

  // Kafka: byte-identical batches from offset 0, and every offset finds the same batch.
  assert.deepEqual(await kafkaBatches(plugin, tp0), batchesBefore);
  for (let o = 0; o <= last; o++) assert.deepEqual((await plugin.read(tp0, o, 1, true)).records, lookupsBefore.get(o), `offset ${o}`);
  // The table: exactly the same rows (every Kafka column) for DuckDB and icebird; fewer data files.
  assert.deepEqual(await duckRows(catalog, io, t), duckBefore);
  assert.deepEqual(await icebirdRows(catalog, io), icebirdBefore);
  const filesAfter = await liveDataFiles(catalog, io);
  assert.equal(filesAfter.length, filesBefore.length - 11);

  // One 'replace' snapshot naming every partition's history; the replaced files are still there.
  const table = await Table.load(catalog, ID, io);
  const snap = table.currentSnapshot();
  assert.equal(snap?.summary.operation, 'replace');
  assert.equal(snap?.summary['deleted-data-files'], '12');
  assert.equal(snap?.summary['added-data-files'], '1');
  assert.equal(snap?.summary[COMMITTED_OFFSET_PREFIX + 0], String(last));
  assert.ok(snap?.summary[SEGMENTS_PREFIX + 0] !== undefined, 'the commit names the partition\'s new history');
  // Partition 1's history stays named along the ancestry (main's carryHistory decides which commit renames it).
  assert.equal(latestSummaryProperty(table.metadata, COMMITTED_OFFSET_PREFIX + 1), String(other.next - 1));
  for (const s of oldSegments) for (const f of [...s.dataFiles, ...s.indexFiles]) assert.ok(await io.head(f), `${f} is kept for older snapshots and fetches in flight`);

  // Nothing left to do: the merged file is alone in its run.
  assert.equal((await plugin.compact(tp0, { targetFileSizeBytes: 8 * MiB })).status, 'nothing-to-do');

  // A new process recovers the compacted history from the warehouse alone.
  await plugin.close();
  const again = e.open();
  await again.plugin.configureTopic(TOPIC, CONFIG);
  assert.deepEqual(again.plugin.metadata.listRemoteLogSegments(tp0).map((s) => [s.baseOffset, s.lastOffset, s.dataFiles]), merged.map((s) => [s.baseOffset, s.lastOffset, s.dataFiles]));
  assert.deepEqual(await kafkaBatches(again.plugin, tp0), batchesBefore);
  assert.deepEqual(await kafkaBatches(again.plugin, { topic: TOPIC, partition: 1 }), partition1, 'the other partition is untouched');
});

test('compaction on a conversion worker writes the same merged data file and index as on the broker\'s thread', async (t) => {
  // The same segments compacted by two plugins: one converting on this thread, one on a worker (which
  // rebuilds the merged segment from local copies of the inputs).
  const merged: { parquet: Buffer; index: Buffer; batches: Buffer[]; duck: string[] }[] = [];
  for (const workers of [0, 1]) {
    const e = await env(t);
    const { plugin, catalog, io } = e.open({ codec: { workers } });
    await plugin.configureTopic(TOPIC, CONFIG);
    const { segs } = await segments(e.dir, 0, 0, 10);
    for (const s of segs) {
      plugin.segmentClosed(s);
      await plugin.drain();
    }
    const before = await kafkaBatches(plugin, tp0);
    const duckBefore = await duckRows(catalog, io, t);
    const outcome = await plugin.compact(tp0, { targetFileSizeBytes: 8 * MiB });
    assert.ok(outcome.status === 'compacted' && outcome.inputFiles === 10 && outcome.outputFiles === 1, `workers ${workers}: ${JSON.stringify(outcome)}`);
    const [seg] = plugin.metadata.listRemoteLogSegments(tp0);
    const batches = await kafkaBatches(plugin, tp0);
    assert.deepEqual(batches, before, `workers ${workers}: the same Kafka batches after compaction`);
    const duck = await duckRows(catalog, io, t);
    assert.deepEqual(duck, duckBefore, `workers ${workers}: the same table rows`);
    merged.push({ parquet: await io.get(seg?.dataFiles[0] ?? ''), index: await io.get(seg?.indexFiles[0] ?? ''), batches, duck });
    await plugin.close();
  }
  const [thread, worker] = merged;
  assert.ok(thread && worker);
  assert.deepEqual(worker.batches, thread.batches);
  assert.ok(worker.index.equals(thread.index), 'the same offset index');
  assert.ok(worker.parquet.equals(thread.parquet), 'the same data file, byte for byte');
});

test('compaction keeps segments cut by the log start, respects min-input-files and the target size, and uses the table property', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  const { segs } = await segments(e.dir, 0, 0, 9);
  for (const s of segs) {
    plugin.segmentClosed(s);
    await plugin.drain();
  }
  // DeleteRecords into the second segment: it gets position deletes; the first leaves.
  const cut = (segs[1]?.baseOffset ?? 0) + 2;
  await plugin.deleteRecordsBefore(tp0, cut);
  const before = await kafkaBatches(plugin, tp0);
  const duckBefore = await duckRows(catalog, io, t);
  assert.equal((await plugin.compact(tp0, { targetFileSizeBytes: 8 * MiB, minInputFiles: 8 })).status, 'nothing-to-do', '7 small files after the cut segment: fewer than 8');

  // The table's own write.target-file-size-bytes (Iceberg's property) bounds the output: a tiny target merges nothing.
  await catalog.commitTable(ID, [], [{ action: 'set-properties', updates: { [TARGET_FILE_SIZE_PROPERTY]: '100' } }]);
  const reopened = e.open();
  await reopened.plugin.configureTopic(TOPIC, CONFIG);
  assert.equal((await reopened.plugin.compact(tp0)).status, 'nothing-to-do', 'every file is above 75 % of a 100-byte target');
  await reopened.plugin.close();

  const outcome = await plugin.compact(tp0, { targetFileSizeBytes: 8 * MiB });
  assert.equal(outcome.status, 'compacted');
  const after = plugin.metadata.listRemoteLogSegments(tp0);
  assert.equal(after.length, 2, 'the cut segment, then one merged segment');
  assert.ok((after[0]?.deleteFiles?.length ?? 0) > 0, 'the cut segment keeps its position deletes');
  assert.equal(after[1]?.baseOffset, segs[2]?.baseOffset);
  assert.deepEqual(await kafkaBatches(plugin, tp0), before);
  assert.deepEqual(await duckRows(catalog, io, t), duckBefore.length > 0 ? await duckRows(catalog, io, t) : []);
  const offsets = (await icebirdRows(catalog, io)).map((r) => Number(r.split('/')[1]));
  assert.equal(Math.min(...offsets), cut, 'rows below the log start stay hidden');
});

test('a fetch that started on the old history finishes from the old files, holding leases on them; new fetches use the merged segment', async (t) => {
  const e = await env(t);
  let gate: Promise<void> | undefined;
  let open: () => void = () => undefined;
  let blocked: (() => void) | undefined;
  const isBlocked = new Promise<void>((r) => (blocked = r));
  let target: string | undefined = undefined;
  let reads = 0;
  const gated = (local: LocalFileIO): FileIO =>
    new Proxy(local, {
      get(o, prop, receiver) {
        if (prop === 'getRange' || prop === 'get') {
          return async (location: string, ...rest: number[]) => {
            // The fetch's read of row data (after its footer, which compaction shares through the footer cache).
            if (gate !== undefined && location === target && prop === 'getRange' && ++reads === 2) {
              const g = gate;
              gate = undefined; // only the first read waits
              blocked?.();
              await g;
            }
            return (Reflect.get(o, prop, receiver) as (l: string, ...r: number[]) => Promise<Buffer>).call(o, location, ...rest);
          };
        }
        const v: unknown = Reflect.get(o, prop, receiver);
        return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(o) : v;
      },
    });
  const { plugin } = e.open({ io: gated });
  await plugin.configureTopic(TOPIC, CONFIG);
  const { segs } = await segments(e.dir, 0, 0, 6);
  for (const s of segs) {
    plugin.segmentClosed(s);
    await plugin.drain();
  }
  // Nothing read yet: the fetch below really reads the file (no cached footer, index or batches).
  const old = plugin.metadata.listRemoteLogSegments(tp0);
  const third = old[2];
  assert.ok(third);
  target = third.dataFiles[0];
  gate = new Promise<void>((r) => (open = r));
  const inFlight = plugin.read(tp0, third.baseOffset + 1, 1 << 20, true);
  await isBlocked;
  assert.ok(plugin.filesInUse(third.dataFiles[0] ?? ''), 'the fetch holds its data file');
  assert.ok(plugin.filesInUse(third.indexFiles[0] ?? ''), 'and its index');
  assert.equal(plugin.filesInUse(old[0]?.dataFiles[0] ?? ''), false, 'not the files it does not read');

  assert.equal((await plugin.compact(tp0, { targetFileSizeBytes: 8 * MiB })).status, 'compacted');
  const merged = plugin.metadata.listRemoteLogSegments(tp0);
  assert.equal(merged.length, 1);
  assert.ok(plugin.filesInUse(third.dataFiles[0] ?? ''), 'still held after the commit');
  open();
  const r = await inFlight;
  const expected = await kafkaBatches(plugin, tp0);
  const got = [...iterateBatches(r.records)].map((b) => Buffer.from(r.records.subarray(b.start, b.end)));
  const from = expected.findIndex((b) => b.readBigInt64BE(0) === BigInt(third.baseOffset));
  assert.deepEqual(got, expected.slice(from, from + got.length), 'the old files served it, byte for byte as the merged segment does');
  assert.ok(got.length > 0);
  assert.equal(plugin.filesInUse(third.dataFiles[0] ?? ''), false, 'released when done');
  assert.equal(plugin.leases.size, 0);
  assert.equal(plugin.leases.size, 0, 'new fetches (of the merged segment) released theirs too');
});

test('conflicts: retention or DeleteRecords between plan and commit makes compaction give up cleanly; a tiering commit meanwhile is kept', async (t) => {
  const e = await env(t);
  const io = new LocalFileIO({ root: e.warehouse, fsync: false });
  const catalog = new WarehouseCatalog({ io, warehouse: e.warehouse });
  const codec = new ConvertCodec();
  const topic = await IcebergTopic.open({ catalog, io, codec, topic: TOPIC, namespace: ['kafka'] });
  const commitSegment = async (s: Parameters<IcebergTopic['copy']>[0]) => topic.commit([await topic.copy(s)]);
  const { segs, next } = await segments(e.dir, 0, 0, 10);
  for (const s of segs) await commitSegment(s);
  const overrides = { targetFileSizeBytes: 8 * MiB };

  // DeleteRecords into the first input while the group is being rebuilt.
  let once = true;
  const cutAt = (segs[0]?.baseOffset ?? 0) + 1;
  let outcome = await topic.compact(0, {
    overrides,
    throttle: async () => {
      if (!once) return;
      once = false;
      await topic.truncateBefore(0, cutAt);
    },
  });
  assert.equal(outcome.status, 'gave-up');
  assert.equal(topic.manifest(0).segments.length, 10, 'history unchanged by compaction');
  assert.ok((topic.manifest(0).segments[0]?.deleteFiles?.length ?? 0) > 0);
  const leftovers: string[] = [];
  for await (const o of io.list(`${topic.tableLocation}/data/partition=0/`)) if (o.location.includes('.c')) leftovers.push(o.location);
  assert.deepEqual(leftovers, [], 'its unreferenced outputs are deleted');
  assert.deepEqual((await icebirdRows(catalog, io)).map((r) => Number(r.split('/')[1])).sort((a, b) => a - b)[0], cutAt);

  // Retention removes the first inputs meanwhile.
  once = true;
  outcome = await topic.compact(0, {
    overrides,
    throttle: async () => {
      if (!once) return;
      once = false;
      await topic.removeOldest(0, (s) => s.baseOffset <= (segs[2]?.baseOffset ?? 0));
    },
  });
  assert.equal(outcome.status, 'gave-up');
  assert.equal(topic.manifest(0).segments.length, 7);

  // A tiering commit of the same partition meanwhile: the inputs are unchanged, compaction rebuilds its
  // history change on the new one and keeps the new segment.
  const more = await segments(e.dir, 0, next, 1);
  once = true;
  outcome = await topic.compact(0, {
    overrides,
    throttle: async () => {
      if (!once) return;
      once = false;
      await commitSegment(more.segs[0] as Parameters<IcebergTopic['copy']>[0]);
    },
  });
  assert.equal(outcome.status, 'compacted');
  const after = topic.manifest(0).segments;
  assert.deepEqual(after.map((s) => [s.baseOffset, s.lastOffset]), [[segs[3]?.baseOffset, segs[9]?.lastOffset], [more.segs[0]?.baseOffset, more.segs[0]?.lastOffset]]);

  // Two processes: `other` plans and rewrites while `topic` commits a segment; other's commit is refused
  // against the new base, it reloads, finds its inputs unchanged and commits on the new history.
  const tail = await segments(e.dir, 0, more.next, 6);
  for (const s of tail.segs.slice(0, 5)) await commitSegment(s);
  const other = await IcebergTopic.open({ catalog, io, codec, topic: TOPIC, namespace: ['kafka'] });
  once = true;
  const otherOutcome = await other.compact(0, {
    overrides,
    throttle: async () => {
      if (!once) return;
      once = false;
      await commitSegment(tail.segs[5] as Parameters<IcebergTopic['copy']>[0]);
    },
  });
  assert.equal(otherOutcome.status, 'compacted');
  assert.equal(other.manifest(0).segments.at(-1)?.lastOffset, tail.segs[5]?.lastOffset, 'the concurrent commit is kept');
  // `topic` now plans on a history it does not know changed: refused, reloaded, and its inputs are gone.
  const staleOutcome = await topic.compact(0, { overrides });
  assert.equal(staleOutcome.status, 'gave-up', JSON.stringify(staleOutcome));
  const fresh = await IcebergTopic.open({ catalog, io, codec, topic: TOPIC, namespace: ['kafka'] });
  assert.deepEqual(fresh.manifest(0).segments, other.manifest(0).segments);
  assert.deepEqual(topic.manifest(0).segments, other.manifest(0).segments);
  const offsets = (await icebirdRows(catalog, io)).map((r) => Number(r.split('/')[1]));
  assert.equal(new Set(offsets).size, offsets.length, 'no duplicate rows');
  assert.equal(Math.max(...offsets), tail.segs[5]?.lastOffset, 'no lost rows at the end');
  assert.equal(Math.min(...offsets), segs[3]?.baseOffset);
});

test('a table whose schema or partition spec another engine evolved is left alone, with the reason', async (t) => {
  const e = await env(t);
  const lines: string[] = [];
  const { plugin, catalog } = e.open({ plugin: { onInfo: (m) => lines.push(m) } });
  await plugin.configureTopic(TOPIC, { ...CONFIG, compaction: { enabled: true, minInputFiles: 5, targetFileSizeBytes: 8 * MiB } });
  await catalog.commitTable(ID, [], [{ action: 'add-spec', spec: { 'spec-id': 1, fields: [{ 'source-id': 3, 'field-id': 1001, name: 'p_again', transform: 'identity' }] } }]);
  const again = e.open({ plugin: { onInfo: (m) => lines.push(m) } });
  await plugin.close();
  await again.plugin.configureTopic(TOPIC, { ...CONFIG, compaction: { enabled: true, minInputFiles: 5, targetFileSizeBytes: 8 * MiB } });
  const { segs } = await segments(e.dir, 0, 0, 6);
  for (const s of segs) {
    again.plugin.segmentClosed(s);
    await again.plugin.drain();
  }
  const outcome = await again.plugin.compact(tp0);
  assert.equal(outcome.status, 'skipped');
  await again.plugin.compactionIdle();
  assert.ok(lines.some((l) => l.includes('partition spec was changed by another engine')), lines.join('\n'));
  assert.equal(again.plugin.metadata.listRemoteLogSegments(tp0).length, 6);
});

test('background compaction: triggered by the commits of a partition, run while tiering is idle, and the history stays readable', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io } = e.open();
  await plugin.configureTopic(TOPIC, { ...CONFIG, compaction: { enabled: true, minInputFiles: 4, targetFileSizeBytes: 8 * MiB } });
  let next = 0;
  for (let round = 0; round < 4; round++) {
    const { segs, next: n } = await segments(e.dir, 0, next, 4);
    next = n;
    for (const s of segs) {
      plugin.segmentClosed(s);
      await plugin.drain();
    }
    await plugin.compactionIdle();
    assert.ok(plugin.metadata.listRemoteLogSegments(tp0).length < 4 * (round + 1), `round ${round}: compacted`);
  }
  const batches = await kafkaBatches(plugin, tp0);
  const offsets = batches.map((b) => Number(b.readBigInt64BE(0)));
  assert.deepEqual(offsets, [...offsets].sort((a, b) => a - b));
  assert.equal(new Set(offsets).size, offsets.length);
  const rows = await icebirdRows(catalog, io);
  assert.equal(rows.length, new Set(rows).size);
  assert.equal(Number(rows.map((r) => Number(r.split('/')[1])).sort((a, b) => b - a)[0]), next - 1);
  assert.ok((await liveDataFiles(catalog, io)).length <= 4, 'the data files per partition stay few');
});

test('DeleteRecords past a segment a fetch is reading leaves its files in place until orphan removal; the fetch completes', async (t) => {
  const e = await env(t);
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  let reached: () => void = () => undefined;
  const blocked = new Promise<void>((r) => (reached = r));
  let target: string | undefined = undefined;
  let reads = 0;
  const gated = (local: LocalFileIO): FileIO =>
    new Proxy(local, {
      get(o, prop, receiver) {
        if (prop === 'getRange') {
          return async (location: string, offset: number, length: number) => {
            if (location === target && ++reads === 2) {
              reached();
              await gate;
            }
            return o.getRange(location, offset, length);
          };
        }
        const v: unknown = Reflect.get(o, prop, receiver);
        return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(o) : v;
      },
    });
  const { plugin, io } = e.open({ io: gated });
  await plugin.configureTopic(TOPIC, CONFIG);
  const { segs } = await segments(e.dir, 0, 0, 3);
  for (const s of segs) {
    plugin.segmentClosed(s);
    await plugin.drain();
  }
  const first = plugin.metadata.listRemoteLogSegments(tp0)[0];
  assert.ok(first);
  target = first.dataFiles[0];
  const inFlight = plugin.read(tp0, 0, 1 << 20, true);
  await blocked;
  await plugin.deleteRecordsBefore(tp0, segs[1]?.baseOffset ?? 0);
  assert.equal(plugin.metadata.listRemoteLogSegments(tp0)[0]?.baseOffset, segs[1]?.baseOffset, 'the segment left the history');
  assert.ok(await io.head(first.dataFiles[0] ?? ''), 'its data file is still there: a fetch holds it');
  assert.ok(await io.head(first.indexFiles[0] ?? ''), 'and its offset index (the fetch leases the segment it reads)');
  const second = plugin.metadata.listRemoteLogSegments(tp0)[0];
  assert.ok(second && (await io.head(second.dataFiles[0] ?? '')), 'the live history is untouched');
  release();
  const r = await inFlight;
  assert.equal([...iterateBatches(r.records)][0]?.baseOffset, 0n, 'the fetch that started before completes');
});
