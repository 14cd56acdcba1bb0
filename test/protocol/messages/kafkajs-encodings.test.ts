/**
 * The non-flexible (older) versions of our declarations against kafkajs, an independently written client
 * that still speaks them (Produce v3-7, Fetch v4-11, Metadata v0-6, ...): the request bytes it writes must
 * decode with our declarations, consume every byte, re-encode to the same bytes, and put its values in
 * the right fields.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { API_SPECS } from '../../../protocol/messages/index.js';
import { decodeMessage, encodeMessage } from '../../../protocol/schema/codec.js';

const require = createRequire(import.meta.url);

interface KafkajsRequest {
  readonly apiKey: number;
  readonly apiVersion: number;
  encode(): Promise<{ readonly buffer: Buffer }>;
}

type RequestFactory = (args: Record<string, unknown>) => KafkajsRequest;

/** A kafkajs request module, e.g. `fetch/v4` (kafkajs ships no types for its protocol layer). */
function kafkajsRequest(path: string): RequestFactory {
  return require(`kafkajs/src/protocol/requests/${path}/request.js`) as RequestFactory;
}

function assertSubset(actual: unknown, expected: unknown, path = 'body'): void {
  if (expected !== null && typeof expected === 'object' && !Buffer.isBuffer(expected)) {
    assert.ok(actual !== null && typeof actual === 'object', `${path}: expected an object or array`);
    if (Array.isArray(expected)) assert.equal((actual as unknown[]).length, expected.length, `${path}: length`);
    for (const [k, v] of Object.entries(expected)) assertSubset((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
    return;
  }
  assert.deepEqual(actual, expected, path);
}

interface Case {
  readonly path: string;
  readonly args: Record<string, unknown>;
  readonly expect: Record<string, unknown>;
}

const fetchTopics = [{ topic: 'orders', partitions: [{ partition: 3, fetchOffset: '42', maxBytes: 65536 }] }];
const fetchExpect = (version: number): Record<string, unknown> => ({
  replicaId: -1,
  maxWaitMs: 500,
  minBytes: 1,
  topics: [{ topic: 'orders', partitions: [{ partition: 3, fetchOffset: 42n, partitionMaxBytes: 65536 }] }],
  ...(version >= 3 ? { maxBytes: 1 << 20 } : {}),
  ...(version >= 4 ? { isolationLevel: 1 } : {}),
});

const cases: Case[] = [
  ...[4, 5, 6, 7, 8, 9, 10, 11].map((v) => ({
    path: `fetch/v${v}`,
    args: { replicaId: -1, maxWaitTime: 500, minBytes: 1, maxBytes: 1 << 20, topics: fetchTopics, isolationLevel: 1, rackId: 'rack-a' },
    expect: { ...fetchExpect(v), ...(v >= 11 ? { rackId: 'rack-a' } : {}), ...(v >= 7 ? { sessionId: 0, sessionEpoch: -1 } : {}) },
  })),
  ...[3, 4, 5, 6, 7].map((v) => ({
    path: `produce/v${v}`,
    args: {
      acks: -1,
      timeout: 3000,
      transactionalId: 'tx-1',
      topicData: [{ topic: 'orders', partitions: [{ partition: 2, messages: [{ key: 'k', value: 'v', timestamp: 1_700_000_000_000 }] }] }],
    },
    expect: { transactionalId: 'tx-1', acks: -1, timeoutMs: 3000, topicData: [{ name: 'orders', partitionData: [{ index: 2 }] }] },
  })),
  { path: 'metadata/v0', args: { topics: ['a', 'b'] }, expect: { topics: [{ name: 'a' }, { name: 'b' }] } },
  ...[1, 2, 3].map((v) => ({ path: `metadata/v${v}`, args: { topics: ['a'] }, expect: { topics: [{ name: 'a' }] } })),
  ...[4, 5, 6].map((v) => ({
    path: `metadata/v${v}`,
    args: { topics: ['a'], allowAutoTopicCreation: false },
    expect: { topics: [{ name: 'a' }], allowAutoTopicCreation: false },
  })),
  ...[0, 1, 2].map((v) => ({ path: `apiVersions/v${v}`, args: {}, expect: {} })),
  {
    path: 'listOffsets/v0',
    args: { replicaId: -1, topics: [{ topic: 'orders', partitions: [{ partition: 1, timestamp: -2 }] }] },
    expect: { replicaId: -1, topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, timestamp: -2n, maxNumOffsets: 1 }] }] },
  },
  ...[1, 2, 3].map((v) => ({
    path: `listOffsets/v${v}`,
    args: { replicaId: -1, isolationLevel: 1, topics: [{ topic: 'orders', partitions: [{ partition: 1, timestamp: -1 }] }] },
    expect: { replicaId: -1, topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, timestamp: -1n }] }] },
  })),
  ...[0, 1].map((v) => ({
    path: `initProducerId/v${v}`,
    args: { transactionalId: 'tx-2', transactionTimeout: 60000 },
    expect: { transactionalId: 'tx-2', transactionTimeoutMs: 60000 },
  })),
  ...[0, 1, 2, 3].map((v) => ({
    path: `createTopics/v${v}`,
    args: {
      topics: [{ topic: 'orders', numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }],
      timeout: 5000,
      validateOnly: true,
    },
    expect: {
      timeoutMs: 5000,
      topics: [{ name: 'orders', numPartitions: 3, replicationFactor: 1, configs: [{ name: 'cleanup.policy', value: 'compact' }] }],
      ...(v >= 1 ? { validateOnly: true } : {}),
    },
  })),
  ...[0, 1].map((v) => ({ path: `deleteTopics/v${v}`, args: { topics: ['a', 'b'], timeout: 5000 }, expect: { topicNames: ['a', 'b'], timeoutMs: 5000 } })),
  ...[0, 1, 2].map((v) => ({
    path: `describeConfigs/v${v}`,
    args: { resources: [{ type: 2, name: 'orders', configNames: ['retention.ms'] }], includeSynonyms: true },
    expect: { resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms'] }], ...(v >= 1 ? { includeSynonyms: true } : {}) },
  })),
  ...[0, 1].map((v) => ({
    path: `alterConfigs/v${v}`,
    args: { resources: [{ type: 2, name: 'orders', configEntries: [{ name: 'retention.ms', value: '1000' }] }], validateOnly: true },
    expect: { validateOnly: true, resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', value: '1000' }] }] },
  })),
  ...[0, 1].map((v) => ({
    path: `createPartitions/v${v}`,
    args: { topicPartitions: [{ topic: 'orders', count: 6 }], timeout: 5000, validateOnly: false },
    expect: { timeoutMs: 5000, validateOnly: false, topics: [{ name: 'orders', count: 6, assignments: null }] },
  })),
  ...[0, 1].map((v) => ({
    path: `deleteRecords/v${v}`,
    args: { topics: [{ topic: 'orders', partitions: [{ partition: 0, offset: '99' }] }], timeout: 5000 },
    expect: { timeoutMs: 5000, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 99n }] }] },
  })),
];

for (const c of cases) {
  test(`kafkajs ${c.path} request decodes with our declaration and re-encodes to the same bytes`, async () => {
    const request = kafkajsRequest(c.path)(c.args);
    const spec = API_SPECS.get(request.apiKey);
    assert.ok(spec, `API ${request.apiKey} is not declared`);
    const bytes = (await request.encode()).buffer;
    const body = decodeMessage(spec.request, request.apiVersion, bytes);
    assertSubset(body, c.expect);
    assert.deepEqual(encodeMessage(spec.request, request.apiVersion, body), bytes);
  });
}
