import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchCleaner, OffsetMapBuilder } from '../../../../broker/log/cleaner/clean-batches.js';
import { iterateBatches } from '../../../../protocol/record-batch/batches.js';
import { controlMarkerRecord, decodeRecordBatch, encodeRecordBatch, type RecordBatch } from '../../../../protocol/record-batch/record-batch.js';
import type { CompressionType } from '../../../../protocol/record-batch/compression.js';

const T0 = 1_700_000_000_000;

interface Rec {
  key: string | null;
  value: string | null;
  ts?: number;
  headers?: { key: string; value: Buffer | null }[];
}

/** A batch at `base` whose records take consecutive offsets. */
function batch(base: number, recs: Rec[], extra: { compression?: CompressionType; producerId?: bigint; epoch?: number; seq?: number; txn?: boolean } = {}): Buffer {
  return encodeRecordBatch({
    baseOffset: BigInt(base),
    baseTimestamp: BigInt(T0),
    ...(extra.compression ? { compression: extra.compression } : {}),
    ...(extra.producerId !== undefined ? { producerId: extra.producerId, producerEpoch: extra.epoch ?? 0, baseSequence: extra.seq ?? 0 } : {}),
    ...(extra.txn ? { isTransactional: true } : {}),
    records: recs.map((r, i) => ({
      offsetDelta: i,
      timestampDelta: (r.ts ?? T0 + base + i) - T0,
      key: r.key === null ? null : Buffer.from(r.key),
      value: r.value === null ? null : Buffer.from(r.value),
      headers: r.headers ?? [],
    })),
  });
}

function marker(base: number, producerId: bigint, kind: 'commit' | 'abort'): Buffer {
  return encodeRecordBatch({ baseOffset: BigInt(base), baseTimestamp: BigInt(T0 + base), producerId, producerEpoch: 0, baseSequence: -1, isTransactional: true, isControl: true, records: [controlMarkerRecord(kind, 0)] });
}

function batches(buf: Buffer): RecordBatch[] {
  return [...iterateBatches(buf)].map((b) => decodeRecordBatch(buf, b.start));
}

/** [offset, key, value, timestamp] of every data record. */
function flat(buf: Buffer): [number, string | null, string | null, number][] {
  const out: [number, string | null, string | null, number][] = [];
  for (const b of batches(buf)) {
    if (b.isControl) continue;
    for (const r of b.records) out.push([Number(b.baseOffset) + r.offsetDelta, r.key?.toString() ?? null, r.value?.toString() ?? null, Number(b.baseTimestamp) + r.timestampDelta]);
  }
  return out;
}

/** Runs both passes over `segments` at `now`; returns each cleaned segment. */
function clean(segments: Buffer[], now: number, deleteRetentionMs = 1000): { out: Buffer[]; cleaner: BatchCleaner } {
  const builder = new OffsetMapBuilder();
  for (const s of segments) builder.add(s);
  const cleaner = new BatchCleaner(builder.finish(), now, deleteRetentionMs);
  return { out: segments.map((s) => cleaner.clean(s)), cleaner };
}

test('keeps the latest record per key at its original offset, across segments, with gaps', () => {
  const seg1 = Buffer.concat([batch(0, [{ key: 'a', value: '1' }, { key: 'b', value: '1' }, { key: 'a', value: '2' }]), batch(3, [{ key: 'c', value: '1' }])]);
  const seg2 = Buffer.concat([batch(4, [{ key: 'b', value: '2' }, { key: 'a', value: '3' }])]);
  const { out, cleaner } = clean([seg1, seg2], T0 + 10_000);
  const all = [...flat(out[0] as Buffer), ...flat(out[1] as Buffer)];
  assert.deepEqual(all.map(([o, k, v]) => [o, k, v]), [
    [3, 'c', '1'],
    [4, 'b', '2'],
    [5, 'a', '3'],
  ]);
  assert.deepEqual(all.map(([, , , ts]) => ts), [T0 + 3, T0 + 4, T0 + 5], 'timestamps unchanged');
  assert.equal(cleaner.stats.recordsRemoved, 3);
  assert.equal(cleaner.stats.recordsRead, 6);
  // The second segment was already all-latest: its bytes are the original ones.
  assert.ok((out[1] as Buffer).equals(seg2));
});

test('a rewritten batch keeps base offset, last offset delta, producer fields, compression and headers', () => {
  for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
    const headers = [{ key: 'h', value: Buffer.from('1') }, { key: 'h', value: null }];
    const seg = Buffer.concat([
      batch(10, [{ key: 'a', value: 'old' }, { key: 'b', value: 'keep', headers }, { key: 'a', value: 'mid' }], { compression, producerId: 7n, epoch: 3, seq: 42 }),
      batch(13, [{ key: 'a', value: 'new' }]),
    ]);
    const { out } = clean([seg], T0 + 10_000);
    const [first, second] = batches(out[0] as Buffer);
    assert.ok(first && second, compression);
    assert.equal(first.baseOffset, 10n);
    assert.equal(first.lastOffsetDelta, 2, `${compression}: the batch still spans 10-12`);
    assert.equal(first.compression, compression);
    assert.equal(first.producerId, 7n);
    assert.equal(first.producerEpoch, 3);
    assert.equal(first.baseSequence, 42);
    assert.equal(first.maxTimestamp, BigInt(T0 + 12));
    assert.equal(first.records.length, 1);
    assert.equal(first.records[0]?.offsetDelta, 1);
    assert.deepEqual(first.records[0]?.headers, headers);
    assert.equal(second.records[0]?.value?.toString(), 'new');
  }
});

test('tombstones get a delete horizon on the first clean and go on the first clean after it', () => {
  const seg = Buffer.concat([batch(0, [{ key: 'a', value: '1' }, { key: 'b', value: '1' }]), batch(2, [{ key: 'a', value: null }])]);
  const now = T0 + 5000;
  const first = clean([seg], now, 1000);
  assert.deepEqual(flat(first.out[0] as Buffer).map(([o, k, v, ts]) => [o, k, v, ts]), [
    [1, 'b', '1', T0 + 1],
    [2, 'a', null, T0 + 2],
  ]);
  const stamped = batches(first.out[0] as Buffer)[1];
  assert.equal(stamped?.hasDeleteHorizon, true);
  assert.equal(stamped?.baseTimestamp, BigInt(now + 1000), 'baseTimestamp holds the delete horizon');
  assert.equal(first.cleaner.nextDeleteHorizon, now + 1000);
  // Before the horizon: the tombstone stays, and its batch is not re-stamped.
  const again = clean(first.out, now + 999, 1000);
  assert.ok((again.out[0] as Buffer).equals(first.out[0] as Buffer));
  // At the horizon: gone.
  const later = clean(first.out, now + 1000, 1000);
  assert.deepEqual(flat(later.out[0] as Buffer).map(([o, k, v]) => [o, k, v]), [[1, 'b', '1']]);
  assert.equal(later.cleaner.nextDeleteHorizon, Infinity);
});

test('records without a key are removed (Kafka\'s cleaner drops them)', () => {
  const seg = batch(0, [{ key: null, value: 'x' }, { key: 'a', value: '1' }]);
  const { out } = clean([seg], T0 + 1);
  assert.deepEqual(flat(out[0] as Buffer).map(([o, k]) => [o, k]), [[1, 'a']]);
});

test('aborted transactional data goes; committed data competes by offset; markers go after delete.retention.ms once empty', () => {
  const seg = Buffer.concat([
    batch(0, [{ key: 'a', value: 'plain' }]),
    batch(1, [{ key: 'a', value: 'aborted' }, { key: 'z', value: 'aborted' }], { producerId: 5n, txn: true }),
    marker(3, 5n, 'abort'),
    batch(4, [{ key: 'b', value: 'committed' }], { producerId: 6n, txn: true }),
    marker(5, 6n, 'commit'),
  ]);
  const now = T0 + 100;
  const { out } = clean([seg], now, 50);
  const result = batches(out[0] as Buffer);
  assert.deepEqual(flat(out[0] as Buffer).map(([o, k, v]) => [o, k, v]), [
    [0, 'a', 'plain'],
    [4, 'b', 'committed'],
  ], 'the aborted records did not supersede key a');
  const markers = result.filter((b) => b.isControl);
  assert.deepEqual(markers.map((m) => [Number(m.baseOffset), m.control?.kind, m.hasDeleteHorizon]), [
    [3, 'abort', true],
    [5, 'commit', false],
  ], 'the abort marker has no data left, so it is stamped; the commit marker still has data');
  const later = clean(out, now + 50, 50);
  assert.deepEqual(batches(later.out[0] as Buffer).filter((b) => b.isControl).map((m) => Number(m.baseOffset)), [5], 'the empty abort marker is gone after the horizon');
});

test('a transaction without its marker in the range is kept whole and supersedes nothing', () => {
  const seg = Buffer.concat([batch(0, [{ key: 'a', value: 'plain' }]), batch(1, [{ key: 'a', value: 'open' }, { key: 'a', value: 'open2' }], { producerId: 9n, txn: true })]);
  const { out } = clean([seg], T0 + 1);
  assert.deepEqual(flat(out[0] as Buffer).map(([o, k, v]) => [o, k, v]), [
    [0, 'a', 'plain'],
    [1, 'a', 'open'],
    [2, 'a', 'open2'],
  ]);
});

test('a batch with nothing left is removed; an empty segment cleans to no bytes', () => {
  const seg1 = batch(0, [{ key: 'a', value: '1' }]);
  const seg2 = batch(1, [{ key: 'a', value: '2' }]);
  const { out } = clean([seg1, seg2], T0 + 1);
  assert.equal((out[0] as Buffer).length, 0);
  assert.ok((out[1] as Buffer).equals(seg2));
});

test('the last batch of an idempotent producer stays, empty, with its producer fields and offset range', () => {
  const seg1 = Buffer.concat([batch(0, [{ key: 'a', value: '1' }, { key: 'b', value: '1' }], { producerId: 4n, epoch: 2, seq: 10 }), batch(2, [{ key: 'a', value: '2' }], { producerId: 4n, epoch: 2, seq: 12 })]);
  const seg2 = batch(3, [{ key: 'a', value: '3' }, { key: 'b', value: '2' }]);
  const { out } = clean([seg1, seg2], T0 + 1);
  const kept = batches(out[0] as Buffer);
  assert.equal(kept.length, 1, 'the earlier batch of the producer goes');
  const [last] = kept;
  assert.deepEqual([last?.baseOffset, last?.lastOffsetDelta, last?.producerId, last?.producerEpoch, last?.baseSequence, last?.records.length], [2n, 0, 4n, 2, 12, 0]);
});
