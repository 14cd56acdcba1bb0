import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatSize, mbPerSec, median, pct, percentileOfSorted, summarizeLatencies } from '../../../bench/lib/stats.js';

test('median of odd and even counts, NaN when empty', () => {
  assert.equal(median([5, 1, 3]), 3);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.ok(Number.isNaN(median([])));
});

test('percentiles use the nearest rank, so p99 is a value some sample had', () => {
  const sorted = Float64Array.from({ length: 100 }, (_, i) => i + 1); // 1..100
  assert.equal(percentileOfSorted(sorted, 50), 50);
  assert.equal(percentileOfSorted(sorted, 99), 99);
  assert.equal(percentileOfSorted(sorted, 100), 100);
  assert.equal(percentileOfSorted(sorted, 0), 1);
  assert.equal(percentileOfSorted([7, 9], 99), 9);
});

test('latency summary sorts a copy and reports the tail', () => {
  const samples = Float64Array.from([5, 1, 4, 2, 3, 100, 6, 7, 8, 9]);
  const s = summarizeLatencies(samples);
  assert.equal(s.count, 10);
  assert.equal(s.p50, 5);
  assert.equal(s.p99, 100);
  assert.equal(s.max, 100);
  assert.equal(s.mean, 14.5);
  assert.equal(samples[0], 5, 'the input is left as it was');
});

test('units and ratios', () => {
  assert.equal(mbPerSec(2_000_000, 1e9), 2);
  assert.equal(pct(70, 100), '70%');
  assert.equal(pct(1, 0), '-');
  assert.equal(formatSize(16 * 1024), '16 KiB');
  assert.equal(formatSize(1024 * 1024), '1 MiB');
  assert.equal(formatSize(1000), '1000 B');
});
