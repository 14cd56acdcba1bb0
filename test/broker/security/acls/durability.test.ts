// ACLs are durable: created through CreateAcls (kafkajs's admin), they are on disk when the answer comes, so
// a broker killed with SIGKILL right after comes back with them, and DescribeAcls returns them unchanged.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import kafkajsModule from 'kafkajs';
import { Kafka, logLevel } from 'kafkajs';
import { spawnBroker, tempDir } from '../../../helpers/broker.js';

// kafkajs is CommonJS: its ACL enums are properties of the default export.
const { AclOperationTypes: Op, AclPermissionTypes: Perm, AclResourceTypes: Res, ResourcePatternTypes: Pat } = kafkajsModule;
const FLAGS = ['--authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer', '--super.users=User:ANONYMOUS'];

test('ACLs survive kill -9', async (t) => {
  const dir = await tempDir('floe-acls-kill-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const admin = (bootstrap: string) => new Kafka({ clientId: 'acl-durability', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } }).admin();
  const acls = [
    { resourceType: Res.TOPIC, resourceName: 'logs-', resourcePatternType: Pat.PREFIXED, principal: 'User:app', host: '*', operation: Op.WRITE, permissionType: Perm.ALLOW },
    { resourceType: Res.GROUP, resourceName: '*', resourcePatternType: Pat.LITERAL, principal: 'User:app', host: '10.1.2.3', operation: Op.READ, permissionType: Perm.DENY },
  ];
  const first = await spawnBroker(dir, FLAGS);
  try {
    const a = admin(first.bootstrap);
    await a.connect();
    await a.createAcls({ acl: acls });
    await a.disconnect();
  } finally {
    first.child.kill('SIGKILL');
  }
  assert.equal((await first.ended).signal, 'SIGKILL');

  const second = await spawnBroker(dir, FLAGS);
  t.after(async () => {
    second.child.kill('SIGTERM');
    await second.exited;
  });
  const a = admin(second.bootstrap);
  await a.connect();
  try {
    const found = await a.describeAcls({ resourceType: Res.ANY, resourcePatternType: Pat.ANY, operation: Op.ANY, permissionType: Perm.ANY });
    const flat = found.resources.flatMap((r) => r.acls.map((x) => ({ resourceType: r.resourceType, resourceName: r.resourceName, resourcePatternType: r.resourcePatternType, ...x })));
    assert.deepEqual(flat, acls);
  } finally {
    await a.disconnect();
  }
});
