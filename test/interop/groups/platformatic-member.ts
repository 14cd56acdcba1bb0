/**
 * A @platformatic/kafka classic-group member as its own process (run by js-drivers.ts with the options as
 * JSON in argv[2]), so the test can SIGKILL it. It consumes with the library's own group consumer
 * (`consumer.consume()`, a MessagesStream: JoinGroup/SyncGroup/Heartbeat, its assigner, Fetch by topic id
 * at v13+), starting from the committed offset or the earliest one. Each record is printed, then its offset
 * + 1 committed (autocommit off) before the next is taken; SIGTERM closes the stream and leaves the group.
 * Output format: member-process.ts (it also prints `assigned` after every join, for diagnosis).
 *
 * The member keeps the three rules the Java consumer keeps for its application (positions per owned
 * partition): a record of a partition it no longer owns is not handed on, neither is one below the position
 * it already reached on a partition it kept, nor one below the group's committed offset on a partition it was
 * just assigned. @platformatic/kafka 1.x breaks all three around a rebalance: a fetch in flight during the
 * rejoin still delivers the revoked partitions' records after the new owner started from the committed
 * offset; the offset refresh after the rejoin re-reads what was fetched but not yet taken from the stream;
 * and a partition it owned before, lost, and is assigned again can restart from the position it kept from
 * back then (the refresh that would replace it may run against the previous assignment) instead of the
 * committed offset. Without these checks the scenario sees those records twice (client-side; the broker's
 * Fetch and OffsetFetch answers are what the other clients get, and the committed offset the third check
 * uses comes from the broker's OffsetFetch too).
 *
 * A commit in flight when a rebalance starts is refused (REBALANCE_IN_PROGRESS or ILLEGAL_GENERATION);
 * the library then rejoins (a rejoining leader starts yet another rebalance, so with a commit per record
 * a few generations go by before the group settles) and retries the commit under the new generation.
 * The new owner of the partition may already have read the record from the committed offset: an
 * at-least-once re-read that delivery.ts allows, because the commit was acknowledged only after the
 * rebalance (the member prints the `assigned` line of the new generation first).
 */
import { Consumer, MessagesStreamFallbackModes, MessagesStreamModes } from '@platformatic/kafka';
import type { MemberOptions } from './scenario.js';

const o = JSON.parse(process.argv[2] ?? '{}') as MemberOptions;
// Pipes are written synchronously on Linux, so a line printed before a SIGKILL is not lost.
const emit = (obj: object) => process.stdout.write(`${JSON.stringify(obj)}\n`);

const consumer = new Consumer({ clientId: o.name, bootstrapBrokers: [o.bootstrap], groupId: o.group, sessionTimeout: o.sessionTimeoutMs, heartbeatInterval: o.heartbeatIntervalMs });
/** Partitions of the current generation -> the next offset to hand on (undefined until the first record). */
const positions = new Map<number, number | undefined>();
/** Settled once the positions of the partitions the last join assigned are known (see below). */
let positioned: Promise<void> = Promise.resolve();
consumer.on('consumer:group:join', (p) => {
  const partitions = p.assignments?.find((a) => a.topic === o.topic)?.partitions ?? [];
  for (const owned of [...positions.keys()]) if (!partitions.includes(owned)) positions.delete(owned);
  const fresh = partitions.filter((partition) => !positions.has(partition));
  for (const partition of fresh) positions.set(partition, undefined);
  emit({ e: 'assigned', generation: p.generationId, partitions });
  if (fresh.length === 0) return;
  // A newly assigned partition starts at the group's committed offset (as the Java consumer seeks on
  // assignment), asked of the broker with OffsetFetch.
  const previous = positioned;
  positioned = (async () => {
    await previous;
    const commits = await consumer.listCommittedOffsets({ topics: [{ topic: o.topic, partitions: fresh }] });
    for (const partition of fresh) {
      const committed = commits.get(o.topic)?.[partition];
      if (committed !== undefined && committed >= 0n && positions.has(partition) && positions.get(partition) === undefined) positions.set(partition, Number(committed));
    }
  })().catch((err: unknown) => {
    // Kept with the member's stderr for failure messages; the positions stay unset (no check).
    process.stderr.write(`OffsetFetch after the join failed: ${String(err)}\n`);
  });
});
const stream = await consumer.consume({
  topics: [o.topic],
  mode: MessagesStreamModes.COMMITTED,
  fallbackMode: MessagesStreamFallbackModes.EARLIEST,
  autocommit: false,
  maxWaitTime: 500,
  // Messages wait in the stream's buffer until read; a rebalance does not take back what is buffered.
  highWaterMark: 1,
  sessionTimeout: o.sessionTimeoutMs,
  heartbeatInterval: o.heartbeatIntervalMs,
});
process.once('SIGTERM', () => {
  void (async () => {
    await stream.close();
    await consumer.close();
    emit({ e: 'closed' });
    process.exit(0);
  })();
});
for await (const message of stream) {
  await positioned;
  const offset = Number(message.offset);
  if (!positions.has(message.partition)) continue;
  const position = positions.get(message.partition);
  if (position !== undefined && offset < position) continue;
  positions.set(message.partition, offset + 1);
  emit({ e: 'record', p: message.partition, o: offset, k: String(message.key) });
  try {
    await message.commit();
    emit({ e: 'commit', p: message.partition, o: offset + 1 });
  } catch (err) {
    // A commit refused in a rebalance: the new owner reads the record again from the committed offset.
    emit({ e: 'commit_error', error: String(err) });
  }
}
