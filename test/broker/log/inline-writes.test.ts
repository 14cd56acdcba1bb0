import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InlineWrites, type InlineWritesClock } from '../../../broker/log/inline-writes.js';

/** A clock whose time and event-loop utilization the test sets. */
function fakeClock(): InlineWritesClock & { t: number; u: number; reads: number } {
  const c = {
    t: 1_000,
    u: 0,
    reads: 0,
    now: () => c.t,
    utilization: () => {
      c.reads++;
      return c.u;
    },
  };
  return c;
}

const KiB = 1024;
/** A 16 KiB write into the page cache: about 24 µs. */
const WRITE_SECONDS = 24e-6;

/** Ends `n` windows of 100 ms, each with one 16 KiB write; returns whether each window's next write was inline. */
function windows(writes: InlineWrites, clock: { t: number }, n: number, seconds = WRITE_SECONDS): boolean[] {
  const out: boolean[] = [];
  for (let i = 0; i < n; i++) {
    clock.t += 100;
    const inline = writes.shouldInline(16 * KiB);
    out.push(inline);
    if (inline) writes.wroteInline(seconds);
  }
  return out;
}

test('small writes go inline, larger ones and all of them with max.bytes 0 go to the pool', () => {
  const writes = new InlineWrites({ maxBytes: 64 * KiB, clock: fakeClock() });
  assert.equal(writes.shouldInline(16 * KiB), true);
  assert.equal(writes.shouldInline(64 * KiB), true);
  assert.equal(writes.shouldInline(64 * KiB + 1), false);
  const off = new InlineWrites({ maxBytes: 0, clock: fakeClock() });
  assert.equal(off.shouldInline(1), false);
});

test('an event loop saturated for five windows in a row sends writes to the pool for at least a second', () => {
  const clock = fakeClock();
  const writes = new InlineWrites({ maxBytes: 64 * KiB, clock });
  clock.u = 0.99;
  assert.equal(writes.shouldInline(16 * KiB), true, 'the window has not ended: no decision yet');
  assert.equal(clock.reads, 0);
  assert.deepEqual(windows(writes, clock, 5), [true, true, true, true, false], 'the fifth saturated window in a row');
  assert.equal(clock.reads, 5);
  clock.u = 0.3;
  assert.deepEqual(windows(writes, clock, 11), [...Array<boolean>(9).fill(false), true, true], 'back once the hold is over');
});

test('saturated windows that are not in a row (stalls of a loaded machine) keep small writes inline', () => {
  const clock = fakeClock();
  const writes = new InlineWrites({ maxBytes: 64 * KiB, clock });
  for (let i = 0; i < 10; i++) {
    clock.u = 1;
    assert.deepEqual(windows(writes, clock, 4), [true, true, true, true]);
    clock.u = 0.9;
    assert.deepEqual(windows(writes, clock, 1), [true]);
  }
});

test('two inline writes of 20 ms within a second send writes to the pool for at least a second; one alone does not', () => {
  const clock = fakeClock();
  const writes = new InlineWrites({ maxBytes: 64 * KiB, clock });
  assert.equal(writes.shouldInline(16 * KiB), true);
  writes.wroteInline(0.02);
  assert.equal(writes.shouldInline(16 * KiB), true, 'one slow write may be a preemption');
  clock.t += 1000;
  writes.wroteInline(0.02);
  assert.equal(writes.shouldInline(16 * KiB), true, 'a second slow one, but a second later');
  clock.t += 500;
  writes.wroteInline(0.03);
  assert.equal(writes.shouldInline(16 * KiB), false, 'two within a second: writeback throttling');
  assert.deepEqual(windows(writes, clock, 11), [...Array<boolean>(9).fill(false), true, true]);
});
