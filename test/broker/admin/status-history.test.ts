// The data-quality signals computed from a topic's sampled points: records per minute against the hour's
// median, and null key/value shares of recently converted rows against the hour's share, with their flags.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN_BASELINE_POINTS, qualityOf, type StatusPoint } from '../../../broker/admin/status-history.js';

const INTERVAL = 10_000;

function points(rates: number[], converted: (i: number) => { records: number; nullKeys: number; nullValues: number } = () => ({ records: 0, nullKeys: 0, nullValues: 0 })): StatusPoint[] {
  return rates.map((r, i) => ({ t: i * INTERVAL, recordsPerSecond: r, lagRecords: 0, lagMs: 0, converted: converted(i) }));
}

test('records per minute is flagged only when it leaves the hour\'s median by more than a factor of three', () => {
  const steady = qualityOf(points(Array.from({ length: 60 }, () => 10)), INTERVAL);
  assert.equal(steady.recordsPerMinute, 600);
  assert.equal(steady.recordsPerMinuteBaseline, 600);
  assert.equal(steady.rateFlag, false);
  const dropped = qualityOf(points([...Array.from({ length: 54 }, () => 10), 1, 1, 1, 1, 1, 1]), INTERVAL);
  assert.equal(dropped.recordsPerMinute, 60);
  assert.equal(dropped.recordsPerMinuteBaseline, 600);
  assert.equal(dropped.rateFlag, true);
  const burst = qualityOf(points([...Array.from({ length: 54 }, () => 10), 50, 50, 50, 50, 50, 50]), INTERVAL);
  assert.equal(burst.rateFlag, true);
  const young = qualityOf(points(Array.from({ length: MIN_BASELINE_POINTS }, () => 5)), INTERVAL);
  assert.equal(young.recordsPerMinuteBaseline, undefined, 'no baseline before enough points');
  assert.equal(young.rateFlag, false);
});

test('null shares of recent rows are compared with the hour\'s share', () => {
  // 100 rows per point with 10 null keys, then the last five minutes' rows all have null keys.
  const n = 60;
  const cumulative = (i: number) => {
    const bad = Math.max(0, i - (n - 31));
    return { records: i * 100, nullKeys: (i - bad) * 10 + bad * 100, nullValues: 0 };
  };
  const q = qualityOf(points(Array.from({ length: n }, () => 10), cumulative), INTERVAL);
  assert.equal(q.nullKeyShare, 1);
  assert.ok(q.nullKeyShareBaseline !== undefined && q.nullKeyShareBaseline < 0.75);
  assert.equal(q.nullKeyFlag, true);
  assert.equal(q.nullValueShare, 0);
  assert.equal(q.nullValueFlag, false);
  const even = qualityOf(points(Array.from({ length: n }, () => 10), (i) => ({ records: i * 100, nullKeys: i * 10, nullValues: i * 50 })), INTERVAL);
  assert.equal(even.nullKeyShare, 0.1);
  assert.equal(even.nullKeyShareBaseline, 0.1);
  assert.equal(even.nullValueShare, 0.5);
  assert.equal(even.nullKeyFlag || even.nullValueFlag, false);
  const none = qualityOf(points([1, 1]), INTERVAL);
  assert.equal(none.nullKeyShare, undefined, 'no rows converted: no share');
});

test('typed topics: dead-letter and raw-kept shares of recent rows against the hour\'s, absent for key_value topics', () => {
  const n = 60;
  // A typed topic: 100 rows per point, 2 raw-kept; then a bad deployment: the last five minutes' rows are all dead letters.
  const cumulative = (i: number) => {
    const bad = Math.max(0, i - (n - 31));
    return { records: i * 100, nullKeys: 0, nullValues: 0, deadLetters: bad * 100, rawKept: (i - bad) * 2 };
  };
  const q = qualityOf(points(Array.from({ length: n }, () => 10), cumulative as never), INTERVAL);
  assert.equal(q.deadLetterShare, 1);
  assert.ok(q.deadLetterShareBaseline !== undefined && q.deadLetterShareBaseline < 0.75);
  assert.equal(q.deadLetterFlag, true);
  assert.equal(q.rawKeptShare, 0);
  assert.equal(q.rawKeptFlag, false);
  const plain = qualityOf(points(Array.from({ length: n }, () => 10), (i) => ({ records: i * 100, nullKeys: 0, nullValues: 0 })), INTERVAL);
  assert.equal(plain.deadLetterShare, undefined, 'a key_value topic has no dead-letter share');
  assert.equal(plain.rawKeptShareBaseline, undefined);
  assert.equal(plain.deadLetterFlag || plain.rawKeptFlag, false);
});
