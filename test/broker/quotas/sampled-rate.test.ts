// The byte-rate windows of client quotas, driven by a fake clock: Kafka's Rate over a SampledStat
// (quota.window.num=11 windows of quota.window.size.seconds=1) and its throttle time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SampledRate } from '../../../broker/quotas/sampled-rate.js';

const WINDOWS = { samples: 11, windowMs: 1000 };

test('a first burst is measured over samples - 1 windows, not over the milliseconds it took', () => {
  const rate = new SampledRate(WINDOWS, 0);
  rate.record(1000, 0);
  assert.equal(rate.windowSize(0), 10_000);
  assert.equal(rate.rate(0), 100);
  rate.record(1000, 500);
  assert.equal(rate.windowSize(500), 10_500);
  assert.ok(Math.abs(rate.rate(500) - 2000 / 10.5) < 1e-9);
});

test('the throttle time is (rate - bound) / bound x window size, and 0 within the bound', () => {
  const rate = new SampledRate(WINDOWS, 0);
  rate.record(1000, 0); // 100 B/s over 10 s
  assert.equal(rate.throttleMs(100, 0), 0);
  assert.equal(rate.throttleMs(200, 0), 0);
  assert.equal(rate.throttleMs(50, 0), 10_000);
  assert.equal(rate.throttleMs(80, 0), 2500);
  // Once the client has waited, the same bytes are spread over more time: the rate fell.
  assert.ok(rate.rate(2500) < rate.rate(0));
});

test('samples older than samples x window size are forgotten', () => {
  const rate = new SampledRate(WINDOWS, 0);
  rate.record(5000, 0);
  assert.ok(rate.rate(10_999) > 0);
  assert.equal(rate.rate(11_000), 0);
});

test('a steady rate is measured as itself once the windows are full', () => {
  const rate = new SampledRate(WINDOWS, 0);
  for (let t = 0; t <= 30_000; t += 100) rate.record(100, t); // 1000 B/s
  const measured = rate.rate(30_000);
  assert.ok(Math.abs(measured - 1000) < 50, `measured ${measured} B/s`);
});

test('a client that waits out each throttle time is held to its quota', () => {
  // 4 KiB per request, as fast as allowed, against a 2000 B/s quota, for 60 s of fake time.
  const rate = new SampledRate(WINDOWS, 0);
  const bound = 2000;
  let now = 0;
  let sent = 0;
  let throttled = 0;
  while (now < 60_000) {
    rate.record(4096, now);
    sent += 4096;
    const ms = rate.throttleMs(bound, now);
    if (ms > 0) throttled++;
    now += Math.max(ms, 10);
  }
  const achieved = (sent * 1000) / now;
  assert.ok(throttled > 10, `${throttled} throttles`);
  assert.ok(achieved <= bound * 1.25, `achieved ${achieved} B/s against ${bound}`);
  assert.ok(achieved >= bound * 0.75, `achieved ${achieved} B/s against ${bound}`);
});

test('a quota of 0 throttles for the whole window span; unrecord takes bytes back', () => {
  const rate = new SampledRate(WINDOWS, 0);
  rate.record(10, 0);
  assert.equal(rate.throttleMs(0, 0), 11_000);
  rate.unrecord(10);
  assert.equal(rate.rate(0), 0);
  assert.equal(rate.throttleMs(0, 0), 0);
});
