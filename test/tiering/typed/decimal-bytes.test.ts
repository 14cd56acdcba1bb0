// Unscaled decimals as big-endian two's complement: the minimal form Java's BigInteger.toByteArray() gives,
// and fixed sizes sign-extended.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bigIntToBytes, bytesToBigInt } from '../../../tiering/typed/decimal-bytes.js';

const hex = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString('hex'));

test('minimal two’s complement, as BigInteger.toByteArray()', () => {
  const cases: [bigint, string][] = [[0n, '00'], [1n, '01'], [-1n, 'ff'], [127n, '7f'], [128n, '0080'], [-128n, '80'], [-129n, 'ff7f'], [-500n, 'fe0c'], [2n ** 63n, '008000000000000000']];
  for (const [n, h] of cases) {
    assert.equal(hex(bigIntToBytes(n)), h, `${n}`);
    assert.equal(bytesToBigInt(Buffer.from(h, 'hex')), n, h);
  }
  assert.equal(bytesToBigInt(new Uint8Array(0)), 0n);
  assert.equal(bytesToBigInt(Buffer.from('ffff', 'hex')), -1n, 'non-minimal forms read too');
});

test('fixed sizes: sign-extended, undefined when the value does not fit', () => {
  assert.equal(hex(bigIntToBytes(-2n, 4)), 'fffffffe');
  assert.equal(hex(bigIntToBytes(256n, 3)), '000100');
  assert.equal(bigIntToBytes(128n, 1), undefined);
  assert.equal(hex(bigIntToBytes(-128n, 1)), '80');
});
