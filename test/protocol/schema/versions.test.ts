import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inVersionRange, isEmptyRange, listVersions, parseVersionRange } from '../../../protocol/schema/versions.js';

test('version ranges parse in all four notations', () => {
  assert.deepEqual(parseVersionRange('3'), { min: 3, max: 3 });
  assert.deepEqual(parseVersionRange('3-7'), { min: 3, max: 7 });
  assert.deepEqual(parseVersionRange('3+'), { min: 3, max: Infinity });
  assert.ok(isEmptyRange('none'));
  assert.ok(isEmptyRange(undefined));
  assert.ok(!isEmptyRange('0'));
});

test('membership', () => {
  assert.ok(inVersionRange('3-7', 3));
  assert.ok(inVersionRange('3-7', 7));
  assert.ok(!inVersionRange('3-7', 2));
  assert.ok(!inVersionRange('3-7', 8));
  assert.ok(inVersionRange('3+', 1000));
  assert.ok(!inVersionRange('3+', 2));
  assert.ok(inVersionRange('0', 0));
  assert.ok(!inVersionRange('0', 1));
  assert.ok(!inVersionRange('none', 0));
  assert.ok(!inVersionRange(undefined, 0));
});

test('listVersions enumerates a bounded range and refuses an open one', () => {
  assert.deepEqual(listVersions('2-5'), [2, 3, 4, 5]);
  assert.deepEqual(listVersions('none'), []);
  assert.throws(() => listVersions('2+'), /open-ended/);
});

test('malformed ranges are rejected', () => {
  for (const bad of ['x', '3-', '-3', '7-3', '1.5', '3++']) assert.throws(() => parseVersionRange(bad), /invalid version range/, bad);
});
