// Aborted transactional records in the table: the plugin, told the partition's aborted transactions by its
// transaction source, commits position deletes over their rows with the data files. DuckDB (position deletes
// applied) and icebird see only committed records, through compaction, DeleteRecords inside such a segment
// and snapshot expiry; Kafka reads from the table still return the aborted records. The rows of a transaction
// still open when its segment is tiered are hidden too, and settled by a later commit once it has ended. A
// segment waits (NOT_STABLE) for the broker's transaction state without counting as a failure.
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Table } from '../../../iceberg/table.js';
import { controlMarkerRecord, decodeRecordBatch, encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import type { AbortedTransaction, LogSegmentData, PartitionTransactions } from '../../../tiering/plugin/api.js';
import { TieringError } from '../../../tiering/plugin/api.js';
import { IcebergTieringPlugin } from '../../../tiering/plugin/iceberg-tiering.js';
import { TieringScheduler } from '../../../tiering/plugin/scheduler.js';
import { txnRows, isTxnDeletes } from '../../../tiering/plugin/txn-deletes.js';
import type { IndexedBatch, SegmentIndex } from '../../../tiering/offset-index/format.js';
import { tableKeys, TOPIC, txnEnv } from './txn-fixture.js';


function batch(baseOffset: number, producerId: bigint, firstRow: number, count: number, attributes: number): IndexedBatch {
  return { baseOffset: BigInt(baseOffset), lastOffsetDelta: count - 1, recordsCount: count, attributes, partitionLeaderEpoch: 0, baseTimestamp: 0n, maxTimestamp: 0n, producerId, producerEpoch: 0, baseSequence: 0, firstRow, recordsBytes: 0, originalSize: 0, stored: attributes & 0x20 ? Buffer.alloc(1) : null };
}

test('txnRows: the rows of transactional batches of aborted transactions, merged; control, plain and committed batches are kept', () => {
  const index: SegmentIndex = {
    version: 1, partition: 0, baseOffset: 0n, lastOffset: 12n, minTimestamp: 0n, maxTimestamp: 0n, rowCount: 11, dataFile: null, rowGroups: [],
    batches: [
      batch(0, 1n, 0, 2, 0x10), // aborted (txn of 1 from 0 to marker 7)
      batch(2, 2n, 2, 2, 0x10), // committed
      batch(4, 1n, 4, 2, 0x10), // aborted
      batch(6, -1n, 6, 1, 0), // plain: never hidden
      batch(7, 1n, 7, 1, 0x30), // the abort marker (a control batch: no rows)
      batch(8, 1n, 7, 2, 0x10), // producer 1's next transaction, committed
      batch(10, 3n, 9, 2, 0x10), // aborted (txn of 3 from 10 to marker 12)
    ],
  };
  const aborted: AbortedTransaction[] = [
    { producerId: 1n, firstOffset: 0, lastOffset: 7 },
    { producerId: 3n, firstOffset: 10, lastOffset: 12 },
  ];
  assert.deepEqual(txnRows(index, aborted), [{ start: 0, end: 2 }, { start: 4, end: 6 }, { start: 9, end: 11 }]);
  assert.deepEqual(txnRows(index, []), []);
  // Rows of open transactions: the producer's batches from the transaction's first offset on.
  assert.deepEqual(txnRows(index, [], [{ producerId: 1n, firstOffset: 8 }]), [{ start: 7, end: 9 }]);
  assert.deepEqual(txnRows(index, aborted, [{ producerId: 2n, firstOffset: 2 }]), [{ start: 0, end: 6 }, { start: 9, end: 11 }]);
  // Adjacent aborted batches make one range.
  assert.deepEqual(txnRows({ ...index, batches: [batch(0, 1n, 0, 2, 0x10), batch(2, 1n, 2, 3, 0x10)] }, aborted), [{ start: 0, end: 5 }]);
});

interface Written {
  readonly segment: LogSegmentData;
  readonly committed: string[];
  readonly aborted: AbortedTransaction[];
  readonly all: string[];
}

/**
 * A segment from `base`: `txns` transactions of producers 1 and 2 (interleaved batches of 2 records), each
 * ended by a marker; `abort(n)` says which are aborted; plain records between them.
 */
async function txnSegment(dir: string, base: number, txns: number, abort: (n: number) => boolean): Promise<Written> {
  const parts: Buffer[] = [];
  const committed: string[] = [];
  const aborted: AbortedTransaction[] = [];
  const all: string[] = [];
  let offset = base;
  const put = (producerId: bigint, transactional: boolean, values: string[]): number => {
    const at = offset;
    parts.push(encodeRecordBatch({ baseOffset: BigInt(at), baseTimestamp: 1_700_000_000_000n + BigInt(at), producerId, producerEpoch: 0, baseSequence: transactional || producerId >= 0n ? at : -1, isTransactional: transactional, records: values.map((v) => ({ key: Buffer.from(v), value: Buffer.from(`${v}-value`) })) }));
    offset += values.length;
    all.push(...values);
    return at;
  };
  for (let n = 0; n < txns; n++) {
    const pid = BigInt(1 + (n % 2));
    const first = put(pid, true, [`t${base}-${n}-a`, `t${base}-${n}-b`]);
    put(-1n, false, [`plain${base}-${n}`]);
    committed.push(`plain${base}-${n}`);
    put(pid, true, [`t${base}-${n}-c`, `t${base}-${n}-d`]);
    const keys = [`t${base}-${n}-a`, `t${base}-${n}-b`, `t${base}-${n}-c`, `t${base}-${n}-d`];
    const kind = abort(n) ? 'abort' : 'commit';
    parts.push(encodeRecordBatch({ baseOffset: BigInt(offset), baseTimestamp: 1_700_000_000_000n, producerId: pid, producerEpoch: 0, baseSequence: -1, isTransactional: true, isControl: true, records: [controlMarkerRecord(kind, 0)] }));
    if (kind === 'abort') aborted.push({ producerId: pid, firstOffset: first, lastOffset: offset });
    else committed.push(...keys);
    offset++;
  }
  const path = join(dir, `${String(base).padStart(20, '0')}.log`);
  const bytes = Buffer.concat(parts);
  await writeFile(path, bytes);
  return { segment: { topic: TOPIC, partition: 0, baseOffset: base, lastOffset: offset - 1, path, sizeInBytes: bytes.length, maxTimestamp: 1_700_000_000_000 + offset }, committed, aborted, all };
}

async function kafkaKeys(plugin: IcebergTieringPlugin, from: number, to: number): Promise<string[]> {
  const out: string[] = [];
  for (let offset = from; offset <= to; ) {
    const r = await plugin.read({ topic: TOPIC, partition: 0 }, offset, 1 << 20, true);
    if (r.records.length === 0) break;
    for (const b of iterateBatches(r.records)) {
      const bt = decodeRecordBatch(r.records, b.start);
      if (!bt.isControl) for (const rec of bt.records) if (Number(bt.baseOffset) + rec.offsetDelta >= from) out.push(rec.key?.toString() ?? '');
    }
    offset = r.nextOffset;
  }
  return out;
}

test('aborted rows are hidden in the commit that adds them, and stay hidden through compaction, DeleteRecords and expiry; Kafka reads still get them', async (t) => {
  const aborted: AbortedTransaction[] = [];
  let logEnd = 0;
  const e = await txnEnv(t, (_p, from, to) => ({ lastStableOffset: logEnd, aborted: aborted.filter((a) => a.lastOffset >= from && a.firstOffset <= to), open: [] }));
  const segs: Written[] = [];
  let base = 0;
  for (let i = 0; i < 5; i++) {
    // Segments 0 and 4 hold aborted transactions; 1 to 3 only committed ones (compaction merges those).
    const w = await txnSegment(e.dir, base, 3, (n) => (i === 0 || i === 4) && n !== 1);
    segs.push(w);
    aborted.push(...w.aborted);
    base = w.segment.lastOffset + 1;
  }
  logEnd = base;
  for (const w of segs) e.plugin.segmentClosed(w.segment);
  await e.plugin.drain();
  const committed = segs.flatMap((w) => w.committed).sort();
  const all = segs.flatMap((w) => w.all);
  const snapshots = (await Table.load(e.catalog, { namespace: ['kafka'], name: TOPIC }, e.io)).metadata.snapshots;
  assert.equal(snapshots.length, 1, 'data and deletes in one commit');
  const deleteFiles = e.plugin.metadata.listRemoteLogSegments({ topic: TOPIC, partition: 0 }).map((s) => (s.deleteFiles ?? []).filter(isTxnDeletes).length);
  assert.deepEqual(deleteFiles, [1, 0, 0, 0, 1], 'segments with aborted transactions have one delete file each');
  assert.deepEqual(await tableKeys(e), { duckdb: committed, icebird: committed });
  assert.deepEqual(await kafkaKeys(e.plugin, 0, base - 1), all, 'Kafka reads of the table return every record, aborted ones too');

  const outcome = await e.plugin.compact({ topic: TOPIC, partition: 0 }, { minInputFiles: 2 });
  assert.equal(outcome.status, 'compacted', JSON.stringify(outcome));
  assert.deepEqual(e.plugin.metadata.listRemoteLogSegments({ topic: TOPIC, partition: 0 }).map((s) => (s.deleteFiles ?? []).length), [1, 0, 1], 'the three segments without deletes were merged, the others left as they were');
  assert.deepEqual(await tableKeys(e), { duckdb: committed, icebird: committed }, 'after compaction');

  // DeleteRecords into the first segment, past its first aborted transaction.
  const cut = segs[0]?.aborted[0]?.lastOffset;
  assert.ok(cut !== undefined);
  await e.plugin.deleteRecordsBefore({ topic: TOPIC, partition: 0 }, cut + 2);
  // The table shows the records from the new log start on (offsets include markers: read them from Kafka).
  const fromStart = await kafkaKeys(e.plugin, cut + 2, base - 1);
  const visibleAfter = committed.filter((k) => fromStart.includes(k)).sort();
  assert.deepEqual(await tableKeys(e), { duckdb: visibleAfter, icebird: visibleAfter }, 'after DeleteRecords inside a segment with aborted rows');

  await e.plugin.maintain(TOPIC);
  assert.deepEqual(await tableKeys(e), { duckdb: visibleAfter, icebird: visibleAfter }, 'after snapshot expiry');
});

type Item = { readonly pid: bigint; readonly keys: readonly string[] } | { readonly marker: bigint; readonly kind: 'commit' | 'abort' };

/** A segment file from `base`: transactional batches (pid >= 0; -1: plain), and markers. */
async function writeSegment(dir: string, base: number, items: readonly Item[]): Promise<LogSegmentData> {
  const parts: Buffer[] = [];
  let offset = base;
  for (const it of items) {
    if ('marker' in it) {
      parts.push(encodeRecordBatch({ baseOffset: BigInt(offset), baseTimestamp: 1_700_000_000_000n, producerId: it.marker, producerEpoch: 0, baseSequence: -1, isTransactional: true, isControl: true, records: [controlMarkerRecord(it.kind, 0)] }));
      offset++;
      continue;
    }
    parts.push(encodeRecordBatch({ baseOffset: BigInt(offset), baseTimestamp: 1_700_000_000_000n, producerId: it.pid, producerEpoch: 0, baseSequence: it.pid >= 0n ? offset : -1, isTransactional: it.pid >= 0n, records: it.keys.map((k) => ({ key: Buffer.from(k), value: Buffer.from(k) })) }));
    offset += it.keys.length;
  }
  const path = join(dir, `${String(base).padStart(20, '0')}.log`);
  const bytes = Buffer.concat(parts);
  await writeFile(path, bytes);
  return { topic: TOPIC, partition: 0, baseOffset: base, lastOffset: offset - 1, path, sizeInBytes: bytes.length, maxTimestamp: 1_700_000_000_000 };
}

for (const outcome of ['commit', 'abort'] as const) {
  test(`a transaction open when its segment is tiered hides only its own rows; once it ends (${outcome}) the next commit settles them`, async (t) => {
    let state: PartitionTransactions = { lastStableOffset: 2, aborted: [], open: [{ producerId: 2n, firstOffset: 2 }] };
    const e = await txnEnv(t, () => state);
    // Producer 1's transaction commits inside the first segment; producer 2's is still open when it is tiered.
    const first = await writeSegment(e.dir, 0, [{ pid: 1n, keys: ['a1', 'a2'] }, { pid: 2n, keys: ['o1', 'o2'] }, { pid: -1n, keys: ['p1'] }, { marker: 1n, kind: 'commit' }]);
    e.plugin.segmentClosed(first);
    await e.plugin.drain();
    assert.equal(e.plugin.metadata.highestCommittedOffset({ topic: TOPIC, partition: 0 }), 5, 'the open transaction does not hold the segment back');
    assert.deepEqual(await tableKeys(e), { duckdb: ['a1', 'a2', 'p1'], icebird: ['a1', 'a2', 'p1'] }, 'only the open transaction\'s rows wait');
    const [seg] = e.plugin.metadata.listRemoteLogSegments({ topic: TOPIC, partition: 0 });
    assert.deepEqual((seg?.deleteFiles ?? []).map((f) => f.slice(f.lastIndexOf('-'))), ['-txns.parquet']);
    assert.ok((seg?.deleteFiles ?? [])[0]?.endsWith('-open-txns.parquet'), 'an undecided delete file');

    // The next segment: producer 2 writes once more and ends its transaction; producer 3 aborts one.
    const second = await writeSegment(e.dir, 6, [{ pid: 2n, keys: ['o3'] }, { pid: 3n, keys: ['x1'] }, { marker: 3n, kind: 'abort' }, { marker: 2n, kind: outcome }, { pid: -1n, keys: ['p2'] }]);
    state = { lastStableOffset: 11, aborted: [...(outcome === 'abort' ? [{ producerId: 2n, firstOffset: 2, lastOffset: 9 }] : []), { producerId: 3n, firstOffset: 7, lastOffset: 8 }].sort((a, b) => a.lastOffset - b.lastOffset), open: [] };
    e.plugin.segmentClosed(second);
    await e.plugin.drain();
    const want = outcome === 'commit' ? ['a1', 'a2', 'o1', 'o2', 'o3', 'p1', 'p2'] : ['a1', 'a2', 'p1', 'p2'];
    assert.deepEqual(await tableKeys(e), { duckdb: want, icebird: want }, `the ${outcome}ted transaction's rows are settled in the commit of the next segment`);
    const segs = e.plugin.metadata.listRemoteLogSegments({ topic: TOPIC, partition: 0 });
    assert.ok(segs.every((s) => (s.deleteFiles ?? []).every((f) => f.endsWith('-aborted-txns.parquet'))), 'no undecided delete file is left');
    assert.equal((segs[0]?.deleteFiles ?? []).length, outcome === 'commit' ? 0 : 1);
    const table = await Table.load(e.catalog, { namespace: ['kafka'], name: TOPIC }, e.io);
    assert.equal(table.metadata.snapshots.length, 2, 'one snapshot per commit: the settlement rides on the second');
    assert.deepEqual(await kafkaKeys(e.plugin, 0, 10), ['a1', 'a2', 'o1', 'o2', 'p1', 'o3', 'x1', 'p2'], 'Kafka reads of the table return every record');
  });
}

test('the scheduler holds a segment while the transaction state is not there yet (NOT_STABLE is no failure) and tiers it once it is', async () => {
  let stable = false;
  let tries = 0;
  const errors: unknown[] = [];
  const failures: string[] = [];
  const committed: number[] = [];
  const scheduler = new TieringScheduler({
    target: () => ({
      copy: async (s) => {
        tries++;
        if (!stable) {
          // The broker attaches its transaction state while the segment waits.
          if (tries === 3) stable = true;
          throw new TieringError('NOT_STABLE', 'open');
        }
        return { topic: s.topic, partition: s.partition, baseOffset: s.baseOffset, lastOffset: s.lastOffset, maxTimestamp: -1, sizeInBytes: 1, dataFiles: ['d'], indexFiles: ['i'] };
      },
      commit: async (segs) => {
        committed.push(...segs.map((s) => s.lastOffset));
        return true;
      },
      committedOffset: () => committed[committed.length - 1] ?? -1,
    }),
    commitIntervalMs: () => 0,
    stableRetryMs: 1,
    onError: (err) => errors.push(err),
    observer: { copyFailed: (ev) => failures.push(ev.topic) },
  });
  scheduler.enqueue({ topic: TOPIC, partition: 0, baseOffset: 0, lastOffset: 9, path: '/nonexistent', sizeInBytes: 1, maxTimestamp: -1 });
  await scheduler.drain();
  await scheduler.close();
  assert.equal(tries, 4, 'tried until the state was there, then copied once');
  assert.deepEqual(committed, [9]);
  assert.deepEqual(errors, [], 'waiting is not reported as an error');
  assert.deepEqual(failures, [], 'nor counted as a failed copy');
});
