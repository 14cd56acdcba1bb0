// ACLs through Apache Kafka's Java AdminClient (kafka-clients 4.x, test/interop/java AclOps): createAcls,
// describeAcls (ANY and MATCH filters) and deleteAcls round-trip, checked with kafkajs's admin as a second,
// independent reader; and what the ACLs grant is checked with real clients as alice (a PLAIN user, not a
// super user):
// - a PREFIXED Read on orders- and a Read on group orders-app let the Java consumer read orders-eu in that
//   group, and no other group (GroupAuthorizationException) or topic (TopicAuthorizationException);
// - Write on transactional id orders-txn lets a kafkajs transactional producer commit, and no other id;
// - the Java AdminClient's listGroups shows alice only orders-app, and describeConsumerGroups refuses the other;
// - alice may not describe or create ACLs (ClusterAuthorizationException);
// - deleteAcls answers, per filter, the bindings it removed, and the access they gave is gone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import kafkajsModule from 'kafkajs';
import { assertNoSecrets, captureAdminPages } from '../helpers/secrets.js';
import { JavaClientError, type JavaClient } from './clients/java.js';
import { javaAs, kafkajsAs, PW, startAclBroker, type AclUser } from './acl-broker.js';

const { AclOperationTypes: Op, AclPermissionTypes: Perm, AclResourceTypes: Res, ResourcePatternTypes: Pat } = kafkajsModule;

/** A binding as AclOps.java reads and writes it: Kafka's enum names. */
interface Binding {
  resourceType: string;
  name: string;
  patternType: string;
  principal: string;
  host: string;
  operation: string;
  permission: string;
}

const alice = (resourceType: string, name: string, patternType: string, operation: string): Binding => ({ resourceType, name, patternType, principal: 'User:alice', host: '*', operation, permission: 'ALLOW' });
const key = (x: Binding) => `${x.resourceType}/${x.name}/${x.patternType}/${x.principal}/${x.host}/${x.operation}/${x.permission}`;
const sorted = (xs: readonly Binding[]) => [...xs].sort((a, b) => key(a).localeCompare(key(b)));

const ACLS = {
  topicRead: alice('TOPIC', 'orders-', 'PREFIXED', 'READ'),
  topicWrite: alice('TOPIC', 'orders-', 'PREFIXED', 'WRITE'),
  group: alice('GROUP', 'orders-app', 'LITERAL', 'READ'),
  txn: alice('TRANSACTIONAL_ID', 'orders-txn', 'LITERAL', 'WRITE'),
};

async function rejectsWith(p: Promise<unknown>, errorClass: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof JavaClientError, String(e));
    assert.equal(e.errorClass, errorClass, e.message);
    return true;
  });
}

test("ACLs created, described and deleted with Kafka's Java AdminClient, and what they grant", { timeout: 300_000 }, async (t) => {
  const broker = await startAclBroker(t, 'acls-java');
  const { b, lines } = broker;
  const kafka = (user: AclUser) => kafkajsAs(broker, user, `acls-java-${user}`, 1);
  const check = kafka('admin').admin();
  await check.connect();
  t.after(() => check.disconnect());
  const admin = await javaAs(t, broker, 'admin');
  const java = await javaAs(t, broker, 'alice');

  for (const topic of ['orders-eu', 'orders-us', 'other']) await admin.createTopic(topic, 1);
  const records = ['r0', 'r1'].map((v) => ({ partition: 0, key: null, value: Buffer.from(v), headers: [] }));
  await admin.produce({ topic: 'orders-eu', acks: -1, codec: 'none', idempotent: true, records });
  await admin.produce({ topic: 'other', acks: -1, codec: 'none', idempotent: true, records });
  // Two groups with committed offsets: orders-app (alice's) and hidden-app (not hers).
  for (const groupId of ['orders-app', 'hidden-app']) await check.setOffsets({ groupId, topic: 'orders-eu', partitions: [{ partition: 0, offset: '0' }] });
  const read = (topic: string, group: string) => java.call('subscribe_poll', { topic, group, count: 2 }) as Promise<{ records: { value: string }[] }>;

  // Deny by default.
  await rejectsWith(read('orders-eu', 'orders-app'), 'TopicAuthorizationException');

  await admin.call('create_acls', { acls: Object.values(ACLS) });
  const describe = async (filter: Partial<Binding>) => ((await admin.call('describe_acls', { filter })) as { acls: Binding[] }).acls;
  assert.deepEqual(sorted(await describe({})), sorted(Object.values(ACLS)), 'an ANY filter returns every binding created');
  assert.deepEqual(sorted(await describe({ resourceType: 'TOPIC', name: 'orders-eu', patternType: 'MATCH' })), sorted([ACLS.topicRead, ACLS.topicWrite]), 'MATCH: the prefixed bindings that apply to orders-eu');
  assert.deepEqual(await describe({ resourceType: 'GROUP' }), [ACLS.group]);
  assert.deepEqual(await describe({ principal: 'User:bob' }), []);
  // kafkajs reads the same bindings back.
  const seenByKafkajs = await check.describeAcls({ resourceType: Res.ANY, resourcePatternType: Pat.ANY, operation: Op.ANY, permissionType: Perm.ANY });
  const flat = seenByKafkajs.resources.flatMap((r) => r.acls.map((a) => [r.resourceType, r.resourceName, r.resourcePatternType, a.principal, a.host, a.operation, a.permissionType]));
  assert.deepEqual(
    flat.map((x) => x.join('/')).sort(),
    [
      [Res.TOPIC, 'orders-', Pat.PREFIXED, 'User:alice', '*', Op.READ, Perm.ALLOW],
      [Res.TOPIC, 'orders-', Pat.PREFIXED, 'User:alice', '*', Op.WRITE, Perm.ALLOW],
      [Res.GROUP, 'orders-app', Pat.LITERAL, 'User:alice', '*', Op.READ, Perm.ALLOW],
      [Res.TRANSACTIONAL_ID, 'orders-txn', Pat.LITERAL, 'User:alice', '*', Op.WRITE, Perm.ALLOW],
    ].map((x) => x.join('/')).sort(),
  );

  await t.test('the prefixed topic ACL and the group ACL let alice read, in that group only', async () => {
    const got = await read('orders-eu', 'orders-app');
    assert.deepEqual(got.records.map((r) => Buffer.from(r.value, 'base64').toString()), ['r0', 'r1']);
    await rejectsWith(read('orders-eu', 'other-app'), 'GroupAuthorizationException');
    await rejectsWith(read('other', 'orders-app'), 'TopicAuthorizationException');
  });

  await t.test('the transactional-id ACL lets alice commit a transaction with that id only', async () => {
    const producer = kafka('alice').producer({ transactionalId: 'orders-txn', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const txn = await producer.transaction();
      await txn.send({ topic: 'orders-us', messages: [{ value: 'in-a-transaction' }] });
      await txn.commit();
    } finally {
      await producer.disconnect();
    }
    assert.equal(b.broker.services.topics.partitionLog('orders-us', 0)?.logEndOffset, 2, 'the record and its commit marker');
    const other = kafka('alice').producer({ transactionalId: 'other-txn', idempotent: true, maxInFlightRequests: 1 });
    await other.connect();
    try {
      // FindCoordinator for the id is refused (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); kafkajs reports no coordinator.
      await assert.rejects(other.transaction(), (err: Error & { type?: string }) => err.type === 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED' || err.name === 'KafkaJSGroupCoordinatorNotFound');
    } finally {
      await other.disconnect();
    }
  });

  await t.test("the Java AdminClient's listGroups and describeConsumerGroups hide the group alice may not describe", async () => {
    const groups = async (c: JavaClient) => ((await c.call('list_groups')) as { groups: { groupId: string }[] }).groups.map((g) => g.groupId).sort();
    assert.deepEqual(await groups(admin), ['hidden-app', 'orders-app']);
    assert.deepEqual(await groups(java), ['orders-app']);
    assert.equal(((await java.call('describe_group', { group: 'orders-app' })) as { groupId: string }).groupId, 'orders-app');
    await rejectsWith(java.call('describe_group', { group: 'hidden-app' }), 'GroupAuthorizationException');
  });

  await t.test('alice may not describe or create ACLs', async () => {
    await rejectsWith(java.call('describe_acls', { filter: {} }), 'ClusterAuthorizationException');
    await rejectsWith(java.call('create_acls', { acls: [alice('TOPIC', 'other', 'LITERAL', 'READ')] }), 'ClusterAuthorizationException');
  });

  await t.test('deleteAcls answers what each filter removed; the access is gone', async () => {
    const { deleted } = (await admin.call('delete_acls', {
      filters: [{ resourceType: 'TOPIC', name: 'orders-', patternType: 'PREFIXED' }, { resourceType: 'GROUP', principal: 'User:alice' }, { resourceType: 'TOPIC', name: 'no-such-topic' }],
    })) as { deleted: Binding[][] };
    assert.equal(deleted.length, 3);
    assert.deepEqual(sorted(deleted[0] ?? []), sorted([ACLS.topicRead, ACLS.topicWrite]));
    assert.deepEqual(deleted[1], [ACLS.group]);
    assert.deepEqual(deleted[2], [], 'a filter that matches nothing removes nothing');
    assert.deepEqual(await describe({}), [ACLS.txn]);
    const left = await check.describeAcls({ resourceType: Res.ANY, resourcePatternType: Pat.ANY, operation: Op.ANY, permissionType: Perm.ANY });
    assert.deepEqual(left.resources.map((r) => [r.resourceType, r.resourceName]), [[Res.TRANSACTIONAL_ID, 'orders-txn']]);
    await rejectsWith(read('orders-eu', 'orders-app'), 'TopicAuthorizationException');
  });

  assert.ok(b.adminUrl);
  assertNoSecrets([...lines, ...(await captureAdminPages(b.adminUrl))], Object.values(PW));
});
