import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrameSplitter, FrameTooLargeError, InvalidFrameSizeError } from '../../../broker/server/frame-splitter.js';

function frame(payload: Buffer): Buffer {
  const b = Buffer.alloc(4 + payload.length);
  b.writeInt32BE(payload.length, 0);
  payload.copy(b, 4);
  return b;
}

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test('frames split at every possible point come out whole and in order', () => {
  const payloads = [Buffer.from('a'), Buffer.alloc(300, 7), Buffer.from('hello world'), Buffer.alloc(5000, 1)];
  const stream = Buffer.concat(payloads.map(frame));
  for (let cut = 0; cut <= stream.length; cut += 37) {
    const s = new FrameSplitter(1 << 20);
    const out = [...s.push(stream.subarray(0, cut)), ...s.push(stream.subarray(cut))];
    assert.deepEqual(out, payloads, `cut at ${cut}`);
    assert.equal(s.bufferedBytes, 0);
  }
});

test('random chunking of many frames', () => {
  const rand = rng(42);
  const payloads = Array.from({ length: 500 }, (_, i) => Buffer.alloc(1 + Math.floor(rand() * 3000), i & 0xff));
  const stream = Buffer.concat(payloads.map(frame));
  const s = new FrameSplitter(1 << 20);
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < stream.length) {
    const n = 1 + Math.floor(rand() * 4096);
    out.push(...s.push(stream.subarray(pos, pos + n)));
    pos += n;
  }
  assert.equal(out.length, payloads.length);
  out.forEach((f, i) => assert.ok(f.equals(payloads[i] ?? Buffer.alloc(0)), `frame ${i}`));
});

test('oversized and non-positive sizes are rejected before buffering', () => {
  const s = new FrameSplitter(100);
  const big = Buffer.alloc(4);
  big.writeInt32BE(101);
  assert.throws(() => s.push(big), FrameTooLargeError);
  const neg = Buffer.alloc(4);
  neg.writeInt32BE(-5);
  assert.throws(() => new FrameSplitter(100).push(neg), InvalidFrameSizeError);
  assert.throws(() => new FrameSplitter(100).push(Buffer.alloc(4)), InvalidFrameSizeError);
});
