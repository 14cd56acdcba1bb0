import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProtocolError } from '../../protocol/protocol-error.js';
import { DEFAULT_DECODE_LIMITS, Reader, resolveLimits } from '../../protocol/reader.js';
import { Writer } from '../../protocol/writer.js';

function reader(bytes: number[] | Buffer, limits = DEFAULT_DECODE_LIMITS): Reader {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes);
  return new Reader(buf, 0, buf.length, limits);
}

function throwsCode(fn: () => unknown, code: ProtocolError['code']): void {
  assert.throws(fn, (e: unknown) => e instanceof ProtocolError && e.code === code);
}

test('fixed-width integers at their extremes round-trip', () => {
  const w = new Writer(16);
  w.int8(-128).int8(127).int16(-32768).int16(32767).uint16(65535).int32(-2147483648).int32(2147483647).uint32(4294967295);
  w.int64(-(1n << 63n)).int64((1n << 63n) - 1n).float64(-0).float64(Number.MIN_VALUE).bool(true).bool(false);
  const r = reader(w.toBuffer());
  assert.equal(r.int8(), -128);
  assert.equal(r.int8(), 127);
  assert.equal(r.int16(), -32768);
  assert.equal(r.int16(), 32767);
  assert.equal(r.uint16(), 65535);
  assert.equal(r.int32(), -2147483648);
  assert.equal(r.int32(), 2147483647);
  assert.equal(r.uint32(), 4294967295);
  assert.equal(r.int64(), -(1n << 63n));
  assert.equal(r.int64(), (1n << 63n) - 1n);
  assert.ok(Object.is(r.float64(), -0));
  assert.equal(r.float64(), Number.MIN_VALUE);
  assert.equal(r.bool(), true);
  assert.equal(r.bool(), false);
  assert.equal(r.remaining, 0);
  throwsCode(() => r.int8(), 'TRUNCATED');
});

test('any non-zero byte decodes as true', () => {
  assert.equal(reader([0x02]).bool(), true);
});

test('unsigned varints: byte lengths at the 7-bit boundaries and the uint32 maximum', () => {
  const cases: [number, number[]][] = [
    [0, [0x00]],
    [127, [0x7f]],
    [128, [0x80, 0x01]],
    [16383, [0xff, 0x7f]],
    [16384, [0x80, 0x80, 0x01]],
    [0xffffffff, [0xff, 0xff, 0xff, 0xff, 0x0f]],
  ];
  for (const [value, bytes] of cases) {
    assert.deepEqual([...new Writer().uvarint(value).toBuffer()], bytes, `encode ${value}`);
    assert.equal(reader(bytes).uvarint(), value, `decode ${value}`);
  }
});

test('zigzag varints and varlongs at their extremes', () => {
  for (const v of [0, -1, 1, -64, 63, -65, 64, 2147483647, -2147483648]) {
    const r = reader(new Writer().varint(v).toBuffer());
    assert.equal(r.varint(), v);
    assert.equal(r.remaining, 0);
  }
  assert.deepEqual([...new Writer().varint(-1).toBuffer()], [0x01]);
  assert.deepEqual([...new Writer().varint(1).toBuffer()], [0x02]);
  for (const v of [0n, -1n, 1n, (1n << 63n) - 1n, -(1n << 63n), 1n << 35n, -(1n << 35n)]) {
    const bytes = new Writer().varlong(v).toBuffer();
    const r = reader(bytes);
    assert.equal(r.varlong(), v);
    assert.equal(r.remaining, 0);
  }
  assert.equal(new Writer().varlong(-(1n << 63n)).length, 10);
});

test('over-long and cut-off varints are ProtocolErrors', () => {
  throwsCode(() => reader([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]).uvarint(), 'INVALID_VALUE');
  throwsCode(() => reader([0x80, 0x80]).uvarint(), 'TRUNCATED');
  throwsCode(() => reader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).varlong(), 'INVALID_VALUE');
  // A varint must not read past a narrowed window even if the buffer continues.
  const r = new Reader(Buffer.from([0x80, 0x01]), 0, 1);
  throwsCode(() => r.uvarint(), 'TRUNCATED');
});

test('strings: classic and compact, nullable, multi-byte UTF-8', () => {
  const w = new Writer(4);
  w.string('héllo').nullableString(null).compactString('中文').compactNullableString(null).compactString('');
  const bytes = w.toBuffer();
  // 'héllo' is 6 bytes of UTF-8; the classic null is int16 -1; compact null is 0; compact '' is 1.
  assert.deepEqual([...bytes.subarray(0, 2)], [0, 6]);
  const r = reader(bytes);
  assert.equal(r.string(), 'héllo');
  assert.equal(r.nullableString(), null);
  assert.equal(r.compactString(), '中文');
  assert.equal(r.compactNullableString(), null);
  assert.equal(r.compactString(), '');
  assert.equal(r.remaining, 0);
});

test('a null where the field is not nullable is INVALID_VALUE', () => {
  throwsCode(() => reader([0xff, 0xff]).string(), 'INVALID_VALUE');
  throwsCode(() => reader([0x00]).compactString(), 'INVALID_VALUE');
  throwsCode(() => reader([0xff, 0xff, 0xff, 0xff]).bytes(), 'INVALID_VALUE');
  throwsCode(() => reader([0xff, 0xff, 0xff, 0xff]).array((x) => x.int8()), 'INVALID_VALUE');
});

test('bytes are views of the frame, not copies; UUIDs are copies', () => {
  const frame = new Writer().bytes(Buffer.from([1, 2, 3])).compactNullableBytes(Buffer.from([4])).uuid(Buffer.alloc(16, 7)).toBuffer();
  const r = reader(frame);
  const b = r.bytes();
  assert.deepEqual([...b], [1, 2, 3]);
  assert.equal(b.buffer, frame.buffer);
  assert.equal(b.byteOffset, frame.byteOffset + 4);
  assert.deepEqual([...(r.compactNullableBytes() as Buffer)], [4]);
  const id = r.uuid();
  assert.equal(id.length, 16);
  frame[frame.length - 1] = 0;
  assert.equal(id[15], 7);
  assert.equal(reader([0xff, 0xff, 0xff, 0xff]).nullableBytes(), null);
  assert.equal(reader([0x00]).compactNullableBytes(), null);
});

test('lengths are checked against the bytes remaining before anything is allocated', () => {
  throwsCode(() => reader([0x00, 0x05, 0x61]).string(), 'TRUNCATED');
  throwsCode(() => reader([0x7f, 0xff, 0xff, 0xff]).bytes(), 'LIMIT_EXCEEDED');
  throwsCode(() => reader([0x00, 0x10, 0x00, 0x00]).bytes(), 'TRUNCATED');
  throwsCode(() => reader([0xff, 0xfe]).string(), 'INVALID_LENGTH');
  throwsCode(() => reader([0xff, 0xff, 0xff, 0xfe]).nullableBytes(), 'INVALID_LENGTH');
  throwsCode(() => reader([0x80, 0x80, 0x80, 0x80, 0x0f]).compactBytes(), 'LIMIT_EXCEEDED');
  // 1000 int32 elements cannot fit in 8 bytes: rejected from the count alone.
  throwsCode(() => reader([0, 0, 0x03, 0xe8, 0, 0, 0, 1, 0, 0, 0, 2]).array((x) => x.int32(), false, 4), 'TRUNCATED');
  throwsCode(() => reader([0xff, 0xff, 0xff, 0xfe]).nullableArray((x) => x.int8()), 'INVALID_LENGTH');
});

test('limits are configurable', () => {
  const tight = resolveLimits({ maxArrayLength: 2, maxStringLength: 3, maxBytesLength: 1 });
  assert.equal(tight.maxDepth, DEFAULT_DECODE_LIMITS.maxDepth);
  throwsCode(() => reader([0, 0, 0, 3, 1, 2, 3], tight).array((x) => x.int8()), 'LIMIT_EXCEEDED');
  assert.deepEqual(reader([0, 0, 0, 2, 1, 2], tight).array((x) => x.int8()), [1, 2]);
  throwsCode(() => reader([0, 4, 0x61, 0x61, 0x61, 0x61], tight).string(), 'LIMIT_EXCEEDED');
  assert.equal(reader([0, 3, 0x61, 0x61, 0x61], tight).string(), 'aaa');
  throwsCode(() => reader([0, 0, 0, 2, 1, 2], tight).bytes(), 'LIMIT_EXCEEDED');
});

test('arrays: classic, compact, nullable', () => {
  const w = new Writer();
  w.array([1, 2, 3], (x, v) => x.int16(v)).compactArray([4], (x, v) => x.int8(v)).nullableArray(null, (x, v: number) => x.int8(v));
  w.compactNullableArray(null, (x, v: number) => x.int8(v)).compactArray([], (x, v: number) => x.int8(v));
  const r = reader(w.toBuffer());
  assert.deepEqual(r.array((x) => x.int16()), [1, 2, 3]);
  assert.deepEqual(r.compactArray((x) => x.int8()), [4]);
  assert.equal(r.nullableArray((x) => x.int8()), null);
  assert.equal(r.compactNullableArray((x) => x.int8()), null);
  assert.deepEqual(r.compactArray((x) => x.int8()), []);
  assert.equal(r.remaining, 0);
});

test('tagged fields: known tags read in a narrowed window, unknown ones skipped', () => {
  const bytes = new Writer().taggedFields([[1, Buffer.from([0, 42])], [5, Buffer.from([9, 9, 9])]]).int8(-7).toBuffer();
  const seen: number[] = [];
  const r = reader(bytes);
  r.taggedFields((tag, inner) => {
    seen.push(tag);
    if (tag !== 1) return false;
    assert.equal(inner.remaining, 2);
    assert.equal(inner.int16(), 42);
    return true;
  });
  assert.deepEqual(seen, [1, 5]);
  assert.equal(r.int8(), -7);
  // Skipping everything.
  const r2 = reader(bytes);
  r2.taggedFields();
  assert.equal(r2.int8(), -7);
  // A consumer that under-reads its tagged field is caught.
  throwsCode(() => reader(bytes).taggedFields((tag, inner) => (inner.int8(), true)), 'INVALID_LENGTH');
  // A consumer cannot read past the field's declared size.
  throwsCode(() => reader(bytes).taggedFields((tag, inner) => (inner.int32(), true)), 'TRUNCATED');
  // A tagged-field count that cannot fit.
  throwsCode(() => reader([0x7f, 0x01]).taggedFields(), 'TRUNCATED');
  throwsCode(() => reader([0x01, 0x00, 0x05, 0x00]).taggedFields(), 'TRUNCATED');
});

test('a reader window outside its buffer is rejected', () => {
  throwsCode(() => new Reader(Buffer.alloc(4), 2, 8), 'INVALID_LENGTH');
});
