import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkDelivery } from './delivery.js';
import type { Consumption } from './member-process.js';

const produced = new Map([
  ['0:0', 'a'],
  ['0:1', 'b'],
  ['0:2', 'c'],
  ['1:0', 'd'],
  ['1:1', 'e'],
]);
const c = (member: string, partition: number, offset: number, key: string): Consumption => ({ member, partition, offset, key });

test('a clean run: everything once, no duplicates', () => {
  const r = checkDelivery({
    produced,
    consumed: [c('m1', 0, 0, 'a'), c('m1', 0, 1, 'b'), c('m1', 0, 2, 'c'), c('m2', 1, 0, 'd'), c('m2', 1, 1, 'e')],
    victimPartitions: [1],
    committedAtKill: [3, 2],
  });
  assert.deepEqual(r, { missing: [], wrong: [], allowedDuplicates: 0, zombieReads: 0, forbiddenDuplicates: [] });
});

test('the killed member\'s uncommitted records may come twice; its committed ones and survivors\' may not', () => {
  const r = checkDelivery({
    produced,
    consumed: [
      c('victim', 1, 0, 'd'),
      c('victim', 1, 1, 'e'),
      c('m1', 1, 1, 'e'), // after the victim's commit at 1: allowed
      c('m1', 1, 0, 'd'), // below the victim's commit: forbidden
      c('m1', 0, 0, 'a'),
      c('m2', 0, 0, 'a'), // partition 0 was never the victim's: forbidden
    ],
    victimPartitions: [1],
    committedAtKill: [-1, 1],
  });
  assert.equal(r.allowedDuplicates, 1);
  assert.equal(r.forbiddenDuplicates.length, 2);
  assert.match(r.forbiddenDuplicates.join('\n'), /^1:0 consumed by victim, m1/m);
  assert.match(r.forbiddenDuplicates.join('\n'), /^0:0 consumed by m1, m2/m);
  assert.deepEqual(r.missing, ['0:1', '0:2']);
});

test('a victim that never committed may have everything it read re-read', () => {
  const r = checkDelivery({ produced, consumed: [c('victim', 1, 0, 'd'), c('m1', 1, 0, 'd'), c('m1', 1, 1, 'e')], victimPartitions: [1], committedAtKill: [-1, -1] });
  assert.equal(r.allowedDuplicates, 1);
  assert.deepEqual(r.forbiddenDuplicates, []);
});

test('records with another key or never produced are reported', () => {
  const r = checkDelivery({ produced, consumed: [c('m1', 0, 0, 'x'), c('m1', 5, 0, 'z')], victimPartitions: [], committedAtKill: [] });
  assert.equal(r.wrong.length, 2);
  assert.match(r.wrong[0] ?? '', /0:0 consumed by m1 with key x, produced with a/);
  assert.match(r.wrong[1] ?? '', /never produced/);
});

test('a record its consumer committed in its generation may not come again; one whose commit was refused or acknowledged only after a rebalance may', () => {
  const at = (n: number) => 1_000 + n;
  const r = checkDelivery({
    produced,
    consumed: [
      // 0:0: m1 committed it before the rebalance, yet m2 read it again: forbidden.
      { member: 'm1', partition: 0, offset: 0, key: 'a', at: at(1), committed: true },
      { member: 'm2', partition: 0, offset: 0, key: 'a', at: at(5), committed: true },
      // 0:1: m1's commit was in flight across the rebalance; m2 re-read it from the committed offset: allowed.
      { member: 'm1', partition: 0, offset: 1, key: 'b', at: at(2), committed: false },
      { member: 'm2', partition: 0, offset: 1, key: 'b', at: at(6), committed: true },
      // 0:2: m2 consumed and committed it, and m1 (listed first here) had read it earlier without a commit: allowed.
      { member: 'm2', partition: 0, offset: 2, key: 'c', at: at(7), committed: true },
      { member: 'm1', partition: 0, offset: 2, key: 'c', at: at(3), committed: false },
      // 1:0: read three times; the second reader committed it, so the third read is forbidden.
      { member: 'm1', partition: 1, offset: 0, key: 'd', at: at(1), committed: false },
      { member: 'm2', partition: 1, offset: 0, key: 'd', at: at(4), committed: true },
      { member: 'm3', partition: 1, offset: 0, key: 'd', at: at(9), committed: false },
      { member: 'm3', partition: 1, offset: 1, key: 'e', at: at(9), committed: false },
    ],
    victimPartitions: [],
    committedAtKill: [3, 2],
  });
  assert.equal(r.allowedDuplicates, 2);
  assert.deepEqual(r.forbiddenDuplicates.map((d) => d.split(' ')[0]), ['0:0', '1:0']);
  assert.match(r.forbiddenDuplicates[0] ?? '', /consumed by m1 \(committed it\), m2/);
});

test('a fenced member\'s zombie read after another member committed the record is allowed only if its own commit did not land', () => {
  const at = (n: number) => 1_000 + n;
  const consumed: Consumption[] = [
    // 0:0: live committed it while the zombie was frozen; the thawed zombie handed it out again, commit refused.
    { member: 'live', partition: 0, offset: 0, key: 'a', at: at(1), committed: true },
    { member: 'zombie', partition: 0, offset: 0, key: 'a', at: at(5), committed: false },
    // 0:1: the same, but the zombie's commit was acknowledged: forbidden whatever the caller marks.
    { member: 'live', partition: 0, offset: 1, key: 'b', at: at(2), committed: true },
    { member: 'zombie', partition: 0, offset: 1, key: 'b', at: at(6), committed: true },
    // 0:2: a live member's re-read after a commit stays forbidden.
    { member: 'zombie', partition: 0, offset: 2, key: 'c', at: at(3), committed: true },
    { member: 'live', partition: 0, offset: 2, key: 'c', at: at(7), committed: true },
  ];
  const zombieRead = (x: Consumption) => x.member === 'zombie' && (x.at ?? 0) >= at(4);
  const r = checkDelivery({ produced, consumed, victimPartitions: [0], committedAtKill: [0, -1], zombieRead });
  assert.equal(r.zombieReads, 1);
  assert.equal(r.allowedDuplicates, 1);
  assert.deepEqual(r.forbiddenDuplicates.map((d) => d.split(' ')[0]), ['0:1', '0:2']);
  const unmarked = checkDelivery({ produced, consumed, victimPartitions: [0], committedAtKill: [0, -1] });
  assert.deepEqual(unmarked.forbiddenDuplicates.map((d) => d.split(' ')[0]), ['0:0', '0:1', '0:2']);
});
