import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  compareSingleValues,
  decimalFromBytes,
  decimalToBytes,
  fromSingleValue,
  toSingleValue,
  truncateLowerBound,
  truncateUpperBound,
} from '../../iceberg/metrics.js';

const hex = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString('hex') : undefined);
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array | undefined): string | undefined => (b ? new TextDecoder().decode(b) : undefined);

test('single-value serialization follows Appendix D byte for byte', () => {
  assert.equal(hex(toSingleValue('boolean', true)), '01');
  assert.equal(hex(toSingleValue('int', 1)), '01000000');
  assert.equal(hex(toSingleValue('int', -2)), 'feffffff');
  assert.equal(hex(toSingleValue('date', 19000)), '384a0000');
  assert.equal(hex(toSingleValue('long', 1n)), '0100000000000000');
  assert.equal(hex(toSingleValue('timestamptz', 0x0102030405060708n)), '0807060504030201');
  assert.equal(hex(toSingleValue('float', 1)), '0000803f');
  assert.equal(hex(toSingleValue('double', -0)), '0000000000000080');
  assert.equal(hex(toSingleValue('string', 'é')), 'c3a9');
  assert.equal(hex(toSingleValue('uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7')), 'f79c3e09677c4bbda4793f349cb785e7');
  // Decimals: unscaled, big-endian two's complement, minimal bytes.
  assert.equal(hex(toSingleValue('decimal(9,2)', 1234n)), '04d2');
  assert.equal(hex(toSingleValue('decimal(9,2)', 127n)), '7f');
  assert.equal(hex(toSingleValue('decimal(9,2)', 128n)), '0080');
  assert.equal(hex(toSingleValue('decimal(9,2)', -1n)), 'ff');
  assert.equal(hex(toSingleValue('decimal(9,2)', -128n)), '80');
  assert.equal(hex(toSingleValue('decimal(9,2)', -129n)), 'ff7f');
  assert.equal(hex(toSingleValue('decimal(9,2)', 0n)), '00');
  for (const v of [0n, 1n, -1n, 255n, -256n, 10n ** 37n, -(10n ** 37n)]) assert.equal(decimalFromBytes(decimalToBytes(v)), v);
  for (const [t, v] of [['int', -7], ['long', -(2n ** 63n)], ['double', 2.5], ['string', 'ünï'], ['date', 3], ['boolean', false]] as const) {
    assert.deepEqual(fromSingleValue(t, toSingleValue(t, v)), v);
  }
  assert.throws(() => fromSingleValue('long', Uint8Array.of(1, 2)), /8 bytes/);
});

test('bounds order like the values: signed numbers, -0.0 before +0.0, unsigned bytes', () => {
  const c = (t: string, a: Parameters<typeof toSingleValue>[1], b: Parameters<typeof toSingleValue>[1]) => Math.sign(compareSingleValues(t, toSingleValue(t, a), toSingleValue(t, b)));
  assert.equal(c('int', -1, 1), -1);
  assert.equal(c('long', -(2n ** 40n), 3n), -1);
  assert.equal(c('double', -0, 0), -1);
  assert.equal(c('decimal(10,2)', -129n, 5n), -1);
  assert.equal(c('binary', Uint8Array.of(0x80), Uint8Array.of(0x7f, 0xff)), 1);
  assert.equal(c('string', 'a', 'ab'), -1);
});

test('truncate(16): lower bounds are prefixes, upper bounds prefixes rounded up, by characters for strings', () => {
  assert.equal(dec(truncateLowerBound('string', enc('abcdefghijklmnopqrstuvwxyz'))), 'abcdefghijklmnop');
  assert.equal(dec(truncateUpperBound('string', enc('abcdefghijklmnopqrstuvwxyz'))), 'abcdefghijklmnoq');
  assert.equal(dec(truncateUpperBound('string', enc('short'))), 'short');
  // 16 characters, not 16 bytes: two-byte characters are kept whole.
  const accents = 'é'.repeat(20);
  assert.equal(dec(truncateLowerBound('string', enc(accents))), 'é'.repeat(16));
  assert.equal(dec(truncateUpperBound('string', enc(accents))), 'é'.repeat(15) + 'ê');
  // The last character cannot grow: carry into the one before.
  const maxCp = String.fromCodePoint(0x10ffff);
  assert.equal(dec(truncateUpperBound('string', enc('a'.repeat(15) + maxCp + 'zz'))), 'a'.repeat(14) + 'b');
  assert.equal(truncateUpperBound('string', enc(maxCp.repeat(17))), undefined);
  // Surrogates are skipped: U+D7FF rounds up to U+E000.
  assert.equal(dec(truncateUpperBound('string', enc('\uD7FF'.repeat(17)))), '\uD7FF'.repeat(15) + '\uE000');
  assert.equal(hex(truncateLowerBound('binary', new Uint8Array(20).fill(7))), '07'.repeat(16));
  assert.equal(hex(truncateUpperBound('binary', Uint8Array.from([...new Array<number>(15).fill(1), 0xff, 0xff, 3]))), '01'.repeat(14) + '02');
  assert.equal(truncateUpperBound('binary', new Uint8Array(17).fill(0xff)), undefined);
  assert.equal(hex(truncateUpperBound('binary', Uint8Array.of(1, 2, 3), 2)), '0103');
});
