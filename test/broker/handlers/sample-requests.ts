// One request body per API, at its newest version, filled the way current clients fill them (librdkafka
// 2.16, Apache Kafka's 4.x client), and the helpers that fit a body to an older version and collect the error
// codes of a response. Shared by the every-version sweep and the authorization sweep.
import { encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import type { FieldSpec, FieldType } from '../../../protocol/schema/types.js';
import { inVersionRange } from '../../../protocol/schema/versions.js';
import type { Body } from './wire-client.js';

export const TOPIC = 'sweep';
export const GROUP = 'sweep-group';

/** The body with every field the version lacks removed, recursively (arrays of structs too). */
export function fit(fields: readonly FieldSpec[], version: number, body: Body): Body {
  const out: Body = {};
  for (const f of fields) {
    if (!(f.name in body) || !inVersionRange(f.versions, version)) continue;
    out[f.name] = fitValue(f.type, version, body[f.name]);
  }
  return out;
}

function fitValue(type: FieldType, version: number, value: unknown): unknown {
  if (typeof type === 'string' || value === null || value === undefined) return value;
  if (type.kind === 'array') return (value as unknown[]).map((v) => fitValue(type.items, version, v));
  return fit(type.fields, version, value as Body);
}

/** Every error code in a decoded response, with its path. */
export function errorCodes(v: unknown, path = ''): [string, number][] {
  if (Array.isArray(v)) return v.flatMap((x, i) => errorCodes(x, `${path}[${i}]`));
  if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) return [];
  return Object.entries(v as Body).flatMap(([k, x]): [string, number][] =>
    k === 'errorCode' && typeof x === 'number' ? [[`${path}.${k}`, x]] : errorCodes(x, `${path}.${k}`),
  );
}

export interface Context {
  readonly topicId: Buffer;
  readonly version: number;
}

/** Request bodies at each API's newest version, as a current client fills them. */
export const REQUESTS: Record<number, (c: Context) => Body> = {
  0: () => ({
    transactionalId: null,
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: encodeRecordBatch({ baseOffset: 0n, baseTimestamp: BigInt(Date.now()), records: [{ key: Buffer.from('k'), value: Buffer.from('v'), headers: [] }] }) }] }],
  }),
  1: (c) => ({
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic: TOPIC, topicId: c.topicId, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [],
    rackId: '',
  }),
  2: () => ({ replicaId: -1, isolationLevel: 0, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }], timeoutMs: 1000 }),
  3: (c) => ({ topics: [{ topicId: c.topicId, name: TOPIC }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }),
  8: () => ({
    groupId: GROUP,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] }],
  }),
  9: () => ({
    groupId: GROUP,
    topics: [{ name: TOPIC, partitionIndexes: [0] }],
    groups: [{ groupId: GROUP, memberId: null, memberEpoch: -1, topics: [{ name: TOPIC, partitionIndexes: [0] }] }],
    requireStable: true,
  }),
  10: () => ({ key: GROUP, keyType: 0, coordinatorKeys: [GROUP] }),
  // A group of its own per version: a member left in a group by the version before would hold up the join.
  11: (c) => ({
    groupId: `${GROUP}-join-v${c.version}`,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]) }],
    reason: null,
  }),
  12: () => ({ groupId: GROUP, generationId: 1, memberId: 'nobody', groupInstanceId: null }),
  13: () => ({ groupId: GROUP, memberId: 'nobody', members: [{ memberId: 'nobody', groupInstanceId: null, reason: 'sweep' }] }),
  14: () => ({ groupId: GROUP, generationId: 1, memberId: 'nobody', groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] }),
  15: () => ({ groups: [GROUP], includeAuthorizedOperations: true }),
  16: () => ({ statesFilter: [], typesFilter: [] }),
  19: () => ({
    topics: [{ name: `${TOPIC}-created`, numPartitions: 1, replicationFactor: -1, assignments: [], configs: [{ name: 'retention.ms', value: '3600000' }] }],
    timeoutMs: 5000,
    validateOnly: true,
  }),
  20: () => ({ topics: [{ name: `${TOPIC}-absent`, topicId: Buffer.alloc(16) }], topicNames: [`${TOPIC}-absent`], timeoutMs: 5000 }),
  21: () => ({ topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, offset: 0n }] }], timeoutMs: 5000 }),
  22: () => ({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }),
  24: () => ({
    transactions: [{ transactionalId: 'sweep-txn', producerId: 1n, producerEpoch: 0, verifyOnly: true, topics: [{ name: TOPIC, partitions: [0] }] }],
    v3AndBelowTransactionalId: 'sweep-txn',
    v3AndBelowProducerId: 1n,
    v3AndBelowProducerEpoch: 0,
    v3AndBelowTopics: [{ name: TOPIC, partitions: [0] }],
  }),
  25: () => ({ transactionalId: 'sweep-txn', producerId: 1n, producerEpoch: 0, groupId: GROUP }),
  26: () => ({ transactionalId: 'sweep-txn', producerId: 1n, producerEpoch: 0, committed: true }),
  // A producer this partition has never seen: the abort marker is written and changes nothing.
  27: () => ({ markers: [{ producerId: 999_999n, producerEpoch: 0, transactionResult: false, topics: [{ name: TOPIC, partitionIndexes: [0] }], coordinatorEpoch: 0 }] }),
  28: () => ({
    transactionalId: 'sweep-txn',
    groupId: GROUP,
    producerId: 1n,
    producerEpoch: 0,
    generationId: -1,
    memberId: '',
    groupInstanceId: null,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, committedMetadata: null }] }],
  }),
  23: () => ({ replicaId: -1, topics: [{ topic: TOPIC, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] }),
  32: () => ({ resources: [{ resourceType: 2, resourceName: TOPIC, configurationKeys: null }], includeSynonyms: true, includeDocumentation: true }),
  33: () => ({ resources: [{ resourceType: 2, resourceName: TOPIC, configs: [{ name: 'retention.ms', value: '7200000' }] }], validateOnly: true }),
  35: () => ({ topics: [{ topic: TOPIC, partitions: [0] }] }),
  37: () => ({ topics: [{ name: TOPIC, count: 3, assignments: null }], timeoutMs: 5000, validateOnly: true }),
  42: () => ({ groupsNames: [`${GROUP}-absent`] }),
  44: () => ({ resources: [{ resourceType: 2, resourceName: TOPIC, configs: [{ name: 'retention.ms', configOperation: 0, value: '7200000' }] }], validateOnly: true }),
  47: () => ({ groupId: GROUP, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0 }] }] }),
  61: () => ({ topics: [{ name: TOPIC, partitionIndexes: [0] }] }),
  65: () => ({ transactionalIds: ['sweep-txn'] }),
  66: () => ({ stateFilters: [], producerIdFilters: [], durationFilter: -1n }),
  60: () => ({ includeClusterAuthorizedOperations: false, endpointType: 1 }),
  // On a PLAINTEXT listener both SASL APIs answer ILLEGAL_SASL_STATE, as Kafka does (test/broker/security covers SASL listeners).
  17: () => ({ mechanism: 'PLAIN' }),
  36: () => ({ authBytes: Buffer.from('\0sweep\0secret') }),
  // Without an authorizer the three ACL APIs answer SECURITY_DISABLED, as Kafka does (test/broker/security/acls covers them).
  29: () => ({ resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 }),
  30: () => ({ creations: [{ resourceType: 2, resourceName: TOPIC, resourcePatternType: 3, principal: 'User:sweep', host: '*', operation: 3, permissionType: 3 }] }),
  31: () => ({ filters: [{ resourceTypeFilter: 2, resourceNameFilter: TOPIC, patternTypeFilter: 3, principalFilter: 'User:sweep', hostFilter: '*', operation: 3, permissionType: 3 }] }),
  48: () => ({ components: [{ entityType: 'user', matchType: 1, match: null }], strict: false }),
  49: () => ({ entries: [{ entity: [{ entityType: 'client-id', entityName: 'sweep-client' }], ops: [{ key: 'producer_byte_rate', value: 1048576, remove: false }] }], validateOnly: true }),
  50: () => ({ users: null }),
  51: () => ({ deletions: [], upsertions: [{ name: 'sweep-user', mechanism: 1, iterations: 4096, salt: Buffer.alloc(16, 1), saltedPassword: Buffer.alloc(32, 2) }] }),
  75: () => ({ topics: [{ name: TOPIC }], responsePartitionLimit: 2000, cursor: null }),
};
