// The rows of a transaction still open when its segment is committed to the table are hidden by an
// `-open-txns` delete file (txn-deletes.ts). Once the transaction has ended, its committed rows must be in
// the table no later than the topic's next table commit, whatever that commit carries: the segment holding
// the marker in the same commit, another partition's segment, a control-only segment, or nothing at all (a
// commit made only to settle). Read with DuckDB (position deletes applied) and icebird.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PartitionTransactions } from '../../../tiering/plugin/api.js';
import { waitFor } from '../../helpers/tiered-table.js';
import { TOPIC, snapshotCount, tableKeys, txnEnv, writeSegment } from './txn-fixture.js';

/** Producer 2's transaction: open from offset 0 of each partition until `end(p)` is called. */
function openTransaction(): { source: (p: number) => PartitionTransactions; end: (p: number, logEnd: number) => void } {
  const ended = new Map<number, number>();
  return {
    source: (p) => {
      const logEnd = ended.get(p);
      return logEnd === undefined ? { lastStableOffset: 0, aborted: [], open: [{ producerId: 2n, firstOffset: 0 }] } : { lastStableOffset: logEnd, aborted: [], open: [] };
    },
    end: (p, logEnd) => ended.set(p, logEnd),
  };
}

const undecidedFiles = (e: Awaited<ReturnType<typeof txnEnv>>, partition: number): string[] =>
  e.plugin.metadata.listRemoteLogSegments({ topic: TOPIC, partition }).flatMap((s) => (s.deleteFiles ?? []).filter((f) => f.endsWith('-open-txns.parquet')));

test('an open transaction\'s segment and the segment with its commit marker, committed together, leave nothing hidden', async (t) => {
  const txn = openTransaction();
  // The transaction ends after the first segment is copied and before the second is: the broker's state,
  // asked while the second segment is copied, says so.
  const e = await txnEnv(t, (p, from) => {
    if (from >= 3) txn.end(p, 6);
    return txn.source(p);
  });
  const first = await writeSegment(e.dir, 0, 0, [{ pid: 2n, keys: ['o1', 'o2'] }, { pid: -1n, keys: ['p1'] }]);
  const second = await writeSegment(e.dir, 0, 3, [{ pid: 2n, keys: ['o3'] }, { marker: 2n, kind: 'commit' }, { pid: -1n, keys: ['p2'] }]);
  e.plugin.segmentClosed(first);
  e.plugin.segmentClosed(second);
  await e.plugin.drain();
  assert.equal(await snapshotCount(e), 1, 'both segments landed in one commit');
  assert.equal(e.plugin.metadata.highestCommittedOffset({ topic: TOPIC, partition: 0 }), 5);
  const want = ['o1', 'o2', 'o3', 'p1', 'p2'];
  assert.deepEqual(await tableKeys(e), { duckdb: want, icebird: want }, 'the committed transaction\'s rows are all visible');
  assert.deepEqual(undecidedFiles(e, 0), [], 'no undecided delete file is left');
});

test('a transaction ended since its segment was committed is settled by the next commit of the topic, even one of another partition', async (t) => {
  const txn = openTransaction();
  const e = await txnEnv(t, (p) => txn.source(p));
  e.plugin.segmentClosed(await writeSegment(e.dir, 0, 0, [{ pid: 2n, keys: ['o1', 'o2'] }, { pid: -1n, keys: ['p1'] }]));
  await e.plugin.drain();
  assert.deepEqual(await tableKeys(e), { duckdb: ['p1'], icebird: ['p1'] }, 'the open transaction\'s rows wait');
  // Partition 0's transaction commits (its marker is still in the active segment); partition 1 tiers a segment.
  txn.end(0, 4);
  e.plugin.segmentClosed(await writeSegment(e.dir, 1, 0, [{ pid: -1n, keys: ['q1'] }]));
  await e.plugin.drain();
  assert.equal(await snapshotCount(e), 2, 'the settlement rode on partition 1\'s commit');
  const want = ['o1', 'o2', 'p1', 'q1'];
  assert.deepEqual(await tableKeys(e), { duckdb: want, icebird: want });
  assert.deepEqual(undecidedFiles(e, 0), []);
});

test('a segment holding only the commit marker settles the transaction it ends', async (t) => {
  const txn = openTransaction();
  const e = await txnEnv(t, (p) => txn.source(p));
  e.plugin.segmentClosed(await writeSegment(e.dir, 0, 0, [{ pid: 2n, keys: ['o1', 'o2'] }, { pid: -1n, keys: ['p1'] }]));
  await e.plugin.drain();
  txn.end(0, 4);
  e.plugin.segmentClosed(await writeSegment(e.dir, 0, 3, [{ marker: 2n, kind: 'commit' }]));
  await e.plugin.drain();
  assert.equal(e.plugin.metadata.highestCommittedOffset({ topic: TOPIC, partition: 0 }), 3);
  assert.deepEqual(await tableKeys(e), { duckdb: ['o1', 'o2', 'p1'], icebird: ['o1', 'o2', 'p1'] });
  assert.deepEqual(undecidedFiles(e, 0), []);
});

test('with no segment left to tier, drain settles an ended transaction, and so does the commit loop on its own', async (t) => {
  for (const how of ['drain', 'commit loop'] as const) {
    await t.test(how, async (tt) => {
      const txn = openTransaction();
      const e = await txnEnv(tt, (p) => txn.source(p), how === 'drain' ? 60_000 : 50);
      e.plugin.segmentClosed(await writeSegment(e.dir, 0, 0, [{ pid: 2n, keys: ['o1', 'o2'] }, { pid: -1n, keys: ['p1'] }]));
      await e.plugin.drain();
      assert.deepEqual(await tableKeys(e), { duckdb: ['p1'], icebird: ['p1'] }, 'hidden while open, though the commit loop runs');
      const replaced = undecidedFiles(e, 0);
      assert.equal(replaced.length, 1);
      txn.end(0, 4);
      if (how === 'drain') await e.plugin.drain();
      else await waitFor('the commit loop to settle the ended transaction', async () => (undecidedFiles(e, 0).length === 0 ? true : undefined));
      assert.deepEqual(await tableKeys(e), { duckdb: ['o1', 'o2', 'p1'], icebird: ['o1', 'o2', 'p1'] });
      assert.equal(await snapshotCount(e), 2, 'one commit to settle, no empty ones while it waited');
      // A reader planning from the snapshot before the settlement still finds the delete file it names.
      for (const f of replaced) assert.ok((await e.io.get(f)).length > 0, `${f} is kept for the older snapshot`);
    });
  }
});
