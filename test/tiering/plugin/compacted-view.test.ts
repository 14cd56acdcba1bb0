// The compacted view of a compacted topic's tiered range (tiering/plugin/compacted-view.ts), on a real
// plugin and local warehouse: segments of updates, tombstones and transactions are tiered, and Kafka reads
// through the plugin return only the latest record per key (committed transactions at their own offsets,
// aborted ones gone, undecided ones kept), the tombstones within delete.retention.ms, at the original
// offsets, in batches that keep their header fields and carry a valid CRC; the table keeps every row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { controlMarkerRecord, decodeRecordBatch, encodeRecordBatch, type RecordBatch } from '../../../protocol/record-batch/record-batch.js';
import type { CompressionType } from '../../../protocol/record-batch/compression.js';
import type { LogSegmentData, TopicTieringConfig } from '../../../tiering/plugin/api.js';
import { TOPIC, tableKeys, txnEnv, type TxnEnv } from './txn-fixture.js';

const TS = 1_700_000_000_000;

/** A data batch of producer `pid` (-1: none) with [key, value] records; or a marker ending `marker`'s transaction. */
type Item = { readonly pid?: bigint; readonly records: readonly (readonly [string, string | null])[]; readonly codec?: CompressionType } | { readonly marker: bigint; readonly kind: 'commit' | 'abort' };

async function segment(e: TxnEnv, partition: number, base: number, items: readonly Item[]): Promise<LogSegmentData> {
  const parts: Buffer[] = [];
  let offset = base;
  for (const it of items) {
    if ('marker' in it) {
      parts.push(encodeRecordBatch({ baseOffset: BigInt(offset), baseTimestamp: BigInt(TS + offset), producerId: it.marker, producerEpoch: 0, isTransactional: true, isControl: true, records: [controlMarkerRecord(it.kind, 0)] }));
      offset++;
      continue;
    }
    const pid = it.pid ?? -1n;
    parts.push(
      encodeRecordBatch({
        baseOffset: BigInt(offset),
        baseTimestamp: BigInt(TS + offset),
        compression: it.codec ?? 'none',
        producerId: pid,
        producerEpoch: pid >= 0n ? 3 : -1,
        baseSequence: pid >= 0n ? offset : -1,
        isTransactional: pid >= 0n,
        records: it.records.map(([k, v], i) => ({ key: Buffer.from(k), value: v === null ? null : Buffer.from(v), timestampDelta: i, offsetDelta: i, headers: [{ key: 'i', value: Buffer.from(String(offset + i)) }] })),
      }),
    );
    offset += it.records.length;
  }
  const path = join(e.dir, `${partition}-${String(base).padStart(20, '0')}.log`);
  const bytes = Buffer.concat(parts);
  await writeFile(path, bytes);
  return { topic: TOPIC, partition, baseOffset: base, lastOffset: offset - 1, path, sizeInBytes: bytes.length, maxTimestamp: TS + offset - 1 };
}

const config = (deleteRetentionMs?: number): TopicTieringConfig => ({
  enabled: true,
  namespace: ['kafka'],
  commitIntervalMs: 60_000,
  retentionMs: Infinity,
  retentionBytes: Infinity,
  ...(deleteRetentionMs === undefined ? {} : { compacted: { deleteRetentionMs } }),
});

interface Seen {
  offset: number;
  key: string;
  value: string | null;
}

/** Every batch the plugin serves from `from` on, as a Kafka consumer would fetch them (CRCs checked). */
async function readAll(e: TxnEnv, from: number, maxBytes = 1 << 20): Promise<RecordBatch[]> {
  const out: RecordBatch[] = [];
  const end = e.plugin.metadata.highestCommittedOffset({ topic: TOPIC, partition: 0 });
  for (let next = from; next <= end; ) {
    const r = await e.plugin.read({ topic: TOPIC, partition: 0 }, next, maxBytes, true);
    if (r.records.length === 0) break;
    for (const b of iterateBatches(r.records)) out.push(decodeRecordBatch(r.records, b.start, { verifyCrc: true }));
    next = r.nextOffset;
  }
  return out;
}

const records = (batches: readonly RecordBatch[]): Seen[] =>
  batches.filter((b) => !b.isControl).flatMap((b) => b.records.map((r) => ({ offset: Number(b.baseOffset) + r.offsetDelta, key: r.key?.toString() ?? '', value: r.value?.toString() ?? null })));

test('Kafka reads of a compacted tiered topic see the latest record per key and the live tombstones, at their offsets; the table keeps every row', async (t) => {
  const e = await txnEnv(t, () => undefined);
  await e.plugin.configureTopic(TOPIC, config(Number.MAX_SAFE_INTEGER));
  // 0-5 updates (gzip batch at 0), 6-7 producer 7's transaction (aborted at 8), 9-10 producer 8's (committed at 11).
  e.plugin.segmentClosed(
    await segment(e, 0, 0, [
      { records: [['a', 'a0'], ['b', 'b0'], ['c', 'c0']], codec: 'gzip' },
      { records: [['a', 'a1'], ['d', 'd0'], ['b', 'b1']] },
      { pid: 7n, records: [['d', 'd-aborted'], ['e', 'e-aborted']] },
      { marker: 7n, kind: 'abort' },
      { pid: 8n, records: [['c', 'c-txn'], ['f', 'f-txn']] },
      { marker: 8n, kind: 'commit' },
    ]),
  );
  // 12-15: a tombstone for b, an update of a, then producer 9's transaction with no marker yet (undecided).
  e.plugin.segmentClosed(await segment(e, 0, 12, [{ records: [['b', null], ['a', 'a2']] }, { pid: 9n, records: [['f', 'f-open'], ['g', 'g-open']] }]));
  await e.plugin.drain();

  const seen = await readAll(e, 0);
  assert.deepEqual(records(seen), [
    { offset: 4, key: 'd', value: 'd0' },
    { offset: 9, key: 'c', value: 'c-txn' },
    { offset: 10, key: 'f', value: 'f-txn' },
    { offset: 12, key: 'b', value: null },
    { offset: 13, key: 'a', value: 'a2' },
    { offset: 14, key: 'f', value: 'f-open' },
    { offset: 15, key: 'g', value: 'g-open' },
  ]);
  // Rewritten batches keep their range and producer fields; fully superseded ones (0, the aborted 6) are gone.
  const at = (base: number) => seen.find((b) => Number(b.baseOffset) === base);
  assert.equal(at(0), undefined, 'the gzip batch lost every record');
  assert.equal(at(6), undefined, 'the aborted batch is dropped');
  assert.deepEqual([at(3)?.lastOffsetDelta, at(3)?.records.length, at(3)?.maxTimestamp], [2, 1, BigInt(TS + 3 + 2)]);
  assert.deepEqual([at(9)?.producerId, at(9)?.producerEpoch, at(9)?.baseSequence, at(9)?.isTransactional], [8n, 3, 9, true]);
  assert.ok(seen.some((b) => b.isControl && b.control?.kind === 'commit'), 'markers are kept');
  assert.deepEqual(at(4 - 1)?.records[0]?.headers.map((h) => h.value?.toString()), ['4'], 'headers stay');

  // A fetch inside a gap gets the next surviving batch.
  assert.equal(Number((await readAll(e, 0))[0]?.baseOffset), 3);
  const gap = await e.plugin.read({ topic: TOPIC, partition: 0 }, 7, 1 << 20, true);
  assert.equal(Number(decodeRecordBatch(gap.records, 0).baseOffset), 8, 'from 7 (in the aborted batch) the next batch is the abort marker at 8');

  // Producer 9 commits in a later segment, with an update of g: the view follows the new commit.
  e.plugin.segmentClosed(await segment(e, 0, 16, [{ marker: 9n, kind: 'commit' }, { records: [['g', 'g1'], ['h', 'h0']] }]));
  await e.plugin.drain();
  assert.deepEqual(records(await readAll(e, 12)), [
    { offset: 12, key: 'b', value: null },
    { offset: 13, key: 'a', value: 'a2' },
    { offset: 14, key: 'f', value: 'f-open' },
    { offset: 17, key: 'g', value: 'g1' },
    { offset: 18, key: 'h', value: 'h0' },
  ]);
  // Small reads cross the removed ranges one batch at a time and see the same records.
  assert.deepEqual(records(await readAll(e, 0, 1)), records(await readAll(e, 0)));

  // The append table still holds every record (the aborted transaction's rows included: this source reports
  // no transactions, so the table hides nothing).
  const all = ['a', 'b', 'c', 'a', 'd', 'b', 'd', 'e', 'c', 'f', 'b', 'a', 'f', 'g', 'g', 'h'].sort();
  assert.deepEqual(await tableKeys(e), { duckdb: all, icebird: all });
});

test('tombstones leave the compacted view delete.retention.ms after their segment\'s largest timestamp; without compaction every record is read', async (t) => {
  const e = await txnEnv(t, () => undefined);
  await e.plugin.configureTopic(TOPIC, config(Number.MAX_SAFE_INTEGER));
  e.plugin.segmentClosed(await segment(e, 0, 0, [{ records: [['a', 'a0'], ['a', null], ['b', 'b0']] }]));
  await e.plugin.drain();
  const live = (Date.now() - TS) * 2;
  await e.plugin.configureTopic(TOPIC, config(live));
  assert.deepEqual(records(await readAll(e, 0)), [
    { offset: 1, key: 'a', value: null },
    { offset: 2, key: 'b', value: 'b0' },
  ]);
  // The segment's records are from 2023: a day of delete.retention.ms has long passed.
  await e.plugin.configureTopic(TOPIC, config(86_400_000));
  assert.deepEqual(records(await readAll(e, 0)), [{ offset: 2, key: 'b', value: 'b0' }]);
  // cleanup.policy without compact again: the stored batches, every record.
  await e.plugin.configureTopic(TOPIC, config());
  assert.deepEqual(records(await readAll(e, 0)).map((r) => r.offset), [0, 1, 2]);
});

test('a fetch crosses segments with nothing left, and reads as empty when nothing is left up to the end of the tiered range (the broker goes on to the local log)', async (t) => {
  const e = await txnEnv(t, () => undefined);
  await e.plugin.configureTopic(TOPIC, config(86_400_000));
  e.plugin.segmentClosed(await segment(e, 0, 0, [{ records: [['a', 'a0'], ['b', 'b0']] }]));
  e.plugin.segmentClosed(await segment(e, 0, 2, [{ records: [['a', 'a1']] }, { records: [['b', 'b1']] }]));
  await e.plugin.drain();
  const r = await e.plugin.read({ topic: TOPIC, partition: 0 }, 0, 1 << 20, true);
  assert.equal(Number(decodeRecordBatch(r.records, 0).baseOffset), 2, 'the first segment is crossed');
  // Tombstones for both keys, older than delete.retention.ms: nothing of the partition is left to read.
  e.plugin.segmentClosed(await segment(e, 0, 4, [{ records: [['a', null], ['b', null]] }]));
  await e.plugin.drain();
  for (const from of [0, 3, 5]) {
    const none = await e.plugin.read({ topic: TOPIC, partition: 0 }, from, 1 << 20, true);
    assert.equal(none.records.length, 0, `from ${from}`);
  }
  assert.deepEqual(await tableKeys(e), { duckdb: ['a', 'a', 'a', 'b', 'b', 'b'], icebird: ['a', 'a', 'a', 'b', 'b', 'b'] }, 'the table keeps every row');
});

test('the view stays right across table compaction (segments merged) and DeleteRecords (the log start moved)', async (t) => {
  const e = await txnEnv(t, () => undefined);
  await e.plugin.configureTopic(TOPIC, config(Number.MAX_SAFE_INTEGER));
  for (let s = 0; s < 4; s++) {
    e.plugin.segmentClosed(await segment(e, 0, 3 * s, [{ records: [['a', `a${s}`], [`u${s}`, 'x'], ['b', `b${s}`]] }]));
    await e.plugin.drain();
  }
  const want = [
    { offset: 1, key: 'u0', value: 'x' },
    { offset: 4, key: 'u1', value: 'x' },
    { offset: 7, key: 'u2', value: 'x' },
    { offset: 9, key: 'a', value: 'a3' },
    { offset: 10, key: 'u3', value: 'x' },
    { offset: 11, key: 'b', value: 'b3' },
  ];
  assert.deepEqual(records(await readAll(e, 0)), want, 'before');
  const outcome = await e.plugin.compact({ topic: TOPIC, partition: 0 }, { minInputFiles: 2 });
  assert.equal(outcome.status, 'compacted');
  assert.ok(e.plugin.metadata.listRemoteLogSegments({ topic: TOPIC, partition: 0 }).length < 4, 'segments were merged');
  e.plugin.segmentClosed(await segment(e, 0, 12, [{ records: [['u0', 'y']] }]));
  await e.plugin.drain();
  assert.deepEqual(records(await readAll(e, 0)), [...want.slice(1), { offset: 12, key: 'u0', value: 'y' }], 'after compaction and one more segment');
  assert.equal(await e.plugin.deleteRecordsBefore({ topic: TOPIC, partition: 0 }, 5), 5);
  // The batch holding the new start comes back whole (as Kafka returns it); a consumer skips what lies below.
  const after = records(await readAll(e, 5));
  assert.deepEqual(after.filter((r) => r.offset >= 5), [...want.slice(2), { offset: 12, key: 'u0', value: 'y' }], 'after DeleteRecords');
  assert.deepEqual(after.map((r) => r.offset).slice(0, 2), [4, 7], 'u1 at 4, in the batch holding 5');
});
