import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactionSettings, DEFAULT_TARGET_FILE_SIZE_BYTES, planCompaction } from '../../../tiering/plugin/compaction-plan.js';
import type { PartitionManifest, SegmentEntry } from '../../../tiering/plugin/partition-manifest.js';

/** Segments of the given data file sizes (0: a segment of control batches only), 10 offsets each. */
function manifest(sizes: number[], extra: Partial<Record<number, Partial<SegmentEntry>>> = {}, logStartOffset = 0): { m: PartitionManifest; sizeOf: (f: string) => number } {
  const size = new Map<string, number>();
  const segments = sizes.map((s, i): SegmentEntry => {
    const dataFiles = s === 0 ? [] : [`d${i}`];
    if (s !== 0) size.set(`d${i}`, s);
    return { baseOffset: i * 10, lastOffset: i * 10 + 9, maxTimestamp: i, sizeInBytes: s * 3, dataFiles, indexFiles: [`i${i}`], ...extra[i] };
  });
  return { m: { partition: 0, logStartOffset, committedOffset: sizes.length * 10 - 1, segments }, sizeOf: (f) => size.get(f) ?? Infinity };
}

const ranges = (groups: ReturnType<typeof planCompaction>) => groups.map((g) => [g.segments[0]?.baseOffset, g.segments.at(-1)?.lastOffset]);

test('settings: Iceberg\'s defaults and ratios, the table property, a topic override', () => {
  const d = compactionSettings({});
  assert.equal(d.targetFileSizeBytes, DEFAULT_TARGET_FILE_SIZE_BYTES);
  assert.equal(d.minFileSizeBytes, Math.floor(DEFAULT_TARGET_FILE_SIZE_BYTES * 0.75));
  assert.equal(d.maxFileSizeBytes, Math.floor(DEFAULT_TARGET_FILE_SIZE_BYTES * 1.8));
  assert.equal(d.minInputFiles, 5);
  assert.equal(compactionSettings({ 'write.target-file-size-bytes': '1000' }).targetFileSizeBytes, 1000);
  assert.equal(compactionSettings({ 'write.target-file-size-bytes': 'x' }).targetFileSizeBytes, DEFAULT_TARGET_FILE_SIZE_BYTES);
  assert.equal(compactionSettings({ 'write.target-file-size-bytes': '1000' }, { targetFileSizeBytes: 50 }).targetFileSizeBytes, 50);
  assert.equal(compactionSettings({ 'write.target-file-size-bytes': '1000' }, { targetFileSizeBytes: undefined }).targetFileSizeBytes, 1000);
});

test('a run of small files is merged once it holds min-input-files; fewer, or large files, are left alone', () => {
  const s = compactionSettings({}, { targetFileSizeBytes: 1000 });
  assert.deepEqual(ranges(planCompaction(manifest([10, 10, 10, 10]).m, manifest([10, 10, 10, 10]).sizeOf, s)), []);
  const five = manifest([10, 10, 10, 10, 10]);
  assert.deepEqual(ranges(planCompaction(five.m, five.sizeOf, s)), [[0, 49]]);
  // A file at 75 % of the target or more is not small: it splits the runs, and neither run has 5 files.
  const split = manifest([10, 10, 10, 750, 10, 10, 10]);
  assert.deepEqual(ranges(planCompaction(split.m, split.sizeOf, s)), []);
  // Outputs stay at or below the target: a long run becomes several groups.
  const long = manifest(Array.from({ length: 12 }, () => 300));
  assert.deepEqual(ranges(planCompaction(long.m, long.sizeOf, s)), [[0, 29], [30, 59], [60, 89], [90, 119]]);
});

test('segments cut by the log start (position deletes, or below it) are never inputs; control-only segments are', () => {
  const s = compactionSettings({}, { targetFileSizeBytes: 1000 });
  const cut = manifest([10, 10, 10, 10, 10, 10], { 1: { deleteFiles: ['x'] } });
  assert.deepEqual(ranges(planCompaction(cut.m, cut.sizeOf, s)), [], 'the cut leaves runs of 1 and 4 files');
  const below = manifest([10, 10, 10, 10, 10, 10, 10], {}, 5);
  assert.deepEqual(ranges(planCompaction(below.m, below.sizeOf, s)), [[10, 69]]);
  const control = manifest([10, 0, 10, 10, 0, 10, 10]);
  assert.deepEqual(ranges(planCompaction(control.m, control.sizeOf, s)), [[0, 69]]);
});

test('groups grow geometrically: a merged file is rewritten again only once as much new data sits beside it', () => {
  const s = compactionSettings({}, { targetFileSizeBytes: 10_000 });
  // A merged file of 50 beside four new files of 10: merging would rewrite 50 to add 40; not yet.
  const early = manifest([50, 10, 10, 10, 10]);
  assert.deepEqual(ranges(planCompaction(early.m, early.sizeOf, s)), [[10, 49]], 'the new files merge among themselves');
  const later = manifest([50, 40, 10]);
  assert.deepEqual(ranges(planCompaction(later.m, later.sizeOf, { ...s, minInputFiles: 3 })), [[0, 29]]);
  // Simulated steady state: every byte is rewritten O(log n) times.
  let files = [] as number[];
  let rewritten = 0;
  for (let i = 0; i < 400; i++) {
    files.push(10);
    for (;;) {
      const m = manifest(files);
      const groups = planCompaction(m.m, m.sizeOf, s);
      if (groups.length === 0) break;
      const next: number[] = [];
      let k = 0;
      for (const g of groups) {
        const at = (g.segments[0]?.baseOffset ?? 0) / 10;
        while (k < at) next.push(files[k++] as number);
        next.push(g.dataBytes);
        rewritten += g.dataBytes;
        k += g.segments.length;
      }
      while (k < files.length) next.push(files[k++] as number);
      files = next;
    }
  }
  assert.ok(files.length <= 12, `files stay few: ${files.join(',')}`);
  assert.ok(rewritten <= 4000 * 12, `write amplification ${rewritten / 4000} stays logarithmic`);
});
