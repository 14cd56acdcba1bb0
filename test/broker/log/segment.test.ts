// Recovery: what open() does with torn tails, corrupt bytes and broken index files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, truncate, unlink, writeFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PartitionLog } from '../../../broker/log/partition-log.js';
import { batchOf, parseBatches, tempDir } from './batches.js';

const CFG = { 'segment.bytes': 2000, 'index.interval.bytes': 100 };
const SEG0 = '00000000000000000000';

/** Writes `n` single-record batches, closes uncleanly (no marker), returns the batch sizes. */
async function buildLog(dir: string, n: number): Promise<number[]> {
  const log = await PartitionLog.open({ dir, config: CFG });
  const sizes: number[] = [];
  for (let i = 0; i < n; i++) {
    const b = batchOf(`v${i}`, 1, { ts: 1000 + i, valueBytes: 20 + (i % 5) * 10 });
    sizes.push(b.length);
    await log.append(b);
  }
  await log.close();
  await unlink(join(dir, '.clean-shutdown'));
  return sizes;
}

async function checkLog(dir: string, expectCount: number): Promise<PartitionLog> {
  const log = await PartitionLog.open({ dir, config: CFG });
  try {
    assert.equal(log.logEndOffset, expectCount);
    const batches: ReturnType<typeof parseBatches> = [];
    for (let o = 0; o < expectCount; ) {
      const r = await log.read(o, 1 << 20);
      batches.push(...parseBatches(r.records));
      o = r.nextOffset;
    }
    assert.deepEqual(batches.map((b) => b.baseOffset), Array.from({ length: expectCount }, (_, i) => i));
    assert.ok(batches.every((b, i) => b.crcOk && b.firstValue.startsWith(`v${i}-0`)));
    // Every offset is found through the (rebuilt) indexes, and timestamps too.
    for (let o = 0; o < expectCount; o++) {
      assert.equal(parseBatches((await log.read(o, 1)).records)[0]?.baseOffset, o);
      assert.deepEqual(await log.offsetForTimestamp(1000 + o), { offset: o, timestamp: 1000 + o });
    }
    // And appends continue at the recovered end.
    assert.equal((await log.append(batchOf('next', 1))).baseOffset, expectCount);
  } finally {
    await log.close();
  }
  return log;
}

test('a torn last batch, cut at every byte, is truncated away and the indexes are rebuilt', async (t) => {
  const dir = await tempDir(t);
  const sizes = await buildLog(dir, 12);
  const path = join(dir, `${SEG0}.log`);
  const full = await readFile(path);
  const last = sizes[sizes.length - 1] as number;
  const lastStart = full.length - last;
  for (let cut = lastStart; cut < full.length; cut++) {
    await writeFile(path, full.subarray(0, cut));
    await unlink(join(dir, '.clean-shutdown')).catch(() => undefined);
    const log = await PartitionLog.open({ dir, config: CFG });
    assert.equal(log.recovery.cleanShutdown, false);
    assert.equal(log.recovery.truncatedBytes, cut - lastStart, `cut at ${cut}`);
    assert.equal(log.logEndOffset, 11);
    assert.equal(parseBatches((await log.read(10, 1)).records)[0]?.baseOffset, 10);
    await log.close();
    assert.equal((await stat(path)).size, lastStart);
  }
  await writeFile(path, full.subarray(0, lastStart));
  await unlink(join(dir, '.clean-shutdown'));
  await checkLog(dir, 11);
});

test('a corrupt byte anywhere in a batch truncates the log at that batch', async (t) => {
  const dir = await tempDir(t);
  const sizes = await buildLog(dir, 10);
  const path = join(dir, `${SEG0}.log`);
  const full = await readFile(path);
  const starts = sizes.map((_, i) => sizes.slice(0, i).reduce((a, b) => a + b, 0));
  const victim = 6;
  const from = starts[victim] as number;
  // Every field but partitionLeaderEpoch (outside the CRC, and harmless). The base offset is outside the CRC
  // too, but offsets in a segment are contiguous, so a changed one is caught.
  for (const rel of [0, 4, 7, 8, 9, 10, 11, 16, 17, 20, 21, 23, 30, 40, 57, 61, 70, (sizes[victim] as number) - 1]) {
    const bad = Buffer.from(full);
    bad[from + rel] = (bad[from + rel] as number) ^ 0x5a;
    await writeFile(path, bad);
    const log = await PartitionLog.open({ dir, config: CFG });
    assert.equal(log.logEndOffset, victim, `byte ${rel} of batch ${victim}`);
    await log.close();
    await unlink(join(dir, '.clean-shutdown'));
  }
  await checkLog(dir, victim);
});

test('a zero-filled tail (power loss on some filesystems) is truncated', async (t) => {
  const dir = await tempDir(t);
  await buildLog(dir, 5);
  const path = join(dir, `${SEG0}.log`);
  const full = await readFile(path);
  await writeFile(path, Buffer.concat([full, Buffer.alloc(4096)]));
  await checkLog(dir, 5);
});

test('deleted, truncated or garbled index files are rebuilt, even after a clean shutdown', async (t) => {
  const dir = await tempDir(t);
  await buildLog(dir, 40);
  // Make it clean so indexes are trusted, then damage them.
  let log = await PartitionLog.open({ dir, config: CFG });
  await log.close();
  const segs = (await readFile(join(dir, `${SEG0}.index`))).length;
  assert.ok(segs > 8, 'the first segment has several index entries');
  const damages: [string, (p: string) => Promise<void>][] = [
    ['deleted offset index', (p) => unlink(p + '.index')],
    ['deleted time index', (p) => unlink(p + '.timeindex')],
    ['half an entry', async (p) => truncate(p + '.index', 12)],
    ['garbled positions', async (p) => {
      const b = await readFile(p + '.index');
      b.writeInt32BE(3, b.length - 4);
      await writeFile(p + '.index', b);
    }],
    ['entry beyond the log', async (p) => {
      const b = await readFile(p + '.index');
      b.writeInt32BE(1 << 30, b.length - 4);
      await writeFile(p + '.index', b);
    }],
    ['garbled time index', async (p) => writeFile(p + '.timeindex', Buffer.alloc(24, 0xff))],
    ['stale (shorter) index', async (p) => truncate(p + '.index', 8)],
  ];
  for (const [name, damage] of damages) {
    await damage(join(dir, SEG0));
    log = await PartitionLog.open({ dir, config: CFG });
    assert.equal(log.recovery.cleanShutdown, true);
    if (name !== 'stale (shorter) index') assert.ok(log.recovery.rebuiltIndexes >= 1, name);
    assert.equal(log.logEndOffset, 40, name);
    for (let o = 0; o < 40; o += 3) assert.equal(parseBatches((await log.read(o, 1)).records)[0]?.baseOffset, o, `${name}: offset ${o}`);
    for (let o = 0; o < 40; o += 5) assert.deepEqual(await log.offsetForTimestamp(1000 + o), { offset: o, timestamp: 1000 + o }, name);
    await log.close();
  }
  await unlink(join(dir, '.clean-shutdown'));
  await checkLog(dir, 40);
});

test('clean shutdown skips recovery; without the marker the last segment is scanned', async (t) => {
  const dir = await tempDir(t);
  let log = await PartitionLog.open({ dir, config: CFG });
  for (let i = 0; i < 30; i++) await log.append(batchOf(`v${i}`, 1, { ts: 1000 + i }));
  const segments = log.segmentInfos().length;
  assert.ok(segments >= 2);
  await log.close();
  log = await PartitionLog.open({ dir, config: CFG });
  assert.deepEqual(log.recovery, { cleanShutdown: true, segments, truncatedBytes: 0, rebuiltIndexes: 0, deletedSegments: 0, finishedSwaps: 0 });
  // The marker is gone while the log is open: a crash now would be seen as unclean.
  await assert.rejects(stat(join(dir, '.clean-shutdown')));
  await log.close();
  await unlink(join(dir, '.clean-shutdown'));
  log = await PartitionLog.open({ dir, config: CFG });
  assert.deepEqual(log.recovery, { cleanShutdown: false, segments, truncatedBytes: 0, rebuiltIndexes: 1, deletedSegments: 0, finishedSwaps: 0 });
  await log.close();
  await unlink(join(dir, '.clean-shutdown'));
  await checkLog(dir, 30);
});

test('corruption in an older segment truncates it and drops the segments after it', async (t) => {
  const dir = await tempDir(t);
  await buildLog(dir, 60);
  let log = await PartitionLog.open({ dir, config: CFG });
  const infos = log.segmentInfos();
  await log.close();
  assert.ok(infos.length >= 3);
  const second = infos[1]!;
  // Damage the middle of the second segment and its index so that it must be rescanned.
  const bad = await readFile(second.path);
  const mid = Math.floor(bad.length / 2);
  bad[mid] = (bad[mid] as number) ^ 0xff;
  await writeFile(second.path, bad);
  await unlink(second.path.replace(/\.log$/, '.index'));
  log = await PartitionLog.open({ dir, config: CFG });
  assert.ok(log.recovery.truncatedBytes > 0);
  assert.equal(log.recovery.deletedSegments, infos.length - 2);
  assert.ok(log.logEndOffset >= second.baseOffset && log.logEndOffset <= second.lastOffset, `end ${log.logEndOffset} within ${second.baseOffset}..${second.lastOffset}`);
  const end = log.logEndOffset;
  await log.close();
  await unlink(join(dir, '.clean-shutdown'));
  await checkLog(dir, end);
});
