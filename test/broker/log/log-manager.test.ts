import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { LogManager, parsePartitionDirName, type ClosedSegmentEvent } from '../../../broker/log/log-manager.js';
import { isLogError } from '../../../broker/log/errors.js';
import { batchOf, closeBeforeRemoving, parseBatches, tempDir } from './batches.js';

test('partition directory names round-trip, topics with dashes included', () => {
  assert.deepEqual(parsePartitionDirName('my-topic-12'), { topic: 'my-topic', partition: 12 });
  assert.equal(parsePartitionDirName('my-topic-12.abc-delete'), undefined);
  assert.equal(parsePartitionDirName('lost+found'), undefined);
});

test('creates, reopens at start-up, relays segment closes, and deletes partition logs', async (t) => {
  const dataDir = await tempDir(t);
  const events: ClosedSegmentEvent[] = [];
  const gate: string[] = [];
  const options = {
    dataDir,
    configFor: (topic: string) => (topic === 'small' ? { 'segment.bytes': 300, 'retention.bytes': 0 } : {}),
    onSegmentClosed: (e: ClosedSegmentEvent) => events.push(e),
    canDeleteSegment: (tp: { topic: string; partition: number }, base: number) => {
      gate.push(`${tp.topic}-${tp.partition}@${base}`);
      return true;
    },
  };
  let mgr = await LogManager.open(options);
  closeBeforeRemoving(dataDir, () => mgr.close());
  const a0 = await mgr.getOrCreate('small', 0);
  assert.equal(await mgr.getOrCreate('small', 0), a0, 'idempotent');
  const [b1, b1again] = await Promise.all([mgr.getOrCreate('big-topic', 1), mgr.getOrCreate('big-topic', 1)]);
  assert.equal(b1, b1again);
  await assert.rejects(mgr.getOrCreate('bad/name', 0), (e) => isLogError(e, 'INVALID_CONFIG'));
  for (let i = 0; i < 3; i++) await a0.append(batchOf(`s${i}`, 1, { valueBytes: 150 }));
  await b1.append(batchOf('b', 2));
  await a0.flush();
  assert.deepEqual(events.map((e) => [e.topic, e.partition, e.baseOffset, e.lastOffset]), [['small', 0, 0, 0], ['small', 0, 1, 1]]);
  assert.equal(await mgr.enforceRetention(), 2);
  assert.deepEqual(gate, ['small-0@0', 'small-0@1']);
  await mgr.close();

  // A leftover of an interrupted delete is removed at start-up.
  await mkdir(join(dataDir, 'gone-0.0123-delete'));
  mgr = await LogManager.open(options);
  assert.deepEqual([...mgr.entries()].map(([tp]) => `${tp.topic}-${tp.partition}`).sort(), ['big-topic-1', 'small-0']);
  const small = mgr.get('small', 0);
  assert.equal(small?.recovery.cleanShutdown, true);
  assert.equal(small?.logStartOffset, 2);
  assert.equal(small?.logEndOffset, 3);
  assert.equal(parseBatches((await mgr.get('big-topic', 1)!.read(0, 1000)).records)[0]?.firstValue, 'b-0');
  await mgr.delete('big-topic', 1);
  assert.equal(mgr.get('big-topic', 1), undefined);
  assert.deepEqual((await readdir(dataDir)).sort(), ['small-0']);
  await assert.rejects(mgr.delete('big-topic', 1), (e) => isLogError(e, 'UNKNOWN_PARTITION'));
  await mgr.close();
  await assert.rejects(mgr.getOrCreate('x', 0), (e) => isLogError(e, 'LOG_CLOSED'));
});
