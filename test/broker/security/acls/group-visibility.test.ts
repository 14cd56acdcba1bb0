// What a principal may not describe stays out of its listings, seen through a real client (kafkajs's admin,
// over SASL_PLAINTEXT with PLAIN users; admin is a super user, alice is not):
// - ListGroups shows alice only the groups she has DESCRIBE on, and DescribeGroups (after FindCoordinator,
//   which kafkajs sends first) refuses the others; with DESCRIBE on the cluster she sees every group, as in
//   Kafka;
// - Metadata for all topics leaves out the topics she may not describe, and Metadata naming one of them
//   answers TOPIC_AUTHORIZATION_FAILED;
// - the groups and topics exist all along: the super user sees them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import kafkajsModule from 'kafkajs';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, type TestBroker } from '../../../helpers/broker.js';

// kafkajs is CommonJS: its ACL enums are properties of the default export.
const { AclOperationTypes: Op, AclPermissionTypes: Perm, AclResourceTypes: Res, ResourcePatternTypes: Pat } = kafkajsModule;
const PW = { admin: 'admin-Pw-6e0b', alice: 'alice-Pw-d41a' };

/** `errors` receives the error type of each failed attempt kafkajs logs (at debug level) and retries or hides. */
const kafka = (b: TestBroker, user: keyof typeof PW, errors: string[] = []) =>
  new Kafka({
    clientId: `visibility-${user}`,
    brokers: [`127.0.0.1:${b.broker.listenerPort('SASL_PLAINTEXT')}`],
    logLevel: logLevel.DEBUG,
    logCreator: () => (entry) => {
      const error = (entry.log as { error?: { type?: string } }).error;
      if (error?.type !== undefined) errors.push(`${entry.log.message}: ${error.type}`);
    },
    retry: { retries: 1 },
    sasl: { mechanism: 'plain', username: user, password: PW[user] },
  });

const allow = (resourceType: number, resourceName: string, operation: number) => ({
  resourceType,
  resourceName,
  resourcePatternType: Pat.LITERAL,
  principal: 'User:alice',
  host: '*',
  operation,
  permissionType: Perm.ALLOW,
});

test('ListGroups, DescribeGroups and Metadata hide what the principal may not describe', async (t) => {
  const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="${PW.admin}" user_alice="${PW.alice}";`;
  const b = await startBroker([
    '--listeners=SASL_PLAINTEXT://127.0.0.1:0',
    `--sasl.plain.jaas.config=${jaas}`,
    '--authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    '--super.users=User:admin',
    '--connection.failed.authentication.delay.ms=0',
  ]);
  t.after(() => b.stop());
  const admin = kafka(b, 'admin').admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  const aliceErrors: string[] = [];
  const alice = kafka(b, 'alice', aliceErrors).admin();
  await alice.connect();
  t.after(() => alice.disconnect());

  await admin.createTopics({ waitForLeaders: true, topics: ['visible', 'hidden'].map((topic) => ({ topic, numPartitions: 1 })) });
  // Two groups with committed offsets (Empty groups, listed as Kafka lists them).
  for (const groupId of ['visible-app', 'hidden-app']) await admin.setOffsets({ groupId, topic: 'visible', partitions: [{ partition: 0, offset: '0' }] });
  await admin.createAcls({ acl: [allow(Res.GROUP, 'visible-app', Op.DESCRIBE), allow(Res.TOPIC, 'visible', Op.DESCRIBE)] });

  const groupIds = async (a: typeof admin) => (await a.listGroups()).groups.map((g) => g.groupId).sort();
  assert.deepEqual(await groupIds(admin), ['hidden-app', 'visible-app'], 'both groups exist');
  assert.deepEqual(await groupIds(alice), ['visible-app']);

  const described = await alice.describeGroups(['visible-app']);
  assert.deepEqual(described.groups.map((g) => [g.groupId, g.state]), [['visible-app', 'Empty']]);
  // kafkajs asks FindCoordinator first, which needs DESCRIBE on the group too and is refused; kafkajs logs
  // that answer and reports that it found no coordinator.
  await assert.rejects(alice.describeGroups(['hidden-app']), { name: 'KafkaJSGroupCoordinatorNotFound' });
  assert.ok(aliceErrors.includes('Tried to find group coordinator: GROUP_AUTHORIZATION_FAILED'), aliceErrors.join('\n'));

  assert.deepEqual((await admin.listTopics()).sort(), ['hidden', 'visible']);
  assert.deepEqual(await alice.listTopics(), ['visible']);
  assert.deepEqual((await alice.fetchTopicMetadata()).topics.map((x) => x.name), ['visible']);
  await assert.rejects(alice.fetchTopicMetadata({ topics: ['hidden'] }), (err: Error & { type?: string }) => {
    assert.equal(err.type, 'TOPIC_AUTHORIZATION_FAILED', `${err.name}: ${err.message}`);
    return true;
  });

  // DESCRIBE on the cluster shows every group (Kafka's rule for ListGroups); topics still follow topic ACLs.
  await admin.createAcls({ acl: [allow(Res.CLUSTER, 'kafka-cluster', Op.DESCRIBE)] });
  assert.deepEqual(await groupIds(alice), ['hidden-app', 'visible-app']);
  assert.deepEqual(await alice.listTopics(), ['visible']);
});
