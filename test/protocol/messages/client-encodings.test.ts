/**
 * Our declarations against an independently written client, byte for byte. `@platformatic/kafka` hand-writes
 * the encoder of every request and the parser of every response it speaks; here its request bytes must
 * decode with our declarations (every byte consumed, re-encoding gives the same bytes, values land in the
 * right fields), and the responses we encode must parse with its parsers (every byte consumed, values
 * intact).
 *
 * Where the client itself departs from Kafka's definitions the case is left out, with the reason, so a
 * failure here always points at our declarations or our codec:
 * - Metadata v11 request: it still writes IncludeClusterAuthorizedOperations, which Kafka dropped after v10.
 * - DescribeConfigs v2 request and response: it writes/reads the v3 fields IncludeDocumentation, ConfigType
 *   and Documentation.
 * - OffsetForLeaderEpoch v4 response: it reads Partition before ErrorCode; Kafka sends ErrorCode first.
 * - DescribeCluster v0 response: it reads EndpointType, which Kafka adds in v1.
 * Its parsers also never read the empty tagged-field section that ends a flexible response (one 0x00 byte),
 * and cannot skip non-empty tagged fields (it skips a zigzag-varint count of bytes), so the sample
 * responses leave tagged fields at their defaults.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as plt from '@platformatic/kafka';
import { API_SPECS } from '../../../protocol/messages/index.js';
import { decodeMessage, encodeMessage } from '../../../protocol/schema/codec.js';
import type { FieldSpec, FieldType, MessageSpec } from '../../../protocol/schema/types.js';

const TOPIC_ID = '0b1c2d3e-4f50-6172-8394-a5b6c7d8e9fa';
const TOPIC_ID_BYTES = Buffer.from(TOPIC_ID.replaceAll('-', ''), 'hex');

function spec(apiKey: number, type: 'request' | 'response'): MessageSpec {
  const api = API_SPECS.get(apiKey);
  assert.ok(api, `API ${apiKey} is not declared`);
  return type === 'request' ? api.request : api.response;
}

/** Checks that every key of `expected` (recursively) has the same value in `actual`. */
function assertSubset(actual: unknown, expected: unknown, path = 'body'): void {
  if (expected !== null && typeof expected === 'object' && !Buffer.isBuffer(expected)) {
    assert.ok(actual !== null && typeof actual === 'object', `${path}: expected an object or array`);
    if (Array.isArray(expected)) {
      assert.ok(Array.isArray(actual), `${path}: expected an array`);
      assert.equal(actual.length, expected.length, `${path}: length`);
    }
    for (const [k, v] of Object.entries(expected)) assertSubset((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
    return;
  }
  assert.deepEqual(actual, expected, path);
}

function batchOf(value: string): Buffer {
  return plt.createRecordsBatch([{ topic: 't', key: Buffer.from('k'), value: Buffer.from(value), timestamp: 1_700_000_000_000n }]).buffer;
}

// ---------------------------------------------------------------------------------------------------
// Requests: client bytes -> our decoder.

interface RequestCase {
  readonly apiKey: number;
  readonly version: number;
  readonly bytes: () => Buffer;
  readonly expect: Record<string, unknown>;
}

const requestCases: RequestCase[] = [
  ...[9, 10, 11].map((version): RequestCase => ({
    apiKey: 0,
    version,
    bytes: () =>
      [plt.produceV9, plt.produceV10, plt.produceV11][version - 9]!.createRequest(-1, 3000, [
        { topic: 'orders', partition: 2, key: Buffer.from('key'), value: Buffer.from('value'), timestamp: 1_700_000_000_000n },
      ], { transactionalId: 'tx-1' }).buffer,
    expect: { transactionalId: 'tx-1', acks: -1, timeoutMs: 3000, topicData: [{ name: 'orders', partitionData: [{ index: 2 }] }] },
  })),
  {
    apiKey: 1,
    version: 12,
    bytes: () =>
      plt.fetchV12.createRequest(500, 1, 1 << 20, 1, 7, 3, [
        { topicId: 'orders', partitions: [{ partition: 3, currentLeaderEpoch: 5, fetchOffset: 42n, lastFetchedEpoch: 4, partitionMaxBytes: 65536 }] },
      ], [], 'rack-a').buffer,
    expect: {
      replicaId: -1, maxWaitMs: 500, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 1, sessionId: 7, sessionEpoch: 3, rackId: 'rack-a',
      topics: [{ topic: 'orders', partitions: [{ partition: 3, currentLeaderEpoch: 5, fetchOffset: 42n, lastFetchedEpoch: 4, logStartOffset: -1n, partitionMaxBytes: 65536 }] }],
    },
  },
  ...[13, 14, 15, 16, 17].map((version): RequestCase => ({
    apiKey: 1,
    version,
    bytes: () =>
      [plt.fetchV13, plt.fetchV14, plt.fetchV15, plt.fetchV16, plt.fetchV17][version - 13]!.createRequest(500, 1, 1 << 20, 0, 0, -1, [
        { topicId: TOPIC_ID, partitions: [{ partition: 3, currentLeaderEpoch: 5, fetchOffset: 42n, lastFetchedEpoch: 4, partitionMaxBytes: 65536 }] },
      ], [{ topic: TOPIC_ID, partitions: [1, 2] }], 'rack-b').buffer,
    expect: {
      maxWaitMs: 500, sessionEpoch: -1, rackId: 'rack-b',
      topics: [{ topicId: TOPIC_ID_BYTES, partitions: [{ partition: 3, fetchOffset: 42n, partitionMaxBytes: 65536 }] }],
      forgottenTopicsData: [{ topicId: TOPIC_ID_BYTES, partitions: [1, 2] }],
    },
  })),
  ...[5, 6, 7, 8, 9].map((version): RequestCase => ({
    apiKey: 2,
    version,
    bytes: () =>
      [plt.listOffsetsV5, plt.listOffsetsV6, plt.listOffsetsV7, plt.listOffsetsV8, plt.listOffsetsV9][version - 5]!.createRequest(-1, 1, [
        { name: 'orders', partitions: [{ partitionIndex: 4, currentLeaderEpoch: 2, timestamp: -2n }] },
      ]).buffer,
    expect: { replicaId: -1, isolationLevel: 1, topics: [{ name: 'orders', partitions: [{ partitionIndex: 4, currentLeaderEpoch: 2, timestamp: -2n }] }] },
  })),
  ...([[9, plt.metadataV9], [10, plt.metadataV10], [12, plt.metadataV12]] as const).map(([version, client]): RequestCase => ({
    apiKey: 3,
    version,
    bytes: () => client.createRequest(['a', 'b'], true, true).buffer,
    expect: { topics: [{ name: 'a' }, { name: 'b' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: true },
  })),
  {
    apiKey: 3,
    version: 12,
    bytes: () => plt.metadataV12.createRequest(null).buffer,
    expect: { topics: null, allowAutoTopicCreation: false },
  },
  ...[3, 4].map((version): RequestCase => ({
    apiKey: 18,
    version,
    bytes: () => [plt.apiVersionsV3, plt.apiVersionsV4][version - 3]!.createRequest('floe-test', '1.2.3').buffer,
    expect: { clientSoftwareName: 'floe-test', clientSoftwareVersion: '1.2.3' },
  })),
  {
    apiKey: 23,
    version: 4,
    bytes: () => plt.offsetForLeaderEpochV4.createRequest(-1, [{ name: 'orders', partitions: [{ partitionIndex: 1, currentLeaderEpoch: 6, leaderEpoch: 5 }] }]).buffer,
    expect: { replicaId: -1, topics: [{ topic: 'orders', partitions: [{ partition: 1, currentLeaderEpoch: 6, leaderEpoch: 5 }] }] },
  },
  ...[3, 4, 5].map((version): RequestCase => ({
    apiKey: 22,
    version,
    bytes: () => [plt.initProducerIdV3, plt.initProducerIdV4, plt.initProducerIdV5][version - 3]!.createRequest('tx-9', 60000, 1234n, 3).buffer,
    expect: { transactionalId: 'tx-9', transactionTimeoutMs: 60000, producerId: 1234n, producerEpoch: 3 },
  })),
  {
    apiKey: 19,
    version: 7,
    bytes: () =>
      plt.createTopicsV7.createRequest([
        { name: 'orders', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }], configs: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'x', value: null }] },
      ], 30000, true).buffer,
    expect: {
      timeoutMs: 30000, validateOnly: true,
      topics: [{ name: 'orders', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }], configs: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'x', value: null }] }],
    },
  },
  {
    apiKey: 20,
    version: 6,
    bytes: () => plt.deleteTopicsV6.createRequest([{ name: 'orders', topicId: TOPIC_ID }], 15000).buffer,
    expect: { timeoutMs: 15000, topics: [{ name: 'orders', topicId: TOPIC_ID_BYTES }] },
  },
  ...[1, 2, 3].map((version): RequestCase => ({
    apiKey: 37,
    version,
    bytes: () =>
      [plt.createPartitionsV1, plt.createPartitionsV2, plt.createPartitionsV3][version - 1]!.createRequest([
        { name: 'orders', count: 6, assignments: [{ brokerIds: [1] }, { brokerIds: [2] }] },
      ], 10000, false).buffer,
    expect: { timeoutMs: 10000, validateOnly: false, topics: [{ name: 'orders', count: 6, assignments: [{ brokerIds: [1] }, { brokerIds: [2] }] }] },
  })),
  ...[3, 4].map((version): RequestCase => ({
    apiKey: 32,
    version,
    bytes: () =>
      [plt.describeConfigsV3, plt.describeConfigsV4][version - 3]!.createRequest([
        { resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms', 'segment.bytes'] },
      ], true, true).buffer,
    expect: {
      includeSynonyms: true,
      includeDocumentation: true,
      resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms', 'segment.bytes'] }],
    },
  })),
  {
    apiKey: 33,
    version: 2,
    bytes: () => plt.alterConfigsV2.createRequest([{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', value: '1000' }] }], true).buffer,
    expect: { validateOnly: true, resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', value: '1000' }] }] },
  },
  {
    apiKey: 44,
    version: 1,
    bytes: () =>
      plt.incrementalAlterConfigsV1.createRequest([
        { resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', configOperation: 1 }] },
      ], false).buffer,
    expect: { validateOnly: false, resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', configOperation: 1, value: null }] }] },
  },
  {
    apiKey: 21,
    version: 2,
    bytes: () => plt.deleteRecordsV2.createRequest([{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 99n }] }], 5000).buffer,
    expect: { timeoutMs: 5000, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 99n }] }] },
  },
  ...[0, 1].map((version): RequestCase => ({
    apiKey: 60,
    version,
    bytes: () => [plt.describeClusterV0, plt.describeClusterV1][version]!.createRequest(true, 1).buffer,
    expect: { includeClusterAuthorizedOperations: true, endpointType: 1 },
  })),
];

for (const c of requestCases) {
  const msg = spec(c.apiKey, 'request');
  test(`${msg.name}Request v${c.version} written by @platformatic/kafka decodes with our declaration`, () => {
    const bytes = c.bytes();
    const body = decodeMessage(msg, c.version, bytes);
    assertSubset(body, c.expect);
    assert.deepEqual(encodeMessage(msg, c.version, body), bytes, 're-encoding the decoded body gives the client\'s bytes');
  });
}

test('a Produce request\'s record batch arrives as the client\'s exact bytes', () => {
  const bytes = plt.produceV11.createRequest(1, 1000, [{ topic: 'orders', partition: 0, value: Buffer.from('hello'), timestamp: 1n }]).buffer;
  const body = decodeMessage(spec(0, 'request'), 11, bytes) as { topicData: { partitionData: { records: Buffer }[] }[] };
  const records = body.topicData[0]?.partitionData[0]?.records;
  assert.ok(Buffer.isBuffer(records));
  assert.equal(records.readInt8(16), 2, 'magic byte of a v2 record batch');
  assert.equal(records.length, records.readInt32BE(8) + 12, 'the whole batch and nothing else');
  const parsed = plt.readRecordsBatches(plt.Reader.from(records));
  assert.equal(parsed[0]?.records[0]?.value?.toString(), 'hello');
});

// ---------------------------------------------------------------------------------------------------
// Responses: our encoder -> client parsers.

/**
 * A body for `fields` at `version` with a distinct non-default value in every present field, tagged fields
 * included (the client must skip them). Error codes stay 0: the client's parsers throw on errors.
 */
function sampleBody(fields: readonly FieldSpec[], version: number, inRange: (v: number, r?: string) => boolean, seed = { n: 1 }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (!inRange(version, f.versions) || inRange(version, f.taggedVersions)) continue;
    out[f.name] = /errorMessage$/i.test(f.name) && inRange(version, f.nullableVersions) ? null : sampleValue(f, f.type, version, inRange, seed);
  }
  return out;
}

function sampleValue(f: FieldSpec, type: FieldType, version: number, inRange: (v: number, r?: string) => boolean, seed: { n: number }): unknown {
  const n = seed.n++;
  if (typeof type !== 'string') {
    if (type.kind === 'struct') return sampleBody(type.fields, version, inRange, seed);
    return [sampleValue(f, type.items, version, inRange, seed), sampleValue(f, type.items, version, inRange, seed)];
  }
  if (/errorCode$/i.test(f.name)) return 0;
  switch (type) {
    case 'bool':
      return n % 2 === 0;
    case 'int8':
      return n % 100;
    case 'int16':
    case 'uint16':
      return 1000 + n;
    case 'int32':
    case 'uint32':
      return 100_000 + n;
    case 'int64':
      return 10_000_000_000n + BigInt(n);
    case 'float64':
      return n + 0.5;
    case 'string':
      return `s${n}`;
    case 'uuid':
      return Buffer.alloc(16, n);
    case 'bytes':
      return Buffer.from([n, n + 1]);
    case 'records':
      return batchOf(`value-${n}`);
  }
}

function versionIn(v: number, r?: string): boolean {
  if (r === undefined || r === 'none') return false;
  const m = /^(\d+)(?:(\+)|-(\d+))?$/.exec(r);
  assert.ok(m, `bad range ${r}`);
  const min = Number(m[1]);
  const max = m[2] ? Infinity : m[3] !== undefined ? Number(m[3]) : min;
  return v >= min && v <= max;
}

/** Converts our decoded shapes to the client's: UUIDs become dashed hex strings. */
function asClientShape(v: unknown): unknown {
  if (Buffer.isBuffer(v) && v.length === 16) return v.toString('hex').replace(/(.{8})(.{4})(.{4})(.{4})(.{12})/, '$1-$2-$3-$4-$5');
  if (Array.isArray(v)) return v.map(asClientShape);
  if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asClientShape(x)]));
  }
  return v;
}

type Parse = (correlationId: number, apiKey: number, apiVersion: number, reader: plt.Reader) => unknown;

interface ResponseCase {
  readonly apiKey: number;
  readonly version: number;
  readonly parse: Parse;
  /** Fields whose value the client reshapes (compared separately or not at all). */
  readonly skip?: readonly string[];
  /** The client's key -> our field name, where the client names a field differently. */
  readonly rename?: Readonly<Record<string, string>>;
  /** Trailing bytes the client leaves unread, when it is not just the final empty tagged-field section. */
  readonly unread?: number;
}

const responseCases: ResponseCase[] = [
  ...[9, 10, 11].map((version) => ({ apiKey: 0, version, parse: [plt.produceV9, plt.produceV10, plt.produceV11][version - 9]!.parseResponse })),
  ...[12, 13, 14, 15, 16, 17].map((version) => ({
    apiKey: 1,
    version,
    parse: [plt.fetchV12, plt.fetchV13, plt.fetchV14, plt.fetchV15, plt.fetchV16, plt.fetchV17][version - 12]!.parseResponse,
    skip: ['records'],
    ...(version === 12 ? { rename: { topicId: 'topic' } } : {}),
  })),
  ...[5, 6, 7, 8, 9].map((version) => ({
    apiKey: 2,
    version,
    parse: [plt.listOffsetsV5, plt.listOffsetsV6, plt.listOffsetsV7, plt.listOffsetsV8, plt.listOffsetsV9][version - 5]!.parseResponse,
  })),
  // v9/v10: the client reads ClusterAuthorizedOperations (int32) as a boolean, leaving 3 of its bytes;
  // v9: it calls the topic name `topicId`.
  { apiKey: 3, version: 9, parse: plt.metadataV9.parseResponse, unread: 4, rename: { topicId: 'name' } },
  { apiKey: 3, version: 10, parse: plt.metadataV10.parseResponse, unread: 4 },
  { apiKey: 3, version: 11, parse: plt.metadataV11.parseResponse, unread: 0 },
  { apiKey: 3, version: 12, parse: plt.metadataV12.parseResponse },
  ...[3, 4].map((version) => ({ apiKey: 18, version, parse: [plt.apiVersionsV3, plt.apiVersionsV4][version - 3]!.parseResponse, skip: ['name'] })),
  ...[3, 4, 5].map((version) => ({ apiKey: 22, version, parse: [plt.initProducerIdV3, plt.initProducerIdV4, plt.initProducerIdV5][version - 3]!.parseResponse })),
  { apiKey: 19, version: 7, parse: plt.createTopicsV7.parseResponse },
  { apiKey: 20, version: 6, parse: plt.deleteTopicsV6.parseResponse },
  ...[1, 2, 3].map((version) => ({ apiKey: 37, version, parse: [plt.createPartitionsV1, plt.createPartitionsV2, plt.createPartitionsV3][version - 1]!.parseResponse })),
  ...[3, 4].map((version) => ({ apiKey: 32, version, parse: [plt.describeConfigsV3, plt.describeConfigsV4][version - 3]!.parseResponse })),
  { apiKey: 33, version: 2, parse: plt.alterConfigsV2.parseResponse },
  { apiKey: 44, version: 1, parse: plt.incrementalAlterConfigsV1.parseResponse },
  { apiKey: 21, version: 2, parse: plt.deleteRecordsV2.parseResponse },
  { apiKey: 60, version: 1, parse: plt.describeClusterV1.parseResponse },
];

/** Compares every key the client parsed with our body; returns how many leaf values matched. */
function compareParsed(parsed: unknown, ours: unknown, c: ResponseCase, path: string): number {
  if (Array.isArray(parsed)) {
    assert.ok(Array.isArray(ours), `${path}: we sent no array`);
    assert.equal(parsed.length, ours.length, `${path}: length`);
    return parsed.reduce((sum: number, item, i) => sum + compareParsed(item, ours[i], c, `${path}[${i}]`), 0);
  }
  if (parsed !== null && typeof parsed === 'object' && !Buffer.isBuffer(parsed)) {
    assert.ok(ours !== null && typeof ours === 'object', `${path}: we sent no struct`);
    let count = 0;
    for (const [clientKey, v] of Object.entries(parsed)) {
      if (c.skip?.includes(clientKey)) continue;
      const k = c.rename?.[clientKey] ?? clientKey;
      assert.ok(k in ours, `${path}.${k}: the client reads a field we do not declare`);
      count += compareParsed(v, (ours as Record<string, unknown>)[k], c, `${path}.${k}`);
    }
    return count;
  }
  assert.deepEqual(parsed, ours, path);
  return 1;
}

for (const c of responseCases) {
  const msg = spec(c.apiKey, 'response');
  test(`${msg.name}Response v${c.version} encoded from our declaration parses with @platformatic/kafka`, () => {
    const body = sampleBody(msg.fields, c.version, versionIn);
    const bytes = encodeMessage(msg, c.version, body);
    const reader = plt.Reader.from(bytes);
    const parsed = c.parse(0, c.apiKey, c.version, reader);
    const flexible = versionIn(c.version, msg.flexibleVersions);
    const unread = c.unread ?? (flexible ? 1 : 0);
    assert.equal(reader.remaining, unread, 'the client read every byte it should');
    if (c.unread === undefined && flexible) assert.deepEqual(bytes.subarray(bytes.length - 1), Buffer.from([0]), 'an empty tagged-field section');
    const matched = compareParsed(parsed, asClientShape(body), c, 'response');
    assert.ok(matched >= 3, `only ${matched} values were compared`);
  });
}

test('a Fetch response\'s records reach the client as the batch we put in', () => {
  const body = {
    responses: [{ topicId: TOPIC_ID_BYTES, partitions: [{ partitionIndex: 0, highWatermark: 1n, records: batchOf('payload') }] }],
  };
  const bytes = encodeMessage(spec(1, 'response'), 16, body);
  const parsed = plt.fetchV16.parseResponse(0, 1, 16, plt.Reader.from(bytes));
  const record = parsed.responses[0]?.partitions[0]?.records?.[0]?.records[0];
  assert.equal(record?.value?.toString(), 'payload');
  assert.equal(parsed.responses[0]?.topicId, TOPIC_ID);
});
