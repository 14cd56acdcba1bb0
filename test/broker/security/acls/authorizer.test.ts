// The authorizer's matching rules, on a real metadata store in a temp dir: LITERAL, PREFIXED and the `*`
// resource, principal and host wildcards, DENY over ALLOW, Kafka's operation implications, super users,
// allow.everyone.if.no.acl.found, filters (ANY, MATCH), validation, and durability across a reopen.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { EmbeddedMetadataStore } from '../../../../broker/metadata/embedded-metadata-store.js';
import { AclOperation as Op, AclPermission as Perm, PatternType as Pat, ResourceType as Res, type AclBinding } from '../../../../broker/security/acls/acl.js';
import { AclAuthorizer } from '../../../../broker/security/acls/authorizer.js';
import { clientHost } from '../../../../broker/security/acls/access.js';

async function open(t: TestContext, config: { 'super.users'?: string; 'allow.everyone.if.no.acl.found'?: boolean } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'floe-acls-'));
  const metadata = await EmbeddedMetadataStore.open(dir);
  t.after(async () => {
    await metadata.close();
    await rm(dir, { recursive: true, force: true });
  });
  const settings = { 'super.users': config['super.users'] ?? '', 'allow.everyone.if.no.acl.found': config['allow.everyone.if.no.acl.found'] ?? false };
  return { dir, metadata, settings, authorizer: new AclAuthorizer(metadata, settings) };
}

const acl = (b: Partial<AclBinding>): AclBinding => ({
  resourceType: Res.TOPIC,
  resourceName: 'orders',
  patternType: Pat.LITERAL,
  principal: 'User:alice',
  host: '*',
  operation: Op.READ,
  permissionType: Perm.ALLOW,
  ...b,
});

test('LITERAL, PREFIXED and the * resource grant what they name, nothing more', async (t) => {
  const { authorizer } = await open(t);
  assert.deepEqual(
    await authorizer.create([
      acl({ resourceName: 'orders' }),
      acl({ resourceName: 'pay-', patternType: Pat.PREFIXED }),
      acl({ resourceType: Res.GROUP, resourceName: '*', principal: 'User:bob' }),
    ]),
    [undefined, undefined, undefined],
  );
  const can = (p: string, type: 'TOPIC' | 'GROUP', name: string) => authorizer.authorize(p, '10.0.0.1', 'READ', type, name);
  assert.equal(can('User:alice', 'TOPIC', 'orders'), true);
  assert.equal(can('User:alice', 'TOPIC', 'orders2'), false);
  assert.equal(can('User:alice', 'TOPIC', 'pay-eu'), true);
  assert.equal(can('User:alice', 'TOPIC', 'pay'), false);
  assert.equal(can('User:bob', 'TOPIC', 'orders'), false);
  assert.equal(can('User:bob', 'GROUP', 'any-group'), true);
  assert.equal(can('User:alice', 'GROUP', 'any-group'), false);
});

test('DENY wins over ALLOW; User:* and host wildcards; exact hosts', async (t) => {
  const { authorizer } = await open(t);
  await authorizer.create([
    acl({ principal: 'User:*', operation: Op.ALL }),
    acl({ principal: 'User:mallory', operation: Op.WRITE, permissionType: Perm.DENY }),
    acl({ principal: 'User:eve', operation: Op.ALL, permissionType: Perm.DENY, host: '10.0.0.9' }),
  ]);
  assert.equal(authorizer.authorize('User:mallory', '10.0.0.1', 'READ', 'TOPIC', 'orders'), true);
  assert.equal(authorizer.authorize('User:mallory', '10.0.0.1', 'WRITE', 'TOPIC', 'orders'), false);
  assert.equal(authorizer.authorize('User:eve', '10.0.0.9', 'DESCRIBE', 'TOPIC', 'orders'), false);
  assert.equal(authorizer.authorize('User:eve', '10.0.0.8', 'DESCRIBE', 'TOPIC', 'orders'), true);
});

test("Kafka's implications: READ/WRITE/DELETE/ALTER imply DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS; a DENY implies nothing", async (t) => {
  const { authorizer } = await open(t);
  for (const [op, name] of [[Op.READ, 'r'], [Op.WRITE, 'w'], [Op.DELETE, 'd'], [Op.ALTER, 'a'], [Op.ALTER_CONFIGS, 'ac'], [Op.CREATE, 'c']] as const) {
    await authorizer.create([acl({ resourceName: name, operation: op })]);
  }
  for (const name of ['r', 'w', 'd', 'a']) assert.equal(authorizer.authorize('User:alice', 'h', 'DESCRIBE', 'TOPIC', name), true, name);
  assert.equal(authorizer.authorize('User:alice', 'h', 'DESCRIBE', 'TOPIC', 'c'), false);
  assert.equal(authorizer.authorize('User:alice', 'h', 'DESCRIBE_CONFIGS', 'TOPIC', 'ac'), true);
  assert.equal(authorizer.authorize('User:alice', 'h', 'DESCRIBE', 'TOPIC', 'ac'), false);
  assert.equal(authorizer.authorize('User:alice', 'h', 'WRITE', 'TOPIC', 'r'), false);
  await authorizer.create([acl({ resourceName: 'r', operation: Op.READ, permissionType: Perm.DENY, principal: 'User:bob' }), acl({ resourceName: 'r', operation: Op.DESCRIBE, principal: 'User:bob' })]);
  assert.equal(authorizer.authorize('User:bob', 'h', 'DESCRIBE', 'TOPIC', 'r'), true, 'a DENY READ does not deny DESCRIBE');
});

test('super users pass; with no ACL on a resource, allow.everyone.if.no.acl.found decides', async (t) => {
  const strict = await open(t, { 'super.users': 'User:admin; User:CN=ops,O=example' });
  assert.equal(strict.authorizer.authorize('User:alice', 'h', 'READ', 'TOPIC', 'orders'), false, 'deny by default');
  assert.equal(strict.authorizer.authorize('User:admin', 'h', 'ALTER', 'CLUSTER', 'kafka-cluster'), true);
  assert.equal(strict.authorizer.authorize('User:CN=ops,O=example', 'h', 'DELETE', 'TOPIC', 'x'), true);
  const lenient = await open(t, { 'allow.everyone.if.no.acl.found': true });
  assert.equal(lenient.authorizer.authorize('User:alice', 'h', 'READ', 'TOPIC', 'orders'), true);
  await lenient.authorizer.create([acl({ principal: 'User:bob' })]);
  assert.equal(lenient.authorizer.authorize('User:alice', 'h', 'READ', 'TOPIC', 'orders'), false, 'once a resource has ACLs, only they count');
  assert.equal(lenient.authorizer.authorize('User:alice', 'h', 'READ', 'TOPIC', 'other'), true);
});

test("authorizeAny (Kafka's authorizeByResourceType): an ALLOW on some topic, unless a DENY voids it", async (t) => {
  const { authorizer } = await open(t);
  assert.equal(authorizer.authorizeAny('User:alice', 'h', 'WRITE', 'TOPIC'), false);
  await authorizer.create([acl({ resourceName: 'logs-', patternType: Pat.PREFIXED, operation: Op.WRITE })]);
  assert.equal(authorizer.authorizeAny('User:alice', 'h', 'WRITE', 'TOPIC'), true);
  await authorizer.create([acl({ resourceName: 'logs', patternType: Pat.PREFIXED, operation: Op.WRITE, permissionType: Perm.DENY })]);
  assert.equal(authorizer.authorizeAny('User:alice', 'h', 'WRITE', 'TOPIC'), false, 'a PREFIXED DENY of a prefix voids the ALLOW');
  await authorizer.create([acl({ resourceName: 'audit', operation: Op.ALL })]);
  assert.equal(authorizer.authorizeAny('User:alice', 'h', 'WRITE', 'TOPIC'), true, 'ALL on one topic is enough');
  await authorizer.create([acl({ resourceName: 'audit', operation: Op.WRITE, permissionType: Perm.DENY })]);
  assert.equal(authorizer.authorizeAny('User:alice', 'h', 'WRITE', 'TOPIC'), false, 'a LITERAL DENY of the same name voids it');
  await authorizer.create([acl({ resourceName: 'other', operation: Op.READ })]);
  assert.equal(authorizer.authorizeAny('User:alice', 'h', 'WRITE', 'TOPIC'), false, 'READ is not WRITE');
  await authorizer.create([acl({ resourceName: '*', operation: Op.WRITE, principal: 'User:*' }), acl({ resourceName: '*', operation: Op.WRITE, permissionType: Perm.DENY, principal: 'User:bob' })]);
  assert.equal(authorizer.authorizeAny('User:alice', 'h', 'WRITE', 'TOPIC'), true, 'an ALLOW on * passes');
  assert.equal(authorizer.authorizeAny('User:bob', 'h', 'WRITE', 'TOPIC'), false, 'a DENY on * refuses, even with the ALLOW on * for everyone');
  const lenient = await open(t, { 'allow.everyone.if.no.acl.found': true });
  assert.equal(lenient.authorizer.authorizeAny('User:alice', 'h', 'WRITE', 'TOPIC'), true, 'as Kafka: with no ACL at all, allow.everyone.if.no.acl.found decides');
});

test('filters: ANY, MATCH and exact patterns; delete returns what it removed; invalid bindings are refused with a reason', async (t) => {
  const { authorizer } = await open(t);
  await authorizer.create([acl({ resourceName: 'orders' }), acl({ resourceName: 'ord', patternType: Pat.PREFIXED }), acl({ resourceName: '*' }), acl({ resourceName: 'other' })]);
  const any = { resourceType: Res.ANY, resourceName: null, patternType: Pat.ANY, principal: null, host: null, operation: Op.ANY, permissionType: Perm.ANY };
  assert.equal(authorizer.describe(any).length, 4);
  assert.deepEqual(authorizer.describe({ ...any, resourceName: 'orders', patternType: Pat.MATCH }).map((b) => b.resourceName).sort(), ['*', 'ord', 'orders']);
  assert.deepEqual(authorizer.describe({ ...any, resourceName: 'orders', patternType: Pat.LITERAL }).map((b) => b.resourceName), ['orders']);
  assert.deepEqual(authorizer.describe({ ...any, resourceName: 'ord', patternType: Pat.ANY }).map((b) => b.patternType), [Pat.PREFIXED]);
  const [removed] = await authorizer.delete([{ ...any, resourceName: 'orders', patternType: Pat.MATCH }]);
  assert.equal(removed?.length, 3);
  assert.deepEqual(authorizer.describe(any).map((b) => b.resourceName), ['other']);
  const problems = await authorizer.create([
    acl({ patternType: Pat.MATCH }),
    acl({ operation: Op.ANY }),
    acl({ principal: 'alice' }),
    acl({ resourceType: Res.CLUSTER, resourceName: 'mine' }),
    acl({ resourceName: '' }),
  ]);
  assert.ok(problems.every((p) => typeof p === 'string' && p.length > 0), JSON.stringify(problems));
  assert.equal(authorizer.describe(any).length, 1);
});

test('ACLs are durable: a reopened store holds them, and creating one twice stores it once', async (t) => {
  const { dir, metadata, settings, authorizer } = await open(t);
  await authorizer.create([acl({}), acl({})]);
  await Promise.all([authorizer.create([acl({})]), authorizer.create([acl({})])]);
  await metadata.close();
  const again = await EmbeddedMetadataStore.open(dir);
  t.after(() => again.close());
  assert.equal(again.listAcls().length, 1);
  assert.equal(new AclAuthorizer(again, settings).authorize('User:alice', 'h', 'READ', 'TOPIC', 'orders'), true);
});

test("a connection's address becomes the host Kafka matches ACLs against", () => {
  assert.equal(clientHost('127.0.0.1:50432'), '127.0.0.1');
  assert.equal(clientHost('::ffff:10.1.2.3:9000'), '10.1.2.3');
  assert.equal(clientHost('::1:41000'), '::1');
  assert.equal(clientHost('[fe80::1]:41000'), 'fe80::1');
});
