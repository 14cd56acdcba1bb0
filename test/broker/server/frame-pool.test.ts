import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FramePool, POOLED_MIN_BYTES, sizeClass } from '../../../broker/server/frame-pool.js';

test('size classes are quarter steps of a power of two: never smaller, at most a quarter larger', () => {
  assert.equal(sizeClass(4096), 4096);
  assert.equal(sizeClass(4097), 5120);
  assert.equal(sizeClass(1 << 20), 1 << 20);
  assert.equal(sizeClass((1 << 20) + 100), (1 << 20) + (1 << 18));
  for (let n = POOLED_MIN_BYTES; n < 3_000_000; n += 7919) {
    const c = sizeClass(n);
    assert.ok(c >= n && c <= n * 1.25, `${n} -> ${c}`);
  }
});

test('a buffer given back is lent again for a frame of the same class, and only then', () => {
  const pool = new FramePool(1 << 30);
  const a = pool.lend(1_000_000);
  assert.equal(a.length, 1_000_000);
  pool.giveBack(a.subarray(4));
  assert.equal(pool.idleBytes, sizeClass(1_000_000));
  const b = pool.lend(1_000_100);
  assert.equal(b.buffer, a.buffer, 'same class: the memory is reused');
  assert.equal(pool.reused, 1);
  const c = pool.lend(1_000_000);
  assert.notEqual(c.buffer, a.buffer, 'lent out already: not handed out twice');
  assert.equal(pool.allocated, 2);
});

test('small frames, foreign memory and second give-backs are ignored', () => {
  const pool = new FramePool(1 << 30);
  const small = pool.lend(100);
  assert.equal(small.length, 100);
  pool.giveBack(small);
  pool.giveBack(Buffer.alloc(8192));
  assert.equal(pool.idleBytes, 0);
  const big = pool.lend(8192);
  pool.giveBack(big);
  pool.giveBack(big);
  assert.equal(pool.idleBytes, 8192, 'counted once');
  const again = pool.lend(8192);
  const other = pool.lend(8192);
  assert.notEqual(again.buffer, other.buffer, 'a double give-back must not hand one buffer to two frames');
});

test('idle memory stays under the cap: what does not fit is left to the garbage collector', () => {
  const pool = new FramePool(3 * 65536);
  const lent = Array.from({ length: 5 }, () => pool.lend(65536));
  for (const b of lent) pool.giveBack(b);
  assert.equal(pool.idleBytes, 3 * 65536);
});
