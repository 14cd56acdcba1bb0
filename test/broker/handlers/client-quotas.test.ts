// AlterClientQuotas and DescribeClientQuotas on the wire, and byte-rate quotas enforced on Produce and Fetch
// (throttle_time_ms, then a muted connection), against one broker that is restarted once on the same data
// directory to show the quotas are durable. Kafka's own tools and the Java client: test/interop/quotas.test.ts.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { WireClient, batchOf, fetchBody, fetchPartitions, firstPartition, produceBody, type Body } from './wire-client.js';

type Entity = { entityType: string; entityName: string | null }[];
const op = (key: string, value: number, remove = false) => ({ key, value, remove });
const alter = (c: WireClient, entries: { entity: Entity; ops: ReturnType<typeof op>[] }[], validateOnly = false) => c.request(49, 1, { entries, validateOnly });
const describe = async (c: WireClient, components: { entityType: string; matchType: number; match: string | null }[], strict: boolean) => {
  const res = await c.request(48, 1, { components, strict });
  assert.equal(res.errorCode, ErrorCode.NONE, String(res.errorMessage));
  return (res.entries as { entity: Entity; values: { key: string; value: number }[] }[]).map((e) => [e.entity.map((p) => `${p.entityType}=${p.entityName ?? '<default>'}`).join(','), Object.fromEntries(e.values.map((v) => [v.key, v.value]))]).sort();
};
const codes = (res: Body) => (res.entries as { errorCode: number; errorMessage: string | null }[]).map((e) => [e.errorCode, e.errorMessage]);

test('client quotas: altered and described as Kafka, enforced with throttle_time_ms and a muted connection, durable across a restart', { timeout: 60_000 }, async (t) => {
  const dataDir = await tempDir();
  let b = await startBroker([], { dataDir });
  const clients: WireClient[] = [];
  const connect = async (clientId?: string) => {
    const c = await WireClient.connect(b.port, clientId);
    clients.push(c);
    return c;
  };
  t.after(async () => {
    for (const c of clients) c.close();
    await b.stop();
    await rm(dataDir, { recursive: true, force: true });
  });
  let admin = await connect();

  const refused = await alter(admin, [
    { entity: [{ entityType: 'user', entityName: 'alice' }], ops: [op('producer_bytes_rate', 1)] },
    { entity: [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: 'app' }], ops: [op('producer_byte_rate', -5)] },
    { entity: [{ entityType: 'user', entityName: 'alice' }], ops: [op('producer_byte_rate', 1.5)] },
    { entity: [{ entityType: 'group', entityName: 'g' }], ops: [op('producer_byte_rate', 1)] },
  ]);
  assert.deepEqual(codes(refused).map(([c]) => c), [ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
  assert.match(String(codes(refused)[0]?.[1]), /Invalid configuration key producer_bytes_rate/);
  assert.match(String(codes(refused)[1]?.[1]), /must not be negative/);
  const validated = await alter(admin, [{ entity: [{ entityType: 'user', entityName: 'alice' }], ops: [op('producer_byte_rate', 1024)] }], true);
  assert.deepEqual(codes(validated), [[ErrorCode.NONE, null]]);
  assert.deepEqual(await describe(admin, [], false), [], 'validateOnly stores nothing');

  const ok = await alter(admin, [
    { entity: [{ entityType: 'user', entityName: 'alice' }], ops: [op('producer_byte_rate', 1024), op('request_percentage', 50)] },
    { entity: [{ entityType: 'user', entityName: null }], ops: [op('consumer_byte_rate', 1000)] },
    { entity: [{ entityType: 'client-id', entityName: 'wire-test' }], ops: [op('producer_byte_rate', 1000), op('consumer_byte_rate', 1_000_000)] },
    { entity: [{ entityType: 'ip', entityName: '10.1.2.3' }], ops: [op('connection_creation_rate', 5)] },
    { entity: [{ entityType: 'client-id', entityName: 'old-client' }], ops: [op('producer_byte_rate', 1000)] },
  ]);
  assert.deepEqual(codes(ok).map(([c]) => c), [0, 0, 0, 0, 0]);
  await alter(admin, [{ entity: [{ entityType: 'user', entityName: 'alice' }], ops: [op('request_percentage', 0, true)] }]);
  const all = [
    ['client-id=old-client', { producer_byte_rate: 1000 }],
    ['client-id=wire-test', { consumer_byte_rate: 1_000_000, producer_byte_rate: 1000 }],
    ['ip=10.1.2.3', { connection_creation_rate: 5 }],
    ['user=<default>', { consumer_byte_rate: 1000 }],
    ['user=alice', { producer_byte_rate: 1024 }],
  ];
  assert.deepEqual(await describe(admin, [], false), all);
  assert.deepEqual(await describe(admin, [{ entityType: 'user', matchType: 2, match: null }], true), all.slice(3));
  assert.deepEqual(await describe(admin, [{ entityType: 'user', matchType: 1, match: null }], true), [all[3]]);
  const badFilter = await admin.request(48, 1, { components: [{ entityType: 'user', matchType: 0, match: null }], strict: false });
  assert.equal(badFilter.errorCode, ErrorCode.INVALID_REQUEST);

  // Produce as client wire-test (anonymous user, whose default user entity sets no producer quota): 1000 B/s.
  await b.broker.services.topics.createTopic('q', 1);
  const producer = await connect();
  const small = await producer.request(0, 9, produceBody('q', 0, batchOf(['x'.repeat(5000)])));
  assert.equal(small.throttleTimeMs, 0, 'within the quota');
  const over = await producer.request(0, 9, produceBody('q', 0, batchOf(['y'.repeat(6000)])));
  assert.equal(firstPartition(over).errorCode, ErrorCode.NONE, 'a throttled produce is still appended');
  const throttle = over.throttleTimeMs as number;
  assert.ok(throttle > 0 && throttle < 5000, `throttle_time_ms ${throttle}`);
  // The connection is muted for the throttle time: the next request is answered only after it.
  const before = performance.now();
  await producer.request(3, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  const waited = performance.now() - before;
  assert.ok(waited >= throttle - 100, `answered after ${waited.toFixed(0)} ms, throttled for ${throttle} ms`);

  // Fetch as wire-test: the default user's 1000 B/s applies to the anonymous user before the client id's
  // 1 MB/s, as in Kafka's order (/users/<default> before /clients/<client-id>). The first batch is within it; the second puts the rate over, so the
  // answer is Kafka's throttled fetch response: no partitions and a throttle time.
  const consumer = await connect();
  const first = await consumer.request(1, 12, fetchBody('q', [{ partition: 0, fetchOffset: 0n }], { maxBytes: 5200 }));
  assert.equal(first.throttleTimeMs, 0);
  assert.equal(fetchPartitions(first).length, 1);
  const second = await consumer.request(1, 12, fetchBody('q', [{ partition: 0, fetchOffset: 1n }]));
  assert.ok((second.throttleTimeMs as number) > 0, `throttle ${String(second.throttleTimeMs)}`);
  assert.deepEqual(second.responses, []);

  // Produce v5 predates KIP-219: its client does not wait by itself, so the answer waits instead.
  const old = await connect('old-client');
  assert.equal((await old.request(0, 5, produceBody('q', 0, batchOf(['x'.repeat(5000)])))).throttleTimeMs, 0);
  const sent = performance.now();
  const late = await old.request(0, 5, produceBody('q', 0, batchOf(['y'.repeat(6000)])));
  const lateMs = late.throttleTimeMs as number;
  assert.ok(lateMs > 0 && lateMs < 5000, `throttle_time_ms ${lateMs}`);
  assert.ok(performance.now() - sent >= lateMs - 100, 'the v5 answer came after its throttle time');

  const metrics = await (await fetch(`${b.adminUrl}/metrics`)).text();
  assert.match(metrics, /floe_quota_throttled_requests_total\{api="Produce"\} 2/);
  assert.match(metrics, /floe_quota_throttled_requests_total\{api="Fetch"\} 1/);

  for (const c of clients.splice(0)) c.close();
  await b.stop();
  b = await startBroker([], { dataDir });
  admin = await connect();
  assert.deepEqual(await describe(admin, [], false), all, 'quotas survive a restart');
});
