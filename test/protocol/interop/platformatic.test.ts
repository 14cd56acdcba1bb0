/**
 * Cross-implementation check against @platformatic/kafka, whose per-version request encoders and response
 * parsers are written by hand, independently of our declarations. For EVERY (API, version) that it
 * implements and we declare:
 *   - requests: its `createRequest` writes the body, framed with the request header exactly as its
 *     connection does; our `decodeRequest` must read the whole frame and find the sample values;
 *   - responses: our `encodeResponse` writes a sample body; after the response header (read the way its
 *     connection reads it) its `parseResponse` must find every value we sent.
 * The samples are one table entry per API (arguments and bodies), fitted to each version by our
 * declarations' field version ranges. The list of versions is read from the package's exports, so a new
 * platformatic version shows up here as a missing sample.
 *
 * Where platformatic departs from Kafka's definitions (found by this test), the case says so, so a failure
 * points at our side; a departure that platformatic fixes makes its case fail until it is removed here:
 * - Metadata v11 request writes IncludeClusterAuthorizedOperations (Kafka: v8-10 only); its v8-10 parsers
 *   skip ClusterAuthorizedOperations (int32) as a one-byte boolean, and v11 still skips it.
 * - DescribeConfigs v2 request/response use the v3 fields IncludeDocumentation, ConfigType, Documentation.
 * - OffsetForLeaderEpoch v4 response: reads Partition before ErrorCode (Kafka: ErrorCode first).
 * - Fetch v12 request writes ForgottenTopicsData.Topic as a UUID (Kafka: a string until v13); its v12
 *   response names the topic name `topicId`.
 * - ConsumerGroupHeartbeat responses: the Assignment struct's tagged-field section is not read.
 * - No flexible response parser reads the final (empty) tagged-field section of the body.
 * - DescribeAcls and DeleteAcls responses: Kafka's PatternType is returned as `resourcePatternType`.
 * - The module `describeClientQuotasV0` registers DescribeClientQuotas v1 (an API we do not declare).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as plt from '@platformatic/kafka';
import { API_SPECS } from '../../../protocol/messages/index.js';
import { decodeRequest, encodeResponse, inVersionRange, responseHeaderVersion, supportedVersions } from '../../../protocol/index.js';
import { decodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import type { FieldSpec, FieldType } from '../../../protocol/schema/types.js';

// ---------------------------------------------------------------------------------------------------
// platformatic's API modules, from its exports: `produceV9 = { createRequest, parseResponse, api }`.

type PltWriter = { buffer: Buffer };
type CreateRequest = (...args: unknown[]) => PltWriter;
type ParseResponse = (correlationId: number, apiKey: number, apiVersion: number, reader: plt.Reader) => unknown;

interface PltApi {
  readonly exportName: string;
  /** Export name without the version suffix, e.g. `produce`. */
  readonly name: string;
  readonly apiKey: number;
  readonly version: number;
  readonly createRequest: CreateRequest;
  readonly parseResponse: ParseResponse;
}

/** Exports whose module sends another version than its name says (platformatic's own inconsistency). */
const MISNAMED: string[] = [];

function platformaticApis(): PltApi[] {
  const out: PltApi[] = [];
  for (const [exportName, mod] of Object.entries(plt as Record<string, unknown>)) {
    const m = /^([a-z][A-Za-z]*)V(\d+)$/.exec(exportName);
    if (m === null || mod === null || typeof mod !== 'object') continue;
    const { api, createRequest, parseResponse } = mod as { api?: { key?: unknown; version?: unknown }; createRequest?: unknown; parseResponse?: unknown };
    if (typeof api?.key !== 'number' || typeof createRequest !== 'function' || typeof parseResponse !== 'function') continue;
    if (api.version !== Number(m[2])) MISNAMED.push(exportName);
    out.push({ exportName, name: m[1]!, apiKey: api.key, version: Number(api.version), createRequest: createRequest as CreateRequest, parseResponse: parseResponse as ParseResponse });
  }
  return out.sort((a, b) => a.apiKey - b.apiKey || a.version - b.version);
}

const ALL = platformaticApis();
/** The pairs both sides implement. */
const SHARED = ALL.filter((a) => {
  const ours = supportedVersions(a.apiKey);
  return ours !== undefined && a.version >= ours.minVersion && a.version <= ours.maxVersion;
});

// ---------------------------------------------------------------------------------------------------
// Sample values.

const TOPIC_ID = '0b1c2d3e-4f50-6172-8394-a5b6c7d8e9fa';
const TOPIC_ID_BYTES = Buffer.from(TOPIC_ID.replaceAll('-', ''), 'hex');
const BATCH = plt.createRecordsBatch([{ topic: 'orders', key: Buffer.from('k'), value: Buffer.from('v'), timestamp: 1_700_000_000_000n }]).buffer;

interface RequestSample {
  /** Arguments to platformatic's createRequest for this version. */
  readonly args: (version: number) => unknown[];
  /** Values our decoder must find (a subset of the decoded body, by our field names). */
  readonly expect: (version: number) => Record<string, unknown>;
}

const REQUESTS: Readonly<Record<string, RequestSample>> = {
  produce: {
    args: () => [-1, 3000, [{ topic: 'orders', partition: 2, key: Buffer.from('key'), value: Buffer.from('value'), timestamp: 1_700_000_000_000n }], { transactionalId: 'tx-1' }],
    expect: () => ({ transactionalId: 'tx-1', acks: -1, timeoutMs: 3000, topicData: [{ name: 'orders', partitionData: [{ index: 2 }] }] }),
  },
  fetch: {
    args: (v) => [
      500, 1, 1 << 20, 1, 7, 3,
      [{ topicId: v >= 13 ? TOPIC_ID : 'orders', partitions: [{ partition: 3, currentLeaderEpoch: 5, fetchOffset: 42n, lastFetchedEpoch: 4, partitionMaxBytes: 65536 }] }],
      // v12: platformatic writes ForgottenTopicsData.Topic as a UUID (Kafka: a string until v13), so none are sent.
      v >= 13 ? [{ topic: TOPIC_ID, partitions: [1, 2] }] : [],
      'rack-a',
    ],
    expect: (v) => ({
      maxWaitMs: 500, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 1, sessionId: 7, sessionEpoch: 3, rackId: 'rack-a',
      topics: [{ ...(v >= 13 ? { topicId: TOPIC_ID_BYTES } : { topic: 'orders' }), partitions: [{ partition: 3, currentLeaderEpoch: 5, fetchOffset: 42n, lastFetchedEpoch: 4, partitionMaxBytes: 65536 }] }],
      forgottenTopicsData: v >= 13 ? [{ topicId: TOPIC_ID_BYTES, partitions: [1, 2] }] : [],
    }),
  },
  listOffsets: {
    args: () => [-1, 1, [{ name: 'orders', partitions: [{ partitionIndex: 4, currentLeaderEpoch: 2, timestamp: -2n }] }]],
    expect: () => ({ replicaId: -1, isolationLevel: 1, topics: [{ name: 'orders', partitions: [{ partitionIndex: 4, currentLeaderEpoch: 2, timestamp: -2n }] }] }),
  },
  metadata: {
    args: () => [['a', 'b'], true, true],
    expect: () => ({ topics: [{ name: 'a' }, { name: 'b' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: true }),
  },
  apiVersions: {
    args: () => ['floe-test', '1.2.3'],
    expect: () => ({ clientSoftwareName: 'floe-test', clientSoftwareVersion: '1.2.3' }),
  },
  findCoordinator: {
    args: () => [0, ['group-a', 'group-b']],
    expect: () => ({ keyType: 0, coordinatorKeys: ['group-a', 'group-b'] }),
  },
  joinGroup: {
    args: () => ['group-a', 30000, 60000, 'member-1', 'instance-1', 'consumer', [{ name: 'range', metadata: Buffer.from([0, 1, 2]) }], 'rejoin'],
    expect: (v) => ({
      groupId: 'group-a', sessionTimeoutMs: 30000, rebalanceTimeoutMs: 60000, memberId: 'member-1', groupInstanceId: 'instance-1', protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.from([0, 1, 2]) }],
      ...(v >= 8 ? { reason: 'rejoin' } : {}),
    }),
  },
  syncGroup: {
    args: () => ['group-a', 5, 'member-1', null, 'consumer', 'range', [{ memberId: 'member-1', assignment: Buffer.from([9, 8]) }]],
    expect: (v) => ({
      groupId: 'group-a', generationId: 5, memberId: 'member-1', groupInstanceId: null,
      ...(v >= 5 ? { protocolType: 'consumer', protocolName: 'range' } : {}),
      assignments: [{ memberId: 'member-1', assignment: Buffer.from([9, 8]) }],
    }),
  },
  heartbeat: {
    args: () => ['group-a', 5, 'member-1', 'instance-1'],
    expect: () => ({ groupId: 'group-a', generationId: 5, memberId: 'member-1', groupInstanceId: 'instance-1' }),
  },
  leaveGroup: {
    args: () => ['group-a', [{ memberId: 'member-1', groupInstanceId: null, reason: 'bye' }]],
    expect: (v) => ({ groupId: 'group-a', members: [{ memberId: 'member-1', groupInstanceId: null, ...(v >= 5 ? { reason: 'bye' } : {}) }] }),
  },
  offsetCommit: {
    args: () => ['group-a', 5, 'member-1', null, [{ name: 'orders', partitions: [{ partitionIndex: 1, committedOffset: 77n, committedLeaderEpoch: 3, committedMetadata: 'meta' }] }]],
    expect: () => ({
      groupId: 'group-a', generationIdOrMemberEpoch: 5, memberId: 'member-1', groupInstanceId: null,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, committedOffset: 77n, committedLeaderEpoch: 3, committedMetadata: 'meta' }] }],
    }),
  },
  offsetFetch: {
    args: () => [[{ groupId: 'group-a', memberId: 'member-1', memberEpoch: 4, topics: [{ name: 'orders', partitionIndexes: [0, 1] }] }], true],
    expect: (v) => ({
      requireStable: true,
      groups: [{ groupId: 'group-a', ...(v >= 9 ? { memberId: 'member-1', memberEpoch: 4 } : {}), topics: [{ name: 'orders', partitionIndexes: [0, 1] }] }],
    }),
  },
  offsetForLeaderEpoch: {
    args: () => [-1, [{ name: 'orders', partitions: [{ partitionIndex: 1, currentLeaderEpoch: 6, leaderEpoch: 5 }] }]],
    expect: () => ({ replicaId: -1, topics: [{ topic: 'orders', partitions: [{ partition: 1, currentLeaderEpoch: 6, leaderEpoch: 5 }] }] }),
  },
  initProducerId: {
    args: () => ['tx-9', 60000, 1234n, 3],
    expect: () => ({ transactionalId: 'tx-9', transactionTimeoutMs: 60000, producerId: 1234n, producerEpoch: 3 }),
  },
  addOffsetsToTxn: {
    args: () => ['tx-9', 1234n, 3, 'group-a'],
    expect: () => ({ transactionalId: 'tx-9', producerId: 1234n, producerEpoch: 3, groupId: 'group-a' }),
  },
  endTxn: {
    args: () => ['tx-9', 1234n, 3, true],
    expect: () => ({ transactionalId: 'tx-9', producerId: 1234n, producerEpoch: 3, committed: true }),
  },
  txnOffsetCommit: {
    args: () => ['tx-9', 'group-a', 1234n, 3, 5, 'member-1', null, [{ name: 'orders', partitions: [{ partitionIndex: 1, committedOffset: 77n, committedLeaderEpoch: 3, committedMetadata: null }] }]],
    expect: () => ({
      transactionalId: 'tx-9', groupId: 'group-a', producerId: 1234n, producerEpoch: 3, generationId: 5, memberId: 'member-1', groupInstanceId: null,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, committedOffset: 77n, committedLeaderEpoch: 3, committedMetadata: null }] }],
    }),
  },
  addPartitionsToTxn: {
    args: () => [[{ transactionalId: 'tx-9', producerId: 1234n, producerEpoch: 3, verifyOnly: true, topics: [{ name: 'orders', partitions: [0, 1] }] }]],
    expect: (v) =>
      v <= 3
        ? { v3AndBelowTransactionalId: 'tx-9', v3AndBelowProducerId: 1234n, v3AndBelowProducerEpoch: 3, v3AndBelowTopics: [{ name: 'orders', partitions: [0, 1] }] }
        : { transactions: [{ transactionalId: 'tx-9', producerId: 1234n, producerEpoch: 3, verifyOnly: true, topics: [{ name: 'orders', partitions: [0, 1] }] }] },
  },
  consumerGroupHeartbeat: {
    args: () => ['group-a', 'member-1', 4, 'instance-1', 'rack-a', 60000, ['orders'], 'ord.*', 'uniform', [{ topicId: TOPIC_ID, partitions: [0, 1] }]],
    expect: (v) => ({
      groupId: 'group-a', memberId: 'member-1', memberEpoch: 4, instanceId: 'instance-1', rackId: 'rack-a', rebalanceTimeoutMs: 60000,
      subscribedTopicNames: ['orders'], ...(v >= 1 ? { subscribedTopicRegex: 'ord.*' } : {}), serverAssignor: 'uniform',
      topicPartitions: [{ topicId: TOPIC_ID_BYTES, partitions: [0, 1] }],
    }),
  },
  saslHandshake: { args: () => ['PLAIN'], expect: () => ({ mechanism: 'PLAIN' }) },
  saslAuthenticate: { args: () => [Buffer.from('\0user\0pass')], expect: () => ({ authBytes: Buffer.from('\0user\0pass') }) },
  describeClientQuotas: { args: () => [[{ entityType: 'user', matchType: 0, match: 'alice' }], true], expect: () => ({ components: [{ entityType: 'user', matchType: 0, match: 'alice' }], strict: true }) },
  describeUserScramCredentials: { args: () => [[{ name: 'alice' }]], expect: () => ({ users: [{ name: 'alice' }] }) },
  alterClientQuotas: {
    args: () => [[{ entities: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }, { key: 'consumer_byte_rate', value: 0, remove: true }] }], true],
    expect: () => ({ entries: [{ entity: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }, { key: 'consumer_byte_rate', value: 0, remove: true }] }], validateOnly: true }),
  },
  describeAcls: {
    args: () => [{ resourceType: 2, resourceName: 'orders', resourcePatternType: 4, principal: null, host: '*', operation: 3, permissionType: 1 }],
    expect: (v) => ({ resourceTypeFilter: 2, resourceNameFilter: 'orders', ...(v >= 1 ? { patternTypeFilter: 4 } : {}), principalFilter: null, hostFilter: '*', operation: 3, permissionType: 1 }),
  },
  createAcls: {
    args: () => [[{ resourceType: 2, resourceName: 'orders-', resourcePatternType: 4, principal: 'User:alice', host: '*', operation: 3, permissionType: 3 }]],
    expect: (v) => ({ creations: [{ resourceType: 2, resourceName: 'orders-', ...(v >= 1 ? { resourcePatternType: 4 } : {}), principal: 'User:alice', host: '*', operation: 3, permissionType: 3 }] }),
  },
  deleteAcls: {
    args: () => [[{ resourceType: 1, resourceName: null, resourcePatternType: 1, principal: 'User:alice', host: null, operation: 1, permissionType: 1 }]],
    expect: (v) => ({ filters: [{ resourceTypeFilter: 1, resourceNameFilter: null, ...(v >= 1 ? { patternTypeFilter: 1 } : {}), principalFilter: 'User:alice', hostFilter: null, operation: 1, permissionType: 1 }] }),
  },
  alterUserScramCredentials: {
    args: () => [[{ name: 'bob', mechanism: 1 }], [{ name: 'alice', mechanism: 2, iterations: 8192, salt: Buffer.from('salt'), saltedPassword: Buffer.alloc(64, 7) }]],
    expect: () => ({ deletions: [{ name: 'bob', mechanism: 1 }], upsertions: [{ name: 'alice', mechanism: 2, iterations: 8192, salt: Buffer.from('salt'), saltedPassword: Buffer.alloc(64, 7) }] }),
  },
  createTopics: {
    args: () => [[{ name: 'orders', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }], configs: [{ name: 'cleanup.policy', value: 'compact' }] }], 30000, true],
    expect: () => ({ timeoutMs: 30000, validateOnly: true, topics: [{ name: 'orders', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }], configs: [{ name: 'cleanup.policy', value: 'compact' }] }] }),
  },
  deleteTopics: {
    args: () => [[{ name: 'orders', topicId: TOPIC_ID }], 15000],
    expect: () => ({ timeoutMs: 15000, topics: [{ name: 'orders', topicId: TOPIC_ID_BYTES }] }),
  },
  createPartitions: {
    args: () => [[{ name: 'orders', count: 6, assignments: [{ brokerIds: [1] }] }], 10000, true],
    expect: () => ({ timeoutMs: 10000, validateOnly: true, topics: [{ name: 'orders', count: 6, assignments: [{ brokerIds: [1] }] }] }),
  },
  deleteRecords: {
    args: () => [[{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 99n }] }], 5000],
    expect: () => ({ timeoutMs: 5000, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 99n }] }] }),
  },
  deleteGroups: { args: () => [['group-a', 'group-b']], expect: () => ({ groupsNames: ['group-a', 'group-b'] }) },
  describeLogDirs: {
    args: () => [[{ name: 'orders', partitions: [0, 2] }]],
    expect: () => ({ topics: [{ topic: 'orders', partitions: [0, 2] }] }),
  },
  describeTopicPartitions: {
    args: () => [[{ name: 'orders' }, { name: 'payments' }], 100, { topicName: 'orders', partitionIndex: 3 }],
    expect: () => ({ topics: [{ name: 'orders' }, { name: 'payments' }], responsePartitionLimit: 100, cursor: { topicName: 'orders', partitionIndex: 3 } }),
  },
  describeGroups: { args: () => [['group-a'], true], expect: () => ({ groups: ['group-a'], includeAuthorizedOperations: true }) },
  listGroups: { args: () => [['Stable'], ['consumer']], expect: (v) => ({ statesFilter: ['Stable'], ...(v >= 5 ? { typesFilter: ['consumer'] } : {}) }) },
  offsetDelete: {
    args: () => ['group-a', [{ name: 'orders', partitions: [{ partitionIndex: 3 }] }]],
    expect: () => ({ groupId: 'group-a', topics: [{ name: 'orders', partitions: [{ partitionIndex: 3 }] }] }),
  },
  describeConfigs: {
    args: () => [[{ resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms'] }], true, true],
    expect: () => ({ includeSynonyms: true, includeDocumentation: true, resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms'] }] }),
  },
  alterConfigs: {
    args: () => [[{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', value: '1000' }] }], true],
    expect: () => ({ validateOnly: true, resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', value: '1000' }] }] }),
  },
  incrementalAlterConfigs: {
    args: () => [[{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', configOperation: 0, value: '5' }] }], false],
    expect: () => ({ validateOnly: false, resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', configOperation: 0, value: '5' }] }] }),
  },
  describeCluster: {
    args: () => [true, 1],
    expect: (v) => ({ includeClusterAuthorizedOperations: true, ...(v >= 1 ? { endpointType: 1 } : {}) }),
  },
  describeProducers: {
    args: () => [[{ name: 'orders', partitionIndexes: [0, 2] }]],
    expect: () => ({ topics: [{ name: 'orders', partitionIndexes: [0, 2] }] }),
  },
  describeTransactions: {
    args: () => [['tx-1', 'tx-2']],
    expect: () => ({ transactionalIds: ['tx-1', 'tx-2'] }),
  },
  listTransactions: {
    args: () => [['Ongoing'], [9n], 1000n, null],
    expect: (v) => ({ stateFilters: ['Ongoing'], producerIdFilters: [9n], ...(v >= 1 ? { durationFilter: 1000n } : {}) }),
  },
};

/** Checks that every key of `expected` (recursively) has the same value in `actual`. */
function assertSubset(actual: unknown, expected: unknown, path: string): void {
  if (expected !== null && typeof expected === 'object' && !Buffer.isBuffer(expected)) {
    assert.equal(actual !== null && typeof actual === 'object', true, `${path}: expected an object or array, got ${String(actual)}`);
    if (Array.isArray(expected)) {
      assert.equal(Array.isArray(actual), true, `${path}: expected an array`);
      assert.equal((actual as unknown[]).length, expected.length, `${path}: length`);
    }
    for (const [k, v] of Object.entries(expected)) assertSubset((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
    return;
  }
  assert.deepEqual(actual, expected, path);
}

/** The request frame as platformatic's connection sends it (without the size prefix). */
function requestFrame(a: PltApi, body: Buffer, flexibleHeader: boolean): Buffer {
  const w = plt.Writer.create().appendInt16(a.apiKey).appendInt16(a.version).appendInt32(42).appendString('plt-client', false);
  if (flexibleHeader) w.appendTaggedFields();
  return Buffer.concat([w.buffer, body]);
}

/**
 * Where platformatic departs from Kafka's definitions, found by this test. Each excludes one direction of
 * one version; the reason names the difference.
 */
const KNOWN_DEPARTURES: Readonly<Record<string, string>> = {
  'metadataV11 request': 'writes IncludeClusterAuthorizedOperations, which Kafka removed after v10',
  'describeConfigsV2 request': 'writes IncludeDocumentation, which Kafka adds in v3',
  'describeConfigsV2 response': 'reads ConfigType and Documentation, which Kafka adds in v3',
  'offsetForLeaderEpochV4 response': 'reads Partition before ErrorCode; Kafka sends ErrorCode first',
};

function flexible(apiKey: number, version: number, kind: 'request' | 'response'): boolean {
  const spec = API_SPECS.get(apiKey);
  assert.ok(spec !== undefined, `API ${apiKey} is declared`);
  return inVersionRange(spec[kind].flexibleVersions, version);
}

test('platformatic modules send the version their name says, except describe-client-quotas-v0, which is v1', () => {
  // describe-client-quotas-v0 registers itself as DescribeClientQuotas v1 (and writes v1's flexible format),
  // so it is checked below as the v1 it is.
  assert.deepEqual(MISNAMED, ['describeClientQuotasV0']);
  assert.deepEqual(ALL.filter((a) => a.exportName === 'describeClientQuotasV0').map((a) => a.version), [1]);
  assert.deepEqual(supportedVersions(48), { apiKey: 48, name: 'DescribeClientQuotas', minVersion: 0, maxVersion: 1 });
});

test('platformatic implements versions of most of the APIs we declare (the table below is not empty)', () => {
  assert.ok(SHARED.length >= 60, `only ${SHARED.length} shared API versions`);
  const missing = [...new Set(SHARED.map((a) => a.name))].filter((n) => REQUESTS[n] === undefined && RESPONSES[n] === undefined);
  assert.deepEqual(missing, [], 'every shared API has a sample');
});

for (const a of SHARED) {
  const id = `${a.exportName} (key ${a.apiKey})`;
  const sample = REQUESTS[a.name];
  const departure = KNOWN_DEPARTURES[`${a.exportName} request`];
  test(`${id} request: platformatic's encoder -> our decodeRequest`, () => {
    assert.ok(sample !== undefined, `no request sample for ${a.name}: add one to REQUESTS`);
    const check = (): void => {
      const frame = requestFrame(a, a.createRequest(...sample.args(a.version)).buffer, flexible(a.apiKey, a.version, 'request'));
      const req = decodeRequest(frame);
      assert.equal(req.header.correlationId, 42);
      assert.equal(req.header.clientId, 'plt-client');
      assertSubset(req.body, sample.expect(a.version), `${a.exportName}`);
    };
    if (departure === undefined) check();
    else assert.throws(check, `platformatic no longer departs from Kafka here (${departure}): drop it from KNOWN_DEPARTURES`);
  });
}

// ---------------------------------------------------------------------------------------------------
// Responses: our encoder -> platformatic's parsers.

interface ResponseSample {
  /** A body by our field names, with every field of every version; fitted to each version before encoding. */
  readonly body: (version: number) => Record<string, unknown>;
  /** Paths (dot-joined field names, arrays transparent) platformatic does not return, with why. */
  readonly unread?: Readonly<Record<string, string>>;
  /** platformatic's name for one of our fields (by field path), where it differs. */
  readonly rename?: Readonly<Record<string, string>>;
  /** Bytes platformatic leaves unread beyond the final empty tagged-field section, where it departs from Kafka. */
  readonly extraUnread?: (version: number) => number;
  /** Turns platformatic's result into our shape where it restructures a version. */
  readonly reshape?: (parsed: Record<string, unknown>, version: number) => Record<string, unknown>;
}

const RESPONSES: Readonly<Record<string, ResponseSample>> = {
  produce: {
    body: () => ({
      responses: [{ name: 'orders', partitionResponses: [{ index: 2, errorCode: 0, baseOffset: 100n, logAppendTimeMs: 1_700_000_000_000n, logStartOffset: 5n, recordErrors: [], errorMessage: null }] }],
      throttleTimeMs: 7,
    }),
  },
  fetch: {
    body: (v) => ({
      throttleTimeMs: 7, errorCode: 0, sessionId: 11,
      responses: [{
        topic: 'orders', topicId: TOPIC_ID_BYTES,
        partitions: [{ partitionIndex: 3, errorCode: 0, highWatermark: 50n, lastStableOffset: 49n, logStartOffset: 1n, abortedTransactions: [{ producerId: 9n, firstOffset: 20n }], preferredReadReplica: -1, records: BATCH }],
      }],
      ...(v >= 0 ? {} : {}),
    }),
    unread: { 'responses.partitions.records': 'returned as decoded record batches; compared in a separate test' },
    // v12: platformatic calls the topic name `topicId`.
    rename: { 'responses.topic': 'topicId' },
  },
  listOffsets: {
    body: () => ({ throttleTimeMs: 7, topics: [{ name: 'orders', partitions: [{ partitionIndex: 4, errorCode: 0, timestamp: 1_700_000_000_000n, offset: 12n, leaderEpoch: 2 }] }] }),
  },
  metadata: {
    body: () => ({
      throttleTimeMs: 7,
      brokers: [{ nodeId: 1, host: 'broker-1', port: 9092, rack: 'rack-a' }],
      clusterId: 'cluster-x', controllerId: 1,
      topics: [{ errorCode: 0, name: 'orders', topicId: TOPIC_ID_BYTES, isInternal: false, partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 4, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }], topicAuthorizedOperations: 248 }],
      clusterAuthorizedOperations: 248,
    }),
    // v8-10: platformatic skips ClusterAuthorizedOperations (an int32) with readBoolean, one byte of four.
    // v11: it still skips that (removed) field, which swallows the final empty tagged-field byte instead.
    unread: { clusterAuthorizedOperations: 'skipped by platformatic' },
    extraUnread: (v) => (v >= 8 && v <= 10 ? 3 : v === 11 ? -1 : 0),
  },
  apiVersions: {
    body: () => ({ errorCode: 0, apiKeys: [{ apiKey: 0, minVersion: 3, maxVersion: 11 }, { apiKey: 18, minVersion: 0, maxVersion: 4 }], throttleTimeMs: 7 }),
  },
  findCoordinator: {
    body: () => ({ throttleTimeMs: 7, coordinators: [{ key: 'group-a', nodeId: 1, host: 'broker-1', port: 9092, errorCode: 0, errorMessage: null }] }),
  },
  joinGroup: {
    body: () => ({
      throttleTimeMs: 7, errorCode: 0, generationId: 5, protocolType: 'consumer', protocolName: 'range', leader: 'member-1', skipAssignment: false, memberId: 'member-1',
      members: [{ memberId: 'member-1', groupInstanceId: 'instance-1', metadata: Buffer.from([1, 2, 3]) }],
    }),
  },
  syncGroup: { body: () => ({ throttleTimeMs: 7, errorCode: 0, protocolType: 'consumer', protocolName: 'range', assignment: Buffer.from([4, 5]) }) },
  heartbeat: { body: () => ({ throttleTimeMs: 7, errorCode: 0 }) },
  leaveGroup: { body: () => ({ throttleTimeMs: 7, errorCode: 0, members: [{ memberId: 'member-1', groupInstanceId: 'instance-1', errorCode: 0 }] }) },
  offsetCommit: { body: () => ({ throttleTimeMs: 7, topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, errorCode: 0 }] }] }) },
  offsetFetch: {
    body: () => ({
      throttleTimeMs: 7,
      groups: [{ groupId: 'group-a', topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, committedOffset: 77n, committedLeaderEpoch: 3, metadata: 'meta', errorCode: 0 }] }], errorCode: 0 }],
    }),
  },
  offsetForLeaderEpoch: {
    body: () => ({ throttleTimeMs: 7, topics: [{ topic: 'orders', partitions: [{ errorCode: 0, partition: 1, leaderEpoch: 5, endOffset: 300n }] }] }),
  },
  initProducerId: { body: () => ({ throttleTimeMs: 7, errorCode: 0, producerId: 1234n, producerEpoch: 3 }) },
  addOffsetsToTxn: { body: () => ({ throttleTimeMs: 7, errorCode: 0 }) },
  endTxn: { body: () => ({ throttleTimeMs: 7, errorCode: 0 }) },
  txnOffsetCommit: { body: () => ({ throttleTimeMs: 7, topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, errorCode: 0 }] }] }) },
  addPartitionsToTxn: {
    body: () => {
      const topicResults = [{ name: 'orders', resultsByPartition: [{ partitionIndex: 0, partitionErrorCode: 0 }, { partitionIndex: 1, partitionErrorCode: 0 }] }];
      return { throttleTimeMs: 7, errorCode: 0, resultsByTransaction: [{ transactionalId: 'tx-9', topicResults }], resultsByTopicV3AndBelow: topicResults };
    },
    // v3: platformatic wraps the per-topic results into one transaction with an empty id.
    reshape: (parsed, v) => {
      if (v > 3) return parsed;
      const wrapped = parsed.resultsByTransaction as { transactionalId: string; topicResults: unknown }[];
      assert.equal(wrapped.length, 1);
      return { ...parsed, resultsByTopicV3AndBelow: wrapped[0]?.topicResults };
    },
  },
  consumerGroupHeartbeat: {
    body: () => ({
      throttleTimeMs: 7, errorCode: 0, errorMessage: null, memberId: 'member-1', memberEpoch: 4, heartbeatIntervalMs: 5000,
      assignment: { topicPartitions: [{ topicId: TOPIC_ID_BYTES, partitions: [0, 1] }] },
    }),
    // platformatic does not read the Assignment struct's own (empty) tagged-field section.
    extraUnread: () => 1,
  },
  saslHandshake: { body: () => ({ errorCode: 0, mechanisms: ['PLAIN', 'SCRAM-SHA-256'] }) },
  saslAuthenticate: { body: () => ({ errorCode: 0, errorMessage: null, authBytes: Buffer.from('ok'), sessionLifetimeMs: 3_600_000n }) },
  describeClientQuotas: { body: () => ({ throttleTimeMs: 7, errorCode: 0, errorMessage: null, entries: [{ entity: [{ entityType: 'user', entityName: 'alice' }], values: [{ key: 'producer_byte_rate', value: 1024.5 }] }] }) },
  alterClientQuotas: { body: () => ({ throttleTimeMs: 7, entries: [{ errorCode: 0, errorMessage: null, entity: [{ entityType: 'user', entityName: 'alice' }] }] }) },
  describeUserScramCredentials: {
    body: () => ({ throttleTimeMs: 7, errorCode: 0, errorMessage: null, results: [{ user: 'alice', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 2, iterations: 8192 }] }] }),
  },
  describeAcls: {
    body: () => ({ throttleTimeMs: 7, errorCode: 0, errorMessage: null, resources: [{ resourceType: 2, resourceName: 'orders', patternType: 3, acls: [{ principal: 'User:alice', host: '*', operation: 3, permissionType: 3 }] }] }),
    rename: { 'resources.patternType': 'resourcePatternType' },
  },
  createAcls: { body: () => ({ throttleTimeMs: 7, results: [{ errorCode: 0, errorMessage: null }] }) },
  deleteAcls: {
    body: () => ({
      throttleTimeMs: 7,
      filterResults: [{ errorCode: 0, errorMessage: null, matchingAcls: [{ errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 'orders', patternType: 3, principal: 'User:alice', host: '*', operation: 3, permissionType: 3 }] }],
    }),
    rename: { 'filterResults.matchingAcls.patternType': 'resourcePatternType' },
  },
  alterUserScramCredentials: { body: () => ({ throttleTimeMs: 7, results: [{ user: 'alice', errorCode: 0, errorMessage: null }] }) },
  createTopics: {
    body: () => ({
      throttleTimeMs: 7,
      topics: [{ name: 'orders', topicId: TOPIC_ID_BYTES, errorCode: 0, errorMessage: null, numPartitions: 3, replicationFactor: 1, configs: [{ name: 'cleanup.policy', value: 'delete', readOnly: false, configSource: 5, isSensitive: false }] }],
    }),
  },
  deleteTopics: { body: () => ({ throttleTimeMs: 7, responses: [{ name: 'orders', topicId: TOPIC_ID_BYTES, errorCode: 0, errorMessage: null }] }) },
  createPartitions: { body: () => ({ throttleTimeMs: 7, results: [{ name: 'orders', errorCode: 0, errorMessage: null }] }) },
  deleteRecords: { body: () => ({ throttleTimeMs: 7, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, lowWatermark: 99n, errorCode: 0 }] }] }) },
  deleteGroups: { body: () => ({ throttleTimeMs: 7, results: [{ groupId: 'group-a', errorCode: 0 }] }) },
  describeLogDirs: {
    body: () => ({
      throttleTimeMs: 7,
      errorCode: 0,
      results: [{ errorCode: 0, logDir: '/var/lib/floe/log', topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, partitionSize: 4096n, offsetLag: 0n, isFutureKey: false }] }], totalBytes: 1n << 40n, usableBytes: 1n << 39n }],
    }),
  },
  describeTopicPartitions: {
    body: () => ({
      throttleTimeMs: 7,
      topics: [{
        errorCode: 0, name: 'orders', topicId: TOPIC_ID_BYTES, isInternal: false, topicAuthorizedOperations: 3576,
        partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1], eligibleLeaderReplicas: [], lastKnownElr: [], offlineReplicas: [] }],
      }],
      nextCursor: { topicName: 'orders', partitionIndex: 1 },
    }),
    // platformatic does not read the cursor struct's own (empty) tagged-field section.
    extraUnread: () => 1,
  },
  listGroups: { body: () => ({ throttleTimeMs: 7, errorCode: 0, groups: [{ groupId: 'group-a', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' }] }) },
  describeGroups: {
    body: () => ({
      throttleTimeMs: 7,
      groups: [{
        errorCode: 0, groupId: 'group-a', groupState: 'Stable', protocolType: 'consumer', protocolData: 'range',
        members: [{ memberId: 'member-1', groupInstanceId: null, clientId: 'c1', clientHost: '/127.0.0.1', memberMetadata: Buffer.from([1]), memberAssignment: Buffer.from([2]) }],
        authorizedOperations: 248,
      }],
    }),
  },
  offsetDelete: { body: () => ({ errorCode: 0, throttleTimeMs: 7, topics: [{ name: 'orders', partitions: [{ partitionIndex: 3, errorCode: 0 }] }] }) },
  describeConfigs: {
    body: () => ({
      throttleTimeMs: 7,
      results: [{
        errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 'orders',
        configs: [{ name: 'retention.ms', value: '1000', readOnly: false, configSource: 1, isSensitive: false, synonyms: [{ name: 'log.retention.ms', value: '1000', source: 4 }], configType: 5, documentation: null }],
      }],
    }),
  },
  alterConfigs: { body: () => ({ throttleTimeMs: 7, responses: [{ errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 'orders' }] }) },
  incrementalAlterConfigs: { body: () => ({ throttleTimeMs: 7, responses: [{ errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 'orders' }] }) },
  describeCluster: {
    body: () => ({
      throttleTimeMs: 7, errorCode: 0, errorMessage: null, endpointType: 1, clusterId: 'cluster-x', controllerId: 1,
      brokers: [{ brokerId: 1, host: 'broker-1', port: 9092, rack: null }], clusterAuthorizedOperations: 248,
    }),
  },
  describeProducers: {
    body: () => ({
      throttleTimeMs: 7,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, errorCode: 0, errorMessage: null, activeProducers: [{ producerId: 9n, producerEpoch: 2, lastSequence: 10, lastTimestamp: 1_700_000_000_000n, coordinatorEpoch: 1, currentTxnStartOffset: -1n }] }] }],
    }),
  },
  describeTransactions: {
    body: () => ({
      throttleTimeMs: 7,
      transactionStates: [
        { errorCode: 0, transactionalId: 'tx-1', transactionState: 'Ongoing', transactionTimeoutMs: 60000, transactionStartTimeMs: 1_700_000_000_000n, producerId: 9n, producerEpoch: 2, topics: [{ topic: 'orders', partitions: [0, 2] }] },
      ],
    }),
  },
  listTransactions: {
    body: () => ({ throttleTimeMs: 7, errorCode: 0, unknownStateFilters: ['Bogus'], transactionStates: [{ transactionalId: 'tx-1', producerId: 9n, transactionState: 'Ongoing' }] }),
  },
};

/** Keeps the fields (recursively) that exist, untagged, in `version`; the codec fills the rest with defaults. */
function fitBody(fields: readonly FieldSpec[], version: number, body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (!(f.name in body) || !inVersionRange(f.versions, version)) continue;
    if (f.taggedVersions !== undefined && inVersionRange(f.taggedVersions, version)) continue;
    out[f.name] = fitValue(f.type, version, body[f.name]);
  }
  return out;
}

function fitValue(type: FieldType, version: number, value: unknown): unknown {
  if (typeof type === 'string' || value === null) return value;
  if (type.kind === 'struct') return fitBody(type.fields, version, value as Record<string, unknown>);
  return (value as unknown[]).map((item) => fitValue(type.items, version, item));
}

/** Our value as platformatic returns it: UUIDs become dashed hex strings. */
function asPlatformatic(v: unknown): unknown {
  if (Buffer.isBuffer(v) && v.length === 16 && v.equals(TOPIC_ID_BYTES)) return TOPIC_ID;
  return v;
}

/** Every leaf we sent must come back under the same (or renamed) key; returns how many were compared. */
function assertParsed(ours: unknown, parsed: unknown, sample: ResponseSample, path: string, fieldPath: string): number {
  if (Array.isArray(ours)) {
    assert.equal(Array.isArray(parsed), true, `${path}: platformatic returned no array`);
    assert.equal((parsed as unknown[]).length, ours.length, `${path}: length`);
    return ours.reduce((n: number, item, i) => n + assertParsed(item, (parsed as unknown[])[i], sample, `${path}[${i}]`, fieldPath), 0);
  }
  if (ours !== null && typeof ours === 'object' && !Buffer.isBuffer(ours)) {
    assert.equal(parsed !== null && typeof parsed === 'object', true, `${path}: platformatic returned no struct`);
    let n = 0;
    for (const [k, v] of Object.entries(ours)) {
      const fp = fieldPath === '' ? k : `${fieldPath}.${k}`;
      if (sample.unread?.[fp] !== undefined) continue;
      const theirs = sample.rename?.[fp] ?? k;
      assert.equal(theirs in (parsed as object), true, `${path}.${k}: platformatic did not return the field`);
      n += assertParsed(v, (parsed as Record<string, unknown>)[theirs], sample, `${path}.${k}`, fp);
    }
    return n;
  }
  assert.deepEqual(parsed, asPlatformatic(ours), path);
  return 1;
}

for (const a of SHARED) {
  const id = `${a.exportName} (key ${a.apiKey})`;
  const sample = RESPONSES[a.name];
  const responseDeparture = KNOWN_DEPARTURES[`${a.exportName} response`];
  test(`${id} response: our encodeResponse -> platformatic's parser`, () => {
    assert.ok(sample !== undefined, `no response sample for ${a.name}: add one to RESPONSES`);
    if (responseDeparture !== undefined) {
      assert.throws(() => checkResponse(a, sample), `platformatic no longer departs from Kafka here (${responseDeparture}): drop it from KNOWN_DEPARTURES`);
    } else {
      checkResponse(a, sample);
    }
  });
}

function checkResponse(a: PltApi, sample: ResponseSample): void {
  {
    const spec = API_SPECS.get(a.apiKey)!.response;
    const body = fitBody(spec.fields, a.version, sample.body(a.version));
    const frame = encodeResponse({ correlationId: 42 }, a.apiKey, a.version, body);
    assert.equal(frame.readInt32BE(0), frame.length - 4, 'size prefix');
    assert.equal(frame.readInt32BE(4), 42, 'correlation id');
    // platformatic's connection skips one byte of response-header tagged fields when the header is v1.
    const headerEnd = 8 + (responseHeaderVersion(a.apiKey, flexible(a.apiKey, a.version, 'response')) === 1 ? 1 : 0);
    const reader = plt.Reader.from(frame.subarray(headerEnd));
    const raw = a.parseResponse(42, a.apiKey, a.version, reader) as Record<string, unknown>;
    // Its parsers stop before the empty tagged-field section that ends a flexible body (one 0x00 byte).
    const isFlexible = flexible(a.apiKey, a.version, 'response');
    assert.equal(reader.remaining, (isFlexible ? 1 : 0) + (sample.extraUnread?.(a.version) ?? 0), 'bytes platformatic left unread');
    if (isFlexible) assert.equal(frame[frame.length - 1], 0, 'the body ends with an empty tagged-field section');
    const parsed = sample.reshape === undefined ? raw : sample.reshape(raw, a.version);
    const compared = assertParsed(body, parsed, sample, a.exportName, '');
    assert.ok(compared >= 2, `only ${compared} values compared`);
  }
}

test('record batches cross both ways: platformatic Produce records decode with ours, our Fetch records parse with theirs', () => {
  const produce = SHARED.find((a) => a.exportName === 'produceV11');
  assert.ok(produce !== undefined, 'platformatic has Produce v11');
  const frame = requestFrame(produce, plt.produceV11.createRequest(1, 1000, [
    { topic: 'orders', partition: 0, key: Buffer.from('k1'), value: Buffer.from('hello'), headers: new Map([[Buffer.from('h'), Buffer.from('x')]]), timestamp: 1_700_000_000_123n },
  ]).buffer, true);
  const req = decodeRequest(frame);
  assert.equal(req.apiVersion, 11);
  const records = get<{ partitionData: { records: Buffer }[] }[]>(req.body, 'topicData')[0]?.partitionData[0]?.records;
  assert.ok(records !== undefined, 'the Produce carries records');
  const batch = decodeRecordBatch(records);
  assert.equal(batch.records.length, 1);
  assert.equal(batch.records[0]?.value?.toString(), 'hello');
  assert.equal(batch.records[0]?.key?.toString(), 'k1');
  assert.deepEqual(batch.records[0]?.headers.map((h) => [h.key, h.value?.toString()]), [['h', 'x']]);
  assert.equal(batch.baseTimestamp + BigInt(batch.records[0]?.timestampDelta ?? 0), 1_700_000_000_123n);

  for (const version of [12, 16]) {
    const body = { responses: [{ topic: 'orders', topicId: TOPIC_ID_BYTES, partitions: [{ partitionIndex: 0, highWatermark: 1n, records: BATCH }] }] };
    const spec = API_SPECS.get(1)!.response;
    const out = encodeResponse({ correlationId: 1 }, 1, version, fitBody(spec.fields, version, body));
    const api = version === 12 ? plt.fetchV12 : plt.fetchV16;
    const parsed = api.parseResponse(1, 1, version, plt.Reader.from(out.subarray(9)));
    const record = parsed.responses[0]?.partitions[0]?.records?.[0]?.records[0];
    assert.equal(record?.value?.toString(), 'v', `Fetch v${version}: the record value`);
    assert.equal(record?.key?.toString(), 'k', `Fetch v${version}: the record key`);
  }
});

const get = <T>(o: unknown, k: string): T => (o as Record<string, unknown>)[k] as T;
