import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompactionScheduler } from '../../../tiering/plugin/compaction-scheduler.js';

test('one compaction at a time across topics, deduplicated requests, and none while tiering has a backlog', async () => {
  let running = 0;
  let most = 0;
  const ran: string[] = [];
  let busy = true;
  const s = new CompactionScheduler({
    run: async (topic, partition) => {
      running++;
      most = Math.max(most, running);
      ran.push(`${topic}-${partition}`);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return false;
    },
    tieringBusy: () => busy,
    bytesPerSecond: Infinity,
    idleRetryMs: 5,
    maxDeferMs: 60_000,
  });
  for (const p of [0, 1, 0, 1]) s.request('a', p);
  s.request('b', 0);
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(ran, [], 'nothing runs while segments wait to be copied');
  busy = false;
  await s.idle();
  assert.deepEqual(ran, ['a-0', 'a-1', 'b-0']);
  assert.equal(most, 1);
  await s.close();
});

test('a compaction that changed the table asks again; a failure is reported', async () => {
  let left = 3;
  const errors: unknown[] = [];
  let runs = 0;
  const s = new CompactionScheduler({
    run: async () => {
      runs++;
      if (runs === 5) throw new Error('boom');
      return left-- > 0;
    },
    tieringBusy: () => false,
    bytesPerSecond: Infinity,
    onError: (err) => errors.push(err),
  });
  s.request('a', 0);
  await s.idle();
  assert.equal(runs, 4, 'three rounds that merged something, then one with nothing to do');
  s.request('a', 0);
  await s.idle();
  assert.equal(errors.length, 1);
  await s.close();
});

test('the byte rate limit makes reads wait once the second of burst is spent', async () => {
  let now = 0;
  const s = new CompactionScheduler({ run: async () => false, tieringBusy: () => false, bytesPerSecond: 1000, now: () => now });
  await s.throttle(1000); // the burst
  const t1 = Date.now();
  await s.throttle(50); // 50 bytes over the budget at 1000 B/s: at least 50 ms
  assert.ok(Date.now() - t1 >= 45, `waited ${Date.now() - t1} ms`);
  now += 10_000; // ten seconds later: the bucket holds one second's worth again, not ten
  await s.throttle(1000);
  const t2 = Date.now();
  await s.throttle(100);
  assert.ok(Date.now() - t2 >= 95, 'the idle time did not buy more than one second of burst');
  await s.close();
});

test('a compaction deferred to a tiering backlog for maxDeferMs runs anyway', async () => {
  let now = 0;
  const ran: number[] = [];
  const s = new CompactionScheduler({ run: async (_t, p) => (ran.push(p), false), tieringBusy: () => true, bytesPerSecond: Infinity, idleRetryMs: 1, maxDeferMs: 1000, now: () => now });
  s.request('a', 7);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(ran, [], 'deferred while the backlog lasts');
  now = 1000;
  await s.idle();
  assert.deepEqual(ran, [7]);
  await s.close();
});
