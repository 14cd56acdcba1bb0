// ACL enforcement across the whole API surface, on one broker with an authorizer and a PLAINTEXT client
// (principal User:ANONYMOUS): with no ACL every advertised API refuses with Kafka's *_AUTHORIZATION_FAILED
// code or shows nothing, except the few Kafka never authorizes, and nothing changes on the broker; then
// ACLs granted through the broker's authorizer open exactly what they name, DENY wins, and the ACL APIs
// refuse malformed bindings and filters with INVALID_REQUEST.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { API_SPECS } from '../../../../protocol/messages/index.js';
import { AclOperation as Op, AclPermission as Perm, PatternType as Pat, ResourceType as Res, type AclBinding } from '../../../../broker/security/acls/acl.js';
import { startBroker } from '../../../helpers/broker.js';
import { errorCodes, fit, GROUP, REQUESTS, TOPIC } from '../../handlers/sample-requests.js';
import { batchOf, fetchBody, fetchPartitions, firstPartition, produceBody, WireClient, type Body } from '../../handlers/wire-client.js';

const AUTHZ_CODES = new Set([29, 30, 31, 53]);
/**
 * APIs that answer without an authorization error when nothing is allowed, and why (as in Kafka): the SASL
 * APIs are never authorized (on PLAINTEXT they answer ILLEGAL_SASL_STATE); DescribeCluster needs no ACL;
 * ListGroups and ListTransactions leave out what the principal may not describe.
 */
const OPEN: ReadonlyMap<number, (response: Body) => void> = new Map([
  [17, () => undefined],
  [36, () => undefined],
  [60, () => undefined],
  [16, (r: Body) => assert.deepEqual(r.groups, [])],
  [66, (r: Body) => assert.deepEqual(r.transactionStates, [])],
]);

const acl = (b: Partial<AclBinding>): AclBinding => ({
  resourceType: Res.TOPIC,
  resourceName: TOPIC,
  patternType: Pat.LITERAL,
  principal: 'User:ANONYMOUS',
  host: '*',
  operation: Op.READ,
  permissionType: Perm.ALLOW,
  ...b,
});

test('an authorizer refuses every API with Kafka codes until ACLs allow it', async (t) => {
  const lines: string[] = [];
  const b = await startBroker(['--authorizer.class.name=kafka.security.authorizer.AclAuthorizer'], { log: (l) => lines.push(l) });
  t.after(() => b.stop());
  const authorizer = b.broker.services.authorizer;
  assert.ok(authorizer, 'authorizer.class.name selects the ACL authorizer');
  const record = await b.broker.services.topics.createTopic(TOPIC, 1);
  const client = await WireClient.connect(b.port);
  t.after(() => client.close());

  // Nothing allowed: every API at its newest version refuses (or shows nothing), and nothing changes.
  const advertised = b.broker.router.apiVersions().filter((a) => a.apiKey !== 18);
  const unrefused: string[] = [];
  for (const { apiKey, maxVersion } of advertised) {
    const spec = API_SPECS.get(apiKey);
    const sample = REQUESTS[apiKey];
    assert.ok(spec && sample, `API ${apiKey} has a sample request`);
    const response = await client.request(apiKey, maxVersion, fit(spec.request.fields, maxVersion, sample({ topicId: record.id, version: maxVersion })));
    const codes = errorCodes(response).map(([, code]) => code);
    const open = OPEN.get(apiKey);
    if (open !== undefined) open(response);
    else if (!codes.some((c) => AUTHZ_CODES.has(c))) unrefused.push(`${spec.name} (${apiKey}): ${JSON.stringify(codes)}`);
  }
  assert.deepEqual(unrefused, [], 'these APIs answered without an authorization error');
  assert.equal(b.broker.services.topics.partitionLog(TOPIC, 0)?.logEndOffset, 0, 'nothing was produced (nor a marker written)');
  assert.deepEqual(b.broker.services.metadata.listTopics().map((x) => x.name), [TOPIC], 'no topic was created or deleted');
  assert.deepEqual([...b.broker.services.groups.coordinator.allGroups()].map((g) => g.groupId), [], 'no group was joined');
  // Refusals are logged (rate-limited), naming principal, operation and resource, as Kafka's authorizer log does.
  const first = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'authorization denied');
  assert.deepEqual(first && [first.principal, first.host, first.resourceType], ['User:ANONYMOUS', '127.0.0.1', 'TOPIC']);
  const all = await client.request(3, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true });
  assert.deepEqual(all.topics, [], 'Metadata for every topic leaves out what may not be described');

  // A host ACL matches the client's address (127.0.0.1, without its port): a DENY for another host does not apply.
  await authorizer.create([acl({ operation: Op.DESCRIBE, host: '127.0.0.1' }), acl({ operation: Op.ALL, host: '10.9.9.9', permissionType: Perm.DENY })]);
  const byHost = await client.request(3, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  assert.deepEqual((byHost.topics as { name: string }[]).map((x) => x.name), [TOPIC]);
  await authorizer.delete([{ resourceType: Res.TOPIC, resourceName: TOPIC, patternType: Pat.LITERAL, principal: null, host: null, operation: Op.ANY, permissionType: Perm.ANY }]);

  // WRITE on the topic: produce works (and implies DESCRIBE, so Metadata shows it), fetch still does not.
  await authorizer.create([acl({ operation: Op.WRITE })]);
  const produced = firstPartition(await client.request(0, 11, produceBody(TOPIC, 0, batchOf(['a', 'b']))));
  assert.equal(produced.errorCode, 0);
  const shown = await client.request(3, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true });
  const ops = (shown.topics as { name: string; topicAuthorizedOperations: number }[])[0];
  assert.equal(ops?.name, TOPIC);
  assert.equal(ops.topicAuthorizedOperations, (1 << Op.WRITE) | (1 << Op.DESCRIBE), 'authorized operations: WRITE and the DESCRIBE it implies');
  const fetchBodyV = fetchBody(TOPIC, [{ partition: 0, fetchOffset: 0n }], { maxWaitMs: 0 });
  assert.equal(fetchPartitions(await client.request(1, 12, fetchBodyV))[0]?.errorCode, 29);

  // READ on the topic (PREFIXED) and the group: fetch and OffsetCommit work; a DENY on the group wins.
  await authorizer.create([acl({ resourceName: TOPIC.slice(0, 3), patternType: Pat.PREFIXED }), acl({ resourceType: Res.GROUP, resourceName: GROUP })]);
  const fetched = fetchPartitions(await client.request(1, 12, fetchBodyV))[0];
  assert.equal(fetched?.errorCode, 0);
  const commit = (REQUESTS[8] as (c: { topicId: Buffer; version: number }) => Body)({ topicId: record.id, version: 9 });
  const committed = await client.request(8, 9, commit);
  assert.deepEqual(errorCodes(committed).map(([, c]) => c), [0]);
  await authorizer.create([acl({ resourceType: Res.GROUP, resourceName: '*', operation: Op.ALL, permissionType: Perm.DENY })]);
  assert.deepEqual(errorCodes(await client.request(8, 9, commit)).map(([, c]) => c), [30]);

  // The ACL APIs need the cluster: refused, then (ALTER and DESCRIBE on kafka-cluster) bad input is INVALID_REQUEST.
  const creation = { resourceType: Res.TOPIC, resourceName: 'x', resourcePatternType: Pat.MATCH, principal: 'User:bob', host: '*', operation: Op.READ, permissionType: Perm.ALLOW };
  assert.deepEqual(errorCodes(await client.request(30, 3, { creations: [creation] })).map(([, c]) => c), [31]);
  await authorizer.create([acl({ resourceType: Res.CLUSTER, resourceName: 'kafka-cluster', operation: Op.ALTER })]);
  const created = (await client.request(30, 3, { creations: [creation, { ...creation, resourcePatternType: Pat.LITERAL }] })).results as { errorCode: number; errorMessage: string | null }[];
  assert.deepEqual(created.map((r) => r.errorCode), [42, 0]);
  assert.match(created[0]?.errorMessage ?? '', /patternType/);
  const unknownFilter = { resourceTypeFilter: Res.UNKNOWN, resourceNameFilter: null, patternTypeFilter: Pat.ANY, principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: Perm.ANY };
  const described = await client.request(29, 3, unknownFilter);
  assert.equal(described.errorCode, 42, 'ALTER implies DESCRIBE on the cluster; the UNKNOWN filter is refused');
  const listed = await client.request(29, 3, { ...unknownFilter, resourceTypeFilter: Res.ANY, principalFilter: 'User:bob' });
  assert.deepEqual(listed.resources, [{ resourceType: Res.TOPIC, resourceName: 'x', patternType: Pat.LITERAL, acls: [{ principal: 'User:bob', host: '*', operation: Op.READ, permissionType: Perm.ALLOW }] }]);
  const deleted = (await client.request(31, 3, { filters: [unknownFilter, { ...unknownFilter, resourceTypeFilter: Res.ANY, principalFilter: 'User:bob' }] })).filterResults as { errorCode: number; matchingAcls: unknown[] }[];
  assert.deepEqual(deleted.map((r) => [r.errorCode, r.matchingAcls.length]), [[42, 0], [0, 1]]);
});
