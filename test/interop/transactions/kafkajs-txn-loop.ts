/**
 * kafkajs in a consume-transform-produce loop with exactly-once semantics, run as its own process (node
 * dist/test/interop/transactions/kafkajs-txn-loop.js) so that kafkajs-kill.test.ts can kill it with kill -9:
 *
 *   kafkajs-txn-loop.js BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID ABORT_RATE SEED
 *
 * Reads INPUT (read_committed, group GROUP) and writes key -> "value|VALUE" to OUTPUT, up to 7 records per
 * transaction, with the consumed offsets sent in the transaction (sendOffsets). A seeded random ABORT_RATE
 * of the transactions abort, and the loop seeks back to where the aborted one began. It exits 0 once the
 * group's committed offsets reach the end of INPUT, printing {"committed":n,"aborted":m}. Any error (fenced
 * by a broker restart, retries exhausted while the broker is down) ends it with exit code 1; the test
 * restarts it with the same transactional id, which fences the previous run and aborts what it left open.
 */
import { Kafka, logLevel } from 'kafkajs';
import { seededRandom } from './verify.js';

const CHUNK = 7;

async function main(): Promise<void> {
  const [bootstrap = '', input = '', output = '', group = '', transactionalId = '', abortRate = '0', seed = '0'] = process.argv.slice(2);
  const random = seededRandom(Number(seed));
  const rate = Number(abortRate);
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'kafkajs-txn-loop', logLevel: logLevel.ERROR });
  const fail = (e: unknown): never => {
    console.error('loop failed:', e instanceof Error ? `${e.name}: ${e.message}` : e);
    process.exit(1);
  };

  const admin = kafka.admin();
  await admin.connect();
  const end = new Map((await admin.fetchTopicOffsets(input)).map((p) => [p.partition, Number(p.high)]));
  const [offsets] = await admin.fetchOffsets({ groupId: group, topics: [input] });
  const done = new Map((offsets?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  await admin.disconnect();
  const reached = (): boolean => [...end].every(([p, e]) => e === 0 || (done.get(p) ?? -1) >= e);
  let committed = 0;
  let aborted = 0;
  const finish = (): void => {
    console.log(JSON.stringify({ committed, aborted }));
    process.exit(0);
  };
  if (reached()) finish();

  const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  // A member killed with kill -9 leaves the group within seconds (the default is 30 s).
  const consumer = kafka.consumer({ groupId: group, readUncommitted: false, sessionTimeout: 6000, heartbeatInterval: 1000, maxWaitTimeInMs: 200 });
  consumer.on(consumer.events.CRASH, (e) => fail(e.payload.error));
  await consumer.connect();
  await consumer.subscribe({ topic: input, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      try {
        for (let i = 0; i < batch.messages.length; i += CHUNK) {
          if (!isRunning() || isStale()) return;
          const chunk = batch.messages.slice(i, i + CHUNK);
          const first = chunk[0];
          const last = chunk[chunk.length - 1];
          if (first === undefined || last === undefined) return;
          const txn = await producer.transaction();
          await txn.send({
            topic: output,
            messages: chunk.map((m) => {
              const value = m.value?.toString() ?? '';
              return { key: m.key, value: `${value}|${value.toUpperCase()}` };
            }),
          });
          const next = Number(last.offset) + 1;
          await txn.sendOffsets({ consumerGroupId: group, topics: [{ topic: input, partitions: [{ partition: batch.partition, offset: String(next) }] }] });
          if (random() < rate) {
            await txn.abort();
            aborted++;
            // Back to where the aborted transaction began: everything before it in this partition committed.
            consumer.seek({ topic: input, partition: batch.partition, offset: first.offset });
            return;
          }
          await txn.commit();
          committed++;
          resolveOffset(last.offset);
          done.set(batch.partition, next);
          if (reached()) finish();
          await heartbeat();
        }
      } catch (e) {
        fail(e);
      }
    },
  });
}

main().catch((e: unknown) => {
  console.error('loop failed:', e);
  process.exit(1);
});
