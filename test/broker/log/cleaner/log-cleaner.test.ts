import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { LogCleaner, readCleanerCheckpoint } from '../../../../broker/log/cleaner/log-cleaner.js';
import { cleanPartition, planClean } from '../../../../broker/log/cleaner/clean-partition.js';
import { PartitionLog } from '../../../../broker/log/partition-log.js';
import type { LogTopicConfig } from '../../../../broker/log/config.js';
import { closeBeforeRemoving, tempDir } from '../batches.js';
import { T0, keyed, openCompacted, readLog, reference, writeUpdates, type LogRecord } from './helpers.js';

const BASE: LogTopicConfig = { 'segment.bytes': 900, compact: true, 'min.cleanable.dirty.ratio': 0.01, 'delete.retention.ms': 1000, 'retention.ms': -1, 'retention.bytes': -1 };

function activeBase(log: PartitionLog): number {
  const infos = log.segmentInfos();
  return (infos[infos.length - 1] as { baseOffset: number }).baseOffset;
}

test('a clean keeps the latest record per key of the closed segments, at its offset; the active segment is untouched', async (t) => {
  const dir = await tempDir(t);
  let now = T0 + 60_000;
  const { logs, log } = await openCompacted(dir, BASE, () => now);
  const written = await writeUpdates(log, 300, 7);
  assert.ok(log.segmentInfos().length > 5, 'many segments rolled');
  const end = activeBase(log);
  const activeBefore = await readLog(log, end);
  const cleaner = new LogCleaner({ logs, backoffMs: 1000, ioMaxBytesPerSecond: Infinity, clock: () => now });
  assert.equal(await cleaner.runOnce(), true);
  const expected = reference(written, end);
  assert.ok(expected.length < written.length / 3, 'most records went');
  assert.deepEqual(await readLog(log, 0), expected);
  assert.deepEqual(await readLog(log, end), activeBefore, 'the active segment is as it was');
  assert.equal(log.logEndOffset, 300);
  assert.equal(log.logStartOffset, 0);
  assert.equal(cleaner.metrics.passes, 1);
  assert.equal(cleaner.metrics.recordsRemoved, written.length - expected.length);
  assert.ok(cleaner.metrics.bytesRead > cleaner.metrics.bytesWritten);
  assert.equal(await readCleanerCheckpoint(log.dir), end, 'the cleaned range is checkpointed');

  // Nothing dirty: no second clean (the first look after a start also checks delete horizons: none left).
  assert.equal(await cleaner.runOnce(), false);

  // A fetch at an offset that was cleaned away gets the next surviving batch.
  const gap = written.find((r) => !expected.some((e) => e.offset === r.offset)) as LogRecord;
  const next = expected.find((e) => e.offset > gap.offset) as LogRecord;
  const r = await log.read(gap.offset, 10_000);
  assert.equal(r.firstOffset, next.offset);

  // After a restart the log reads the same, and the checkpoint is kept.
  await logs.close();
  const reopened = await PartitionLog.open({ dir: log.dir, config: BASE, clock: () => now });
  closeBeforeRemoving(dir, () => reopened.close());
  assert.deepEqual(await readLog(reopened, 0), expected);
  assert.equal(reopened.logEndOffset, 300);
  now += 1;
});

test('tombstones stay for delete.retention.ms after the clean that first kept them, then go', async (t) => {
  const dir = await tempDir(t);
  let now = T0 + 60_000;
  const { logs, log } = await openCompacted(dir, BASE, () => now);
  const written = await writeUpdates(log, 60, 4);
  for (const key of ['k1', 'k2']) {
    const r = await log.append(keyed([{ key, value: null }], T0));
    written.push({ offset: r.baseOffset, key, value: null, timestamp: T0 });
  }
  written.push(...(await writeUpdates(log, 40, 1, () => T0, 'w')));
  await log.roll();
  const active = await log.append(keyed([{ key: 'k0', value: 'active' }], T0));
  written.push({ offset: active.baseOffset, key: 'k0', value: 'active', timestamp: T0 });
  const end = activeBase(log);
  const cleaner = new LogCleaner({ logs, backoffMs: 1000, ioMaxBytesPerSecond: Infinity, clock: () => now });
  assert.equal(await cleaner.runOnce(), true);
  const withTombstones = reference(written, end);
  assert.ok(withTombstones.some((r) => r.value === null), 'the reference keeps tombstones');
  assert.deepEqual(await readLog(log, 0), withTombstones);
  now += 999;
  assert.equal(await cleaner.runOnce(), false, 'the horizon has not passed');
  assert.deepEqual(await readLog(log, 0), withTombstones);
  now += 1;
  assert.equal(await cleaner.runOnce(), true, 'the passed horizon makes a clean due');
  const gone = reference(written, end, true);
  assert.deepEqual(await readLog(log, 0), gone);
  assert.ok(!gone.some((r) => r.value === null));
});

test('dirty ratio and max.compaction.lag.ms decide when a partition is cleaned; min.compaction.lag.ms holds young segments back', async (t) => {
  const dir = await tempDir(t);
  let now = T0 + 60_000;
  const config: LogTopicConfig = { ...BASE, 'min.cleanable.dirty.ratio': 0.9, 'max.compaction.lag.ms': 30_000, 'min.compaction.lag.ms': 10_000 };
  const { logs, log } = await openCompacted(dir, config, () => now);
  // Old records, then young ones (timestamps near now).
  const old = await writeUpdates(log, 100, 50, () => T0);
  await log.roll();
  const young = await writeUpdates(log, 20, 3, () => now - 1000, 'y');
  await log.roll();
  await log.append(keyed([{ key: 'k0', value: 'active' }], now));
  const youngStart = young[0]?.offset as number;
  const cleaner = new LogCleaner({ logs, backoffMs: 1000, ioMaxBytesPerSecond: Infinity, clock: () => now });
  assert.equal(await cleaner.runOnce(), true, 'all old segments are dirty: ratio 1');
  const all = [...old, ...young];
  const afterFirst = await readLog(log, 0);
  assert.deepEqual(afterFirst.filter((r) => r.offset < youngStart), reference(old, youngStart), 'the old range is cleaned');
  assert.deepEqual(afterFirst.filter((r) => r.offset >= youngStart && r.offset < 120), young, 'young segments (min.compaction.lag.ms) are not');

  // The young segments age past min.compaction.lag.ms: cleanable, dirty ratio now below 0.9, lag not yet past.
  now += 10_000;
  assert.equal(await cleaner.runOnce(), false, 'ratio under min.cleanable.dirty.ratio and no record waited max.compaction.lag.ms');
  assert.ok(cleaner.metrics.maxDirtyRatio > 0 && cleaner.metrics.maxDirtyRatio < 0.9, `ratio ${cleaner.metrics.maxDirtyRatio}`);
  now += 25_000;
  assert.equal(await cleaner.runOnce(), true, 'max.compaction.lag.ms forces the clean');
  assert.ok(cleaner.metrics.maxCompactionDelayMs > 30_000);
  assert.deepEqual((await readLog(log, 0)).filter((r) => r.offset < 120), reference(all, 120));
});

test('cleaning stops before the last stable offset and before a segment the gate refuses (not tiered yet)', async (t) => {
  const dir = await tempDir(t);
  const now = T0 + 60_000;
  const { logs, log } = await openCompacted(dir, BASE, () => now);
  const written = await writeUpdates(log, 200, 3);
  const infos = log.segmentInfos();
  const lso = (infos[4] as { baseOffset: number }).baseOffset + 1; // inside segment 4
  const tiered = (infos[2] as { lastOffset: number }).lastOffset;
  const gated = new LogCleaner({ logs, backoffMs: 1000, ioMaxBytesPerSecond: Infinity, clock: () => now, mayClean: (_tp, _b, last) => last <= tiered });
  assert.equal(await gated.runOnce(), true);
  const gateEnd = (infos[3] as { baseOffset: number }).baseOffset;
  assert.deepEqual(await readLog(log, 0), reference(written, gateEnd), 'only the segments the gate allowed');

  const bounded = new LogCleaner({ logs, backoffMs: 1000, ioMaxBytesPerSecond: Infinity, clock: () => now, lastStableOffset: () => lso });
  assert.equal(await bounded.runOnce(), true);
  const lsoEnd = (infos[4] as { baseOffset: number }).baseOffset;
  assert.deepEqual(await readLog(log, 0), reference(written, lsoEnd), 'not the segment holding the LSO, nor later ones');
});

test('fetches running during cleans always see whole, ordered batches and reach the log end', async (t) => {
  const dir = await tempDir(t);
  const now = T0 + 60_000;
  const { logs, log } = await openCompacted(dir, { ...BASE, 'segment.bytes': 600 }, () => now);
  const written = await writeUpdates(log, 400, 5);
  const cleaner = new LogCleaner({ logs, backoffMs: 1000, ioMaxBytesPerSecond: Infinity, clock: () => now });
  let stop = false;
  let reads = 0;
  const readers = Array.from({ length: 3 }, async () => {
    while (!stop) {
      const seen = await readLog(log, 0, 300);
      reads++;
      const offsets = seen.map((r) => r.offset);
      assert.deepEqual(offsets, [...offsets].sort((a, b) => a - b), 'offsets increase');
      assert.equal(offsets[offsets.length - 1], 399, 'the read reached the log end');
      // Whatever was read is a subset of what was written, record for record.
      for (const r of seen) assert.deepEqual(r, written[r.offset]);
    }
  });
  for (let i = 0; i < 3; i++) {
    await cleaner.runOnce();
    await writeUpdates(log, 0, 1);
  }
  stop = true;
  await Promise.all(readers);
  assert.ok(reads > 0);
  assert.deepEqual(await readLog(log, 0), reference(written, activeBase(log)));
  assert.ok(!(await readdir(log.dir)).some((n) => n.endsWith('.swap') || n.endsWith('.cleaned')), 'no swap files left');
});

test('a clean whose segments retention or DeleteRecords removed meanwhile swaps nothing and leaves no file behind', async (t) => {
  const dir = await tempDir(t);
  const now = T0 + 60_000;
  const { log } = await openCompacted(dir, BASE, () => now);
  await writeUpdates(log, 120, 3);
  const plan = await planClean(log, { now, lastStableOffset: log.logEndOffset, firstDirtyOffset: 0 });
  const second = plan.segments[1];
  assert.ok(second !== undefined);
  await log.deleteRecordsBefore(second.baseOffset); // the first planned segment goes
  const before = await readLog(log);
  const result = await cleanPartition(log, plan, { now });
  assert.equal(result.groupsSwapped, 0);
  assert.deepEqual(await readLog(log), before, 'the log is as DeleteRecords left it');
  assert.ok(!(await readdir(log.dir)).some((n) => n.endsWith('.swap') || n.endsWith('.cleaned')), 'no swap files left');
});
