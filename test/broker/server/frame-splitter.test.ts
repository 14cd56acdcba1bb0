import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FramePool } from '../../../broker/server/frame-pool.js';
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

/**
 * Feeds `stream` as a socket reading into reused memory would: each read fills at most `readSize` bytes of
 * the target the splitter asked for, and the scratch buffer is overwritten after every read, so a frame
 * that kept a view of it would come out corrupted.
 */
function readThrough(s: FrameSplitter, stream: Buffer, readSize: () => number, scratch = Buffer.alloc(4096)): { frames: Buffer[]; direct: number } {
  const frames: Buffer[] = [];
  let pos = 0;
  let direct = 0;
  while (pos < stream.length) {
    const target = s.readTarget(scratch);
    if (target !== scratch) direct++;
    const n = Math.min(readSize(), target.length, stream.length - pos);
    stream.copy(target, 0, pos, pos + n);
    pos += n;
    frames.push(...s.landed(target, n));
    scratch.fill(0xee);
  }
  return { frames, direct };
}

test('reads into reused memory: frames are copied out whole, large ones read straight into their buffer', () => {
  const rand = rng(7);
  const payloads = Array.from({ length: 300 }, (_, i) => {
    const size = i % 10 === 0 ? 64 * 1024 + Math.floor(rand() * 300_000) : 1 + Math.floor(rand() * 9000);
    return Buffer.from(Array.from({ length: size }, () => Math.floor(rand() * 256)));
  });
  const stream = Buffer.concat(payloads.map(frame));
  for (const pool of [undefined, new FramePool(1 << 30)]) {
    const { frames, direct } = readThrough(new FrameSplitter(1 << 20, pool), stream, () => 1 + Math.floor(rand() * 100_000));
    assert.equal(frames.length, payloads.length);
    frames.forEach((f, i) => assert.ok(f.equals(payloads[i] ?? Buffer.alloc(0)), `frame ${i}`));
    assert.ok(direct > 0, 'the rest of a large frame is read into the frame');
  }
});

test('reads into reused memory: a size prefix split across reads, and bad sizes', () => {
  const payloads = [Buffer.from('x'), Buffer.alloc(70_000, 3), Buffer.from('yz')];
  const stream = Buffer.concat(payloads.map(frame));
  const { frames } = readThrough(new FrameSplitter(1 << 20), stream, () => 3);
  assert.deepEqual(frames, payloads);
  const s = new FrameSplitter(100);
  const big = Buffer.alloc(8);
  big.writeInt32BE(101);
  const target = s.readTarget(Buffer.alloc(16));
  big.copy(target);
  assert.throws(() => s.landed(target, 8), FrameTooLargeError);
});
