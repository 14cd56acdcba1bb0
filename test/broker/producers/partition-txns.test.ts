import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PartitionTxns } from '../../../broker/producers/partition-txns.js';

test('the LSO is the first offset of the earliest open transaction, else the log end', () => {
  const txns = new PartitionTxns();
  assert.equal(txns.lastStableOffset(10), 10);
  txns.recordData(1n, 4, 5);
  txns.recordData(2n, 2, 2);
  txns.recordData(1n, 7, 8);
  assert.equal(txns.lastStableOffset(10), 2);
  txns.recordMarker(2n, 9, true);
  assert.equal(txns.lastStableOffset(10), 4);
  assert.deepEqual(txns.openTxn(1n), { producerId: 1n, firstOffset: 4, lastOffset: 8, reserved: false });
});

test('reserve holds the LSO at a lower bound until the batch is recorded, and undo releases it', () => {
  const txns = new PartitionTxns();
  const undo = txns.reserve(1n, 5);
  assert.ok(undo);
  assert.equal(txns.lastStableOffset(5), 5);
  assert.equal(txns.reserve(1n, 6), undefined, 'already open');
  txns.recordData(1n, 5, 7);
  undo();
  assert.equal(txns.lastStableOffset(8), 5, 'undo after the batch landed changes nothing');
  const other = txns.reserve(2n, 8);
  other?.();
  assert.equal(txns.openTxn(2n), undefined);
});

test('aborted transactions overlapping a range, and a marker without an open transaction', () => {
  const txns = new PartitionTxns();
  txns.recordData(1n, 0, 2);
  txns.recordMarker(1n, 3, false);
  txns.recordData(2n, 4, 4);
  txns.recordData(1n, 5, 6);
  txns.recordMarker(2n, 7, false);
  txns.recordMarker(1n, 8, false);
  assert.equal(txns.recordMarker(3n, 9, false), undefined, 'nothing open: no entry');
  assert.deepEqual(txns.abortedOverlapping(0, 1).map((a) => [a.producerId, a.firstOffset]), [[1n, 0]]);
  assert.deepEqual(txns.abortedOverlapping(4, 5).map((a) => a.firstOffset), [4]);
  assert.deepEqual(txns.abortedOverlapping(4, 10).map((a) => a.firstOffset), [4, 5]);
  assert.deepEqual(txns.abortedOverlapping(9, 10), []);
  const copy = PartitionTxns.fromJSON(JSON.parse(JSON.stringify(txns.toJSON())) as { open: unknown; aborted: unknown });
  assert.deepEqual(copy.allAborted(), txns.allAborted());
  txns.truncateAbortedBefore(8);
  assert.deepEqual(txns.allAborted().map((a) => a.lastOffset), [8]);
  assert.throws(() => PartitionTxns.fromJSON({ open: [['x', 1, 2]] }), TypeError);
});
