import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyTransform, hashValue, parseTransform, resultType, transformToString, bucketOf } from '../../iceberg/transforms.js';
import { IcebergError } from '../../iceberg/types.js';

const days = (iso: string): number => Date.parse(`${iso}T00:00:00Z`) / 86_400_000;
const micros = (iso: string): bigint => BigInt(Date.parse(iso)) * 1000n;

test('murmur3 matches the spec Appendix B test vectors', () => {
  const vectors: [string, Parameters<typeof hashValue>[1], number][] = [
    ['int', 34, 2017239379],
    ['long', 34n, 2017239379],
    ['decimal(4,2)', 1420n, -500754589],
    ['date', days('2017-11-16'), -653330422],
    ['time', 81_068_000_000, -662762989],
    ['timestamp', micros('2017-11-16T22:31:08Z'), -2047944441],
    ['timestamp', micros('2017-11-16T22:31:08Z') + 1n, -1207196810],
    ['timestamptz', micros('2017-11-16T14:31:08-08:00') + 1n, -1207196810],
    ['timestamp_ns', micros('2017-11-16T22:31:08Z') * 1000n + 1001n, -1207196810],
    ['timestamptz_ns', micros('2017-11-16T22:31:08Z') * 1000n, -2047944441],
    ['string', 'iceberg', 1210000089],
    ['uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7', 1488055340],
    ['fixed[4]', Uint8Array.from([0, 1, 2, 3]), -188683207],
    ['binary', Uint8Array.from([0, 1, 2, 3]), -188683207],
    ['boolean', true, 1392991556],
    ['float', 1, -142385009],
    ['double', 0, 1669671676],
    ['double', -0, 1669671676],
    ['string', '34', -427558391],
  ];
  for (const [type, value, expected] of vectors) assert.equal(hashValue(type, value), expected, `${type} ${String(value)}`);
});

test('bucket discards the sign bit before the modulo', () => {
  assert.equal(bucketOf('int', 34, 16), 2017239379 % 16);
  assert.equal(applyTransform(parseTransform('bucket[100]'), 'date', days('2017-11-16')), (-653330422 & 0x7fffffff) % 100);
  assert.equal(applyTransform(parseTransform('bucket[16]'), 'long', null), null);
});

test('truncate follows the spec examples, including negatives and code points', () => {
  assert.equal(applyTransform(parseTransform('truncate[10]'), 'int', 1), 0);
  assert.equal(applyTransform(parseTransform('truncate[10]'), 'int', -1), -10);
  assert.equal(applyTransform(parseTransform('truncate[10]'), 'long', -1n), -10n);
  assert.equal(applyTransform(parseTransform('truncate[50]'), 'decimal(4,2)', 1065n), 1050n);
  assert.equal(applyTransform(parseTransform('truncate[3]'), 'string', 'iceberg'), 'ice');
  assert.equal(applyTransform(parseTransform('truncate[2]'), 'string', '😀a😀'), '😀a');
  assert.deepEqual(applyTransform(parseTransform('truncate[3]'), 'binary', Uint8Array.from([1, 2, 3, 4, 5])), Uint8Array.from([1, 2, 3]));
});

test('time transforms count from 1970 and floor before the epoch', () => {
  const ts = micros('2017-11-16T22:31:08Z');
  assert.equal(applyTransform(parseTransform('year'), 'timestamptz', ts), 47);
  assert.equal(applyTransform(parseTransform('month'), 'timestamptz', ts), 47 * 12 + 10);
  assert.equal(applyTransform(parseTransform('day'), 'timestamp', ts), days('2017-11-16'));
  assert.equal(applyTransform(parseTransform('hour'), 'timestamp', ts), Math.floor(Date.parse('2017-11-16T22:31:08Z') / 3_600_000));
  assert.equal(applyTransform(parseTransform('day'), 'timestamp_ns', ts * 1000n), days('2017-11-16'));
  assert.equal(applyTransform(parseTransform('year'), 'date', days('1969-12-31')), -1);
  assert.equal(applyTransform(parseTransform('month'), 'date', days('1969-12-31')), -1);
  assert.equal(applyTransform(parseTransform('hour'), 'timestamp', -1n), -1);
  assert.equal(applyTransform(parseTransform('day'), 'timestamp', -1n), -1);
  assert.equal(applyTransform(parseTransform('void'), 'string', 'x'), null);
  assert.equal(applyTransform(parseTransform('identity'), 'string', 'x'), 'x');
});

test('result types and applicability follow the spec table', () => {
  assert.equal(resultType(parseTransform('bucket[8]'), 'string'), 'int');
  assert.equal(resultType(parseTransform('day'), 'timestamptz'), 'date');
  assert.equal(resultType(parseTransform('truncate[4]'), 'decimal(9, 2)'), 'decimal(9,2)');
  assert.equal(resultType(parseTransform('identity'), 'uuid'), 'uuid');
  assert.throws(() => resultType(parseTransform('hour'), 'date'), (e: unknown) => e instanceof IcebergError && e.code === 'INVALID_TRANSFORM');
  assert.throws(() => resultType(parseTransform('bucket[2]'), 'double'), /cannot be applied to a double column/);
  assert.throws(() => resultType(parseTransform('truncate[2]'), 'uuid'), /cannot be applied/);
});

test('transform strings parse and print; bad parameters are rejected, unknown names kept', () => {
  for (const s of ['identity', 'bucket[16]', 'truncate[20]', 'year', 'month', 'day', 'hour', 'void']) assert.equal(transformToString(parseTransform(s)), s);
  assert.deepEqual(parseTransform('zorder'), { kind: 'unknown', name: 'zorder' });
  for (const s of ['bucket[0]', 'bucket[-1]', 'bucket', 'truncate[x]', 'bucket[99999999999]', 'Day', '']) {
    assert.throws(() => parseTransform(s), (e: unknown) => e instanceof IcebergError && e.code === 'INVALID_TRANSFORM', s);
  }
});
