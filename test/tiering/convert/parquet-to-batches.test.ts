import test from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { decodeRecordBatch, recordsSection as originalRecords } from '../../../protocol/record-batch/record-batch.js';
import { isBatchCrcValid } from '../../../protocol/record-batch/crc.js';
import { scanBatches } from '../../../protocol/record-batch/batches.js';
import { ATTR_COMPRESSION_MASK } from '../../../protocol/record-batch/header.js';
import { compressionOf } from '../../../protocol/record-batch/compression.js';
import { fetchFromParquet } from '../../../tiering/convert/parquet-to-batches.js';
import { createBatchCache, type BatchCache } from '../../../tiering/convert/batch-cache.js';
import { createFooterCache } from '../../../tiering/convert/footer-cache.js';
import type { RebuildCompression } from '../../../tiering/convert/batch-assembly.js';
import { resolveLocation } from '../../../tiering/offset-index/location.js';
import { findIndex } from '../../../tiering/offset-index/lookup.js';
import { rng } from './segment-fixture.js';
import { tierFixture, type Tiered } from './tiered-fixture.js';

/** The fixture tiered into partition 2 (see ./tiered-fixture.ts). */
const tier = (t: { after: (fn: () => Promise<void>) => void }, opts: { targetFileBytes?: number; targetRowGroupBytes?: number } = {}): Promise<Tiered> => tierFixture(t, { partition: 2, ...opts });

/** Every batch of the segment: its bytes, decoded form and decompressed records section. */
function originals(segment: Buffer) {
  return scanBatches(segment).batches.map((b) => {
    const bytes = segment.subarray(b.start, b.end);
    const decoded = decodeRecordBatch(bytes);
    return { bytes, decoded, section: originalRecords(bytes, 0, bytes.length, decoded.compression, 1 << 30) };
  });
}

/** Fetches the whole tiered range batch by batch (maxBytes 1: one batch per call), chaining nextOffset. */
async function fetchAll(x: Tiered, compression: RebuildCompression, maxBytes = 1, batches?: BatchCache, onFetch?: (records: Buffer) => void): Promise<Buffer[]> {
  const out: Buffer[] = [];
  const footers = createFooterCache(1 << 20);
  let offset = 0n;
  for (;;) {
    const i = findIndex(x.files.map((f) => f.index), offset);
    if (i < 0) break;
    const r = await fetchFromParquet({ io: x.io, tableLocation: x.table, index: x.files[i]!.index, fetchOffset: offset, maxBytes, footers, compression, ...(batches ? { batches } : {}) });
    assert.ok(r.batchCount > 0);
    onFetch?.(r.records);
    for (const b of scanBatches(r.records).batches) out.push(r.records.subarray(b.start, b.end));
    offset = r.nextOffset;
  }
  return out;
}

function assertSameBatch(rebuilt: Buffer, orig: ReturnType<typeof originals>[number], compression: RebuildCompression): void {
  assert.ok(isBatchCrcValid(rebuilt), `CRC of rebuilt batch at ${orig.decoded.baseOffset}`);
  const got = decodeRecordBatch(rebuilt);
  const want = orig.decoded;
  const where = `batch at offset ${want.baseOffset}`;
  for (const f of ['baseOffset', 'lastOffsetDelta', 'partitionLeaderEpoch', 'baseTimestamp', 'maxTimestamp', 'producerId', 'producerEpoch', 'baseSequence', 'recordsCount', 'timestampType', 'isTransactional', 'isControl'] as const) {
    assert.deepEqual(got[f], want[f], `${where}: ${f}`);
  }
  assert.equal(got.attributes & ~ATTR_COMPRESSION_MASK, want.attributes & ~ATTR_COMPRESSION_MASK, `${where}: attributes`);
  if (want.isControl || compression === 'original') assert.equal(got.compression, want.compression, `${where}: codec`);
  else assert.equal(got.compression, 'none', `${where}: sent uncompressed`);
  // The records section is byte-identical, so every record field (offset deltas, timestamp deltas, keys,
  // values, header order, duplicates and nulls, record attributes) is too.
  const section = originalRecords(rebuilt, 0, rebuilt.length, compressionOf(got.attributes), 1 << 30);
  assert.ok(section.equals(orig.section), `${where}: records section differs`);
  assert.deepEqual(got.records, want.records, `${where}: records`);
  if (want.compression === 'none' || want.isControl) assert.ok(rebuilt.equals(orig.bytes), `${where}: an uncompressed batch comes back byte for byte`);
}

for (const compression of ['none', 'original'] as const) {
  test(`every batch comes back with its offsets, producer fields and records, valid CRC (compression ${compression})`, async (t) => {
    const x = await tier(t);
    const want = originals(x.segment);
    const got = await fetchAll(x, compression);
    assert.equal(got.length, want.length, 'one rebuilt batch per original, control and empty batches included');
    got.forEach((g, i) => assertSameBatch(g, want[i]!, compression));
    // A single large fetch returns the same bytes as the batch-by-batch walk.
    const all = await fetchAll(x, compression, 1 << 30);
    assert.deepEqual(Buffer.concat(all), Buffer.concat(got));
  });
}

test('the special cases are really in the segment: raw bytes, LogAppendTime, markers, gaps, empty batch', async (t) => {
  const x = await tier(t);
  const b = originals(x.segment).map((o) => o.decoded);
  assert.ok(b.some((d) => d.timestampType === 'log-append'));
  assert.ok(b.some((d) => d.control?.kind === 'commit') && b.some((d) => d.control?.kind === 'abort'));
  assert.ok(b.some((d) => d.recordsCount === 0 && d.lastOffsetDelta === 3));
  assert.ok(b.some((d) => d.records.some((r) => r.offsetDelta === 5)));
  for (const c of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) assert.ok(b.some((d) => d.compression === c), c);
  assert.ok(b.some((d, i) => i > 0 && d.baseOffset > b[i - 1]!.baseOffset + BigInt(b[i - 1]!.lastOffsetDelta) + 1n), 'gaps between batches');
  assert.ok(x.files.some((f) => f.index.rowGroups.length > 3), 'several row groups');
});

test('random offsets land in the batch that contains them, or the next one after a gap', async (t) => {
  const x = await tier(t, { targetFileBytes: 64 * 1024 });
  assert.ok(x.files.length > 2, 'several data files');
  const want = originals(x.segment);
  const last = want[want.length - 1]!.decoded;
  const end = last.baseOffset + BigInt(last.lastOffsetDelta);
  const rand = rng(99);
  const footers = createFooterCache(1 << 20);
  for (let k = 0; k < 60; k++) {
    const offset = BigInt(Math.floor(rand() * Number(end + 1n)));
    const i = findIndex(x.files.map((f) => f.index), offset);
    assert.ok(i >= 0);
    const r = await fetchFromParquet({ io: x.io, tableLocation: x.table, index: x.files[i]!.index, fetchOffset: offset, maxBytes: 1, footers });
    const first = decodeRecordBatch(r.records.subarray(0, scanBatches(r.records).batches[0]!.end));
    const expected = want.find((o) => o.decoded.baseOffset + BigInt(o.decoded.lastOffsetDelta) >= offset)!;
    assert.equal(first.baseOffset, expected.decoded.baseOffset, `offset ${offset}`);
    assert.ok(first.baseOffset + BigInt(first.lastOffsetDelta) >= offset);
  }
  assert.ok(footers.size > 0, 'footers are cached');
});

test('max bytes: the first batch whole, then only batches that fit', async (t) => {
  const x = await tier(t);
  const f = x.files[0]!;
  for (const maxBytes of [1, 500, 4096, 50_000]) {
    const r = await fetchFromParquet({ io: x.io, tableLocation: x.table, index: f.index, fetchOffset: 0n, maxBytes });
    const sizes = scanBatches(r.records).batches.map((b) => b.end - b.start);
    assert.equal(sizes.reduce((a, s) => a + s, 0), r.records.length);
    if (sizes.length > 1) assert.ok(r.records.length <= maxBytes, `${r.records.length} <= ${maxBytes}`);
    const next = await fetchFromParquet({ io: x.io, tableLocation: x.table, index: f.index, fetchOffset: r.nextOffset, maxBytes: 1 });
    assert.ok(r.records.length + next.records.length > maxBytes, 'the next batch would not have fit');
  }
});

test('a fetch reads only the row groups it needs', async (t) => {
  const x = await tier(t);
  const f = x.files.find((y) => y.index.rowGroups.length > 3)!;
  const rg = f.index.rowGroups[2]!;
  const r = await fetchFromParquet({ io: x.io, tableLocation: x.table, index: f.index, fetchOffset: rg.firstOffset, maxBytes: 1 });
  assert.ok(r.bytesRead > 0 && r.bytesRead < f.index.dataFile!.size / 2, `read ${r.bytesRead} of ${f.index.dataFile!.size}`);
});

test('a data file that does not match its index is reported, not misread', async (t) => {
  const x = await tier(t);
  const f = x.files[0]!;
  // Truncate the data file: the footer the index points at is gone.
  const loc = resolveLocation(x.table, f.dataPath!);
  await writeFile(new URL(loc), Buffer.from(f.parquet!.bytes.subarray(0, 100)));
  await assert.rejects(fetchFromParquet({ io: x.io, tableLocation: x.table, index: f.index, fetchOffset: 0n, maxBytes: 1 << 20 }), { name: 'TieringConvertError', code: 'INDEX_MISMATCH' });
});

for (const compression of ['none', 'original'] as const) {
  test(`batch cache: a repeated fetch is served from memory with identical bytes (compression ${compression})`, async (t) => {
    const x = await tier(t);
    const uncached = await fetchAll(x, compression, 64 * 1024);
    const cache = createBatchCache(64 << 20);
    const first = await fetchAll(x, compression, 64 * 1024, cache);
    assert.deepEqual(Buffer.concat(first), Buffer.concat(uncached), 'a walk through the cache changes nothing');
    // A forward walk never asks twice for a batch (its next fetch starts after the last one's): it only
    // misses, and nothing is kept (admission on the second request).
    const dataBatches = x.files.reduce((n, f) => n + f.index.batches.filter((b) => b.stored === null && b.recordsCount > 0).length, 0);
    assert.equal(cache.hits, 0);
    assert.ok(cache.misses > 0);
    assert.equal(cache.size, 0, 'one pass keeps nothing');
    assert.ok(cache.declined > 0);
    // The second walk asks again: every response is kept.
    const second = await fetchAll(x, compression, 64 * 1024, cache);
    assert.deepEqual(Buffer.concat(second), Buffer.concat(uncached), 'filling the cache changes nothing');
    assert.equal(cache.hits, 0);
    assert.equal(cache.size, dataBatches, `${cache.size} of ${dataBatches} data batches cached`);
    // Remove the data files: a second read can only come from memory.
    for (const f of x.files) if (f.dataPath !== null) await x.io.delete(resolveLocation(x.table, f.dataPath));
    const misses = cache.misses;
    const again = await fetchAll(x, compression, 64 * 1024, cache);
    assert.deepEqual(Buffer.concat(again), Buffer.concat(uncached), 'the cached read returns the same bytes');
    assert.equal(cache.misses, misses, 'no batch was missing from the cache');
    assert.equal(cache.hits, cache.size, `${cache.hits} hits, one per cached batch`);
    // A different slicing of the same range (one batch per fetch) is served from the same entries.
    const single = await fetchAll(x, compression, 1, cache);
    assert.deepEqual(Buffer.concat(single), Buffer.concat(uncached));
    // A caller writing into a response cannot change what the next fetch gets.
    for (const f of x.files) {
      const r = await fetchFromParquet({ io: x.io, tableLocation: x.table, index: f.index, fetchOffset: f.index.baseOffset, maxBytes: 1 << 30, batches: cache, compression });
      r.records.fill(0);
    }
    assert.deepEqual(Buffer.concat(await fetchAll(x, compression, 64 * 1024, cache)), Buffer.concat(uncached));
  });
}

test('batch cache: the memory budget is respected, and a partly cached range reads only what is missing', async (t) => {
  const x = await tier(t);
  const uncached = await fetchAll(x, 'none', 1);
  const total = uncached.reduce((n, b) => n + b.length, 0);
  const budget = Math.floor(total / 4);
  const cache = createBatchCache(budget);
  let peak = 0;
  await fetchAll(x, 'none', 1, cache); // seen once: kept from the next walk on
  const got = await fetchAll(x, 'none', 1, cache, () => (peak = Math.max(peak, cache.bytes)));
  assert.deepEqual(Buffer.concat(got), Buffer.concat(uncached), 'evictions do not change what is returned');
  assert.ok(peak > budget / 2, `the cache was used (peak ${peak} of ${budget})`);
  assert.ok(peak <= budget && cache.bytes <= budget, `peak ${peak} and final ${cache.bytes} bytes within the budget of ${budget}`);
  assert.ok(cache.size < uncached.length, `${cache.size} of ${uncached.length} batches kept`);
  // The most recent batches are the ones kept: re-reading the tail hits, the head misses and is re-read.
  const last = x.files[x.files.length - 1]!;
  const hits = cache.hits;
  const tail = await fetchFromParquet({ io: x.io, tableLocation: x.table, index: last.index, fetchOffset: last.index.lastOffset, maxBytes: 1, batches: cache });
  assert.equal(tail.bytesRead, 0, 'the last batch came from memory');
  assert.equal(cache.hits, hits + (tail.batchCount > 0 && last.index.batches[last.index.batches.length - 1]!.stored === null ? 1 : 0));
  const head = x.files.find((f) => f.index.dataFile !== null)!;
  const cold = await fetchFromParquet({ io: x.io, tableLocation: x.table, index: head.index, fetchOffset: head.index.baseOffset, maxBytes: 1 << 30, batches: cache });
  assert.ok(cold.bytesRead > 0, 'evicted batches are read again');
  assert.ok(cache.bytes <= budget);
  // A zero budget keeps nothing.
  const off = createBatchCache(0);
  await fetchAll(x, 'none', 1 << 30, off);
  assert.equal(off.size, 0);
});

test('batch cache: a fetch only partly cached is rebuilt whole, and one response larger than the budget is not kept', async (t) => {
  const x = await tier(t);
  const f = x.files.find((y) => y.index.dataFile !== null && y.index.batches.filter((b) => b.stored === null).length > 6)!;
  const whole = (cache?: BatchCache, maxBytes = 1 << 30) => fetchFromParquet({ io: x.io, tableLocation: x.table, index: f.index, fetchOffset: f.index.baseOffset, maxBytes, ...(cache ? { batches: cache } : {}) });
  const expected = (await whole()).records;
  const cache = createBatchCache(64 << 20);
  // Cache the first batches only, with a small fetch asked twice (kept on the second request).
  await whole(cache, 1);
  assert.equal(cache.size, 0);
  const head = await whole(cache, 1);
  assert.ok(head.batchCount >= 1 && head.bytesRead > 0);
  const size = cache.size;
  assert.ok(size >= 1);
  const mixed = await whole(cache);
  assert.ok(mixed.records.equals(expected), 'cached head plus rebuilt rest: the same bytes');
  assert.ok(mixed.bytesRead > 0, 'the uncached part was read');
  assert.equal(mixed.decodedWith, 'native');
  assert.ok(cache.size > size, 'the whole response is cached now');
  const again = await whole(cache);
  assert.equal(again.bytesRead, 0);
  assert.equal(again.decodedWith, null);
  assert.ok(again.records.equals(expected));
  // A budget smaller than the response keeps nothing, and says so.
  const small = createBatchCache(Math.floor(expected.length / 2));
  assert.ok((await whole(small)).records.equals(expected));
  assert.ok((await whole(small)).records.equals(expected));
  assert.equal(small.size, 0);
  assert.equal(small.bytes, 0);
});

test('batch cache: a response whose pooled memory would exceed the budget is not kept, and leaves nothing behind', async (t) => {
  const x = await tier(t, { targetFileBytes: 1 << 30 });
  const f = x.files.find((y) => y.index.dataFile !== null)!;
  const whole = (cache: BatchCache) => fetchFromParquet({ io: x.io, tableLocation: x.table, index: f.index, fetchOffset: f.index.baseOffset, maxBytes: 1 << 30, batches: cache });
  const first = await whole(createBatchCache(64 << 20));
  const n = first.records.length;
  assert.ok(n > 128 * 1024, `a response of ${n} bytes, large enough for its memory to be rounded up`);
  // Room for the response and its entries, not for the rounded-up allocation.
  const cache = createBatchCache(n + 256 * first.batchCount + 1024);
  await whole(cache);
  const second = await whole(cache);
  assert.ok(second.records.equals(first.records));
  assert.equal(cache.size, 0, 'no batch points into memory the cache does not hold');
  assert.equal(cache.bytes, 0);
  const third = await whole(cache);
  assert.ok(third.records.equals(first.records));
  assert.ok(third.bytesRead > 0, 'read again, not served from a chunk that was never kept');
});
