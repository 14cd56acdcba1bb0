// Apache Kafka's AdminClient (kafka-clients 4.x) against Floe: topics (create with configs, list, describe,
// delete), configs (describe, incrementalAlter set/delete, refused values), partitions (createPartitions),
// consumer groups (list, describe with a live member, listConsumerGroupOffsets, alterConsumerGroupOffsets,
// deleteConsumerGroupOffsets, deleteConsumerGroups), deleteRecords and describeLogDirs. Each effect is checked
// independently of the Java client: with kafkajs's admin, the broker's metadata, or the files on disk.
import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { startBroker } from '../helpers/broker.js';
import { JavaClient, JavaClientError } from './clients/java.js';

const TOPIC = 'java-admin';
const GROUP = 'java-admin-group';

interface ConfigEntry {
  value: string | null;
  source: string;
  isDefault: boolean;
  readOnly: boolean;
}

async function rejectsWith(p: Promise<unknown>, errorClass: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof JavaClientError, String(e));
    assert.equal(e.errorClass, errorClass, e.message);
    return true;
  });
}

async function segmentBytes(dir: string): Promise<number> {
  let n = 0;
  for (const f of await readdir(dir)) if (f.endsWith('.log')) n += (await stat(join(dir, f))).size;
  return n;
}

test("Apache Kafka's AdminClient manages Floe", async (t) => {
  const broker = await startBroker();
  t.after(() => broker.stop());
  const java = new JavaClient(broker.bootstrap);
  t.after(() => java.close());
  const kafka = new Kafka({ clientId: 'floe-java-admin-check', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const check: Admin = kafka.admin();
  await check.connect();
  t.after(() => check.disconnect());
  const metadata = broker.broker.services.metadata;

  await t.test('topics: create with a config, list, describe', async () => {
    await java.call('create_topic', { topic: TOPIC, partitions: 2, configs: { 'retention.ms': '3600000' } });
    await rejectsWith(java.call('create_topic', { topic: TOPIC, partitions: 2 }), 'TopicExistsException');
    await rejectsWith(java.call('create_topic', { topic: 'bad-config', partitions: 1, configs: { 'no.such.config': '1' } }), 'InvalidConfigurationException');
    const { topics } = (await java.call('list_topics')) as { topics: string[] };
    assert.deepEqual(topics, [TOPIC]);
    assert.deepEqual(await check.listTopics(), [TOPIC]);
    const d = (await java.call('describe_topic', { topic: TOPIC })) as { name: string; topicId: string; internal: boolean; partitions: { partition: number; leader: number; replicas: number[]; isr: number[] }[] };
    const record = metadata.getTopic(TOPIC);
    assert.ok(record);
    assert.equal(d.topicId, record.id.toString('base64url'), 'the topic id Metadata returns');
    assert.equal(d.internal, false);
    const node = broker.broker.services.identity.nodeId;
    assert.deepEqual(d.partitions, [0, 1].map((p) => ({ partition: p, leader: node, replicas: [node], isr: [node] })));
    await rejectsWith(java.call('describe_topic', { topic: 'absent' }), 'UnknownTopicOrPartitionException');
  });

  await t.test('configs: describe, then incrementalAlterConfigs set and delete', async () => {
    const describe = async () => ((await java.call('describe_configs', { topic: TOPIC })) as { configs: Record<string, ConfigEntry> }).configs;
    const before = await describe();
    assert.deepEqual(before['retention.ms'], { value: '3600000', source: 'DYNAMIC_TOPIC_CONFIG', isDefault: false, readOnly: false, sensitive: false });
    assert.equal(before['cleanup.policy']?.value, 'delete');
    assert.equal(before['cleanup.policy']?.isDefault, true);
    await java.call('alter_configs', { topic: TOPIC, ops: [{ op: 'set', name: 'retention.ms', value: '7200000' }, { op: 'set', name: 'segment.bytes', value: '1048576' }] });
    await java.call('alter_configs', { topic: TOPIC, ops: [{ op: 'delete', name: 'segment.bytes' }] });
    assert.deepEqual(metadata.getTopic(TOPIC)?.configs, { 'retention.ms': '7200000' });
    const seen = await check.describeConfigs({ resources: [{ type: 2, name: TOPIC, configNames: ['retention.ms', 'segment.bytes'] }], includeSynonyms: false });
    const entries = Object.fromEntries((seen.resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]));
    assert.equal(entries['retention.ms'], '7200000');
    assert.equal(entries['segment.bytes'], (await describe())['segment.bytes']?.value, 'segment.bytes back at its default');
    assert.deepEqual((await describe())['segment.bytes'], { value: '1073741824', source: 'DEFAULT_CONFIG', isDefault: true, readOnly: false, sensitive: false });
    // As in Kafka, only the topic's own setting differs from the defaults of a broker started without settings.
    assert.deepEqual(Object.entries(await describe()).filter(([, e]) => !e.isDefault).map(([n, e]) => [n, e.value, e.source]), [['retention.ms', '7200000', 'DYNAMIC_TOPIC_CONFIG']]);
    await rejectsWith(java.call('alter_configs', { topic: TOPIC, ops: [{ op: 'set', name: 'retention.ms', value: 'soon' }] }), 'InvalidConfigurationException');
    await rejectsWith(java.call('alter_configs', { topic: TOPIC, ops: [{ op: 'append', name: 'retention.ms', value: '1' }] }), 'InvalidConfigurationException');
    assert.equal(metadata.getTopic(TOPIC)?.configs['retention.ms'], '7200000', 'a refused change changes nothing');
  });

  await t.test('partitions: createPartitions raises the count, never lowers it', async () => {
    await java.call('create_partitions', { topic: TOPIC, total: 4 });
    const md = await check.fetchTopicMetadata({ topics: [TOPIC] });
    assert.equal(md.topics[0]?.partitions.length, 4);
    await rejectsWith(java.call('create_partitions', { topic: TOPIC, total: 3 }), 'InvalidPartitionsException');
    assert.equal(metadata.getTopic(TOPIC)?.partitions, 4);
  });

  await t.test('consumer groups: list, describe, offsets listed, altered and deleted, group deleted', async () => {
    const records = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => ({ partition: i % 4, key: null, value: Buffer.from(`v${i}`), headers: [] }));
    await java.produce({ topic: TOPIC, acks: -1, codec: 'none', idempotent: true, records });
    const joined = (await java.call('group_join', { group: GROUP, topics: [TOPIC] })) as { assignment: [string, number][] };
    assert.deepEqual(joined.assignment, [0, 1, 2, 3].map((p) => [TOPIC, p]));
    const listed = (await java.call('list_groups')) as { groups: { groupId: string; state: string; type: string; protocol: string }[] };
    assert.deepEqual(listed.groups, [{ groupId: GROUP, state: 'Stable', type: 'Classic', protocol: 'consumer' }]);
    const live = (await java.call('describe_group', { group: GROUP })) as { state: string; assignor: string; coordinator: number; members: { clientId: string; host: string; assignment: [string, number][] }[] };
    assert.equal(live.state, 'Stable');
    assert.equal(live.coordinator, broker.broker.services.identity.nodeId);
    assert.equal(live.members.length, 1);
    assert.equal(live.members[0]?.clientId, 'floe-java-member');
    assert.deepEqual(live.members[0]?.assignment.sort((a, b) => a[1] - b[1]), [0, 1, 2, 3].map((p) => [TOPIC, p]));
    // Kafka refuses to delete a group with members, and to alter the offsets of an active group.
    await rejectsWith(java.call('delete_groups', { groups: [GROUP] }), 'GroupNotEmptyException');
    await rejectsWith(java.call('alter_group_offsets', { group: GROUP, offsets: [[TOPIC, 0, 0]] }), 'UnknownMemberIdException');
    const left = (await java.call('group_leave', { group: GROUP })) as { consumed: number };
    assert.equal(left.consumed, records.length);
    const empty = (await java.call('describe_group', { group: GROUP })) as { state: string; members: unknown[] };
    assert.deepEqual([empty.state, empty.members], ['Empty', []]);

    const offsets = async () => ((await java.call('list_group_offsets', { group: GROUP })) as { offsets: [string, number, number][] }).offsets;
    assert.deepEqual(await offsets(), [0, 1, 2, 3].map((p) => [TOPIC, p, 2]), 'the member committed every record it read');
    await java.call('alter_group_offsets', { group: GROUP, offsets: [[TOPIC, 0, 1], [TOPIC, 3, 0]] });
    await java.call('delete_group_offsets', { group: GROUP, topic: TOPIC, partitions: [1] });
    assert.deepEqual(await offsets(), [[TOPIC, 0, 1], [TOPIC, 2, 2], [TOPIC, 3, 0]]);
    const kjs = await check.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
    assert.deepEqual(kjs[0]?.partitions.map((p) => [p.partition, p.offset]).sort((a, b) => Number(a[0]) - Number(b[0])), [[0, '1'], [1, '-1'], [2, '2'], [3, '0']]);

    await java.call('delete_groups', { groups: [GROUP] });
    assert.deepEqual(((await java.call('list_groups')) as { groups: unknown[] }).groups, []);
    assert.deepEqual((await check.listGroups()).groups, []);
    await rejectsWith(java.call('delete_groups', { groups: [GROUP] }), 'GroupIdNotFoundException');
  });

  await t.test('deleteRecords moves the low watermark', async () => {
    const { lowWatermark } = (await java.call('delete_records', { topic: TOPIC, partition: 0, offset: 1 })) as { lowWatermark: number };
    assert.equal(lowWatermark, 1);
    const low = (await check.fetchTopicOffsets(TOPIC)).find((p) => p.partition === 0)?.low;
    assert.equal(low, '1');
    assert.equal(await java.listOffset(TOPIC, 0, 'earliest'), 1);
    await rejectsWith(java.call('delete_records', { topic: TOPIC, partition: 0, offset: 99 }), 'OffsetOutOfRangeException');
  });

  await t.test('describeLogDirs reports the real log dir and partition sizes', async () => {
    const res = (await java.call('describe_log_dirs')) as { brokers: { broker: number; dirs: { path: string; error: string | null; totalBytes: number; usableBytes: number; replicas: { topic: string; partition: number; size: number; offsetLag: number; isFuture: boolean }[] }[] }[] };
    assert.equal(res.brokers.length, 1);
    const [dir, ...others] = res.brokers[0]?.dirs ?? [];
    assert.ok(dir);
    assert.equal(others.length, 0);
    assert.equal(dir.path, resolve(broker.dataDir));
    assert.equal(dir.error, null);
    assert.ok(dir.totalBytes > 0 && dir.usableBytes > 0 && dir.usableBytes <= dir.totalBytes);
    assert.deepEqual(dir.replicas.map((r) => [r.topic, r.partition]), [0, 1, 2, 3].map((p) => [TOPIC, p]));
    for (const r of dir.replicas) {
      assert.equal(r.size, await segmentBytes(join(broker.dataDir, `${r.topic}-${r.partition}`)), `${r.topic}-${r.partition}`);
      assert.ok(r.size > 0);
      assert.deepEqual([r.offsetLag, r.isFuture], [0, false]);
    }
  });

  await t.test('topics: delete', async () => {
    await java.deleteTopic(TOPIC);
    assert.deepEqual(await check.listTopics(), []);
    assert.equal(await java.partitionCount(TOPIC), undefined);
    await rejectsWith(java.call('delete_topic', { topic: TOPIC }), 'UnknownTopicOrPartitionException');
  });
});
