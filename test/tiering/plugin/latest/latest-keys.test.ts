import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LatestKeys, type DeadRow } from '../../../../tiering/plugin/latest/latest-keys.js';
import { rowReading } from '../../../../tiering/plugin/latest/row-reading.js';
import type { KeyedRow } from '../../../../tiering/plugin/latest/segment-rows.js';

let offset = 0;
function row(key: string | null, value: unknown, file = 'f1'): KeyedRow {
  const v = value === null ? null : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
  const o = offset++;
  return { key: key === null ? null : Buffer.from(key), offset: o, tombstone: v === null, value: v, file, row: o };
}

function run(keys: LatestKeys, rows: readonly KeyedRow[]): DeadRow[] {
  const dead: DeadRow[] = [];
  for (const r of rows) keys.apply(r, (d) => dead.push({ file: d.file, row: d.row }));
  return dead;
}

test('offset order: the last record of a key is live; tombstones and keyless records are not', () => {
  offset = 0;
  const keys = new LatestKeys(rowReading({ cdc: 'none' }));
  const dead = run(keys, [row('a', 'a1'), row('b', 'b1'), row('a', 'a2'), row(null, 'x'), row('b', null), row('c', 'c1')]);
  assert.deepEqual(dead.map((d) => d.row).sort((x, y) => x - y), [0, 1, 3, 4]);
  assert.deepEqual([...keys.liveRows()], [['f1', [2, 5]]]);
  // A later record for a deleted key brings it back; the tombstone row was already dead.
  const more = run(keys, [row('b', 'b2')]);
  assert.deepEqual(more, []);
  assert.deepEqual(keys.liveRows().get('f1'), [2, 5, 6]);
});

test('debezium: op d deletes, c/u/r upsert, {schema, payload} envelopes are unwrapped', () => {
  offset = 0;
  const keys = new LatestKeys(rowReading({ cdc: 'debezium' }));
  run(keys, [
    row('1', { op: 'c', after: { id: 1 } }),
    row('2', { schema: {}, payload: { op: 'r', after: { id: 2 } } }),
    row('1', { op: 'u', before: { id: 1 }, after: { id: 1, v: 2 } }),
    row('2', { schema: {}, payload: { op: 'd', before: { id: 2 }, after: null } }),
    row('2', null),
    row('3', 'not json'),
  ]);
  assert.deepEqual(keys.liveRows().get('f1'), [2, 5]);
});

test('an ordering field: a late event changes nothing, events without the field apply in offset order', () => {
  offset = 0;
  const keys = new LatestKeys(rowReading({ cdc: 'debezium', orderField: 'ts_ms' }));
  const dead = run(keys, [
    row('1', { op: 'c', ts_ms: 100 }), // 0
    row('1', { op: 'u', ts_ms: 300 }), // 1
    row('1', { op: 'u', ts_ms: 200 }), // 2: late, dead at once
    row('2', { op: 'c', ts_ms: 50 }), // 3
    row('2', { op: 'd', ts_ms: 40 }), // 4: a late delete: the row stays
    row('3', { op: 'c', source: { lsn: 1 } }), // 5: no ts_ms: applies
    row('3', { op: 'u', ts_ms: '7' }), // 6: numeric text counts
    row('1', { op: 'd', ts_ms: 400 }), // 7: deletes 1
    row('1', null), // 8: its tombstone keeps the delete's order
    row('1', { op: 'u', ts_ms: 350 }), // 9: late after the delete: stays deleted
  ]);
  assert.deepEqual(dead.map((d) => d.row).sort((x, y) => x - y), [0, 1, 2, 4, 5, 7, 8, 9]);
  assert.deepEqual(keys.liveRows().get('f1'), [3, 6]);
});
