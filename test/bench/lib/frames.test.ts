import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrameReader } from '../../../bench/lib/frames.js';

function frame(payload: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeInt32BE(payload.length, 0);
  return Buffer.concat([head, payload]);
}

const payloads = [Buffer.from('a'), Buffer.alloc(0), Buffer.alloc(300, 7), Buffer.from('hello kafka'), Buffer.alloc(70_000, 3)];
const stream = Buffer.concat(payloads.map(frame));

for (const reuse of [false, true]) {
  test(`frames split at every point arrive whole and in order (reuse=${reuse})`, () => {
    for (let cut = 0; cut <= stream.length; cut += cut < 400 ? 1 : 997) {
      const got: string[] = [];
      // Copy in the callback: with reuse a frame is only valid until the next one.
      const reader = new FrameReader((f) => got.push(f.toString('hex')), { reuse });
      reader.push(stream.subarray(0, cut));
      reader.push(stream.subarray(cut));
      assert.deepEqual(got, payloads.map((p) => p.toString('hex')), `cut at ${cut}`);
    }
  });
}

test('bytes fed one at a time still make the same frames', () => {
  const got: Buffer[] = [];
  const reader = new FrameReader((f) => got.push(Buffer.from(f)));
  for (let i = 0; i < 400; i++) reader.push(stream.subarray(i, i + 1));
  assert.deepEqual(got.slice(0, 3), payloads.slice(0, 3));
});

test('a negative or oversized frame size is refused', () => {
  const bad = Buffer.alloc(8);
  bad.writeInt32BE(-5, 0);
  assert.throws(() => new FrameReader(() => undefined).push(bad), /bad frame size -5/);
  const big = Buffer.alloc(8);
  big.writeInt32BE(1000, 0);
  assert.throws(() => new FrameReader(() => undefined, { maxFrameBytes: 999 }).push(big), /bad frame size 1000/);
});
