import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, KafkaError } from '../../../protocol/error-codes.js';
import { encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { PartitionLog } from '../../../broker/log/partition-log.js';
import { createLogger } from '../../../broker/logger.js';
import { PartitionAppender } from '../../../broker/producers/partition-appender.js';
import { PRODUCER_SNAPSHOT_FILE } from '../../../broker/producers/producer-state-store.js';
import type { ProducerBatch } from '../../../broker/producers/producer-state.js';

const log = createLogger('silent');

type Cleanup = () => Promise<unknown>;

/** A temp dir plus a `defer` whose cleanups run last-in first-out, before the dir is removed. */
async function tempLogDir(t: { after(fn: () => Promise<void>): void }): Promise<{ dir: string; defer: (fn: Cleanup) => void }> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-appender-'));
  const stack: Cleanup[] = [];
  t.after(async () => {
    for (const fn of stack.reverse()) await fn();
    await rm(dir, { recursive: true, force: true });
  });
  return { dir, defer: (fn) => stack.push(fn) };
}

function idempotent(producerId: bigint, epoch: number, firstSeq: number, count: number): { batch: Buffer; info: ProducerBatch } {
  const batch = encodeRecordBatch({
    baseTimestamp: 1_700_000_000_000n,
    producerId,
    producerEpoch: epoch,
    baseSequence: firstSeq,
    records: Array.from({ length: count }, (_, i) => ({ value: Buffer.from(`p${producerId}-s${firstSeq + i}`) })),
  });
  return { batch, info: { producerId, epoch, firstSeq, offsetCount: count } };
}

/** Every record value in the log, in offset order. */
async function values(partitionLog: PartitionLog): Promise<string[]> {
  const { decodeRecordBatch } = await import('../../../protocol/record-batch/record-batch.js');
  const { iterateBatches } = await import('../../../protocol/record-batch/batches.js');
  const out: string[] = [];
  for (let offset = partitionLog.logStartOffset; offset < partitionLog.logEndOffset; ) {
    const r = await partitionLog.read(offset, 1 << 30);
    for (const b of iterateBatches(r.records)) for (const rec of decodeRecordBatch(r.records, b.start).records) out.push(rec.value?.toString() ?? '');
    offset = r.nextOffset;
  }
  return out;
}

test('a retried batch is not appended again and gets its original offsets; stale and gapped batches are refused', async (t) => {
  const { dir, defer } = await tempLogDir(t);
  const plog = await PartitionLog.open({ dir });
  defer(() => plog.close());
  const appender = new PartitionAppender({ log });
  defer(() => appender.close());
  const a = idempotent(1n, 0, 0, 3);
  const b = idempotent(1n, 0, 3, 2);
  const first = await appender.append(plog, Buffer.from(a.batch), a.info, 't-0');
  const second = await appender.append(plog, Buffer.from(b.batch), b.info, 't-0');
  assert.deepEqual([first.baseOffset, first.duplicate, second.baseOffset], [0, false, 3]);
  const retry = await appender.append(plog, Buffer.from(a.batch), a.info, 't-0');
  assert.deepEqual([retry.baseOffset, retry.lastOffset, retry.duplicate], [0, 2, true]);
  assert.equal(plog.logEndOffset, 5, 'the duplicate was not appended');
  const gap = idempotent(1n, 0, 9, 1);
  await assert.rejects(appender.append(plog, gap.batch, gap.info, 't-0'), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal(plog.logEndOffset, 5);
});

test('pipelined appends to one partition keep their order and pass the sequence check; notifies after each append', async (t) => {
  const { dir, defer } = await tempLogDir(t);
  const plog = await PartitionLog.open({ dir });
  defer(() => plog.close());
  const appender = new PartitionAppender({ log });
  defer(() => appender.close());
  let notified = 0;
  appender.onAppend((l) => {
    assert.equal(l, plog);
    notified++;
  });
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => {
      const x = idempotent(5n, 0, i * 2, 2);
      return appender.append(plog, x.batch, x.info, 't-0');
    }),
  );
  assert.deepEqual(
    results.map((r) => r.baseOffset),
    Array.from({ length: 20 }, (_, i) => i * 2),
  );
  assert.equal(notified, 20);
  const plain = encodeRecordBatch({ baseTimestamp: 1n, records: [{ value: Buffer.from('x') }] });
  assert.equal((await appender.append(plog, plain, undefined, 't-0')).baseOffset, 40);
});

test('plain appends do not wait for the ones before them to be written, so they are written in groups; mixed with idempotent ones, all keep the order made', async (t) => {
  const { dir, defer } = await tempLogDir(t);
  const plog = await PartitionLog.open({ dir });
  defer(() => plog.close());
  const appender = new PartitionAppender({ log });
  defer(() => appender.close());
  // A listener sees an append only once its bytes can be read.
  const seen: number[] = [];
  appender.onAppend((l) => seen.push(l.logEndOffset));
  const plain = (i: number) => encodeRecordBatch({ baseTimestamp: 1n, records: [{ value: Buffer.from(`plain-${i}`) }, { value: Buffer.from(`plain-${i}b`) }] });
  const appends = Array.from({ length: 40 }, (_, i) => {
    if (i % 10 !== 9) return appender.append(plog, plain(i), undefined, 't-0');
    const x = idempotent(7n, 0, Math.floor(i / 10) * 2, 2);
    return appender.append(plog, x.batch, x.info, 't-0');
  });
  const results = await Promise.all(appends);
  assert.deepEqual(results.map((r) => r.baseOffset), Array.from({ length: 40 }, (_, i) => i * 2), 'offsets in the order the appends were made');
  assert.ok(plog.appendWrites < 40, `40 appends took ${plog.appendWrites} writes`);
  assert.equal(seen.length, 40);
  for (const [k, r] of results.entries()) assert.ok((seen[k] ?? 0) > r.lastOffset, `listener call ${k} saw the log end at ${seen[k]}, before offset ${r.lastOffset} was written`);
  const expected = Array.from({ length: 40 }, (_, i) => (i % 10 === 9 ? [`p7-s${Math.floor(i / 10) * 2}`, `p7-s${Math.floor(i / 10) * 2 + 1}`] : [`plain-${i}`, `plain-${i}b`])).flat();
  assert.deepEqual(await values(plog), expected);
  // The idempotent batches passed the sequence check one after the other: a retry of the last is a duplicate.
  const retry = idempotent(7n, 0, 6, 2);
  assert.deepEqual(await appender.append(plog, retry.batch, retry.info, 't-0').then((r) => [r.baseOffset, r.duplicate]), [78, true]);
});

test('producer state survives a clean close (snapshot) and a crash (replay of the log), so dedupe still works', async (t) => {
  const { dir, defer } = await tempLogDir(t);
  // Run 1: clean shutdown writes the snapshot.
  let plog = await PartitionLog.open({ dir });
  let appender = new PartitionAppender({ log });
  const sent = [idempotent(3n, 1, 0, 2), idempotent(3n, 1, 2, 2), idempotent(4n, 0, 0, 1)];
  for (const s of sent) await appender.append(plog, Buffer.from(s.batch), s.info, 't-0');
  await appender.close();
  await plog.close();
  const snap = JSON.parse(await readFile(join(dir, PRODUCER_SNAPSHOT_FILE), 'utf8')) as { offset: number };
  assert.equal(snap.offset, 5);

  // Run 2: reopen, append more, then "crash" (no appender close, no snapshot of the new batches).
  plog = await PartitionLog.open({ dir });
  appender = new PartitionAppender({ log });
  const retry = await appender.append(plog, Buffer.from(sent[1]!.batch), sent[1]!.info, 't-0');
  assert.deepEqual([retry.duplicate, retry.baseOffset], [true, 2]);
  const later = idempotent(3n, 1, 4, 3);
  assert.equal((await appender.append(plog, Buffer.from(later.batch), later.info, 't-0')).baseOffset, 5);
  await plog.close();

  // Run 3: the snapshot is at 5, the batch at 5-7 is replayed from the log.
  plog = await PartitionLog.open({ dir });
  defer(() => plog.close());
  appender = new PartitionAppender({ log });
  defer(() => appender.close());
  const again = await appender.append(plog, Buffer.from(later.batch), later.info, 't-0');
  assert.deepEqual([again.duplicate, again.baseOffset, again.lastOffset], [true, 5, 7]);
  const stale = idempotent(3n, 0, 7, 1);
  await assert.rejects(appender.append(plog, stale.batch, stale.info, 't-0'), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.deepEqual(await values(plog), ['p3-s0', 'p3-s1', 'p3-s2', 'p3-s3', 'p4-s0', 'p3-s4', 'p3-s5', 'p3-s6']);
});

test('a snapshot beyond the log end, or unreadable, is ignored and the state rebuilt from the whole log', async (t) => {
  for (const bad of ['beyond', 'garbage'] as const) {
    const { dir } = await tempLogDir(t);
    let plog = await PartitionLog.open({ dir });
    let appender = new PartitionAppender({ log });
    const a = idempotent(8n, 0, 0, 2);
    await appender.append(plog, Buffer.from(a.batch), a.info, 't-0');
    await appender.close();
    await plog.close();
    const body = bad === 'beyond' ? JSON.stringify({ version: 1, offset: 1000, producers: [] }) : '{"version":1,';
    await writeFile(join(dir, PRODUCER_SNAPSHOT_FILE), body);
    plog = await PartitionLog.open({ dir });
    appender = new PartitionAppender({ log });
    const retry = await appender.append(plog, Buffer.from(a.batch), a.info, 't-0');
    assert.deepEqual([bad, retry.duplicate, retry.baseOffset], [bad, true, 0]);
    await appender.close();
    await plog.close();
  }
});

test('a segment roll writes a snapshot that covers what was appended', async (t) => {
  const { dir, defer } = await tempLogDir(t);
  const plog = await PartitionLog.open({ dir });
  defer(() => plog.close());
  const appender = new PartitionAppender({ log });
  defer(() => appender.close());
  const a = idempotent(9n, 0, 0, 4);
  await appender.append(plog, a.batch, a.info, 't-0');
  await plog.roll();
  // The roll listener queued the snapshot behind the append; producerState() waits for the queue.
  await appender.producerState(plog);
  await appender.snapshot(plog);
  const snap = JSON.parse(await readFile(join(dir, PRODUCER_SNAPSHOT_FILE), 'utf8')) as { offset: number; producers: { producerId: string }[] };
  assert.equal(snap.offset, 4);
  assert.deepEqual(snap.producers.map((p) => p.producerId), ['9']);
});

function transactional(producerId: bigint, epoch: number, firstSeq: number, count: number): { batch: Buffer; info: ProducerBatch } {
  const b = idempotent(producerId, epoch, firstSeq, count);
  const batch = encodeRecordBatch({
    baseTimestamp: 1_700_000_000_000n,
    producerId,
    producerEpoch: epoch,
    baseSequence: firstSeq,
    isTransactional: true,
    records: Array.from({ length: count }, (_, i) => ({ value: Buffer.from(`t${producerId}-s${firstSeq + i}`) })),
  });
  return { batch, info: { ...b.info, transactional: true } };
}

test('transactions in the producer state: LSO, markers, aborted list, and both survive a snapshot and a crash replay', async (t) => {
  const { dir, defer } = await tempLogDir(t);
  let plog = await PartitionLog.open({ dir });
  let appender = new PartitionAppender({ log });
  const first = transactional(5n, 0, 0, 3);
  await appender.append(plog, Buffer.from(first.batch), first.info, 't-0'); // 0-2
  const plain = idempotent(6n, 0, 0, 1);
  await appender.append(plog, Buffer.from(plain.batch), plain.info, 't-0'); // 3
  let state = await appender.readState(plog);
  assert.equal(state.txns.lastStableOffset(plog.logEndOffset), 0, 'the open transaction holds the LSO at its first offset');
  assert.equal(await appender.appendMarker(plog, { producerId: 5n, epoch: 0, commit: false, coordinatorEpoch: 3 }), 4);
  assert.equal(state.txns.lastStableOffset(plog.logEndOffset), 5);
  assert.deepEqual(state.txns.allAborted(), [{ producerId: 5n, firstOffset: 0, lastOffset: 4 }]);
  assert.equal(state.get(5n)?.coordinatorEpoch, 3);
  // A second transaction of the same producer, left open: snapshot at close, then a crash after more appends.
  const second = transactional(5n, 0, 3, 2);
  await appender.append(plog, Buffer.from(second.batch), second.info, 't-0'); // 5-6
  await appender.close();
  await plog.close();

  plog = await PartitionLog.open({ dir });
  appender = new PartitionAppender({ log });
  state = await appender.readState(plog);
  assert.equal(state.txns.lastStableOffset(plog.logEndOffset), 5, 'the open transaction came back from the snapshot');
  assert.equal(await appender.appendMarker(plog, { producerId: 5n, epoch: 1, commit: true, coordinatorEpoch: 4 }), 7);
  const third = transactional(5n, 1, 0, 1);
  await appender.append(plog, Buffer.from(third.batch), third.info, 't-0'); // 8, open
  assert.equal(await appender.appendMarker(plog, { producerId: 5n, epoch: 1, commit: false, coordinatorEpoch: 4 }), 9);
  await plog.close(); // a crash: no snapshot of offsets 7-9

  plog = await PartitionLog.open({ dir });
  defer(() => plog.close());
  appender = new PartitionAppender({ log });
  defer(() => appender.close());
  state = await appender.readState(plog);
  assert.equal(state.txns.lastStableOffset(plog.logEndOffset), 10, 'the replay saw the commit and the abort');
  assert.deepEqual(state.txns.allAborted(), [
    { producerId: 5n, firstOffset: 0, lastOffset: 4 },
    { producerId: 5n, firstOffset: 8, lastOffset: 9 },
  ]);
  assert.deepEqual(state.txns.abortedOverlapping(5, 8), [], 'the committed range in between overlaps no abort');
  assert.deepEqual(state.txns.abortedOverlapping(3, 9).map((a) => a.firstOffset), [0, 8]);
  assert.equal(state.get(5n)?.epoch, 1, 'the marker moved the producer to its epoch');
  // Stale markers are refused: an older producer epoch, or an older coordinator epoch.
  await assert.rejects(appender.appendMarker(plog, { producerId: 5n, epoch: 0, commit: false, coordinatorEpoch: 4 }), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_PRODUCER_EPOCH);
  await assert.rejects(appender.appendMarker(plog, { producerId: 5n, epoch: 1, commit: false, coordinatorEpoch: 2 }), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.TRANSACTION_COORDINATOR_FENCED);
  // A failed append releases the LSO it reserved: a transactional batch with a stale epoch never opens a transaction.
  const stale = transactional(5n, 0, 0, 1);
  await assert.rejects(appender.append(plog, stale.batch, stale.info, 't-0'));
  assert.equal(state.txns.lastStableOffset(plog.logEndOffset), plog.logEndOffset);
});

test('a version 1 producer snapshot (before transactions) still loads', async (t) => {
  const { dir, defer } = await tempLogDir(t);
  const plog = await PartitionLog.open({ dir });
  defer(() => plog.close());
  const s = idempotent(9n, 2, 0, 2);
  await plog.append(Buffer.from(s.batch));
  await writeFile(join(dir, PRODUCER_SNAPSHOT_FILE), JSON.stringify({ version: 1, offset: 2, producers: [{ producerId: '9', epoch: 2, lastAppendMs: 1, batches: [[0, 1, 0, 1]] }] }));
  const appender = new PartitionAppender({ log });
  defer(() => appender.close());
  const again = await appender.append(plog, Buffer.from(s.batch), s.info, 't-0');
  assert.equal(again.duplicate, true, 'the v1 snapshot was used, not discarded');
});

test('aborted transactions wholly below the log start are dropped at a snapshot; a tiered log start keeps those its table still holds', async (t) => {
  const { dir, defer } = await tempLogDir(t);
  const plog = await PartitionLog.open({ dir });
  defer(() => plog.close());
  // The partition's log start, remote data included, as broker-tiering.ts reports it (0: the table holds everything).
  let remoteStart = 0;
  const appender = new PartitionAppender({ log, logStartOffset: (l) => Math.min(remoteStart, l.logStartOffset) });
  defer(() => appender.close());
  const first = transactional(5n, 0, 0, 3);
  await appender.append(plog, Buffer.from(first.batch), first.info, 't-0'); // 0-2
  await appender.appendMarker(plog, { producerId: 5n, epoch: 0, commit: false, coordinatorEpoch: 1 }); // 3
  const second = transactional(5n, 0, 3, 2);
  await appender.append(plog, Buffer.from(second.batch), second.info, 't-0'); // 4-5
  await appender.appendMarker(plog, { producerId: 5n, epoch: 0, commit: false, coordinatorEpoch: 1 }); // 6
  const state = await appender.readState(plog);
  assert.deepEqual(state.txns.allAborted().map((a) => a.lastOffset), [3, 6]);

  await plog.deleteRecordsBefore(5);
  assert.equal(plog.logStartOffset, 5);
  await appender.snapshot(plog);
  assert.deepEqual(state.txns.allAborted().map((a) => a.lastOffset), [3, 6], 'the table still holds offsets 0-4: both aborted transactions stay');

  remoteStart = 4; // retention (or DeleteRecords) reached the table
  await appender.snapshot(plog);
  assert.deepEqual(state.txns.allAborted().map((a) => a.lastOffset), [6], 'the transaction whose marker is below the log start is gone');
  assert.deepEqual(state.txns.abortedOverlapping(4, 7).map((a) => a.firstOffset), [4], 'read_committed from the log start still learns of the other');
  const snap = JSON.parse(await readFile(join(dir, PRODUCER_SNAPSHOT_FILE), 'utf8')) as { txns: { aborted: unknown[] } };
  assert.deepEqual(snap.txns.aborted, [['5', 4, 6]], 'the snapshot holds the truncated list');
});
