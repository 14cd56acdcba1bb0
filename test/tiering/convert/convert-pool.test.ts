// Conversion on worker threads gives exactly what conversion in this thread gives: the same data files and
// offset indexes, byte for byte, from the fidelity segment (every codec, markers, gaps, raw records). A bad
// segment fails with the same error code, an abandoned conversion does not wedge its worker, and conversions
// beyond the pool's size wait their turn. A file's memory goes back to its worker once the caller releases it.
import test, { type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConvertPool, type WorkerFile } from '../../../tiering/convert/convert-pool.js';
import { convertSegment } from '../../../tiering/convert/segment-to-parquet.js';
import { buildSegment } from './segment-fixture.js';

const OPTIONS = { partition: 3, targetFileBytes: 64 * 1024, targetRowGroupBytes: 16 * 1024 };

async function all(files: AsyncIterable<WorkerFile>): Promise<WorkerFile[]> {
  const out: WorkerFile[] = [];
  for await (const f of files) out.push(f);
  return out;
}

interface Expected {
  readonly dataPath: string | null;
  readonly parquet: Buffer | null;
  readonly indexPath: string;
  readonly index: Buffer;
}

/**
 * A pool of `workers` (closed after the test), the fidelity segment in a file of a temporary folder, and the
 * files in-thread conversion makes of it: what the pool must give back.
 */
async function poolOnSegment(t: TestContext, workers: number): Promise<{ pool: ConvertPool; dir: string; segment: Buffer; path: string; expected: Expected[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-pool-'));
  const pool = new ConvertPool(workers);
  t.after(async () => {
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  });
  const segment = buildSegment(160, 11);
  const path = join(dir, '00000000000000000000.log');
  await writeFile(path, segment);
  const expected: Expected[] = [];
  for await (const f of convertSegment(segment, OPTIONS)) {
    expected.push({ dataPath: f.dataPath, parquet: f.parquet ? Buffer.from(f.parquet.bytes) : null, indexPath: f.indexPath, index: Buffer.from(f.indexBytes) });
    f.parquet?.release();
  }
  assert.ok(expected.length > 2, `several files (${expected.length})`);
  return { pool, dir, segment, path, expected };
}

test('a conversion pool writes the same files as in-thread conversion, and survives bad and abandoned conversions', async (t) => {
  const { pool, dir, segment, path, expected } = await poolOnSegment(t, 2);

  // Three at once on two workers: the third waits, all three match.
  const runs = await Promise.all([0, 1, 2].map(() => all(pool.convert(path, OPTIONS))));
  for (const got of runs) {
    assert.equal(got.length, expected.length);
    got.forEach((f, i) => {
      const e = expected[i]!;
      assert.equal(f.dataPath, e.dataPath);
      assert.equal(f.indexPath, e.indexPath);
      assert.ok(f.parquet && e.parquet ? Buffer.from(f.parquet.bytes).equals(e.parquet) : f.parquet === e.parquet, `file ${i}: the same Parquet bytes`);
      assert.ok(Buffer.from(f.indexBytes).equals(e.index), `file ${i}: the same index bytes`);
      assert.ok(f.parquet === null || f.parquet.metrics.record_count > 0n, 'metrics come back');
    });
  }

  // A torn segment: the worker's INVALID_SEGMENT comes back as such.
  const torn = join(dir, 'torn.log');
  await writeFile(torn, segment.subarray(0, segment.length - 1));
  await assert.rejects(all(pool.convert(torn, OPTIONS)), { name: 'TieringConvertError', code: 'INVALID_SEGMENT' });

  // A caller that stops after the first file: the pool replaces that worker, later conversions still work.
  for await (const _ of pool.convert(path, OPTIONS)) break;
  for await (const _ of pool.convert(path, OPTIONS)) break;
  const after = await all(pool.convert(path, OPTIONS));
  assert.equal(after.length, expected.length, 'the pool still converts after abandoned conversions');
});

test('released files go back to the worker and the next files are written into that memory, unchanged', async (t) => {
  const { pool, path, expected: files } = await poolOnSegment(t, 1);
  const expected = files.map((f) => f.parquet);
  assert.ok(expected.filter((e) => e !== null).length > 2, 'several data files');

  // Twice on the one worker: the second conversion starts with the memory the first gave back.
  for (let round = 0; round < 2; round++) {
    const held: Uint8Array[] = [];
    let i = 0;
    for await (const f of pool.convert(path, OPTIONS)) {
      const e = expected[i++];
      assert.ok(f.parquet && e ? Buffer.from(f.parquet.bytes).equals(e) : f.parquet === e, `round ${round}, file ${i - 1}: the same Parquet bytes`);
      if (f.parquet === null) continue;
      held.push(f.parquet.bytes);
      f.parquet.release();
    }
    assert.equal(i, expected.length);
    // Every released file's memory went back to the worker: the caller's views are empty now.
    assert.deepEqual(held.map((b) => b.length), held.map(() => 0), `round ${round}: released bytes are handed back`);
  }

  // Files not released stay the caller's.
  const kept = await all(pool.convert(path, OPTIONS));
  kept.forEach((f, k) => assert.ok(f.parquet && expected[k] ? Buffer.from(f.parquet.bytes).equals(expected[k]!) : f.parquet === expected[k], `kept file ${k}`));
});

/** Nice values of this process's threads (Linux: /proc/self/task/<tid>/stat, field 19). */
async function threadNiceValues(): Promise<number[]> {
  const out: number[] = [];
  for (const tid of await readdir('/proc/self/task')) {
    const stat = await readFile(`/proc/self/task/${tid}/stat`, 'utf8').catch(() => '');
    if (stat === '') continue;
    // Fields after the command name (which may hold spaces) start after the last ')'; nice is the 19th field.
    out.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return out;
}

// Linux only: the nice value is per thread only there, and the test reads it from /proc (elsewhere the
// pool leaves the workers' priority alone, which needs no test).
test('conversion workers run at the nice value asked for, the broker\'s thread keeps its own', { skip: process.platform !== 'linux' }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-pool-nice-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, '00000000000000000000.log');
  await writeFile(path, buildSegment(20, 3));
  const mine = (await threadNiceValues()).filter((n) => n === 13).length;
  for (const [nice, expected] of [[13, 1], [0, 0]] as const) {
    const pool = new ConvertPool(1, { nice });
    try {
      await all(pool.convert(path, OPTIONS)); // starts the worker
      assert.equal((await threadNiceValues()).filter((n) => n === 13).length - mine, expected, `pool with nice ${nice}`);
    } finally {
      await pool.close();
    }
  }
  assert.throws(() => new ConvertPool(1, { nice: 20 }), /nice value is 0-19/);
});
