// RFC 3339 texts to Iceberg values and back; the canonical form is Date.prototype.toISOString()'s.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDate, formatDateTime, formatTime, parseDate, parseDateTime, parseTime } from '../../../tiering/typed/temporal-text.js';

test('dates: days since 1970-01-01, leap days, no impossible dates', () => {
  assert.equal(parseDate('1970-01-01'), 0);
  assert.equal(parseDate('1969-12-31'), -1);
  assert.equal(parseDate('2024-02-29'), 19_782);
  assert.equal(parseDate('2023-02-29'), undefined);
  assert.equal(parseDate('2024-13-01'), undefined);
  assert.equal(parseDate('2024-1-01'), undefined);
  for (const d of [-719_162, -1, 0, 19_782, 2_932_896]) assert.equal(parseDate(formatDate(d)), d);
});

test('date-times: offsets, fractions, and the canonical toISOString form', () => {
  const ms = Date.UTC(2024, 1, 29, 12, 0, 0, 5);
  assert.equal(parseDateTime('2024-02-29T12:00:00.005Z'), BigInt(ms) * 1000n);
  assert.equal(parseDateTime('2024-02-29T13:00:00.005+01:00'), BigInt(ms) * 1000n);
  assert.equal(parseDateTime('2024-02-29t12:00:00.005000999z'), BigInt(ms) * 1000n, 'digits past microseconds are dropped');
  assert.equal(parseDateTime('2024-02-29T12:00:00.000001Z'), BigInt(Date.UTC(2024, 1, 29, 12)) * 1000n + 1n);
  assert.equal(parseDateTime('2024-02-29 12:00:00'), undefined, 'an offset is required');
  assert.equal(parseDateTime('2024-02-30T12:00:00Z'), undefined);
  assert.equal(formatDateTime(BigInt(ms) * 1000n), new Date(ms).toISOString());
  assert.equal(formatDateTime(1n), '1970-01-01T00:00:00.000001Z');
  assert.equal(formatDateTime(-1n), '1969-12-31T23:59:59.999999Z');
  assert.equal(formatDateTime(-1000n), '1969-12-31T23:59:59.999Z');
  for (const v of [0n, -1n, 1_700_000_000_123_456n, -62_135_596_800_000_000n]) assert.equal(parseDateTime(formatDateTime(v)), v);
});

test('times: microseconds since midnight; the fraction only when there is one', () => {
  assert.equal(parseTime('00:00:00'), 0n);
  assert.equal(parseTime('23:59:59.999999'), 86_399_999_999n);
  assert.equal(parseTime('12:34:56.5Z'), 45_296_500_000n);
  assert.equal(parseTime('24:00:00'), undefined);
  assert.equal(formatTime(0n), '00:00:00');
  assert.equal(formatTime(45_296_500_000n), '12:34:56.500');
  assert.equal(formatTime(1n), '00:00:00.000001');
  for (const v of [0n, 1n, 45_296_789_000n, 86_399_999_999n]) assert.equal(parseTime(formatTime(v)), v);
});
