// Every topic config over the wire: kafkajs (its admin speaks CreateTopics, DescribeConfigs v2 and legacy
// AlterConfigs) creates a topic with every config at a valid value other than its default and reads them
// back; bad values and unknown names are refused with Kafka's INVALID_CONFIG (40). DescribeConfigs v4 (for
// the documentation field) and IncrementalAlterConfigs go through the raw wire client, which kafkajs lacks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import { startBroker, tempDir } from '../helpers/broker.js';
import { WireClient } from '../broker/handlers/wire-client.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { NO_EFFECT } from '../../broker/topics/topic-config-defs.js';
import { ConfigSource, ConfigType, TOPIC_CONFIGS, configTypeOf } from '../../broker/topics/topic-configs.js';

// kafkajs is CommonJS: its enums are not named exports.
const { ConfigResourceTypes, Kafka, logLevel } = kafkajs;

/**
 * A valid value other than the default for every config. Together they
 * pass Kafka's checks across configs: remote storage on with a delete-free policy (the empty list), local
 * retention equal to total retention because remote.log.copy.disable is on, copy lags within it.
 */
const NON_DEFAULT: Record<string, string> = {
  'cleanup.policy': '',
  'retention.ms': '86400000',
  'retention.bytes': '1073741824',
  'delete.retention.ms': '900',
  'min.compaction.lag.ms': '1000',
  'max.compaction.lag.ms': '86400000',
  'min.cleanable.dirty.ratio': '0.25',
  'file.delete.delay.ms': '1000',
  'segment.bytes': '2097152',
  'internal.segment.bytes': '4096',
  'segment.ms': '3600000',
  'segment.jitter.ms': '1000',
  'segment.index.bytes': '1048576',
  'index.interval.bytes': '8192',
  preallocate: 'true',
  'flush.messages': '1000',
  'flush.ms': '1000',
  'max.message.bytes': '2097152',
  'max.decompressed.message.bytes': '10000000',
  'message.timestamp.type': 'LogAppendTime',
  'message.timestamp.before.max.ms': '86400000',
  'message.timestamp.after.max.ms': '60000',
  'compression.type': 'zstd',
  'compression.gzip.level': '5',
  'compression.lz4.level': '12',
  'compression.zstd.level': '10',
  'min.insync.replicas': '2',
  'unclean.leader.election.enable': 'true',
  'leader.replication.throttled.replicas': '*',
  'follower.replication.throttled.replicas': '0:1,1:1',
  'remote.storage.enable': 'true',
  'local.retention.ms': '86400000',
  'local.retention.bytes': '1073741824',
  'remote.log.copy.disable': 'true',
  'remote.log.delete.on.disable': 'true',
  'remote.copy.lag.ms': '1000',
  'remote.copy.lag.bytes': '1000',
  'errors.deadletterqueue.group.enable': 'true',
  'iceberg.enabled': 'false',
  'iceberg.namespace': 'lake.raw',
  'iceberg.table.name': 'orders_v2',
  'iceberg.commit.interval.ms': '1000',
  'iceberg.mode': 'value_schema_latest',
  'iceberg.value.subject': 'lake-events',
  'iceberg.key.mode': 'key_schema_latest',
  'iceberg.key.subject': 'lake-keys',
  'iceberg.invalid.record.action': 'drop',
  'iceberg.upsert.enabled': 'true',
  'iceberg.upsert.cdc.format': 'debezium',
  'iceberg.upsert.id.columns': 'id,key.region',
  'iceberg.upsert.order.field': 'source.lsn',
  'iceberg.upsert.format.version': '3',
  'iceberg.compaction.enabled': 'false',
  'iceberg.compaction.min.input.files': '8',
  'iceberg.compaction.target.file.size.bytes': '134217728',
};

/** Kafka error codes a kafkajs admin error carries, its own and its aggregated ones. */
function codesOf(err: unknown): number[] {
  const e = err as { code?: unknown; errors?: unknown[]; originalError?: unknown };
  const own = typeof e.code === 'number' ? [e.code] : [];
  return [...own, ...(e.errors ?? []).flatMap(codesOf), ...(e.originalError ? codesOf(e.originalError) : [])];
}

interface DescribedConfig {
  name: string;
  value: string | null;
  configSource: number;
  configType: number;
  documentation: string | null;
}

test('every topic config over the wire: created, described, altered and refused as Kafka does', async (t) => {
  const warehouse = await tempDir('floe-configs-wh-');
  // Tiering on (remote.storage.enable needs it), without a REST catalog.
  const b = await startBroker(['--remote.log.storage.system.enable=true', '--iceberg.rest.port=-1', `--iceberg.warehouse=${warehouse}`]);
  t.after(() => b.stop());
  const kafka = new Kafka({ clientId: 'floe-topic-configs', brokers: [b.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());

  const untested = TOPIC_CONFIGS.map((d) => d.name).filter((n) => !(n in NON_DEFAULT));
  assert.deepEqual(untested, [], 'every config has a non-default value in this test');
  for (const def of TOPIC_CONFIGS) {
    if (def.name in NON_DEFAULT) assert.notEqual(NON_DEFAULT[def.name], def.default, `${def.name}: the value differs from the default`);
  }

  // Create with every config set, then read them back.
  const configEntries = Object.entries(NON_DEFAULT).map(([name, value]) => ({ name, value }));
  assert.equal(await admin.createTopics({ topics: [{ topic: 'every-config', numPartitions: 1, configEntries }] }), true);
  const described = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'every-config' }], includeSynonyms: false });
  const entries = new Map(described.resources[0]?.configEntries.map((e) => [e.configName, e]));
  for (const [name, value] of Object.entries(NON_DEFAULT)) {
    assert.equal(entries.get(name)?.configValue, value, `${name} reads back as set`);
    assert.equal(entries.get(name)?.configSource, ConfigSource.TOPIC_CONFIG, `${name} comes from the topic`);
    assert.equal(entries.get(name)?.isDefault, false, `${name} is not the default`);
  }

  // Canonical forms: Kafka parses TRUE as true and trims list items.
  await admin.createTopics({ topics: [{ topic: 'canonical', configEntries: [{ name: 'preallocate', value: 'TRUE' }, { name: 'cleanup.policy', value: 'compact , delete' }] }] });
  const canon = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'canonical', configNames: ['preallocate', 'cleanup.policy', 'delete.retention.ms'] }], includeSynonyms: false });
  assert.deepEqual(
    canon.resources[0]?.configEntries.map((e) => [e.configName, e.configValue, e.isDefault]).sort(),
    [['cleanup.policy', 'compact,delete', false], ['delete.retention.ms', '86400000', true], ['preallocate', 'true', false]],
  );

  // Refused with INVALID_CONFIG (40), and nothing is created: a bad value, an unknown name, a cross-config rule.
  const refusals: [string, { name: string; value: string }[]][] = [
    ['bad-value', [{ name: 'delete.retention.ms', value: '-1' }]],
    ['bad-level', [{ name: 'compression.zstd.level', value: '23' }]],
    ['bad-segment', [{ name: 'segment.bytes', value: '1048575' }]],
    ['bad-cdc-format', [{ name: 'iceberg.upsert.cdc.format', value: 'maxwell' }]],
    ['bad-id-columns', [{ name: 'iceberg.upsert.id.columns', value: 'id,,name' }]],
    ['unknown-name', [{ name: 'no.such.config', value: '1' }]],
    ['removed-in-4', [{ name: 'message.format.version', value: '3.0' }]],
    ['cross-config', [{ name: 'min.compaction.lag.ms', value: '10' }, { name: 'max.compaction.lag.ms', value: '5' }]],
  ];
  for (const [topic, entries] of refusals) {
    const err = await admin.createTopics({ topics: [{ topic, configEntries: entries }] }).then(() => undefined, (e: unknown) => e);
    assert.ok(err !== undefined, `${topic}: refused`);
    assert.deepEqual(codesOf(err), [ErrorCode.INVALID_CONFIG], `${topic}: INVALID_CONFIG`);
  }
  assert.deepEqual((await admin.listTopics()).sort(), ['canonical', 'every-config']);

  // Legacy AlterConfigs (kafkajs): a bad value and an unknown name are refused, the topic keeps its configs.
  for (const entry of [{ name: 'retention.ms', value: '-2' }, { name: 'no.such.config', value: '1' }]) {
    const err = await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'canonical', configEntries: [entry] }] }).then(() => undefined, (e: unknown) => e);
    assert.deepEqual(codesOf(err), [ErrorCode.INVALID_CONFIG], `AlterConfigs ${entry.name}=${entry.value}`);
  }
  await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'canonical', configEntries: [{ name: 'delete.retention.ms', value: '900' }] }] });

  const wire = await WireClient.connect(b.port);
  t.after(() => wire.close());
  // DescribeConfigs v4: each config's type, and documentation that says which configs have no effect.
  const v4 = await wire.request(32, 4, { resources: [{ resourceType: 2, resourceName: 'canonical', configurationKeys: null }], includeSynonyms: true, includeDocumentation: true });
  const docs = new Map(((v4.results as { configs: DescribedConfig[] }[])[0]?.configs ?? []).map((c) => [c.name, c]));
  assert.equal(docs.get('delete.retention.ms')?.value, '900', 'legacy AlterConfigs replaced the whole set');
  assert.equal(docs.get('preallocate')?.configSource, ConfigSource.DEFAULT_CONFIG);
  for (const def of TOPIC_CONFIGS.filter((d) => !d.internal)) {
    const c = docs.get(def.name);
    assert.equal(c?.configType, configTypeOf(def), `${def.name}: type`);
    assert.equal(c?.documentation?.includes(NO_EFFECT), !def.applied, `${def.name}: documentation says whether Floe applies it`);
  }
  assert.equal(docs.get('min.cleanable.dirty.ratio')?.configType, ConfigType.DOUBLE);

  // IncrementalAlterConfigs: Kafka's codes for each kind of problem, per resource.
  const incremental = async (configs: { name: string; configOperation: number; value: string | null }[]) => {
    const res = await wire.request(44, 1, { resources: [{ resourceType: 2, resourceName: 'canonical', configs }], validateOnly: false });
    return (res.responses as { errorCode: number }[])[0]?.errorCode;
  };
  assert.equal(await incremental([{ name: 'no.such.config', configOperation: 0, value: '1' }]), ErrorCode.INVALID_CONFIG, 'SET of an unknown name');
  assert.equal(await incremental([{ name: 'min.insync.replicas', configOperation: 0, value: '0' }]), ErrorCode.INVALID_CONFIG, 'SET of a bad value');
  assert.equal(await incremental([{ name: 'retention.ms', configOperation: 2, value: '5' }]), ErrorCode.INVALID_CONFIG, 'APPEND to a non-list');
  assert.equal(await incremental([{ name: 'cleanup.policy', configOperation: 2, value: 'bogus' }]), ErrorCode.INVALID_CONFIG, 'APPEND of a bad item');
  assert.equal(await incremental([{ name: 'retention.ms', configOperation: 0, value: null }]), ErrorCode.INVALID_REQUEST, 'SET to null');
  assert.equal(await incremental([{ name: 'no.such.config', configOperation: 1, value: null }]), ErrorCode.NONE, 'DELETE of an unknown name changes nothing');
  assert.equal(await incremental([{ name: 'cleanup.policy', configOperation: 2, value: 'compact' }, { name: 'segment.jitter.ms', configOperation: 0, value: ' 250 ' }]), ErrorCode.NONE);
  const after = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'canonical', configNames: ['cleanup.policy', 'segment.jitter.ms'] }], includeSynonyms: false });
  assert.deepEqual(after.resources[0]?.configEntries.map((e) => [e.configName, e.configValue]).sort(), [['cleanup.policy', 'delete,compact'], ['segment.jitter.ms', '250']]);
});
