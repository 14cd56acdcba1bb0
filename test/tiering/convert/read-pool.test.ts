import test from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readlink } from 'node:fs/promises';
import { FileIOError, type FileIO } from '../../../iceberg/io/file-io.js';
import { scanBatches } from '../../../protocol/record-batch/batches.js';
import { ReadPool } from '../../../tiering/convert/read-pool.js';
import { SegmentReader, type SegmentRead } from '../../../tiering/convert/segment-reader.js';
import { resolveLocation } from '../../../tiering/offset-index/location.js';
import { tierFixture } from './tiered-fixture.js';

const MiB = 1024 * 1024;
const budgets = { indexCacheBytes: MiB, footerCacheBytes: MiB, batchCacheBytes: 0 };

/**
 * The warehouse's LocalFileIO behind another FileIO class: the workers then ask this thread for every read
 * (as for S3) instead of reading the local folder themselves. Counts the reads it forwards.
 */
function forwarded(io: FileIO): FileIO & { reads: number } {
  const f = {
    reads: 0,
    get: (l: string) => (f.reads++, io.get(l)),
    getRange: (l: string, o: number, n: number) => (f.reads++, io.getRange(l, o, n)),
    head: (l: string) => io.head(l),
    put: (l: string, d: Buffer) => io.put(l, d),
    putIfAbsent: (l: string, d: Buffer) => io.putIfAbsent(l, d),
    putIfMatch: (l: string, d: Buffer, e: string) => io.putIfMatch(l, d, e),
    list: (p: string) => io.list(p),
    delete: (l: string) => io.delete(l),
    close: async () => {},
  };
  return f;
}

/**
 * The fixture tiered into several data files, with a reader on this thread and a pool of two workers, which
 * read the local folder themselves or (`viaThisThread`) through this thread's FileIO.
 */
async function setup(t: { after: (fn: () => Promise<void>) => void }, readAheadBytes = 8 * MiB, viaThisThread = false, idleCloseMs?: number) {
  const tiered = await tierFixture(t, { partition: 3, targetFileBytes: 48 * 1024 });
  const poolIo = viaThisThread ? forwarded(tiered.io) : tiered.io;
  assert.ok(tiered.files.length >= 3, `the fixture spans several data files (${tiered.files.length})`);
  const indexFiles = tiered.files.map((f) => resolveLocation(tiered.table, f.indexPath));
  const pool = new ReadPool(2, { ...budgets, readAheadBytes, ...(idleCloseMs !== undefined ? { idleCloseMs } : {}) });
  t.after(() => pool.close());
  const local = new SegmentReader(budgets);
  const read = (fetchOffset: number, maxBytes: number, minOneBatch = true): SegmentRead => ({ indexFiles, fetchOffset, maxBytes, minOneBatch, compression: 'none', cached: false });
  /** Reads on a worker and here; they must agree byte for byte. */
  const both = async (r: SegmentRead) => {
    const [here, there] = await Promise.all([local.read(tiered.io, r), pool.read(poolIo, 'kafka/topic#3', r)]);
    assert.equal(there.nextOffset, here.nextOffset, `nextOffset of a fetch at ${r.fetchOffset} (maxBytes ${r.maxBytes})`);
    assert.ok(there.records.equals(here.records), `records of a fetch at ${r.fetchOffset} (maxBytes ${r.maxBytes}): ${there.records.length} bytes on the worker, ${here.records.length} here`);
    return there;
  };
  return { tiered, pool, read, both, poolIo };
}

for (const viaThisThread of [false, true]) {
  const how = viaThisThread ? "reading through this thread's FileIO" : 'reading the local warehouse itself';

  test(`a consumer reading forward gets from a read worker the bytes this thread rebuilds, mostly from read-ahead (${how})`, async (t) => {
    const { tiered, pool, read, both, poolIo } = await setup(t, 8 * MiB, viaThisThread);
    let offset = Number(tiered.files[0]!.index.baseOffset);
    let fetches = 0;
    for (;;) {
      const r = await both(read(offset, 6 * 1024));
      if (r.records.length === 0) break;
      assert.ok(scanBatches(r.records).batches.length > 0);
      fetches++;
      offset = r.nextOffset;
    }
    assert.equal(BigInt(offset), tiered.files[tiered.files.length - 1]!.index.lastOffset + 1n, 'the scan reached the end of the segment');
    // Each data file's first fetch has nothing read ahead (read-ahead stays within a file); every other one does.
    assert.ok(fetches > 2 * tiered.files.length, `enough fetches per file (${fetches})`);
    assert.equal(pool.readAheadHits, fetches - tiered.files.length);
    if ('reads' in poolIo) assert.ok(Number(poolIo.reads) > fetches / 2, `the workers read through this thread (${String(poolIo.reads)} reads)`);
  });

  test(`a worker's errors come back as this thread's would, with their class and code, and the worker keeps serving (${how})`, async (t) => {
    const { tiered, pool, read, both, poolIo } = await setup(t, 8 * MiB, viaThisThread);
    const missing: SegmentRead = { ...read(0, MiB), indexFiles: [`${tiered.table}/kafka-index/3-missing.idx`] };
    const here = await new SegmentReader(budgets).read(tiered.io, missing).then(
      () => assert.fail('a missing index file reads'),
      (err: unknown) => err,
    );
    assert.ok(here instanceof FileIOError);
    await assert.rejects(pool.read(poolIo, 'kafka/topic#3', missing), (err: unknown) => {
      assert.ok(err instanceof FileIOError, `a FileIOError, got ${String(err)}`);
      assert.equal(err.code, here.code);
      assert.equal(err.message, here.message);
      return true;
    });
    // An index file that is not an index: the decoder's error, the same on both sides.
    const notIndex: SegmentRead = { ...read(0, MiB), indexFiles: [resolveLocation(tiered.table, tiered.files[0]!.dataPath!)] };
    const e1 = await new SegmentReader(budgets).read(tiered.io, notIndex).catch((e: unknown) => e as Error);
    const e2 = await pool.read(poolIo, 'kafka/topic#3', notIndex).catch((e: unknown) => e as Error);
    assert.ok(e1 instanceof Error && e2 instanceof Error);
    assert.equal(e2.constructor, e1.constructor);
    assert.equal(e2.message, e1.message);
    assert.equal((e2 as { code?: string }).code, (e1 as { code?: string }).code);
    await both(read(Number(tiered.files[0]!.index.baseOffset), 4 * 1024));
  });
}

test('a read-ahead serves a fetch with a smaller maxBytes as the same prefix, and is not used for a larger one', async (t) => {
  const { tiered, pool, read, both } = await setup(t);
  const start = Number(tiered.files[0]!.index.baseOffset);
  const first = await both(read(start, 16 * 1024));
  // Read ahead with maxBytes 16 KiB; asked with 3 KiB: cut to the plan of a direct 3 KiB fetch.
  const smaller = await both(read(first.nextOffset, 3 * 1024));
  assert.equal(pool.readAheadHits, 1);
  // Read ahead with 3 KiB from the cut's end; asked with 16 KiB: read directly (a read-ahead would be short).
  await both(read(smaller.nextOffset, 16 * 1024));
  assert.equal(pool.readAheadHits, 1);
  // KIP-74: not the response's first partition, and the first batch alone is larger than maxBytes.
  const empty = await both(read(start, 1, false));
  assert.equal(empty.records.length, 0);
});

test('nothing is read ahead without a budget, and the reads still agree', async (t) => {
  const { tiered, pool, read, both } = await setup(t, 0);
  let offset = Number(tiered.files[0]!.index.baseOffset);
  for (let i = 0; i < 10; i++) offset = (await both(read(offset, 4 * 1024))).nextOffset;
  assert.equal(pool.readAheadHits, 0);
});

test('reads after close are refused, and reads in flight fail rather than hang', async (t) => {
  const { tiered, pool, read } = await setup(t);
  const inFlight = pool.read(tiered.io, 'kafka/topic#3', read(Number(tiered.files[0]!.index.baseOffset), MiB));
  await pool.close();
  await assert.rejects(inFlight);
  await assert.rejects(pool.read(tiered.io, 'kafka/topic#3', read(0, MiB)), /closed/);
});

/** Open file descriptors of this process (worker threads included) on the fixture's data files. */
async function openDataFiles(dir: string): Promise<number> {
  let n = 0;
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target.startsWith(dir) && target.endsWith('.parquet')) n++;
  }
  return n;
}

// Linux only: the open files are counted in /proc/self/fd.
test('a worker reading a local warehouse lets go of its read handles once reads stop, so deleted data files free their space', { skip: process.platform !== 'linux' && 'counts open files in /proc/self/fd (Linux)' }, async (t) => {
  const { tiered, read, both } = await setup(t, 0, false, 300);
  const dir = tiered.io.root;
  await both(read(Number(tiered.files[0]!.index.baseOffset), 4 * 1024));
  // The reader on this thread opens the same file through tiered.io: close its handles to count the worker's alone.
  await tiered.io.close();
  assert.ok((await openDataFiles(dir)) > 0, 'the worker keeps a read handle while reads go on');
  let open = -1;
  for (let waited = 0; waited < 10_000 && open !== 0; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
    open = await openDataFiles(dir);
  }
  assert.equal(open, 0, 'no handle on a data file is left open once the worker is idle');
  // Reads go on afterwards, with fresh handles.
  await both(read(Number(tiered.files[1]!.index.baseOffset), 4 * 1024));
});
