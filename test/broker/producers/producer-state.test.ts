import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, KafkaError } from '../../../protocol/error-codes.js';
import { incrementSequence, MAX_CACHED_BATCHES, ProducerStateTable, type ProducerBatch } from '../../../broker/producers/producer-state.js';

const PID = 7n;
const batch = (firstSeq: number, count = 1, epoch = 0, producerId = PID): ProducerBatch => ({ producerId, epoch, firstSeq, offsetCount: count });

function rejects(table: ProducerStateTable, b: ProducerBatch, code: number) {
  assert.throws(() => table.check(b), (e: unknown) => e instanceof KafkaError && e.code === code);
}

/** Appends batches of `count` records with consecutive sequences at consecutive offsets. */
function appendRun(table: ProducerStateTable, n: number, count = 2, epoch = 0, startSeq = 0, startOffset = 0) {
  let seq = startSeq;
  let offset = startOffset;
  for (let i = 0; i < n; i++) {
    const b = batch(seq, count, epoch);
    assert.equal(table.check(b).kind, 'append');
    table.record(b, offset, offset + count - 1, 1000);
    seq = incrementSequence(seq, count);
    offset += count;
  }
  return { seq, offset };
}

test('in-sequence batches append; an exact retry of any of the last 5 is a duplicate with its original offsets', () => {
  const table = new ProducerStateTable();
  appendRun(table, 6, 2);
  for (let i = 1; i < 6; i++) {
    const verdict = table.check(batch(i * 2, 2));
    assert.equal(verdict.kind, 'duplicate', `batch ${i}`);
    assert.deepEqual(verdict.kind === 'duplicate' ? verdict.batch : undefined, { firstSeq: i * 2, lastSeq: i * 2 + 1, firstOffset: i * 2, lastOffset: i * 2 + 1 });
  }
  assert.equal(table.get(PID)?.batches.length, MAX_CACHED_BATCHES);
  // The first batch fell out of the window: a resend is a duplicate sequence, not a new append.
  rejects(table, batch(0, 2), ErrorCode.DUPLICATE_SEQUENCE_NUMBER);
  // Same first sequence but a different range is not the cached batch, and lies behind: duplicate sequence.
  rejects(table, batch(10, 1), ErrorCode.DUPLICATE_SEQUENCE_NUMBER);
});

test('a gap is OUT_OF_ORDER_SEQUENCE_NUMBER; the next sequence is accepted', () => {
  const table = new ProducerStateTable();
  const { seq } = appendRun(table, 2, 3);
  rejects(table, batch(seq + 1), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  rejects(table, batch(seq + 1000), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal(table.check(batch(seq)).kind, 'append');
});

test('epochs: older is INVALID_PRODUCER_EPOCH, newer must start at 0 and resets the window', () => {
  const table = new ProducerStateTable();
  appendRun(table, 2, 1, 3);
  rejects(table, batch(2, 1, 2), ErrorCode.INVALID_PRODUCER_EPOCH);
  rejects(table, batch(2, 1, 4), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  const fresh = batch(0, 1, 4);
  assert.equal(table.check(fresh).kind, 'append');
  table.record(fresh, 10, 10, 2000);
  assert.deepEqual(table.get(PID)?.batches, [{ firstSeq: 0, lastSeq: 0, firstOffset: 10, lastOffset: 10 }]);
  assert.equal(table.get(PID)?.epoch, 4);
  rejects(table, batch(1, 1, 3), ErrorCode.INVALID_PRODUCER_EPOCH);
});

test('an unknown producer is accepted at any sequence (Kafka since KIP-360)', () => {
  const table = new ProducerStateTable();
  assert.equal(table.check(batch(42, 1, 0, 99n)).kind, 'append');
  assert.equal(table.check(batch(0, 1, 5, 100n)).kind, 'append');
});

test('sequences wrap at Int32.MAX', () => {
  assert.equal(incrementSequence(0x7fffffff, 1), 0);
  assert.equal(incrementSequence(0x7ffffffe, 3), 1);
  const table = new ProducerStateTable();
  const { seq } = appendRun(table, 3, 2, 0, 0x7ffffffc);
  assert.equal(seq, 2, 'three 2-record batches from MAX-3 end at 1');
  const wrapped = table.get(PID)?.batches.at(-1);
  assert.deepEqual(wrapped, { firstSeq: 0, lastSeq: 1, firstOffset: 4, lastOffset: 5 });
  assert.equal(table.check(batch(0x7ffffffe, 2)).kind, 'duplicate', 'the batch straddling the wrap is recognised');
  assert.equal(table.check(batch(2, 1)).kind, 'append');
  rejects(table, batch(0x7ffffff0, 1), ErrorCode.DUPLICATE_SEQUENCE_NUMBER);
  rejects(table, batch(5, 1), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
});

test('JSON round trip keeps every producer exactly; malformed input throws', () => {
  const table = new ProducerStateTable();
  appendRun(table, 7, 3, 2);
  const big = batch(0, 1, 0, 2n ** 62n);
  table.record(big, 100, 100, 5);
  const copy = ProducerStateTable.fromJSON(JSON.parse(JSON.stringify(table.toJSON())));
  assert.deepEqual(copy.toJSON(), table.toJSON());
  assert.equal(copy.check(batch(18, 3, 2)).kind, 'duplicate');
  assert.equal(copy.get(2n ** 62n)?.epoch, 0);
  assert.throws(() => ProducerStateTable.fromJSON({}), TypeError);
  assert.throws(() => ProducerStateTable.fromJSON([{ producerId: 'x', epoch: 0, lastAppendMs: 0, batches: [] }]), TypeError);
  assert.throws(() => ProducerStateTable.fromJSON([{ producerId: '1', epoch: 0, lastAppendMs: 0, batches: [[1, 2, 3]] }]), TypeError);
});

test('expire forgets idle producers only', () => {
  const table = new ProducerStateTable();
  table.record(batch(0, 1, 0, 1n), 0, 0, 100);
  table.record(batch(0, 1, 0, 2n), 1, 1, 500);
  assert.equal(table.expire(200), 1);
  assert.equal(table.get(1n), undefined);
  assert.ok(table.get(2n));
});
