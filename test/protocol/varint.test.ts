import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  VarintError,
  readUnsignedVarint,
  readVarint,
  readVarlong,
  readVarlongNumber,
  sizeOfUnsignedVarint,
  sizeOfVarint,
  sizeOfVarlong,
  sizeOfVarlongNumber,
  writeUnsignedVarint,
  writeVarint,
  writeVarlong,
  writeVarlongNumber,
} from '../../protocol/varint.js';

/** Reference encoder written from the protobuf spec with bigints only, independent of the code under test. */
function refZigzagBytes(v: bigint, bits: 32 | 64): number[] {
  let u = BigInt.asUintN(bits, (v << 1n) ^ (v >> BigInt(bits - 1)));
  const out: number[] = [];
  do {
    let byte = Number(u & 0x7fn);
    u >>= 7n;
    if (u > 0n) byte |= 0x80;
    out.push(byte);
  } while (u > 0n);
  return out;
}

/** Deterministic PRNG (mulberry32) so failures reproduce. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const INT32_EDGES = [0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, 2 ** 20, -(2 ** 20), 2 ** 27, 2 ** 30, -(2 ** 31), 2 ** 31 - 1];
const INT64_EDGES = [0n, 1n, -1n, 2n ** 31n, -(2n ** 31n) - 1n, 2n ** 52n, 2n ** 53n - 1n, -(2n ** 53n) + 1n, 2n ** 53n, 2n ** 62n, -(2n ** 63n), 2n ** 63n - 1n];

test('int32 varints match the reference encoding and round-trip', () => {
  const r = rng(1);
  const values = [...INT32_EDGES];
  for (let i = 0; i < 2000; i++) values.push(((r() * 2 ** 32) | 0) >> Math.floor(r() * 32));
  const buf = Buffer.alloc(16);
  const cur = { pos: 0 };
  for (const v of values) {
    const end = writeVarint(buf, 3, v);
    const expected = refZigzagBytes(BigInt(v), 32);
    assert.deepEqual([...buf.subarray(3, end)], expected, `encoding of ${v}`);
    assert.equal(sizeOfVarint(v), expected.length);
    cur.pos = 3;
    assert.equal(readVarint(buf, cur), v);
    assert.equal(cur.pos, end);
  }
});

test('unsigned varints round-trip up to 2^32-1', () => {
  const buf = Buffer.alloc(8);
  const cur = { pos: 0 };
  for (const v of [0, 127, 128, 16383, 16384, 2 ** 28 - 1, 2 ** 28, 2 ** 32 - 1]) {
    const end = writeUnsignedVarint(buf, 0, v);
    assert.equal(end, sizeOfUnsignedVarint(v));
    cur.pos = 0;
    assert.equal(readUnsignedVarint(buf, cur), v);
    assert.equal(cur.pos, end);
  }
});

test('varlongs match the reference encoding in both the bigint and the number paths', () => {
  const r = rng(2);
  const values = [...INT64_EDGES];
  for (let i = 0; i < 2000; i++) {
    const hi = BigInt(Math.floor(r() * 2 ** 32));
    const lo = BigInt(Math.floor(r() * 2 ** 32));
    values.push(BigInt.asIntN(64, (hi << 32n) | lo) >> BigInt(Math.floor(r() * 64)));
  }
  const buf = Buffer.alloc(16);
  const cur = { pos: 0 };
  for (const v of values) {
    const expected = refZigzagBytes(v, 64);
    const end = writeVarlong(buf, 1, v);
    assert.deepEqual([...buf.subarray(1, end)], expected, `encoding of ${v}`);
    assert.equal(sizeOfVarlong(v), expected.length);
    cur.pos = 1;
    assert.equal(readVarlong(buf, cur), v);
    assert.equal(cur.pos, end);
    const asNumber = Number(v);
    cur.pos = 1;
    if (Number.isSafeInteger(asNumber) && asNumber > -(2 ** 52) && asNumber < 2 ** 52) {
      assert.equal(readVarlongNumber(buf, cur), asNumber);
      assert.equal(cur.pos, end);
      const end2 = writeVarlongNumber(buf, 1, asNumber);
      assert.deepEqual([...buf.subarray(1, end2)], expected);
      assert.equal(sizeOfVarlongNumber(asNumber), expected.length);
    } else if (!Number.isSafeInteger(asNumber)) {
      assert.throws(() => readVarlongNumber(buf, cur), (e: unknown) => e instanceof VarintError && e.code === 'VARLONG_UNSAFE');
    }
  }
});

test('truncated varints throw TRUNCATED without moving the cursor', () => {
  const buf = Buffer.from([0x80, 0x80, 0x80]);
  for (const read of [readVarint, readUnsignedVarint, readVarlong, readVarlongNumber]) {
    const cur = { pos: 0 };
    assert.throws(() => read(buf, cur), (e: unknown) => e instanceof VarintError && e.code === 'TRUNCATED' && e.offset === 0);
    assert.equal(cur.pos, 0);
    assert.throws(() => read(Buffer.alloc(0), { pos: 0 }), (e: unknown) => e instanceof VarintError && e.code === 'TRUNCATED');
  }
});

test('over-long encodings throw VARINT_TOO_LONG', () => {
  // Six bytes for an int32; a fifth byte with bits beyond 32.
  for (const bytes of [[0x80, 0x80, 0x80, 0x80, 0x80, 0x00], [0xff, 0xff, 0xff, 0xff, 0x1f]]) {
    assert.throws(() => readVarint(Buffer.from(bytes), { pos: 0 }), (e: unknown) => e instanceof VarintError && e.code === 'VARINT_TOO_LONG');
  }
  // Eleven bytes for an int64; a tenth byte with bits beyond 64.
  const eleven = [...Array(10).fill(0x80), 0x00];
  const overflow = [...Array(9).fill(0xff), 0x02];
  for (const bytes of [eleven, overflow]) {
    assert.throws(() => readVarlong(Buffer.from(bytes), { pos: 0 }), (e: unknown) => e instanceof VarintError && e.code === 'VARINT_TOO_LONG');
    assert.throws(() => readVarlongNumber(Buffer.from(bytes), { pos: 0 }), (e: unknown) => e instanceof VarintError && e.code === 'VARINT_TOO_LONG');
  }
});
