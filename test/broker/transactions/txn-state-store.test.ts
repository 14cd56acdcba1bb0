import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TxnStateStore } from '../../../broker/transactions/txn-state-store.js';
import { partitionKey, type TxnMetadata } from '../../../broker/transactions/txn-metadata.js';

function meta(id: string, state: TxnMetadata['state'], epoch = 0): TxnMetadata {
  return {
    transactionalId: id,
    producerId: 42n,
    producerEpoch: epoch,
    lastProducerId: -1n,
    lastProducerEpoch: -1,
    timeoutMs: 60_000,
    state,
    partitions: new Set([partitionKey('orders', 3)]),
    groups: new Set(['g']),
    pendingOffsets: new Map([['g', new Map([[partitionKey('in', 0), { topic: 'in', partition: 0, offset: 17n, leaderEpoch: -1, metadata: null }]])]]),
    txnStartMs: 1000,
    lastUpdateMs: 2000,
  };
}

test('the last record of each transactional id wins after a reopen; a torn tail is cut off; the coordinator epoch grows', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-txn-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  let store = await TxnStateStore.open(dir);
  assert.equal(store.coordinatorEpoch, 1);
  await store.write(meta('a', 'Ongoing'));
  await store.write(meta('a', 'PrepareCommit'));
  await store.write(meta('b', 'Empty'));
  await store.write(meta('c', 'Empty'));
  await store.remove('c');
  await store.close();
  // A crash in the middle of a write leaves a torn record at the end.
  const size = (await stat(join(dir, 'txn.log'))).size;
  await appendFile(join(dir, 'txn.log'), Buffer.from([0, 0, 1, 0, 9, 9]));

  store = await TxnStateStore.open(dir);
  t.after(() => store.close());
  assert.equal(store.coordinatorEpoch, 2);
  const all = new Map(store.loadAll().map((m) => [m.transactionalId, m]));
  assert.deepEqual([...all.keys()].sort(), ['a', 'b']);
  const a = all.get('a');
  assert.equal(a?.state, 'PrepareCommit');
  assert.deepEqual([...(a?.partitions ?? [])], [partitionKey('orders', 3)]);
  assert.equal(a?.pendingOffsets.get('g')?.get(partitionKey('in', 0))?.offset, 17n, 'pending offsets are durable with PrepareCommit');
  assert.ok((await stat(join(dir, 'txn.log'))).size > size, 'the torn bytes were cut and the new epoch record appended');
  assert.ok(!(await readFile(join(dir, 'txn.log'))).includes(Buffer.from([9, 9])));
});

test('compaction keeps one record per live id and the epoch', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-txn-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  let store = await TxnStateStore.open(dir, { compactAfterRecords: 5 });
  for (let i = 0; i < 30; i++) await store.write(meta('hot', i % 2 === 0 ? 'Ongoing' : 'CompleteCommit', i));
  await store.close();
  assert.ok((await stat(join(dir, 'txn.log'))).size < 30 * 200, 'compacted');
  store = await TxnStateStore.open(dir);
  t.after(() => store.close());
  assert.equal(store.coordinatorEpoch, 2);
  assert.deepEqual(store.loadAll().map((m) => [m.transactionalId, m.state, m.producerEpoch]), [['hot', 'CompleteCommit', 29]]);
});
