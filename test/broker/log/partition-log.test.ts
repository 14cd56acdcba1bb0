import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { PartitionLog, type ClosedSegment } from '../../../broker/log/partition-log.js';
/** A batch this large took the thread pool before every write did; kept as the large size of these tests. */
const ASYNC_WRITE_BYTES = 256 * 1024;
import { isLogError } from '../../../broker/log/errors.js';
import { alwaysInline, batchOf, closeBeforeRemoving, makeBatch, manualClock, parseBatches, tempDir } from './batches.js';

async function openLog(dir: string, extra: Partial<Parameters<typeof PartitionLog.open>[0]> = {}): Promise<PartitionLog> {
  const log = await PartitionLog.open({ dir, ...extra });
  closeBeforeRemoving(dir, () => log.close());
  return log;
}

/** Reads the whole log from `from` with small fetches, as a consumer would. */
async function readAll(log: PartitionLog, from: number, maxBytes = 1000): Promise<ReturnType<typeof parseBatches>> {
  const out: ReturnType<typeof parseBatches> = [];
  let offset = from;
  while (offset < log.logEndOffset) {
    const r = await log.read(offset, maxBytes);
    assert.ok(r.records.length > 0, `read at ${offset} made progress`);
    out.push(...parseBatches(r.records));
    offset = r.nextOffset;
  }
  return out;
}

test('roll() with nothing to close still waits until a segment closed just before it is announced', async (t) => {
  // The commit-interval timer (or a size roll in append) may close the active segment just before someone
  // calls roll() and then drains tiering: roll() finding an empty active segment must not resolve before
  // the listeners have heard about the segment closed ahead of it, or the drain misses it.
  const dir = await tempDir(t);
  const log = await openLog(dir);
  const closed: ClosedSegment[] = [];
  log.onSegmentClosed((s) => closed.push(s));
  await log.append(batchOf('a', 3));
  const first = log.roll(); // like the timer: nobody awaits it before the second roll
  assert.equal(await log.roll(), undefined, 'the active segment is empty by then');
  assert.deepEqual(closed.map((c) => [c.baseOffset, c.lastOffset]), [[0, 2]], 'the first roll\'s segment was announced before roll() resolved');
  assert.equal((await first)?.lastOffset, 2);
});

test('append assigns offsets, and reads across many segments return every batch once, in order, intact', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, { config: { 'segment.bytes': 2048, 'index.interval.bytes': 256 } });
  const expected: { base: number; value: string }[] = [];
  for (let i = 0; i < 200; i++) {
    const count = (i % 3) + 1;
    const res = await log.append(batchOf(`b${i}`, count, { valueBytes: 40 }));
    assert.equal(res.lastOffset - res.baseOffset, count - 1);
    assert.equal(res.logAppendTime, -1);
    expected.push({ base: res.baseOffset, value: `b${i}-0` + 'x'.repeat(40 - `b${i}`.length - 4) });
  }
  assert.equal(log.logEndOffset, 399);
  assert.ok(log.segmentInfos().length > 10, `rolled into ${log.segmentInfos().length} segments`);
  const got = await readAll(log, 0);
  assert.deepEqual(got.map((b) => b.baseOffset), expected.map((e) => e.base));
  assert.deepEqual(got.map((b) => b.firstValue), expected.map((e) => e.value));
  assert.ok(got.every((b) => b.crcOk));
  // A fetch in the middle of a batch returns that whole batch first.
  // Batch 100 holds two records (100 % 3 + 1), so mid.base + 1 is its second record.
  const mid = expected[100] as { base: number };
  const r = await log.read(mid.base + 1, 1);
  const first = parseBatches(r.records)[0];
  assert.deepEqual([first?.baseOffset, first?.lastOffset], [mid.base, mid.base + 1]);
  assert.equal(r.firstOffset, mid.base);
});

for (const [mode, extra] of [['every write on the thread pool', {}], ['small writes inline', { inlineWrites: alwaysInline() }]] as const) test(`${mode}: large and small appends issued together stay in the order made; reads meanwhile return whole batches`, async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, { config: { 'segment.bytes': 8 * ASYNC_WRITE_BYTES }, ...extra });
  const big = (i: number) => batchOf(`big${i}`, 4, { valueBytes: ASYNC_WRITE_BYTES / 4 + 100 });
  const small = (i: number) => batchOf(`small${i}`, 2, { valueBytes: 100 });
  assert.ok(big(0).length >= ASYNC_WRITE_BYTES && small(0).length < ASYNC_WRITE_BYTES);
  // Appends issued without waiting, interleaved, while a reader polls the log end: every read returns only
  // whole batches with valid CRCs, and what it sees only grows.
  const appends: Promise<{ baseOffset: number }>[] = [];
  const expected: string[] = [];
  let reading = true;
  let seen = 0;
  const reader = (async () => {
    while (reading) {
      const end = log.logEndOffset;
      if (end > 0) {
        const got = await readAll(log, 0, 1 << 30);
        assert.ok(got.every((b) => b.crcOk), 'whole batches only');
        assert.ok(got.length >= seen, 'the log never shrinks');
        seen = got.length;
      }
      await new Promise((r) => setImmediate(r));
    }
  })();
  for (let i = 0; i < 24; i++) {
    const b = i % 3 === 0 ? big(i) : small(i);
    expected.push(i % 3 === 0 ? `big${i}` : `small${i}`);
    appends.push(log.append(b));
  }
  const results = await Promise.all(appends);
  reading = false;
  await reader;
  assert.deepEqual(results.map((r) => r.baseOffset), results.map((_, i) => [0, 4, 6][i % 3]! + Math.floor(i / 3) * 8), 'offsets in the order the appends were made');
  const got = await readAll(log, 0, 1 << 30);
  assert.deepEqual(got.map((b) => b.firstValue.replace(/-0x*$/, '')), expected);
  assert.ok(log.segmentInfos().length > 1, 'rolled across segments meanwhile');
});

test('appends made while others are written are written together, in call order; a bad one fails alone; groups roll where segment.bytes says', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, { config: { 'segment.bytes': 1500, 'index.interval.bytes': 256 } });
  // Four lanes, each appending as soon as its last append settled, as pipelined produce requests do;
  // every seventh append is a torn batch.
  const good: { id: string; base: number }[] = [];
  const bad: string[] = [];
  let next = 0;
  const lane = async () => {
    while (next < 120) {
      const i = next++;
      const b = batchOf(`g${i}`, (i % 3) + 1, { valueBytes: 60 });
      if (i % 7 === 6) {
        await assert.rejects(log.append(b.subarray(0, b.length - 5)), (e) => isLogError(e, 'CORRUPT_MESSAGE'));
        bad.push(`g${i}`);
      } else {
        good.push({ id: `g${i}`, base: (await log.append(b)).baseOffset });
      }
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
  assert.equal(bad.length, 17);
  assert.ok(log.appendWrites < good.length, `${good.length} appends took ${log.appendWrites} writes`);
  const inCallOrder = [...good].sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)));
  assert.deepEqual(good.map((g) => g.base).sort((a, b) => a - b), inCallOrder.map((g) => g.base), 'offsets follow the order the appends were made');
  const got = await readAll(log, 0);
  assert.deepEqual(got.map((b) => b.firstValue.split('-')[0]), inCallOrder.map((g) => g.id));
  assert.ok(got.every((b) => b.crcOk));
  const infos = log.segmentInfos();
  assert.ok(infos.length > 5, `rolled into ${infos.length} segments`);
  for (const s of infos) assert.ok(s.sizeInBytes <= 1500, `segment ${s.baseOffset} holds ${s.sizeInBytes} bytes`);
});

test('a group write takes appends up to 256 KiB; a larger append is written alone', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, { config: { 'segment.bytes': 64 * 1024 * 1024 } });
  // Made in one go, these all join one group; its writes must still be cut at 256 KiB.
  const small = await Promise.all(Array.from({ length: 40 }, (_, i) => log.append(batchOf(`s${i}`, 1, { valueBytes: 100 * 1024 }))));
  assert.deepEqual(small.map((r) => r.baseOffset), small.map((_, i) => i));
  assert.ok(log.appendWrites >= 20 && log.appendWrites < 40, `40 appends of 100 KiB took ${log.appendWrites} writes: two per write`);
  const before = log.appendWrites;
  await Promise.all(Array.from({ length: 6 }, (_, i) => log.append(batchOf(`l${i}`, 1, { valueBytes: 1024 * 1024 }))));
  assert.equal(log.appendWrites - before, 6, 'appends over 256 KiB are written one by one');
  const got = await readAll(log, 0, 1 << 30);
  assert.deepEqual(got.map((b) => b.firstValue.split('-')[0]), [...small.map((_, i) => `s${i}`), ...Array.from({ length: 6 }, (_, i) => `l${i}`)]);
});

test('roll() and DeleteRecords called between appends take their place in the order: appends made before them come first', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir);
  const before = Array.from({ length: 5 }, (_, i) => log.append(batchOf(`a${i}`, 2)));
  const rolled = log.roll();
  const after = Array.from({ length: 5 }, (_, i) => log.append(batchOf(`b${i}`, 2)));
  const start = log.deleteRecordsBefore(10);
  const last = log.append(batchOf('c', 1));
  assert.deepEqual((await Promise.all(before)).map((r) => r.baseOffset), [0, 2, 4, 6, 8]);
  assert.deepEqual([(await rolled)?.baseOffset, (await rolled)?.lastOffset], [0, 9], 'the closed segment holds exactly the appends made before roll()');
  assert.deepEqual((await Promise.all(after)).map((r) => r.baseOffset), [10, 12, 14, 16, 18]);
  assert.equal(await start, 10, 'DeleteRecords saw the log end after the appends before it');
  assert.equal((await last).baseOffset, 20);
  assert.deepEqual(log.segmentInfos().map((s) => s.baseOffset), [10], 'the segment below the new start is gone');
});

test('maxBytes: whole batches only, and the first batch is returned whole even when larger', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir);
  const sizes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const b = batchOf(`m${i}`, 2, { valueBytes: 100 });
    sizes.push(b.length);
    await log.append(b);
  }
  const s = sizes[0] as number;
  let r = await log.read(0, s * 2 + 10);
  assert.equal(r.records.length, s * 2);
  assert.equal(r.nextOffset, 4);
  r = await log.read(0, 10);
  assert.equal(r.records.length, s, 'first batch whole despite maxBytes=10');
  r = await log.read(0, 10, { minOneBatch: false });
  assert.equal(r.records.length, 0);
  // High watermark bound: nothing at or beyond maxOffset.
  r = await log.read(0, 1 << 20, { maxOffset: 6 });
  assert.deepEqual(parseBatches(r.records).map((b) => b.baseOffset), [0, 2, 4]);
  r = await log.read(6, 1 << 20, { maxOffset: 6 });
  assert.equal(r.records.length, 0);
  // At the log end: empty; beyond it or below the start: OFFSET_OUT_OF_RANGE.
  r = await log.read(10, 100);
  assert.equal(r.records.length, 0);
  await assert.rejects(log.read(11, 100), (e) => isLogError(e, 'OFFSET_OUT_OF_RANGE') && e.kafkaCode === 1);
  await assert.rejects(log.read(-1, 100), (e) => isLogError(e, 'OFFSET_OUT_OF_RANGE'));
});

test('index lookups find every offset after a clean reopen, and the index files are written', async (t) => {
  const dir = await tempDir(t);
  const cfg = { 'segment.bytes': 8192, 'index.interval.bytes': 200 };
  let log = await PartitionLog.open({ dir, config: cfg });
  for (let i = 0; i < 300; i++) await log.append(batchOf(`i${i}`, 1, { ts: 1000 + i, valueBytes: 30 }));
  await log.close();
  const files = await readdir(dir);
  assert.ok(files.includes('.clean-shutdown'));
  const idx = await readFile(join(dir, '00000000000000000000.index'));
  assert.ok(idx.length > 0 && idx.length % 8 === 0);
  log = await openLog(dir, { config: cfg });
  assert.equal(log.recovery.cleanShutdown, true);
  assert.equal(log.recovery.rebuiltIndexes, 0);
  assert.equal(log.logEndOffset, 300);
  for (let o = 0; o < 300; o += 7) {
    const r = await log.read(o, 1);
    const [b] = parseBatches(r.records);
    assert.equal(b?.baseOffset, o);
    assert.equal(b?.firstValue.startsWith(`i${o}-0`), true);
  }
  for (const ts of [0, 1000, 1001, 1150, 1299]) {
    assert.deepEqual(await log.offsetForTimestamp(ts), { offset: Math.max(0, ts - 1000), timestamp: Math.max(1000, ts) });
  }
  assert.equal(await log.offsetForTimestamp(1300), undefined);
  assert.deepEqual(await log.maxTimestampOffset(), { offset: 299, timestamp: 1299 });
  // Appends continue after reopen.
  const res = await log.append(batchOf('after', 1));
  assert.equal(res.baseOffset, 300);
});

test('offsetForTimestamp takes the first batch whose max timestamp reaches the target, with unordered timestamps', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, { config: { 'index.interval.bytes': 0, 'segment.bytes': 600 } });
  const ts = [50, 10, 70, 30, 70, 90, 20];
  for (const [i, x] of ts.entries()) await log.append(batchOf(`t${i}`, 1, { ts: x }));
  const expect = (target: number): { offset: number; timestamp: number } | undefined => {
    const i = ts.findIndex((x) => x >= target);
    return i < 0 ? undefined : { offset: i, timestamp: ts[i] as number };
  };
  for (const target of [0, 10, 11, 50, 51, 70, 71, 90, 91]) assert.deepEqual(await log.offsetForTimestamp(target), expect(target), `ts ${target}`);
  assert.deepEqual(await log.maxTimestampOffset(), { offset: 5, timestamp: 90 });
});

test('a record locator refines timestamp lookups to the record', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, {
    recordLocator: (batch, target) => {
      const base = Number(batch.readBigInt64BE(0));
      const first = Number(batch.readBigInt64BE(27));
      // makeBatch with step 10: record i has first + 10 i.
      const i = Math.max(0, Math.ceil((target - first) / 10));
      return { offset: base + i, timestamp: first + 10 * i };
    },
  });
  await log.append(makeBatch({ values: ['a', 'b', 'c', 'd'], baseTimestamp: 100, timestampStep: 10 }));
  assert.deepEqual(await log.offsetForTimestamp(115), { offset: 2, timestamp: 120 });
  assert.deepEqual(await log.maxTimestampOffset(), { offset: 3, timestamp: 130 });
});

test('rolls by segment.bytes, by segment.ms on an injected clock, and on demand, notifying each closed segment', async (t) => {
  const dir = await tempDir(t);
  const clock = manualClock();
  const log = await openLog(dir, { clock: clock.now, config: { 'segment.bytes': 1000, 'segment.ms': 60_000 } });
  const closed: ClosedSegment[] = [];
  log.onSegmentClosed((s) => closed.push(s));
  const one = batchOf('r', 1, { valueBytes: 300 });
  const size = one.length;
  for (let i = 0; i < 3; i++) await log.append(batchOf(`r${i}`, 1, { valueBytes: 300 }));
  // 3 * size > 1000 -> the third append rolled.
  assert.equal(Math.floor(1000 / size), 2);
  assert.deepEqual(log.segmentInfos().map((s) => [s.baseOffset, s.active]), [[0, false], [2, true]]);
  // Time: 59 s later no roll, 60 s after the segment's first append it rolls.
  clock.advance(59_999);
  await log.append(batchOf('t0', 1));
  assert.equal(log.segmentInfos().length, 2);
  clock.advance(1);
  await log.append(batchOf('t1', 1));
  assert.deepEqual(log.segmentInfos().map((s) => s.baseOffset), [0, 2, 4]);
  // On demand, then an empty active segment doesn't roll again.
  const rolled = await log.roll();
  assert.equal(rolled?.baseOffset, 4);
  assert.equal(rolled?.lastOffset, 4);
  assert.equal(await log.roll(), undefined);
  assert.deepEqual(log.segmentInfos().map((s) => s.baseOffset), [0, 2, 4, 5]);
  await log.flush(); // waits for segments still being sealed
  assert.deepEqual(closed.map((c) => [c.baseOffset, c.lastOffset]), [[0, 1], [2, 3], [4, 4]]);
  const c0 = closed[0] as ClosedSegment;
  assert.equal(c0.path, join(dir, '00000000000000000000.log'));
  assert.equal((await readFile(c0.path)).length, c0.sizeInBytes);
  assert.ok((await readFile(join(dir, '00000000000000000000.timeindex'))).length > 0);
});

test('retention.ms by the segment max timestamp and retention.bytes from the oldest, never the active segment', async (t) => {
  const dir = await tempDir(t);
  const clock = manualClock(10_000_000);
  const log = await openLog(dir, { clock: clock.now, config: { 'segment.bytes': 300, 'retention.ms': 5000 } });
  for (let i = 0; i < 6; i++) await log.append(batchOf(`x${i}`, 1, { ts: 10_000_000 + i * 1000, valueBytes: 150 }));
  const before = log.segmentInfos();
  assert.equal(before.length, 6);
  assert.equal(await log.enforceRetention(), 0);
  clock.advance(7500); // segments with max ts < now - 5000 = 10_002_500 -> 0, 1, 2
  assert.equal(await log.enforceRetention(), 3);
  assert.equal(log.logStartOffset, 3);
  assert.deepEqual(log.segmentInfos().map((s) => s.baseOffset), [3, 4, 5]);
  await assert.rejects(log.read(2, 100), (e) => isLogError(e, 'OFFSET_OUT_OF_RANGE'));
  assert.equal(parseBatches((await log.read(3, 100)).records)[0]?.baseOffset, 3);
  clock.advance(1_000_000);
  assert.equal(await log.enforceRetention(), 2, 'all but the active segment');
  assert.deepEqual(log.segmentInfos().map((s) => s.baseOffset), [5]);
  const files = (await readdir(dir)).filter((f) => f.endsWith('.log'));
  assert.deepEqual(files, ['00000000000000000005.log']);

  const dir2 = await tempDir(t);
  const sized = await openLog(dir2, { config: { 'segment.bytes': 300, 'retention.bytes': 500, 'retention.ms': -1 } });
  for (let i = 0; i < 6; i++) await sized.append(batchOf(`y${i}`, 1, { valueBytes: 150 }));
  const segSize = sized.segmentInfos()[0]!.sizeInBytes;
  assert.equal(await sized.enforceRetention(), 6 - Math.ceil(500 / segSize));
  assert.ok(sized.size >= 500 && sized.size - segSize < 500);
});

test('canDeleteSegment gates deletion, stopping at the first refusal', async (t) => {
  const dir = await tempDir(t);
  let tieredUpTo = -1;
  const asked: number[] = [];
  const log = await openLog(dir, {
    config: { 'segment.bytes': 300, 'retention.bytes': 0 },
    canDeleteSegment: async (_base, last) => {
      asked.push(_base);
      return last <= tieredUpTo;
    },
  });
  for (let i = 0; i < 5; i++) await log.append(batchOf(`g${i}`, 1, { valueBytes: 150 }));
  assert.equal(await log.enforceRetention(), 0);
  assert.deepEqual(asked, [0]);
  tieredUpTo = 1;
  assert.equal(await log.enforceRetention(), 2);
  assert.equal(log.logStartOffset, 2);
  tieredUpTo = 100;
  assert.equal(await log.enforceRetention(), 2);
  assert.equal(log.logStartOffset, 4);
});

test('deleteRecordsBefore advances and persists the log start offset, deleting whole segments below it', async (t) => {
  const dir = await tempDir(t);
  let log = await PartitionLog.open({ dir, config: { 'segment.bytes': 300 } });
  for (let i = 0; i < 6; i++) await log.append(batchOf(`d${i}`, 2, { valueBytes: 60 }));
  assert.deepEqual(log.segmentInfos().map((s) => s.baseOffset), [0, 2, 4, 6, 8, 10]);
  assert.equal(await log.deleteRecordsBefore(5), 5);
  assert.deepEqual(log.segmentInfos().map((s) => s.baseOffset), [4, 6, 8, 10]);
  await assert.rejects(log.read(4, 100), (e) => isLogError(e, 'OFFSET_OUT_OF_RANGE'));
  // Fetching at the start offset returns the batch that contains it.
  assert.equal(parseBatches((await log.read(5, 1)).records)[0]?.baseOffset, 4);
  assert.equal(await log.deleteRecordsBefore(3), 5, 'never moves backwards');
  await assert.rejects(log.deleteRecordsBefore(13), (e) => isLogError(e, 'OFFSET_OUT_OF_RANGE'));
  assert.equal(await log.deleteRecordsBefore(12), 12);
  assert.deepEqual(log.segmentInfos().map((s) => s.baseOffset), [10]);
  assert.equal((await log.read(12, 100)).records.length, 0);
  await log.close();
  log = await openLog(dir, { config: { 'segment.bytes': 300 } });
  assert.equal(log.logStartOffset, 12);
  assert.equal(log.logEndOffset, 12);
  assert.equal((await readFile(join(dir, 'log-start-offset.checkpoint'), 'utf8')).trim(), '12');
});

test('append rejects bytes that are not whole v2 batches and leaves the log unchanged', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, { config: { 'segment.bytes': 500 } });
  const good = batchOf('ok', 1);
  await assert.rejects(log.append(Buffer.alloc(0)), (e) => isLogError(e, 'CORRUPT_MESSAGE'));
  await assert.rejects(log.append(good.subarray(0, good.length - 1)), (e) => isLogError(e, 'CORRUPT_MESSAGE'));
  await assert.rejects(log.append(Buffer.concat([good, good.subarray(0, 30)])), (e) => isLogError(e, 'CORRUPT_MESSAGE'));
  const v1 = Buffer.from(good);
  v1[16] = 1;
  await assert.rejects(log.append(v1), (e) => isLogError(e, 'CORRUPT_MESSAGE'));
  await assert.rejects(log.append(batchOf('big', 1, { valueBytes: 600 })), (e) => isLogError(e, 'RECORD_LIST_TOO_LARGE') && e.kafkaCode === 18);
  assert.equal(log.logEndOffset, 0);
  // Several batches in one append get consecutive offsets.
  const res = await log.append(Buffer.concat([batchOf('a', 3), batchOf('b', 2)]));
  assert.deepEqual([res.baseOffset, res.lastOffset], [0, 4]);
  assert.deepEqual(parseBatches((await log.read(0, 1000)).records).map((b) => b.baseOffset), [0, 3]);
});

test('LogAppendTime: the rewriter is called per batch with the clock, and its result is stored', async (t) => {
  const dir = await tempDir(t);
  const clock = manualClock(42_000);
  const calls: number[] = [];
  const log = await openLog(dir, {
    clock: clock.now,
    config: { 'message.timestamp.type': 'LogAppendTime' },
    setLogAppendTime: (buf, pos, ts) => {
      calls.push(pos);
      buf.writeInt16BE(buf.readInt16BE(pos + 21) | 0x08, pos + 21);
      buf.writeBigInt64BE(BigInt(ts), pos + 35);
      const size = buf.readInt32BE(pos + 8) + 12;
      buf.writeUInt32BE(crc32c(buf.subarray(pos + 21, pos + size)), pos + 17);
    },
  });
  const a = batchOf('a', 1, { ts: 5 });
  const res = await log.append(Buffer.concat([a, batchOf('b', 1, { ts: 6 })]));
  assert.equal(res.logAppendTime, 42_000);
  assert.deepEqual(calls, [0, a.length]);
  const stored = parseBatches((await log.read(0, 1000)).records);
  assert.deepEqual(stored.map((b) => [b.maxTimestamp, b.crcOk]), [[42_000, true], [42_000, true]]);
  assert.deepEqual(await log.offsetForTimestamp(41_999), { offset: 0, timestamp: 42_000 });

  const dir2 = await tempDir(t);
  const bare = await openLog(dir2, { config: { 'message.timestamp.type': 'LogAppendTime' } });
  await assert.rejects(bare.append(batchOf('c', 1)), (e) => isLogError(e, 'LOG_APPEND_TIME_UNSUPPORTED'));
});

test('flush.messages fsyncs before acknowledging, flush() on demand, and concurrent appends stay ordered', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, { config: { 'flush.messages': 3, 'flush.ms': 10 } });
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => log.append(batchOf(`c${i}`, 2))));
  assert.deepEqual(results.map((r) => r.baseOffset), Array.from({ length: 50 }, (_, i) => i * 2));
  await log.flush();
  const got = parseBatches((await log.read(0, 1 << 20)).records);
  assert.deepEqual(got.map((b) => b.firstValue), Array.from({ length: 50 }, (_, i) => `c${i}-0`));
});

test('reads running while segments are deleted either complete or report OFFSET_OUT_OF_RANGE', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, { config: { 'segment.bytes': 400 } });
  for (let i = 0; i < 20; i++) await log.append(batchOf(`z${i}`, 1, { valueBytes: 150 }));
  const reads = Array.from({ length: 20 }, (_, i) => log.read(i, 1000).then((r) => parseBatches(r.records)[0]?.baseOffset, (e: unknown) => (isLogError(e, 'OFFSET_OUT_OF_RANGE') ? 'gone' : e)));
  await log.deleteRecordsBefore(15);
  for (const [i, r] of (await Promise.all(reads)).entries()) assert.ok(r === i || r === 'gone', `read ${i} gave ${String(r)}`);
});

test('after close, calls fail with LOG_CLOSED', async (t) => {
  const dir = await tempDir(t);
  const log = await PartitionLog.open({ dir });
  await log.append(batchOf('q', 1));
  await log.close();
  await log.close();
  await assert.rejects(log.append(batchOf('q', 1)), (e) => isLogError(e, 'LOG_CLOSED'));
  await assert.rejects(log.read(0, 10), (e) => isLogError(e, 'LOG_CLOSED'));
});

test('DeleteRecords deletes segments wholly below the new start even when canDeleteSegment refuses (their records are gone)', async (t) => {
  const dir = await tempDir(t);
  const log = await openLog(dir, { config: { 'segment.bytes': 300 }, canDeleteSegment: () => false });
  for (let i = 0; i < 6; i++) await log.append(batchOf(`r${i}`, 2, { valueBytes: 60 }));
  assert.equal(await log.enforceRetention(), 0, 'retention waits for the gate');
  assert.equal(await log.deleteRecordsBefore(5), 5);
  assert.deepEqual(log.segmentInfos().map((s) => s.baseOffset), [4, 6, 8, 10], 'segments 0 and 2 are deleted; 4 holds the new start');
});

test('startEmptyLogAt moves an empty log to a later start, persistently, and refuses a log with records', async (t) => {
  const dir = await tempDir(t);
  let log = await PartitionLog.open({ dir, config: { 'segment.bytes': 300 } });
  assert.equal(await log.startEmptyLogAt(0), false, 'already there');
  assert.equal(await log.startEmptyLogAt(42), true);
  assert.deepEqual([log.logStartOffset, log.logEndOffset], [42, 42]);
  assert.deepEqual(log.segmentInfos().map((s) => s.baseOffset), [42], 'the empty segment at 0 is replaced');
  assert.equal((await log.append(batchOf('s', 2, { valueBytes: 10 }))).baseOffset, 42, 'the next append continues there');
  assert.equal(await log.startEmptyLogAt(100), false, 'a log with records is left alone');
  await log.close();
  log = await openLog(dir, { config: { 'segment.bytes': 300 } });
  assert.deepEqual([log.logStartOffset, log.logEndOffset], [42, 44], 'after a reopen');
  assert.deepEqual((await readAll(log, 42)).map((b) => b.baseOffset), [42]);
  await assert.rejects(log.read(0, 100), (e) => isLogError(e, 'OFFSET_OUT_OF_RANGE'));
});

test('the observer hears every append\'s wait, every write with its bytes, and the fsync of each sealed segment', async (t) => {
  const dir = await tempDir(t);
  const waits: number[] = [];
  const writes: [number, number, boolean][] = [];
  const flushes: number[] = [];
  const observer = { appendWaited: (s: number) => waits.push(s), segmentWritten: (bytes: number, s: number, inline: boolean) => writes.push([bytes, s, inline]), flushed: (s: number) => flushes.push(s) };
  const log = await openLog(dir, { config: { 'segment.bytes': 64 * 1024 * 1024 }, observer });
  // Made in one go, these queue behind the first write: fewer writes than appends, and the later ones wait.
  const batches = Array.from({ length: 40 }, (_, i) => batchOf(`o${i}`, 1, { valueBytes: 20 * 1024 }));
  const started = performance.now();
  await Promise.all(batches.map((b) => log.append(b)));
  const elapsed = (performance.now() - started) / 1000;
  assert.equal(waits.length, 40, 'one wait per append');
  assert.equal(writes.length, log.appendWrites, 'one observation per write');
  assert.ok(writes.length < 40, `${writes.length} writes for 40 appends`);
  assert.ok(writes.every(([, , inline]) => !inline), 'without InlineWrites every write goes to the thread pool');
  assert.equal(
    writes.reduce((n, [bytes]) => n + bytes, 0),
    batches.reduce((n, b) => n + b.length, 0),
    'the writes carry exactly the appended bytes',
  );
  // In seconds, each within the time all the appends took (in milliseconds they would be 1000 times over).
  for (const s of [...waits, ...writes.map(([, d]) => d)]) assert.ok(s >= 0 && s <= elapsed, `${s} s within the ${elapsed} s the appends took`);
  assert.ok(Math.max(...waits) > 0, 'appends queued behind the first write waited');
  assert.equal(flushes.length, 0, 'nothing fsynced yet (flush.messages and flush.ms unset)');
  await log.roll();
  assert.equal(flushes.length, 1, 'the sealed segment was fsynced once');
});

test('with InlineWrites, writes of up to its maxBytes are made on the calling thread and larger ones on the pool; the observer is told which', async (t) => {
  const dir = await tempDir(t);
  const writes: [number, boolean][] = [];
  const observer = { appendWaited: () => undefined, segmentWritten: (bytes: number, _s: number, inline: boolean) => writes.push([bytes, inline]), flushed: () => undefined };
  const log = await openLog(dir, { config: { 'segment.bytes': 64 * 1024 * 1024 }, observer, inlineWrites: alwaysInline() });
  const small = batchOf('s', 1, { valueBytes: 20 * 1024 });
  const large = batchOf('l', 1, { valueBytes: 100 * 1024 });
  // An inline write completes before append() returns to the event loop: the log end moves within the same turn.
  const pending = log.append(small);
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(log.logEndOffset, 1, 'the inline write was made before any I/O completed');
  await pending;
  await log.append(large);
  await log.append(batchOf('s2', 1, { valueBytes: 20 * 1024 }));
  assert.deepEqual(writes.map(([bytes, inline]) => [bytes > 64 * 1024, inline]), [[false, true], [true, false], [false, true]]);
  assert.deepEqual(parseBatches((await log.read(0, 1 << 30)).records).map((b) => b.firstValue.split('-')[0]), ['s', 'l', 's2']);
});
