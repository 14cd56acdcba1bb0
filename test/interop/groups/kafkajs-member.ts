/**
 * A kafkajs group member as its own process (run by js-drivers.ts with the options as JSON in argv[2]), so
 * the test can SIGKILL it. Each record is printed, then its offset + 1 committed synchronously
 * (autoCommit off); SIGTERM disconnects, which leaves the group. Output format: member-process.ts.
 */
import { Kafka, logLevel } from 'kafkajs';
import type { MemberOptions } from './scenario.js';

const o = JSON.parse(process.argv[2] ?? '{}') as MemberOptions;
// Pipes are written synchronously on Linux, so a line printed before a SIGKILL is not lost.
const emit = (obj: object) => process.stdout.write(`${JSON.stringify(obj)}\n`);

const kafka = new Kafka({ clientId: o.name, brokers: [o.bootstrap], logLevel: logLevel.NOTHING });
const consumer = kafka.consumer({ groupId: o.group, sessionTimeout: o.sessionTimeoutMs, heartbeatInterval: o.heartbeatIntervalMs, maxWaitTimeInMs: 500 });
process.once('SIGTERM', () => {
  void consumer.disconnect().then(() => {
    emit({ e: 'closed' });
    process.exit(0);
  });
});
await consumer.connect();
await consumer.subscribe({ topic: o.topic, fromBeginning: true });
await consumer.run({
  autoCommit: false,
  eachMessage: async ({ topic, partition, message }) => {
    emit({ e: 'record', p: partition, o: Number(message.offset), k: String(message.key) });
    const offset = String(Number(message.offset) + 1);
    try {
      await consumer.commitOffsets([{ topic, partition, offset }]);
      emit({ e: 'commit', p: partition, o: Number(offset) });
    } catch (err) {
      emit({ e: 'commit_error', error: String(err) });
      throw err; // kafkajs rejoins the group and the record is read again from the committed offset
    }
  },
});
