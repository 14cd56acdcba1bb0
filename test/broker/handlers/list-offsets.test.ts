import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ListOffsetsHandler, MAX_TIMESTAMP } from '../../../broker/handlers/list-offsets.js';
import type { HandlerContext } from '../../../broker/handlers/handler.js';
import { createLogger } from '../../../broker/logger.js';
import type { TimestampOffset } from '../../../broker/log/partition-log.js';
import type { RemoteLogReader } from '../../../broker/tiering/broker-tiering.js';
import type { TopicManager } from '../../../broker/topics/topic-manager.js';

type Found = TimestampOffset | undefined;

/** A partition whose local log answers `local` and whose tiered data answers `remote` for MAX_TIMESTAMP. */
function handlerFor(local: Found, remote: Found | 'no-tiering'): ListOffsetsHandler {
  const log = { logStartOffset: 100, logEndOffset: 150, maxTimestampOffset: async (): Promise<Found> => local };
  const topics = { getTopic: () => ({}), partitionLog: () => log } as unknown as TopicManager;
  const reader: RemoteLogReader = {
    logStartOffset: (_t, _p, localStart) => Math.min(10, localStart),
    lastTieredOffset: () => 99,
    read: async () => Buffer.alloc(0),
    deleteRecordsBefore: async () => undefined,
    offsetForTimestamp: async () => undefined,
    maxTimestampOffset: async () => (remote === 'no-tiering' ? undefined : remote),
  };
  return new ListOffsetsHandler(topics, createLogger('silent'), remote === 'no-tiering' ? undefined : reader);
}

async function maxTimestamp(h: ListOffsetsHandler): Promise<{ offset: bigint; timestamp: bigint; errorCode: number }> {
  const body = { replicaId: -1, isolationLevel: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: MAX_TIMESTAMP }] }] };
  const ctx = { apiVersion: 7 } as unknown as HandlerContext;
  const res = (await h.handle(body, ctx)) as { topics: { partitions: { offset: bigint; timestamp: bigint; errorCode: number }[] }[] };
  const p = res.topics[0]?.partitions[0];
  assert.ok(p);
  return { offset: p.offset, timestamp: p.timestamp, errorCode: p.errorCode };
}

test('ListOffsets MAX_TIMESTAMP weighs the tiered data against the local log: larger timestamp wins, on a tie the earlier offset', async () => {
  const cases: { name: string; local: Found; remote: Found | 'no-tiering'; want: [number, number] }[] = [
    { name: 'only tiered data (local segments handed off)', local: undefined, remote: { offset: 42, timestamp: 5_000 }, want: [42, 5_000] },
    { name: 'the tiered maximum is larger', local: { offset: 120, timestamp: 4_000 }, remote: { offset: 42, timestamp: 5_000 }, want: [42, 5_000] },
    { name: 'the local maximum is larger', local: { offset: 120, timestamp: 6_000 }, remote: { offset: 42, timestamp: 5_000 }, want: [120, 6_000] },
    { name: 'a tie: the earlier (tiered) offset', local: { offset: 120, timestamp: 5_000 }, remote: { offset: 42, timestamp: 5_000 }, want: [42, 5_000] },
    { name: 'a tie on a record both hold (not yet handed off)', local: { offset: 101, timestamp: 5_000 }, remote: { offset: 101, timestamp: 5_000 }, want: [101, 5_000] },
    { name: 'nothing tiered', local: { offset: 120, timestamp: 4_000 }, remote: undefined, want: [120, 4_000] },
    { name: 'an untiered topic', local: { offset: 120, timestamp: 4_000 }, remote: 'no-tiering', want: [120, 4_000] },
    { name: 'no record anywhere', local: undefined, remote: undefined, want: [-1, -1] },
  ];
  for (const c of cases) {
    const got = await maxTimestamp(handlerFor(c.local, c.remote));
    assert.deepEqual([got.errorCode, Number(got.offset), Number(got.timestamp)], [0, ...c.want], c.name);
  }
});
