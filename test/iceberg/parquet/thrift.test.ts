// The Thrift compact decoder's integers against the protocol's definition: a field's value is the zigzag
// decoding of an unsigned LEB128 varint of at most 10 bytes. Seeded values over the whole i64 range (those
// past 2^49 take the BigInt path, shorter ones the number path), each encoded minimally and padded with
// redundant continuation bytes up to 10 bytes; i16/i32 fields, binary lengths and long list sizes; and the
// errors for an overlong varint and for a varint cut off by the end of the buffer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeThriftStruct, TType } from '../../../iceberg/parquet/thrift.js';
import { ParquetError } from '../../../iceberg/parquet/errors.js';
import { prng } from '../../protocol/helpers/random-values.js';

const MASK64 = (1n << 64n) - 1n;

function zigzag(v: bigint): bigint {
  return ((v << 1n) ^ (v >> 63n)) & MASK64;
}

/** Unsigned LEB128 of `u`, padded with redundant continuation bytes to `width` bytes when longer than minimal. */
function varint(u: bigint, width = 0): number[] {
  const out: number[] = [];
  do {
    out.push(Number(u & 0x7fn));
    u >>= 7n;
  } while (u > 0n);
  while (out.length < width) out.push(0);
  return out.map((b, i) => (i < out.length - 1 ? b | 0x80 : b));
}

/** A struct holding one field (id 1) of compact type `type` whose body is `body`. */
function struct(type: number, body: number[]): Uint8Array {
  return Uint8Array.from([0x10 | type, ...body, 0]);
}

function minimalLength(u: bigint): number {
  return varint(u).length;
}

test('thrift: i64 fields decode to their value over the whole range, with minimal and padded varints', () => {
  const rand = prng(7);
  const values: bigint[] = [0n, 1n, -1n, 63n, -64n, 2n ** 48n, -(2n ** 48n), 2n ** 53n, -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n)];
  for (let i = 0; i < 2000; i++) {
    const bits = BigInt(Math.floor(rand() * 64));
    const mag = BigInt(Math.floor(rand() * 2 ** 31)) * BigInt(Math.floor(rand() * 2 ** 31)) * BigInt(Math.floor(rand() * 2 ** 2) + 1);
    values.push(BigInt.asIntN(64, (mag << bits) >> 8n) * (rand() < 0.5 ? -1n : 1n));
  }
  for (const v of values) {
    const u = zigzag(v);
    for (let width = minimalLength(u); width <= 10; width++) {
      const got = decodeThriftStruct(struct(TType.I64, varint(u, width))).get(1);
      assert.equal(got, v, `i64 ${v} in ${width} bytes`);
    }
  }
});

test('thrift: i16/i32 fields, binary lengths and long list sizes decode exactly', () => {
  const rand = prng(11);
  for (let i = 0; i < 2000; i++) {
    const v = Math.floor(rand() * 2 ** 32) - 2 ** 31;
    const u = zigzag(BigInt(v));
    for (let width = minimalLength(u); width <= 10; width += 3) {
      assert.equal(decodeThriftStruct(struct(TType.I32, varint(u, width))).get(1), v);
    }
  }
  assert.equal(decodeThriftStruct(struct(TType.I16, varint(zigzag(-32768n)))).get(1), -32768);
  for (const len of [0, 1, 127, 128, 300, 20000]) {
    const data = Array.from({ length: len }, (_, k) => k & 0xff);
    for (const width of [minimalLength(BigInt(len)), 8, 10]) {
      const got = decodeThriftStruct(struct(TType.BINARY, [...varint(BigInt(len), width), ...data])).get(1) as Uint8Array;
      assert.deepEqual([...got], data);
    }
  }
  for (const size of [15, 16, 200, 5000]) {
    const elems = Array.from({ length: size }, (_, k) => varint(zigzag(BigInt(k - 100)))).flat();
    const list = decodeThriftStruct(struct(TType.LIST, [0xf0 | TType.I32, ...varint(BigInt(size), 9), ...elems])).get(1) as number[];
    assert.deepEqual(list, Array.from({ length: size }, (_, k) => k - 100));
  }
});

test('thrift: an overlong varint and a varint cut off are INVALID_PARQUET, at the byte where they fail', () => {
  // The decoder stops at the 11th byte that still says more follow (what it always did).
  const tooLong = struct(TType.I64, [...Array(11).fill(0x80), 0x01]);
  assert.throws(
    () => decodeThriftStruct(tooLong),
    (e: unknown) => e instanceof ParquetError && e.code === 'INVALID_PARQUET' && /byte 12: varint longer than 10 bytes/.test(e.message),
  );
  for (const cut of [1, 3, 7, 8, 9]) {
    const bytes = Uint8Array.from([0x10 | TType.I64, ...Array(cut).fill(0x80)]);
    assert.throws(
      () => decodeThriftStruct(bytes),
      (e: unknown) => e instanceof ParquetError && e.code === 'INVALID_PARQUET' && new RegExp(`byte ${cut + 1}: unexpected end of footer`).test(e.message),
    );
  }
});
