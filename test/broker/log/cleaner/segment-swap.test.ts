import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readdir, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cleanPartition, planClean } from '../../../../broker/log/cleaner/clean-partition.js';
import { parseSwapFileName, swapFileName } from '../../../../broker/log/cleaner/segment-swap.js';
import { PartitionLog } from '../../../../broker/log/partition-log.js';
import type { LogTopicConfig } from '../../../../broker/log/config.js';
import { closeBeforeRemoving, tempDir } from '../batches.js';
import { T0, openCompacted, readLog, reference, writeUpdates, type LogRecord } from './helpers.js';

// Segments of ~16 batches, each its own group (a group fits one segment): the clean swaps several groups.
const CONFIG: LogTopicConfig = { 'segment.bytes': 1500, compact: true, 'min.cleanable.dirty.ratio': 0.01, 'retention.ms': -1, 'retention.bytes': -1 };
const NOW = T0 + 60_000;

async function openCopy(t: { after: (fn: () => Promise<void>) => void }, from: string): Promise<{ log: PartitionLog; dir: string }> {
  const dir = await tempDir(t);
  await cp(from, dir, { recursive: true });
  // The copy is what a kill -9 left: no clean-shutdown marker.
  await unlink(join(dir, '.clean-shutdown')).catch(() => undefined);
  const log = await PartitionLog.open({ dir, config: CONFIG, clock: () => NOW });
  closeBeforeRemoving(dir, () => log.close());
  return { log, dir };
}

test('swap file names carry the replaced range', () => {
  assert.equal(swapFileName({ base: 5, end: 120 }), '00000000000000000005-00000000000000000120.log.swap');
  assert.deepEqual(parseSwapFileName('00000000000000000005-00000000000000000120.log.swap'), { base: 5, end: 120 });
  assert.equal(parseSwapFileName('00000000000000000005.log'), undefined);
  assert.equal(parseSwapFileName('00000000000000000120-00000000000000000005.log.swap'), undefined, 'an empty range is not a swap');
});

test('a kill -9 at any step of a clean leaves the old segments or the cleaned ones, never a mix or a loss', async (t) => {
  const dir = await tempDir(t);
  const { log } = await openCompacted(dir, CONFIG, () => NOW);
  // A first clean leaves small segments; the second clean (the one crashed) merges several into each group.
  const first = await writeUpdates(log, 120, 4);
  const plan1 = await planClean(log, { now: NOW, lastStableOffset: log.logEndOffset, firstDirtyOffset: 0 });
  await cleanPartition(log, plan1, { now: NOW });
  const written = [...first, ...(await writeUpdates(log, 120, 4, () => T0, 'second'))];
  const infos = log.segmentInfos();
  const end = (infos[infos.length - 1] as { baseOffset: number }).baseOffset;
  const before = await readLog(log, 0);
  const after = reference(written, end);

  // Snapshot the directory at each crash point of the clean: after each swap file is committed (before it
  // replaces anything), and then at a half-finished replacement (some old segments deleted, not renamed).
  const crashes: string[] = [];
  const plan = await planClean(log, { now: NOW, lastStableOffset: log.logEndOffset, firstDirtyOffset: 0 });
  const result = await cleanPartition(log, plan, {
    now: NOW,
    afterSwapWritten: async () => {
      const snap = await tempDir(t);
      await cp(log.dir, snap, { recursive: true });
      crashes.push(snap);
    },
  });
  assert.ok(result.groupsPlanned >= 3, `${result.groupsPlanned} groups`);
  assert.equal(result.groupsSwapped, result.groupsPlanned);
  assert.deepEqual(await readLog(log, 0), after, 'the clean itself');

  // Every swap committed by the time of the snapshot is finished at open; later groups are still the old
  // segments. Records of each group are the cleaned or the old ones, and the offsets are the same.
  const seen = new Set<string>();
  for (const [i, snap] of crashes.entries()) {
    const { log: reopened } = await openCopy(t, snap);
    assert.equal(reopened.recovery.finishedSwaps, 1, `crash ${i}: the committed swap was finished`);
    const records = await readLog(reopened, 0);
    assertOldOrNew(records, before, written, after, end, `crash ${i}`);
    assert.equal(reopened.logEndOffset, log.logEndOffset);
    seen.add(JSON.stringify(records.map((r) => r.offset)));
    const names = await readdir(reopened.dir);
    assert.ok(!names.some((n) => n.endsWith('.swap') || n.endsWith('.cleaned')), 'no swap or cleaned file left');
  }
  assert.ok(seen.size > crashes.length / 2, 'the crash points are different states');

  // A half-finished replacement: the swap committed, some of the old segments it replaces already deleted.
  const last = crashes[0] as string; // the first group merges the small segments of the first clean
  const swapName = (await readdir(last)).find((n) => n.endsWith('.log.swap')) as string;
  const range = parseSwapFileName(swapName);
  assert.ok(range);
  const partial = await tempDir(t);
  await cp(last, partial, { recursive: true });
  const victims = (await readdir(partial)).filter((n) => n.endsWith('.log') && Number(n.slice(0, 20)) > range.base && Number(n.slice(0, 20)) < range.end);
  assert.ok(victims.length > 1, `the group merges ${victims.length + 1} segments`);
  await unlink(join(partial, victims[0] as string));
  await unlink(join(partial, `${String(range.base).padStart(20, '0')}.index`)).catch(() => undefined);
  const { log: half } = await openCopy(t, partial);
  assertOldOrNew(await readLog(half, 0), before, written, after, end, 'half-finished swap');
  assert.deepEqual(await readLog(half, 0), await readLog((await openCopy(t, last)).log, 0), 'the same state as the finished swap');

  // An unfinished .cleaned file (crash while writing it) is discarded: the old segments stay.
  const early = await tempDir(t);
  await cp(crashes[0] as string, early, { recursive: true });
  const firstSwap = (await readdir(early)).find((n) => n.endsWith('.log.swap')) as string;
  await unlink(join(early, firstSwap));
  await writeFile(join(early, `${firstSwap.slice(0, 20)}.log.cleaned`), Buffer.from('half a batch'));
  const { log: old } = await openCopy(t, early);
  assert.deepEqual(await readLog(old, 0), before, 'the old segments, untouched');
  assert.ok(!(await readdir(old.dir)).some((n) => n.endsWith('.cleaned')));
});

/** Below `end`, each record is in the old log; each key's latest record below `end` survives; offsets never move. */
function assertOldOrNew(records: readonly LogRecord[], before: readonly LogRecord[], written: readonly LogRecord[], after: readonly LogRecord[], end: number, what: string): void {
  // Not a mix: cleaned up to some offset, the records from before the clean from there on.
  const split = written.some((w) => {
    const b = w.offset;
    const expected = [...after.filter((r) => r.offset < b), ...before.filter((r) => r.offset >= b)];
    return JSON.stringify(expected) === JSON.stringify(records);
  });
  assert.ok(split, `${what}: the cleaned records up to some offset, then the old ones`);
  for (const r of records) assert.deepEqual(r, written[r.offset], `${what}: offset ${r.offset} holds its own record`);
  const offsets = new Set(records.map((r) => r.offset));
  for (const r of after) assert.ok(offsets.has(r.offset), `${what}: the latest record of ${r.key} (offset ${r.offset}) survived`);
  for (const r of written) if (r.offset >= end) assert.ok(offsets.has(r.offset), `${what}: the active segment is whole`);
}
