import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, retry } from '../../../iceberg/io/retry.js';

test('backoffDelay is full jitter under an exponentially growing cap, never above maxDelayMs', () => {
  const opts = { baseDelayMs: 10, maxDelayMs: 1000 };
  assert.equal(backoffDelay(0, opts, () => 0), 0);
  assert.equal(backoffDelay(0, opts, () => 0.999), 9);
  assert.equal(backoffDelay(3, opts, () => 0.5), 40);
  assert.equal(backoffDelay(20, opts, () => 0.999), 999);
  assert.equal(backoffDelay(5000, opts, () => 0.5), 500, 'huge retry counts do not overflow');
});

test('retry retries retryable errors up to maxAttempts and returns the first success', async () => {
  const attempts: number[] = [];
  const value = await retry(
    async (attempt) => {
      attempts.push(attempt);
      if (attempt < 2) throw new Error('transient');
      return 'done';
    },
    { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 1, retryable: () => true, random: () => 0 },
  );
  assert.equal(value, 'done');
  assert.deepEqual(attempts, [0, 1, 2]);
});

test('retry rethrows a non-retryable error at once and the last error when attempts run out', async () => {
  let calls = 0;
  const fatal = new Error('fatal');
  await assert.rejects(
    retry(async () => { calls++; throw fatal; }, { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 1, retryable: (e) => e !== fatal }),
    (err) => err === fatal,
  );
  assert.equal(calls, 1);
  calls = 0;
  await assert.rejects(
    retry(async () => { calls++; throw new Error(`try ${calls}`); }, { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1, retryable: () => true, random: () => 0 }),
    /try 3/,
  );
  assert.equal(calls, 3);
  await assert.rejects(retry(async () => 1, { maxAttempts: 0, baseDelayMs: 1, maxDelayMs: 1, retryable: () => true }), RangeError);
});
