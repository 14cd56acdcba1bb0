// ACLs with Apache Kafka's own parts (kafka-tools 4.4 from Maven Central), one broker with an authorizer and
// SASL PLAIN users (admin is a super user, alice is not):
// - Kafka's Java producer (kafka-verifiable-producer.sh, which prints each send's outcome) is refused with
//   TopicAuthorizationException before any ACL, and produces once a PREFIXED Write ACL is added with kafka-acls.sh;
// - the Java consumer reads with Read on the topic and its group, and reads nothing for a group it has no ACL
//   for (the AdminClient, kafka-consumer-groups.sh, gets GroupAuthorizationException for that group);
// - a kafkajs transactional producer gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED until Write on its id is added
//   (what each client is told without Read on a topic: acls-read-refused.test.ts);
// - the AdminClient (kafka-topics.sh --list) sees only the topics alice may describe;
// - (kafka-console-producer.sh would fail silently: the tools have no logger binding, so it is not used.)
// - kafka-acls.sh lists (MATCH filter) and removes ACLs; they survive a restart (read back with kafkajs).
// The README's ACL block runs here, line by line, in its order. No password is in the broker's log, its admin
// pages or the tools' output.
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import kafkajsModule from 'kafkajs';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir, type TestBroker } from '../helpers/broker.js';
import { assertNoSecrets, captureAdminPages } from '../helpers/secrets.js';
import { runKafkaScript } from './clients/kafka-cli.js';

// kafkajs is CommonJS: its ACL enums are properties of the default export.
const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajsModule;

const lines = (s: string): string[] => s.split('\n').map((l) => l.trim()).filter((l) => l !== '');

const PW = { admin: 'admin-Pw-5d1e', alice: 'alice-Pw-77b3' };
const AUTHORIZER = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';

/** The lines of the sh block under "### ACLs" in the README's Security section. */
async function readmeAclCommands(): Promise<string[]> {
  const readme = await readFile('README.md', 'utf8');
  const section = readme.split(/^### /m).find((x) => x.startsWith('ACLs'));
  assert.ok(section, 'README.md has a subsection "### ACLs"');
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(block?.[1], 'the ACLs subsection has no sh block');
  return block[1].split('\n').filter((l) => l.trim() !== '');
}

async function props(dir: string, user: 'admin' | 'alice'): Promise<string> {
  const file = join(dir, `${user}.properties`);
  await writeFile(
    file,
    [
      'security.protocol=SASL_PLAINTEXT',
      'sasl.mechanism=PLAIN',
      `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${PW[user]}";`,
    ].join('\n') + '\n',
  );
  return file;
}

function start(dataDir: string, lines: string[]): Promise<TestBroker> {
  const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="${PW.admin}" user_alice="${PW.alice}";`;
  return startBroker(
    ['--listeners=SASL_PLAINTEXT://127.0.0.1:0', `--sasl.plain.jaas.config=${jaas}`, `--authorizer.class.name=${AUTHORIZER}`, '--super.users=User:admin', '--connection.failed.authentication.delay.ms=0'],
    { dataDir, log: (l) => lines.push(l) },
  );
}

const kafkajs = (b: TestBroker, user: 'admin' | 'alice') =>
  new Kafka({ clientId: 'acl-test', brokers: [`127.0.0.1:${b.broker.listenerPort('SASL_PLAINTEXT')}`], logLevel: logLevel.NOTHING, retry: { retries: 0 }, sasl: { mechanism: 'plain', username: user, password: PW[user] } });

test('kafka-acls.sh grants, lists and removes ACLs; the Java clients are refused and then served as Kafka would', { timeout: 300_000 }, async (t) => {
  const dir = await tempDir('floe-acls-interop-');
  const seen: string[] = []; // the broker's log lines and every tool's output, scanned for the passwords at the end
  let b = await start(dir, seen);
  t.after(async () => {
    await b.stop();
    await rm(dir, { recursive: true, force: true });
  });
  await b.broker.services.topics.createTopic('orders-eu', 1);
  await b.broker.services.topics.createTopic('secret', 1);
  const admin = await props(dir, 'admin');
  const alice = await props(dir, 'alice');
  const bootstrap = () => `127.0.0.1:${b.broker.listenerPort('SASL_PLAINTEXT')}`;
  const cli = async (line: string) => {
    const r = await runKafkaScript(line, { bootstrap: bootstrap(), cwd: dir });
    seen.push(r.stdout, r.stderr);
    return r;
  };
  const readme = await readmeAclCommands();
  assert.equal(readme.length, 4, 'the README shows two adds, a list and a remove');
  const readmeRun = async (i: number) => {
    const line = readme[i] ?? '';
    assert.ok(line.includes('--command-config admin.properties'), line);
    const r = await cli(line.replaceAll('localhost:9093', 'localhost:9092'));
    assert.equal(r.code, 0, `${line}\n${r.stderr}`);
    return r.stdout;
  };
  // The verifiable producer prints one JSON event per send, with the exception of a failed one.
  const produce = async () => {
    const r = await cli(`kafka-verifiable-producer.sh --bootstrap-server localhost:9092 --topic orders-eu --max-messages 3 --acks -1 --command-config ${alice}`);
    return lines(r.stdout).map((l) => JSON.parse(l) as { name: string; exception?: string; offset?: number });
  };

  // No ACL yet: deny by default. The (idempotent) Java producer gets TopicAuthorizationException for each send.
  const refused = (await produce()).filter((e) => e.name === 'producer_send_error');
  assert.equal(refused.length, 3, 'every send fails');
  for (const e of refused) assert.match(e.exception ?? '', /TopicAuthorizationException/);
  assert.equal(b.broker.services.topics.partitionLog('orders-eu', 0)?.logEndOffset, 0);

  // Write on every orders-* topic (PREFIXED), then Read on orders-eu and the group orders-app.
  assert.match(await readmeRun(0), /Adding ACLs for resource `ResourcePattern\(resourceType=TOPIC, name=orders-, patternType=PREFIXED\)`/);
  const added = await readmeRun(1);
  assert.match(added, /resourceType=TOPIC, name=orders-eu, patternType=LITERAL/);
  assert.match(added, /resourceType=GROUP, name=orders-app, patternType=LITERAL/);

  const produced = await produce();
  assert.deepEqual(produced.filter((e) => e.name === 'producer_send_success').map((e) => e.offset), [0, 1, 2]);
  assert.equal(b.broker.services.topics.partitionLog('orders-eu', 0)?.logEndOffset, 3);

  const consumed = await cli(`kafka-console-consumer.sh --bootstrap-server localhost:9092 --topic orders-eu --group orders-app --from-beginning --max-messages 3 --command-config ${alice}`);
  assert.equal(consumed.code, 0, consumed.stderr);
  assert.deepEqual(lines(consumed.stdout), ['0', '1', '2']);
  const otherGroup = await cli(`kafka-console-consumer.sh --bootstrap-server localhost:9092 --topic orders-eu --group other-app --from-beginning --max-messages 3 --timeout-ms 20000 --command-config ${alice}`);
  // Its FindCoordinator is refused (GroupAuthorizationException): it reads nothing and the group never forms.
  assert.match(otherGroup.stderr, /Processed a total of 0 messages/);
  assert.equal(b.broker.services.groups.coordinator.group('other-app'), undefined, 'the group was never joined');
  const described = await cli(`kafka-consumer-groups.sh --bootstrap-server localhost:9092 --describe --group other-app --command-config ${alice}`);
  assert.match(described.stdout + described.stderr, /GroupAuthorizationException/);

  // A transactional producer (kafkajs) needs Write on its transactional id: refused, then granted.
  const txnProducer = kafkajs(b, 'alice').producer({ transactionalId: 'orders-txn', idempotent: true, maxInFlightRequests: 1, retry: { retries: 2 } });
  await txnProducer.connect();
  try {
    // FindCoordinator for the id is refused first (53, as in Kafka); kafkajs reports that as "coordinator not found".
    await assert.rejects(txnProducer.transaction(), (err: Error & { type?: string }) => err.type === 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED' || err.name === 'KafkaJSGroupCoordinatorNotFound');
    const granted = await cli(`kafka-acls.sh --bootstrap-server localhost:9092 --command-config ${admin} --add --allow-principal User:alice --operation Write --transactional-id orders-txn`);
    assert.equal(granted.code, 0, granted.stderr);
    const txn = await txnProducer.transaction();
    await txn.send({ topic: 'orders-eu', messages: [{ value: 'in-a-transaction' }] });
    await txn.commit();
  } finally {
    await txnProducer.disconnect();
  }
  assert.equal(b.broker.services.topics.partitionLog('orders-eu', 0)?.logEndOffset, 5, 'the record and its commit marker');

  // Metadata hides the topic alice may not describe.
  const listed = await cli(`kafka-topics.sh --bootstrap-server localhost:9092 --list --command-config ${alice}`);
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(listed.stdout.trim().split('\n'), ['orders-eu']);

  // List with a MATCH filter: every ACL that applies to orders-eu (literal and prefixed), then remove the Read ACLs.
  const list = await readmeRun(2);
  assert.match(list, /name=orders-eu, patternType=LITERAL\)`:\s+\(principal=User:alice, host=\*, operation=READ, permissionType=ALLOW\)/);
  assert.match(list, /name=orders-, patternType=PREFIXED\)`:\s+\(principal=User:alice, host=\*, operation=WRITE, permissionType=ALLOW\)/);
  await readmeRun(3);
  const left = b.broker.services.authorizer?.describe({ resourceType: 1, resourceName: null, patternType: 1, principal: null, host: null, operation: 1, permissionType: 1 });
  assert.deepEqual(left?.map((a) => [a.resourceType, a.resourceName, a.patternType, a.operation]), [[2, 'orders-', 4, 4], [5, 'orders-txn', 3, 4]]);

  // After a restart the ACLs are still there, seen by kafkajs's admin; alice still sees only orders-eu.
  await b.stop();
  b = await start(dir, seen);
  const kAdmin = kafkajs(b, 'admin').admin();
  await kAdmin.connect();
  try {
    const acls = await kAdmin.describeAcls({
      resourceType: AclResourceTypes.ANY,
      resourcePatternType: ResourcePatternTypes.ANY,
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    });
    assert.deepEqual(
      acls.resources.map((r) => ({ type: r.resourceType, name: r.resourceName, pattern: r.resourcePatternType, acls: r.acls.map((a) => [a.principal, a.host, a.operation, a.permissionType]) })),
      [
        { type: AclResourceTypes.TOPIC, name: 'orders-', pattern: ResourcePatternTypes.PREFIXED, acls: [['User:alice', '*', AclOperationTypes.WRITE, AclPermissionTypes.ALLOW]] },
        { type: AclResourceTypes.TRANSACTIONAL_ID, name: 'orders-txn', pattern: ResourcePatternTypes.LITERAL, acls: [['User:alice', '*', AclOperationTypes.WRITE, AclPermissionTypes.ALLOW]] },
      ],
    );
  } finally {
    await kAdmin.disconnect();
  }
  const aliceAdmin = kafkajs(b, 'alice').admin();
  await aliceAdmin.connect();
  try {
    assert.deepEqual(await aliceAdmin.listTopics(), ['orders-eu']);
  } finally {
    await aliceAdmin.disconnect();
  }
  assert.ok(b.adminUrl);
  assertNoSecrets([...seen, ...(await captureAdminPages(b.adminUrl))], Object.values(PW));
});
