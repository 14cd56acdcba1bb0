import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ParquetError } from '../../../iceberg/parquet/errors.js';
import { bitWidthOf, decodeHybrid, pageHeader } from '../../../iceberg/parquet/page-format.js';

test('RLE/bit-packed hybrid: an RLE run and a bit-packed run, as the Parquet spec lays them out', () => {
  // Bit width 2. RLE run: header (4 << 1) = 8, value 3 (one byte) -> four 3s. Bit-packed run: header
  // (1 << 1) | 1 = 3, one group of 8 values 0,1,2,3,0,1,2,3 packed LSB first in 2 bytes: 0b11100100 twice.
  const buf = Uint8Array.from([8, 3, 3, 0b11100100, 0b11100100]);
  const out = new Int32Array(12);
  const end = decodeHybrid(buf, 0, buf.length, 2, out, 0, 12, 3, 'test');
  assert.deepEqual([...out], [3, 3, 3, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
  assert.equal(end, buf.length);
  assert.equal(bitWidthOf(3), 2);
  assert.equal(bitWidthOf(0), 0);
});

test('RLE/bit-packed hybrid: values above the maximum and runs cut off are INVALID_PARQUET, never a read past the end', () => {
  const invalid = (e: unknown): boolean => e instanceof ParquetError && e.code === 'INVALID_PARQUET';
  assert.throws(() => decodeHybrid(Uint8Array.from([8, 3]), 0, 2, 2, new Int32Array(4), 0, 4, 2, 'test'), invalid);
  assert.throws(() => decodeHybrid(Uint8Array.from([8]), 0, 1, 2, new Int32Array(4), 0, 4, 3, 'test'), invalid);
  assert.throws(() => decodeHybrid(Uint8Array.from([3, 0xff]), 0, 2, 2, new Int32Array(8), 0, 8, 3, 'test'), invalid);
  assert.throws(() => decodeHybrid(Uint8Array.from([0x80, 0x80, 0x80, 0x80, 0x7f]), 0, 5, 2, new Int32Array(4), 0, 4, 3, 'test'), invalid);
});

test('page header: a header without its type or with an impossible size is INVALID_PARQUET', () => {
  const invalid = (e: unknown): boolean => e instanceof ParquetError && e.code === 'INVALID_PARQUET';
  // An empty Thrift struct (stop byte only): no page type.
  assert.throws(() => pageHeader(Uint8Array.from([0]), 0, 1, 'test'), invalid);
  // Cut off in the middle of a field.
  assert.throws(() => pageHeader(Uint8Array.from([0x15]), 0, 1, 'test'), invalid);
});
