// The tiering scheduler's copy throttle (remote.log.manager.copy.max.bytes.per.second) and its backlog:
// closed segments not yet in the table, reported as a catch-up episode that starts with the whole backlog
// queued together, goes down as commits land, and ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LogSegmentData } from '../../../tiering/plugin/api.js';
import type { BacklogReport } from '../../../tiering/plugin/backlog-progress.js';
import { TieringScheduler, type TieringTarget } from '../../../tiering/plugin/scheduler.js';

const segment = (partition: number, n: number, sizeInBytes: number): LogSegmentData => ({ topic: 't', partition, baseOffset: n * 10, lastOffset: n * 10 + 9, path: '/nonexistent', sizeInBytes, maxTimestamp: -1 });

function target(copyStarts: number[], committed: Map<number, number>): TieringTarget {
  return {
    copy: async (s) => {
      copyStarts.push(performance.now());
      return { topic: s.topic, partition: s.partition, baseOffset: s.baseOffset, lastOffset: s.lastOffset, maxTimestamp: -1, sizeInBytes: s.sizeInBytes, dataFiles: ['d'], indexFiles: ['i'] };
    },
    commit: async (segs) => {
      for (const s of segs) committed.set(s.partition, Math.max(committed.get(s.partition) ?? -1, s.lastOffset));
      return true;
    },
    committedOffset: (p) => committed.get(p) ?? -1,
  };
}

test('copies are throttled: a segment starts only once the bytes before it have had their time at the rate', async () => {
  const starts: number[] = [];
  const committed = new Map<number, number>();
  // 100 KB segments at 1 MB/s: one every 100 ms.
  const scheduler = new TieringScheduler({ target: () => target(starts, committed), commitIntervalMs: () => 0, maxConcurrentCopies: 4, copyBytesPerSecond: 1_000_000 });
  for (let n = 0; n < 5; n++) scheduler.enqueue(segment(n % 2, n, 100_000));
  await scheduler.drain();
  await scheduler.close();
  assert.equal(starts.length, 5);
  // A lower bound only (a slow machine makes the gaps longer, never shorter).
  for (let i = 1; i < starts.length; i++) assert.ok((starts[i] ?? 0) - (starts[i - 1] ?? 0) >= 90, `copy ${i} started ${((starts[i] ?? 0) - (starts[i - 1] ?? 0)).toFixed(0)} ms after the one before`);
  assert.deepEqual([...committed].sort(), [[0, 49], [1, 39]]);
});

test('a backlog queued together is one episode: its start counts all of it, progress goes down with the commits, and it ends', async () => {
  const reports: BacklogReport[] = [];
  const committed = new Map<number, number>();
  const starts: number[] = [];
  const scheduler = new TieringScheduler({ target: () => target(starts, committed), commitIntervalMs: () => 0, maxConcurrentCopies: 1, maxUncommittedSegments: 1, onBacklog: (r) => reports.push(r) });
  for (let n = 0; n < 12; n++) scheduler.enqueue(segment(0, n, 1000));
  assert.deepEqual(scheduler.backlog('t'), { segments: 12, bytes: 12_000 });
  await scheduler.drain();
  await scheduler.close();
  assert.equal(reports[0]?.phase, 'started');
  assert.equal(reports[0]?.segments, 12, 'the start line counts the whole backlog');
  assert.equal(reports[0]?.totalBytes, 12_000);
  const progress = reports.filter((r) => r.phase === 'progress');
  assert.ok(progress.length >= 3, `progress reported as it went down (${progress.length} lines)`);
  for (let i = 1; i < progress.length; i++) assert.ok((progress[i]?.percent ?? 0) > (progress[i - 1]?.percent ?? 0), 'the share done only grows');
  assert.equal(reports.at(-1)?.phase, 'done');
  assert.equal(reports.at(-1)?.percent, 100);
  assert.equal(reports.filter((r) => r.phase === 'done').length, 1);
  assert.deepEqual(scheduler.backlog('t'), { segments: 0, bytes: 0 });
  assert.deepEqual(scheduler.backlogs(), []);
});

test('a small backlog (live segments closing one by one) is not an episode', async () => {
  const reports: BacklogReport[] = [];
  const committed = new Map<number, number>();
  const scheduler = new TieringScheduler({ target: () => target([], committed), commitIntervalMs: () => 0, onBacklog: (r) => reports.push(r) });
  for (let n = 0; n < 5; n++) {
    scheduler.enqueue(segment(0, n, 1000));
    await scheduler.drain();
  }
  await scheduler.close();
  assert.deepEqual(reports, []);
});

test('drain commits a control-only segment (a transaction marker) copied while a commit was in flight', async () => {
  const committed: number[] = [];
  let release: (() => void) | undefined;
  const inFlight = new Promise<void>((r) => (release = r));
  let started: (() => void) | undefined;
  const commitStarted = new Promise<void>((r) => (started = r));
  const scheduler = new TieringScheduler({
    target: () => ({
      // Segment 1 holds only a marker: no data files.
      copy: async (s) => ({ topic: s.topic, partition: s.partition, baseOffset: s.baseOffset, lastOffset: s.lastOffset, maxTimestamp: -1, sizeInBytes: 1, dataFiles: s.baseOffset === 10 ? [] : ['d'], indexFiles: ['i'] }),
      commit: async (segs) => {
        if (committed.length === 0) {
          started?.();
          await inFlight;
        }
        committed.push(...segs.map((s) => s.lastOffset));
        return true;
      },
      committedOffset: () => committed[committed.length - 1] ?? -1,
    }),
    commitIntervalMs: () => 0,
  });
  scheduler.enqueue(segment(0, 0, 1));
  const drained = scheduler.drain();
  await commitStarted;
  scheduler.enqueue(segment(0, 1, 1));
  // Let its copy finish while the first commit is still in flight.
  while (scheduler.backlog('t').segments > 1) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  release?.();
  await drained;
  assert.deepEqual(committed, [9, 19], 'the marker\'s segment was committed before drain resolved');
  await scheduler.close();
});
