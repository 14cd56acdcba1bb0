import test from 'node:test';
import assert from 'node:assert/strict';
import { decodeSegmentIndex, encodeSegmentIndex, encodedIndexSize, type SegmentIndex } from '../../../tiering/offset-index/format.js';
import { findBatch, findIndex, findRowGroupByRow, locateOffset } from '../../../tiering/offset-index/lookup.js';
import { parseIndexName, indexPath, dataFilePath, resolveLocation } from '../../../tiering/offset-index/location.js';
import { ByteBudgetCache } from '../../../tiering/offset-index/cache.js';

function sample(): SegmentIndex {
  const batch = (baseOffset: bigint, lastOffsetDelta: number, firstRow: number, recordsCount: number, stored: Buffer | null) => ({
    baseOffset,
    lastOffsetDelta,
    recordsCount,
    attributes: stored ? 0x30 : 4,
    partitionLeaderEpoch: 7,
    baseTimestamp: -1n,
    maxTimestamp: 1_700_000_000_123n,
    producerId: stored ? 9n : -1n,
    producerEpoch: stored ? 2 : -1,
    baseSequence: -1,
    firstRow,
    recordsBytes: 100,
    originalSize: 80,
    stored,
  });
  return {
    version: 1,
    partition: 3,
    baseOffset: 100n,
    lastOffset: 140n,
    minTimestamp: 5n,
    maxTimestamp: 1_700_000_000_123n,
    rowCount: 12,
    dataFile: { path: 'data/partition=3/ünï.parquet', size: 123456, footerOffset: 120000, footerLength: 3000 },
    rowGroups: [
      { firstRow: 0, numRows: 6, firstOffset: 100n, lastOffset: 111n, byteStart: 4, byteLength: 600 },
      { firstRow: 6, numRows: 6, firstOffset: 120n, lastOffset: 140n, byteStart: 604, byteLength: 500 },
    ],
    batches: [
      batch(100n, 4, 0, 5, null),
      batch(105n, 0, 5, 1, Buffer.from('control batch bytes')),
      batch(110n, 1, 5, 2, null),
      batch(120n, 20, 7, 5, null),
    ],
  };
}

test('the index round-trips through its binary form, and its size is what the cache charges', () => {
  const idx = sample();
  const buf = encodeSegmentIndex(idx);
  assert.equal(buf.length, encodedIndexSize(idx));
  assert.deepEqual(decodeSegmentIndex(buf), idx);
  const none = { ...idx, dataFile: null, rowGroups: [], rowCount: 0 };
  assert.deepEqual(decodeSegmentIndex(encodeSegmentIndex(none)), none);
});

test('corrupt, truncated or future-version indexes are refused with INVALID_INDEX', () => {
  const buf = encodeSegmentIndex(sample());
  for (let i = 0; i < buf.length; i += 7) {
    const bad = Buffer.from(buf);
    bad[i]! ^= 0x40;
    assert.throws(() => decodeSegmentIndex(bad), { code: 'INVALID_INDEX' }, `flip at ${i}`);
  }
  assert.throws(() => decodeSegmentIndex(buf.subarray(0, buf.length - 9)), { code: 'INVALID_INDEX' });
  const v2 = Buffer.from(buf);
  v2.writeUInt16BE(2, 4);
  assert.throws(() => decodeSegmentIndex(v2), /version 2 is not supported/);
});

test('lookups: offset -> batch (gaps go to the next batch), row -> row group, offset -> index', () => {
  const idx = sample();
  assert.equal(findBatch(idx, 0n), 0);
  assert.equal(findBatch(idx, 104n), 0);
  assert.equal(findBatch(idx, 105n), 1);
  assert.equal(findBatch(idx, 112n), 3, 'offset in the gap 112..119 goes to the batch at 120');
  assert.equal(findBatch(idx, 140n), 3);
  assert.equal(findBatch(idx, 141n), -1);
  assert.deepEqual(locateOffset(idx, 121n), { batch: 3, rowGroup: 1 });
  assert.deepEqual(locateOffset(idx, 105n), { batch: 1, rowGroup: -1 });
  assert.equal(locateOffset(idx, 1000n), undefined);
  assert.equal(findRowGroupByRow(idx.rowGroups, 0), 0);
  assert.equal(findRowGroupByRow(idx.rowGroups, 5), 0);
  assert.equal(findRowGroupByRow(idx.rowGroups, 6), 1);
  assert.equal(findRowGroupByRow(idx.rowGroups, 12), -1);
  const files = [{ baseOffset: 0n, lastOffset: 99n }, { baseOffset: 100n, lastOffset: 140n }, { baseOffset: 200n, lastOffset: 250n }];
  assert.equal(findIndex(files, 50n), 0);
  assert.equal(findIndex(files, 100n), 1);
  assert.equal(findIndex(files, 150n), 2);
  assert.equal(findIndex(files, 251n), -1);
});

test('object names sort in offset order and parse back', () => {
  const a = indexPath(1, 9n, 99n);
  const b = indexPath(1, 100n, 1000n);
  assert.ok(a < b);
  assert.deepEqual(parseIndexName(b), { baseOffset: 100n, lastOffset: 1000n });
  assert.equal(parseIndexName('x.parquet'), undefined);
  assert.equal(dataFilePath(0, 0n, 9223372036854775807n), 'data/partition=0/00000000000000000000-09223372036854775807.parquet');
  assert.equal(resolveLocation('s3://b/t/', 'data/x'), 's3://b/t/data/x');
});

test('the cache stays within its byte budget, shares concurrent loads and forgets failures', async () => {
  const cache = new ByteBudgetCache<{ n: number }>({ maxBytes: 1000, sizeOf: (v) => v.n });
  let loads = 0;
  const load = (n: number) => async () => {
    loads++;
    await new Promise((r) => setImmediate(r));
    return { n };
  };
  const [x, y] = await Promise.all([cache.get('a', load(400)), cache.get('a', load(400))]);
  assert.equal(x, y);
  assert.equal(loads, 1);
  await cache.get('b', load(400));
  await cache.get('c', load(400));
  assert.ok(cache.bytes <= 1000);
  assert.equal(cache.peek('a'), undefined, 'least recently used evicted');
  await assert.rejects(cache.get('d', () => Promise.reject(new Error('boom'))), /boom/);
  assert.deepEqual(await cache.get('d', load(10)), { n: 10 }, 'a failed load is retried');
});
