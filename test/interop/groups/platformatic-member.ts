/**
 * A @platformatic/kafka classic-group member as its own process (run by js-drivers.ts with the options as
 * JSON in argv[2]), so the test can SIGKILL it: it joins with the library's own JoinGroup/SyncGroup/Heartbeat
 * and assigner and prints `{"e":"assigned","generation":n,"partitions":[...]}` after every join. It does not
 * consume: the library's MessagesStream sends Fetch v12 with the topic id in the topic-name field, which a
 * broker serving Fetch up to v12 (Floe today) rightly answers UNKNOWN_TOPIC_OR_PARTITION. SIGTERM leaves
 * the group and prints closed.
 */
import { Consumer } from '@platformatic/kafka';
import type { MemberOptions } from './scenario.js';

const o = JSON.parse(process.argv[2] ?? '{}') as MemberOptions;
const emit = (obj: object) => process.stdout.write(`${JSON.stringify(obj)}\n`);

const consumer = new Consumer({ clientId: o.name, bootstrapBrokers: [o.bootstrap], groupId: o.group });
consumer.on('consumer:group:join', (p) => {
  emit({ e: 'assigned', generation: p.generationId, partitions: p.assignments?.find((a) => a.topic === o.topic)?.partitions ?? [] });
});
process.once('SIGTERM', () => {
  void (async () => {
    await consumer.leaveGroup();
    await consumer.close();
    emit({ e: 'closed' });
    process.exit(0);
  })();
});
consumer.topics.trackAll(o.topic);
await consumer.joinGroup({ sessionTimeout: o.sessionTimeoutMs, heartbeatInterval: o.heartbeatIntervalMs });
