// A principal without Read on a topic is refused by Floe, and each client tells its user so in its own way:
// Kafka's Java consumer (TopicAuthorizationException), kafka-python (TopicAuthorizationFailedError),
// confluent-kafka-python and kcat (librdkafka: TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed") and
// kafkajs (type TOPIC_AUTHORIZATION_FAILED). One broker with an authorizer, SASL PLAIN users (admin is a super
// user); alice may read the groups alice-* (a PREFIXED ACL) but no topic. Two topics hold records:
// - secret: no ACL for alice at all, so Metadata refuses it (and hides it from listings);
// - described: alice has Describe but not Read, so Metadata and ListOffsets answer and Fetch refuses.
// Every client consumes in a group of its own (alice-<client>), as an application would; none reads a record.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajsModule from 'kafkajs';
import { venvPython } from '../helpers/peers.js';
import { assertNoSecrets, captureAdminPages } from '../helpers/secrets.js';
import { JavaClientError } from './clients/java.js';
import { javaAs, kafkajsAs, PW, startAclBroker, type AclUser } from './acl-broker.js';

const { AclOperationTypes: Op, AclPermissionTypes: Perm, AclResourceTypes: Res, ResourcePatternTypes: Pat } = kafkajsModule;
const run = promisify(execFile);
const TOPICS = ['secret', 'described'] as const;
const DRIVER = fileURLToPath(new URL('./python/read_refused.py', import.meta.url));
const TIMEOUT = 90_000;


/** What read_refused.py printed for one Python client reading `topic` in the group as alice. */
async function python(client: 'confluent' | 'kafka-python', cfg: Record<string, unknown>, topic: string): Promise<string> {
  const p = run(client === 'confluent' ? venvPython() : '/usr/bin/python3', [DRIVER, client], { timeout: TIMEOUT });
  p.child.stdin?.end(JSON.stringify({ ...cfg, topic, wait_s: 20 }));
  return (await p).stdout.trim();
}

test('without Read on a topic, the Java consumer, kafka-python, confluent-kafka-python, kcat and kafkajs are each refused with TOPIC_AUTHORIZATION_FAILED', { timeout: 300_000 }, async (t) => {
  const broker = await startAclBroker(t, 'read-refused');
  const { b, lines } = broker;
  const kafkajs = (user: AclUser) => kafkajsAs(broker, user, `read-refused-${user}`, 0);
  const admin = kafkajs('admin').admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.createTopics({ waitForLeaders: true, topics: TOPICS.map((topic) => ({ topic, numPartitions: 1 })) });
  const grant = (resourceType: number, resourceName: string, resourcePatternType: number, operation: number) => ({ resourceType, resourceName, resourcePatternType, principal: 'User:alice', host: '*', operation, permissionType: Perm.ALLOW });
  await admin.createAcls({ acl: [grant(Res.GROUP, 'alice-', Pat.PREFIXED, Op.READ), grant(Res.TOPIC, 'described', Pat.LITERAL, Op.DESCRIBE)] });
  const producer = kafkajs('admin').producer();
  await producer.connect();
  for (const topic of TOPICS) await producer.send({ topic, messages: [{ value: 'not-for-alice' }, { value: 'nor-this' }] });
  await producer.disconnect();
  const denied = () => lines.filter((l) => l.includes('authorization denied') && l.includes('"principal":"User:alice"'));

  await t.test('Java consumer: TopicAuthorizationException from poll', async () => {
    const java = await javaAs(t, broker, 'alice');
    for (const topic of TOPICS) {
      await assert.rejects(java.call('subscribe_poll', { topic, group: 'alice-java', count: 1 }), (e: unknown) => {
        assert.ok(e instanceof JavaClientError, String(e));
        assert.equal(e.errorClass, 'TopicAuthorizationException', `${topic}: ${e.message}`);
        assert.match(e.message, new RegExp(topic));
        return true;
      });
    }
    // The broker logged both refusals, for alice (the first ones of the test, so none is rate-limited away).
    for (const topic of TOPICS) assert.ok(denied().some((l) => l.includes(`"resource":"${topic}"`)), `a refusal on ${topic} is logged`);
  });

  await t.test('kafka-python: TopicAuthorizationFailedError, once Metadata lets it reach Fetch', async () => {
    const cfg = { bootstrap_servers: broker.bootstrap, security_protocol: 'SASL_PLAINTEXT', sasl_mechanism: 'PLAIN', sasl_plain_username: 'alice', sasl_plain_password: PW.alice, group_id: 'alice-kafka-python' };
    assert.equal(await python('kafka-python', cfg, 'described'), 'TOPIC_AUTHORIZATION_FAILED');
    // kafka-python 2.0.2 does not raise a Metadata refusal to its user: ClusterMetadata logs "Topic secret is
    // not authorized for this client" and the coordinator's metadata listener raises inside the client's
    // response callbacks, where the error is logged and dropped. With no partitions known the consumer never
    // joins or fetches, so it reads nothing and returns when its wait ends. It needs Describe (the topic
    // "described") to get past Metadata to the Fetch that is refused.
    assert.equal(await python('kafka-python', cfg, 'secret'), 'NOTHING');
  });

  await t.test('confluent-kafka-python: a TOPIC_AUTHORIZATION_FAILED error from poll', async () => {
    const cfg = { 'bootstrap.servers': broker.bootstrap, 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanisms': 'PLAIN', 'sasl.username': 'alice', 'sasl.password': PW.alice, 'group.id': 'alice-confluent' };
    for (const topic of TOPICS) assert.equal(await python('confluent', cfg, topic), 'TOPIC_AUTHORIZATION_FAILED', topic);
  });

  await t.test('kcat: "Topic authorization failed"', async () => {
    const sasl = ['-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanisms=PLAIN', '-X', 'sasl.username=alice', '-X', `sasl.password=${PW.alice}`];
    for (const topic of TOPICS) {
      // In a balanced consumer group (-G), as the other clients read; kcat exits on the error with -e.
      await assert.rejects(run('kcat', ['-q', '-b', broker.bootstrap, ...sasl, '-G', 'alice-kcat', '-o', 'beginning', '-e', topic], { timeout: TIMEOUT }), (err: Error & { stderr?: string; stdout?: string }) => {
        assert.match(err.stderr ?? '', /authorization failed/i, topic);
        assert.doesNotMatch(err.stdout ?? '', /not-for-alice/);
        return true;
      });
    }
  });

  await t.test('kafkajs: a consumer is refused with type TOPIC_AUTHORIZATION_FAILED', async () => {
    for (const topic of TOPICS) {
      const consumer = kafkajs('alice').consumer({ groupId: 'alice-kafkajs', retry: { retries: 0 } });
      await consumer.connect();
      try {
        const refused = new Promise<Error & { type?: string }>((resolve) => consumer.on(consumer.events.CRASH, (e) => resolve(e.payload.error)));
        const error = await consumer
          .subscribe({ topic, fromBeginning: true })
          .then(async () => {
            // Subscribed (Metadata answered): the refusal comes from Fetch, and the consumer crashes with it.
            await consumer.run({ eachMessage: () => Promise.reject(new Error(`read a record of ${topic}`)) });
            return refused;
          })
          .catch((e: Error & { type?: string }) => e);
        // subscribe throws the protocol error itself; a crash wraps it (KafkaJSNonRetriableError, the error as its cause).
        const type = error.type ?? (error.cause as { type?: string } | undefined)?.type;
        assert.equal(type, 'TOPIC_AUTHORIZATION_FAILED', `${topic}: ${error.name}: ${error.message}`);
      } finally {
        await consumer.disconnect();
      }
    }
  });

  // No password is in the broker's log or its admin pages.
  assert.ok(b.adminUrl);
  assertNoSecrets([...lines, ...(await captureAdminPages(b.adminUrl))], Object.values(PW));
});
