import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProtocolError } from '../../protocol/protocol-error.js';
import { Writer } from '../../protocol/writer.js';

function throwsInvalid(fn: () => unknown): void {
  assert.throws(fn, (e: unknown) => e instanceof ProtocolError && e.code === 'INVALID_VALUE');
}

test('the writer is fluent, big-endian, and grows past its initial capacity', () => {
  const w = new Writer(16);
  w.int16(0x0102).int32(0x03040506);
  for (let i = 0; i < 100; i++) w.int8(i);
  assert.equal(w.length, 106);
  const out = w.toBuffer();
  assert.deepEqual([...out.subarray(0, 6)], [1, 2, 3, 4, 5, 6]);
  assert.equal(out[105], 99);
});

test('reset reuses the buffer; view is zero-copy, toBuffer is a copy', () => {
  const w = new Writer(64);
  w.int32(1);
  const first = w.view();
  const copy = w.toBuffer();
  w.reset().int32(2);
  const second = w.view();
  assert.equal(first.buffer, second.buffer, 'the same memory was reused');
  assert.equal(first.readInt32BE(0), 2, 'a view sees later writes');
  assert.equal(copy.readInt32BE(0), 1, 'a copy does not');
});

test('out-of-range and mistyped values are INVALID_VALUE, not RangeError', () => {
  throwsInvalid(() => new Writer().int8(128));
  throwsInvalid(() => new Writer().int16(-32769));
  throwsInvalid(() => new Writer().uint16(-1));
  throwsInvalid(() => new Writer().int32(2 ** 31));
  throwsInvalid(() => new Writer().int32(1.5));
  throwsInvalid(() => new Writer().uint32(2 ** 32));
  throwsInvalid(() => new Writer().int64(1n << 63n));
  throwsInvalid(() => new Writer().uvarint(-1));
  throwsInvalid(() => new Writer().varlong(-(1n << 63n) - 1n));
  throwsInvalid(() => new Writer().uuid(Buffer.alloc(15)));
  throwsInvalid(() => new Writer().string('x'.repeat(40000)));
  throwsInvalid(() => new Writer().taggedFields([[2, Buffer.alloc(0)], [1, Buffer.alloc(0)]]));
});

test('int32At patches a size prefix in place', () => {
  const w = new Writer().int32(0).int16(7);
  w.int32At(0, w.length - 4);
  assert.deepEqual([...w.toBuffer()], [0, 0, 0, 2, 0, 7]);
  assert.throws(() => w.int32At(4, 1), ProtocolError);
});

test('an empty tagged-field section is one zero byte', () => {
  assert.deepEqual([...new Writer().taggedFields().toBuffer()], [0]);
});
