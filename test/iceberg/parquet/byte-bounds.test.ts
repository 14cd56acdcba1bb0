// The string/binary chunk bounds the native writer tracks on value prefixes (byte-bounds.ts) against the
// definition: the exact min and max of the values (unsigned byte order, which is UTF-8 code point order for
// strings), stored whole when at most 64 bytes, else truncated as Iceberg's truncate(L) does (a prefix of
// 64 characters or bytes for the min; for the max that prefix with its last character or byte incremented,
// or the whole max when none can be). Seeded random values, weighted towards the edges (lengths around 64,
// 65, 256 and 257 bytes, runs of 0xff and U+10FFFF, 4-byte characters, shared prefixes), in random order
// and in increasing order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteBounds, STATS_PREFIX, type Bound } from '../../../iceberg/parquet/byte-bounds.js';
import { truncateLowerBound, truncateUpperBound } from '../../../iceberg/metrics.js';
import { prng, randInt, type Rand } from '../../protocol/helpers/random-values.js';

type Kind = 'string' | 'binary';

/** What the bounds must be: computed from the exact min and max, as the writer did before tracking prefixes. */
function reference(kind: Kind, values: readonly Buffer[]): { lower: Bound; upper: Bound } {
  let min = values[0]!;
  let max = values[0]!;
  for (const v of values) {
    if (Buffer.compare(v, min) < 0) min = v;
    if (Buffer.compare(v, max) > 0) max = v;
  }
  const lower: Bound = min.length > STATS_PREFIX ? { bytes: truncateLowerBound(kind, min, STATS_PREFIX), exact: false } : { bytes: min, exact: true };
  let upper: Bound = { bytes: max, exact: true };
  if (max.length > STATS_PREFIX) {
    const up = truncateUpperBound(kind, max, STATS_PREFIX);
    if (up !== undefined) upper = { bytes: up, exact: false };
  }
  return { lower, upper };
}

const LENGTHS = [0, 1, 2, 8, 63, 64, 65, 66, 100, 255, 256, 257, 258, 300, 1000];

function randomBinary(rand: Rand, shared: Buffer): Buffer {
  const n = LENGTHS[randInt(rand, 0, LENGTHS.length - 1)]! + randInt(rand, 0, 1);
  const b = Buffer.alloc(n);
  const fill = [0x00, 0xff, 0xfe, 0x7f, -1][randInt(rand, 0, 4)]!;
  const from = rand() < 0.5 ? Math.min(n, randInt(rand, 0, shared.length)) : 0;
  shared.copy(b, 0, 0, from);
  for (let i = from; i < n; i++) b[i] = fill >= 0 && rand() < 0.9 ? fill : randInt(rand, 0, 255);
  return b;
}

const CHARS = ['a', 'z', '\u007f', 'é', '中', '\u{10ffff}', '\u{10fffe}', '𝄞', '\uffff', '\ud7ff'];

function randomString(rand: Rand, shared: string): Buffer {
  const n = LENGTHS[randInt(rand, 0, LENGTHS.length - 1)]! >> randInt(rand, 0, 2);
  const fill = CHARS[randInt(rand, 0, CHARS.length - 1)]!;
  let s = rand() < 0.5 ? [...shared].slice(0, randInt(rand, 0, 80)).join('') : '';
  for (let i = 0; i < n; i++) s += rand() < 0.85 ? fill : CHARS[randInt(rand, 0, CHARS.length - 1)]!;
  return Buffer.from(s, 'utf8');
}

function tracked(kind: Kind, values: readonly Buffer[]): { lower: Bound; upper: Bound } {
  // As the writer adds them: runs of values back to back in one buffer (an Arrow binary column), settled
  // after each run, the buffer then overwritten by the next run.
  const b = new ByteBounds(kind, true);
  const scratch = Buffer.alloc(values.reduce((n, v) => n + v.length, 0));
  for (let i = 0; i < values.length; ) {
    const run = values.slice(i, i + 1 + (i % 4));
    scratch.fill(0xaa);
    let at = 0;
    for (const v of run) at += v.copy(scratch, at);
    at = 0;
    for (const v of run) {
      b.add(scratch, at, at + v.length);
      at += v.length;
    }
    b.settle();
    i += run.length;
  }
  scratch.fill(0x55);
  return { lower: b.lower()!, upper: b.upper()! };
}

function same(kind: Kind, values: readonly Buffer[], what: string): void {
  const want = reference(kind, values);
  const got = tracked(kind, values);
  assert.deepEqual({ bytes: Buffer.from(got.lower.bytes).toString('hex'), exact: got.lower.exact }, { bytes: Buffer.from(want.lower.bytes).toString('hex'), exact: want.lower.exact }, `${what}: lower bound`);
  assert.deepEqual({ bytes: Buffer.from(got.upper.bytes).toString('hex'), exact: got.upper.exact }, { bytes: Buffer.from(want.upper.bytes).toString('hex'), exact: want.upper.exact }, `${what}: upper bound`);
  // And they bound every value.
  for (const v of values) {
    assert.ok(Buffer.compare(Buffer.from(got.lower.bytes), v) <= 0, `${what}: lower bound above a value`);
    assert.ok(Buffer.compare(Buffer.from(got.upper.bytes), v) >= 0, `${what}: upper bound below a value`);
  }
}

test('byte bounds: the same bounds as truncating the exact min and max, for random binary and string values', () => {
  for (let seed = 1; seed <= 400; seed++) {
    const rand = prng(seed);
    const kind: Kind = seed % 2 === 0 ? 'binary' : 'string';
    const fill = [0xff, 0x00, 0x41][seed % 3]!;
    const values = Array.from({ length: randInt(rand, 1, 40) }, () => (kind === 'binary' ? randomBinary(rand, Buffer.alloc(300, fill)) : randomString(rand, '\u{10ffff}'.repeat(80))));
    same(kind, values, `seed ${seed} (${kind})`);
    same(kind, [...values].sort(Buffer.compare), `seed ${seed} (${kind}, increasing)`);
    same(kind, [...values].sort(Buffer.compare).reverse(), `seed ${seed} (${kind}, decreasing)`);
  }
});

test('byte bounds: a max with no shorter upper bound is kept whole and exact, even when a longer value shares its prefix', () => {
  const ff = (n: number, tail = 0xff): Buffer => Buffer.concat([Buffer.alloc(n, 0xff), Buffer.from([tail])]);
  for (const values of [
    [ff(64), ff(300, 0x01), ff(65)], // the longest one is the largest
    [ff(65), ff(64, 0x00)], // exactly the prefix kept, then a value sharing it
    [Buffer.alloc(64, 0xff), Buffer.alloc(65, 0xff)],
    [Buffer.alloc(65, 0xff), Buffer.alloc(64, 0xff)],
  ]) {
    const got = tracked('binary', values);
    const max = values.reduce((a, b) => (Buffer.compare(a, b) >= 0 ? a : b));
    assert.equal(Buffer.from(got.upper.bytes).toString('hex'), max.toString('hex'));
    assert.equal(got.upper.exact, true);
    same('binary', values, 'all-0xff prefixes');
  }
  const top = (n: number, tail: string): Buffer => Buffer.from('\u{10ffff}'.repeat(n) + tail, 'utf8');
  same('string', [top(64, 'a'), top(70, 'b'), top(64, '')], 'U+10FFFF prefixes');
  same('string', [top(65, ''), top(64, 'z')], 'U+10FFFF prefixes');
});

test('byte bounds: long values get truncated, inexact bounds of at most 64 characters or bytes', () => {
  const b = new ByteBounds('string', true);
  const v = Buffer.from('é'.repeat(100), 'utf8'); // 200 bytes, 100 characters
  b.add(v, 0, v.length);
  assert.deepEqual(b.lower(), { bytes: new Uint8Array(Buffer.from('é'.repeat(64), 'utf8')), exact: false });
  assert.deepEqual(b.upper(), { bytes: new Uint8Array(Buffer.from('é'.repeat(63) + 'ê', 'utf8')), exact: false });
  const bin = new ByteBounds('binary', true);
  const w = Buffer.alloc(100, 7);
  bin.add(w, 0, w.length);
  assert.deepEqual(bin.lower(), { bytes: new Uint8Array(64).fill(7), exact: false });
  assert.deepEqual(bin.upper(), { bytes: new Uint8Array([...new Uint8Array(63).fill(7), 8]), exact: false });
  bin.reset();
  assert.equal(bin.lower(), undefined);
  assert.equal(bin.upper(), undefined);
});

test('byte bounds: fixed-width values are kept whole', () => {
  const b = new ByteBounds('binary', false, 16);
  const vals = Buffer.concat([Buffer.alloc(16, 3), Buffer.alloc(16, 0xff), Buffer.alloc(16, 1)]);
  for (let k = 0; k < 3; k++) b.add(vals, 16 * k, 16 * (k + 1));
  assert.deepEqual(b.lower(), { bytes: new Uint8Array(16).fill(1), exact: true });
  assert.deepEqual(b.upper(), { bytes: new Uint8Array(16).fill(0xff), exact: true });
});
