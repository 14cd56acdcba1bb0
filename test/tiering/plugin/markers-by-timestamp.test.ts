// ListOffsets by timestamp and MAX_TIMESTAMP over the table count transaction markers (control batches), as
// Kafka's segment search and Floe's hot log do: the broker writes a marker with its own clock, so it can be the
// first record at or after a timestamp, or the latest one. The tiered answer must be the hot one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOPIC, txnEnv, writeSegment } from './txn-fixture.js';

const T = 1_700_000_000_000;

test('offsetForTimestamp and maxTimestampOffset over the table answer a marker where Kafka would', async (t) => {
  const e = await txnEnv(t, () => ({ lastStableOffset: 100, aborted: [], open: [] }));
  // Offsets: 0 a (T), 1 commit marker (T+5), 2 b (T+10), 3 abort marker of producer 2 (T+20).
  e.plugin.segmentClosed(await writeSegment(e.dir, 0, 0, [{ pid: 1n, keys: ['a'], ts: T }, { marker: 1n, kind: 'commit', ts: T + 5 }, { pid: -1n, keys: ['b'], ts: T + 10 }, { marker: 2n, kind: 'abort', ts: T + 20 }]));
  await e.plugin.drain();
  const tp = { topic: TOPIC, partition: 0 };
  assert.deepEqual(await e.plugin.offsetForTimestamp(tp, T + 3), { offset: 1, timestamp: T + 5 }, 'the commit marker is the first record at or after T+3');
  assert.deepEqual(await e.plugin.offsetForTimestamp(tp, T + 6), { offset: 2, timestamp: T + 10 });
  assert.deepEqual(await e.plugin.offsetForTimestamp(tp, T + 15), { offset: 3, timestamp: T + 20 }, 'and the abort marker after the last data record');
  assert.deepEqual(await e.plugin.maxTimestampOffset(tp), { offset: 3, timestamp: T + 20 }, 'the latest timestamp is the marker\'s');
});
