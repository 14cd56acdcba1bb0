import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../../broker/config/config.js';
import type { BrokerConfig } from '../../../broker/config/settings.js';
import { ErrorCode, KafkaError } from '../../../protocol/error-codes.js';
import { NO_EFFECT, type TopicConfigDef } from '../../../broker/topics/topic-config-defs.js';
import {
  ConfigSource,
  TOPIC_CONFIGS,
  checkTopicConfig,
  effectiveConfigs,
  numericConfig,
  parseConfigValue,
  validateTopicConfig,
  validateTopicConfigs,
  validateTopicName,
} from '../../../broker/topics/topic-configs.js';
import { logConfigFor } from '../../../broker/topics/topic-manager.js';
import { topicTieringConfig } from '../../../broker/tiering/broker-tiering.js';

function brokerWith(...flags: string[]): BrokerConfig {
  const res = loadConfig({ argv: flags });
  return res.help ? assert.fail('help') : res.config;
}
const broker = brokerWith('--log.retention.ms=5000');

/** Asserts Kafka accepts the value, stored as `canonical` (the value itself when omitted). */
function ok(name: string, value: string, canonical = value): void {
  assert.deepEqual(checkTopicConfig(name, value), { canonical }, `${name}=${value} should be accepted`);
}
/** Asserts Kafka refuses the value, with a message matching `why`. */
function bad(name: string, value: string, why: RegExp): void {
  const r = checkTopicConfig(name, value);
  assert.ok('error' in r, `${name}=${value} should be refused`);
  assert.match(r.error, why);
  assert.match(r.error, new RegExp(`^Invalid value .* for configuration ${name.replace(/\./g, '\\.')}: `));
}

test('topic names follow Kafka rules', () => {
  assert.equal(validateTopicName('orders.v1_x-2'), undefined);
  assert.match(validateTopicName('') ?? '', /empty/);
  assert.match(validateTopicName('..') ?? '', /cannot be/);
  assert.match(validateTopicName('a'.repeat(250)) ?? '', /249/);
  assert.match(validateTopicName('bad name') ?? '', /characters/);
  assert.match(validateTopicName('ü') ?? '', /characters/);
});

test('the configs are Kafka 4.4 topic configs plus iceberg.*, and removed ones are unknown', () => {
  const names = TOPIC_CONFIGS.map((d) => d.name);
  assert.equal(new Set(names).size, names.length, 'one declaration per config');
  for (const n of ['delete.retention.ms', 'min.compaction.lag.ms', 'max.compaction.lag.ms', 'min.cleanable.dirty.ratio', 'file.delete.delay.ms', 'segment.jitter.ms', 'segment.index.bytes', 'preallocate', 'compression.gzip.level', 'compression.lz4.level', 'compression.zstd.level', 'message.timestamp.before.max.ms', 'message.timestamp.after.max.ms', 'remote.log.copy.disable', 'remote.log.delete.on.disable', 'remote.copy.lag.ms', 'remote.copy.lag.bytes', 'max.decompressed.message.bytes', 'errors.deadletterqueue.group.enable', 'leader.replication.throttled.replicas', 'follower.replication.throttled.replicas', 'unclean.leader.election.enable']) {
    assert.ok(names.includes(n), n);
  }
  // Gone in Kafka 4.0: refused as unknown names, as Kafka 4 refuses them.
  for (const n of ['message.format.version', 'message.downconversion.enable', 'message.timestamp.difference.max.ms', 'no.such']) {
    const r = checkTopicConfig(n, '1');
    assert.ok('error' in r && r.error.startsWith(`Unknown topic config name: ${n}`), n);
  }
  assert.equal(validateTopicConfig('delete.retention.ms', '900'), undefined);
});

test('longs and ints: trimmed, signed, within their type, by their range', () => {
  ok('delete.retention.ms', '900');
  ok('delete.retention.ms', '0');
  bad('delete.retention.ms', '-1', /at least 0/);
  ok('retention.ms', '-1');
  bad('retention.ms', '-2', /at least -1/);
  ok('retention.ms', ' 100 ', '100');
  ok('retention.ms', '+007', '7');
  ok('retention.ms', '9223372036854775807');
  bad('retention.ms', '9223372036854775808', /Not a number of type LONG/);
  bad('retention.ms', '1.5', /type LONG/);
  bad('retention.ms', '', /type LONG/);
  bad('retention.ms', '0x10', /type LONG/);
  bad('retention.ms', '1_000', /type LONG/);
  ok('retention.bytes', '-5'); // no validator in Kafka: any negative is "no limit"
  ok('segment.bytes', '1048576');
  bad('segment.bytes', '1048575', /at least 1048576/);
  ok('segment.bytes', '2147483647');
  bad('segment.bytes', '2147483648', /Not a number of type INT/);
  ok('internal.segment.bytes', '1024');
  bad('internal.segment.bytes', 'abc', /type INT/);
  bad('min.insync.replicas', '0', /at least 1/);
  ok('min.insync.replicas', '3');
  bad('max.compaction.lag.ms', '0', /at least 1/);
  ok('local.retention.ms', '-2');
  bad('local.retention.bytes', '-3', /at least -2/);
  ok('remote.copy.lag.ms', '-1');
  bad('remote.copy.lag.bytes', '-2', /at least -1/);
  bad('max.decompressed.message.bytes', '0', /at least 1/);
  ok('max.decompressed.message.bytes', '2147483639');
  bad('max.decompressed.message.bytes', '2147483640', /no more than 2147483639/);
});

test('compression levels follow KIP-390 ranges', () => {
  ok('compression.gzip.level', '-1');
  ok('compression.gzip.level', '1');
  ok('compression.gzip.level', ' 9', '9');
  bad('compression.gzip.level', '0', /between 1 and 9 or equal to -1/);
  bad('compression.gzip.level', '10', /between 1 and 9 or equal to -1/);
  ok('compression.lz4.level', '17');
  bad('compression.lz4.level', '0', /at least 1/);
  bad('compression.lz4.level', '18', /no more than 17/);
  ok('compression.zstd.level', '-131072');
  ok('compression.zstd.level', '0');
  bad('compression.zstd.level', '-131073', /at least -131072/);
  bad('compression.zstd.level', '23', /no more than 22/);
});

test('doubles: Java number forms, within between(0, 1)', () => {
  ok('min.cleanable.dirty.ratio', '0');
  ok('min.cleanable.dirty.ratio', '1');
  ok('min.cleanable.dirty.ratio', '1e-1', '0.1');
  ok('min.cleanable.dirty.ratio', '.5', '0.5');
  ok('min.cleanable.dirty.ratio', '0.5d', '0.5');
  ok('min.cleanable.dirty.ratio', ' 0.3', '0.3');
  bad('min.cleanable.dirty.ratio', '1.5', /no more than 1/);
  bad('min.cleanable.dirty.ratio', '-0.0001', /at least 0/);
  bad('min.cleanable.dirty.ratio', 'abc', /type DOUBLE/);
  bad('min.cleanable.dirty.ratio', '', /type DOUBLE/);
  bad('min.cleanable.dirty.ratio', 'NaN', /between 0 and 1/); // Kafka lets NaN through its range check; Floe does not
});

test('booleans are case-insensitive and stored lower case', () => {
  ok('preallocate', 'TRUE', 'true');
  ok('preallocate', ' false', 'false');
  ok('remote.log.copy.disable', 'True', 'true');
  bad('preallocate', 'yes', /either true or false/);
  bad('unclean.leader.election.enable', '', /either true or false/);
  bad('errors.deadletterqueue.group.enable', '1', /either true or false/);
});

test('strings from a fixed set are case-sensitive', () => {
  for (const c of ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer']) ok('compression.type', c);
  ok('compression.type', ' zstd ', 'zstd');
  bad('compression.type', 'ZSTD', /one of: uncompressed, zstd, lz4, snappy, gzip, producer/);
  bad('compression.type', 'none', /one of/);
  ok('message.timestamp.type', 'LogAppendTime');
  bad('message.timestamp.type', 'createtime', /one of: CreateTime, LogAppendTime/);
  for (const m of ['key_value', 'value_schema_id_prefix', 'value_schema_latest']) ok('iceberg.mode', m);
  bad('iceberg.mode', 'avro', /one of: key_value, value_schema_id_prefix, value_schema_latest/);
  ok('iceberg.invalid.record.action', 'drop');
  ok('iceberg.key.mode', 'key_schema_id_prefix');
  bad('iceberg.key.mode', 'avro', /one of: binary, key_schema_id_prefix, key_schema_latest/);
  bad('iceberg.invalid.record.action', 'fail', /one of: dlq_table, drop/);
  ok('iceberg.namespace', ' lake.raw ', 'lake.raw');
  ok('iceberg.table.name', 'orders_v2');
  ok('iceberg.table.name', '');
  bad('iceberg.table.name', 'a/b', /Table name must be empty/);
});

test('lists: cleanup.policy items from a set, throttled replicas as partition:broker pairs', () => {
  ok('cleanup.policy', 'compact');
  ok('cleanup.policy', 'compact,delete');
  ok('cleanup.policy', ' delete , compact ', 'delete,compact');
  ok('cleanup.policy', '');
  ok('cleanup.policy', '   ', '');
  ok('cleanup.policy', 'delete,delete');
  bad('cleanup.policy', 'Delete', /one of: compact, delete/);
  assert.match(validateTopicConfig('cleanup.policy', 'delete,,compact') ?? '', /values must not be empty/);
  assert.match(validateTopicConfig('cleanup.policy', 'delete,') ?? '', /values must not be empty/);
  ok('leader.replication.throttled.replicas', '*');
  ok('leader.replication.throttled.replicas', ' * ', '*');
  ok('leader.replication.throttled.replicas', '0:1, 1:1', '0:1,1:1');
  ok('follower.replication.throttled.replicas', '');
  bad('leader.replication.throttled.replicas', '*,0:1', /literal '\*' or a list of replicas/);
  bad('follower.replication.throttled.replicas', 'a:b', /literal '\*'/);
  bad('follower.replication.throttled.replicas', '0:1:2', /literal '\*'/);
  bad('follower.replication.throttled.replicas', '-1:1', /literal '\*'/);
});

test('class and password kinds parse as Kafka does (no topic config uses them today)', () => {
  const cls: TopicConfigDef = { name: 'x.class', kind: 'class', default: null, applied: false, doc: '' };
  assert.deepEqual(parseConfigValue(cls, ' org.example.My$Policy '), { value: 'org.example.My$Policy', canonical: 'org.example.My$Policy' });
  assert.ok('error' in parseConfigValue(cls, 'not a class'));
  const pw: TopicConfigDef = { name: 'x.password', kind: 'password', default: null, applied: false, doc: '' };
  assert.deepEqual(parseConfigValue(pw, ' s3cret '), { value: ' s3cret ', canonical: ' s3cret ' }, 'passwords are not trimmed');
});

function refused(overrides: Record<string, string>, why: RegExp, previous: Record<string, string> = {}, b: BrokerConfig = tiered): void {
  assert.throws(
    () => validateTopicConfigs(overrides, previous, b),
    (e) => e instanceof KafkaError && e.code === ErrorCode.INVALID_CONFIG && why.test(e.message),
    JSON.stringify(overrides),
  );
}
const tiered = brokerWith('--remote.log.storage.system.enable=true');

test('checks across configs follow LogConfig: compaction lags and remote storage', () => {
  refused({ 'min.compaction.lag.ms': '10', 'max.compaction.lag.ms': '5' }, /min\.compaction\.lag\.ms \(10\) > max\.compaction\.lag\.ms \(5\)/);
  assert.deepEqual(validateTopicConfigs({ 'min.compaction.lag.ms': '5', 'max.compaction.lag.ms': '5' }, {}, tiered), { 'min.compaction.lag.ms': '5', 'max.compaction.lag.ms': '5' });
  // remote.storage.enable needs the broker's tiering and a delete-only (or empty) policy.
  refused({ 'remote.storage.enable': 'true' }, /Tiered Storage functionality is disabled in the broker/, {}, brokerWith('--remote.log.storage.system.enable=false'));
  refused({ 'remote.storage.enable': 'TRUE', 'cleanup.policy': 'compact' }, /only supports topics with cleanup\.policy=delete/);
  refused({ 'remote.storage.enable': 'true', 'cleanup.policy': 'delete,delete' }, /cleanup\.policy=delete/);
  for (const policy of ['delete', '']) validateTopicConfigs({ 'remote.storage.enable': 'true', 'cleanup.policy': policy }, {}, tiered);
  // compact without remote.storage.enable is fine, also on a broker whose topics are Iceberg tables.
  validateTopicConfigs({ 'cleanup.policy': 'compact' }, {}, tiered);
  // Local retention within total retention.
  refused({ 'remote.storage.enable': 'true', 'local.retention.ms': '1000', 'retention.ms': '500' }, /local\.retention\.ms: Value must not be more than retention\.ms property value: 500/);
  refused({ 'remote.storage.enable': 'true', 'local.retention.ms': '-1', 'retention.ms': '500' }, /must not be -1 as retention\.ms value is set as 500/);
  refused({ 'remote.storage.enable': 'true', 'local.retention.bytes': '1000', 'retention.bytes': '500' }, /local\.retention\.bytes: Value must not be more than retention\.bytes/);
  refused({ 'remote.storage.enable': 'true', 'local.retention.bytes': '-1', 'retention.bytes': '100' }, /must not be -1 as retention\.bytes/);
  const fine: Record<string, string>[] = [
    { 'local.retention.ms': '-2', 'retention.ms': '500' },
    { 'local.retention.ms': '500', 'retention.ms': '-1' },
    { 'local.retention.bytes': '1000', 'retention.bytes': '-1' },
    { 'local.retention.bytes': '5', 'retention.bytes': '-7' },
    { 'local.retention.ms': '100', 'remote.copy.lag.ms': '100' },
    { 'local.retention.ms': '-1', 'retention.ms': '-1', 'remote.copy.lag.ms': '5' },
    { 'remote.log.copy.disable': 'true', 'local.retention.ms': '10', 'retention.ms': '10' },
  ];
  for (const ok of fine) validateTopicConfigs({ 'remote.storage.enable': 'true', ...ok }, {}, tiered);
  refused({ 'remote.storage.enable': 'true', 'remote.copy.lag.ms': '100', 'local.retention.ms': '50', 'retention.ms': '1000' }, /remote\.copy\.lag\.ms: Value must not exceed local\.retention\.ms \(effective value: 50\)/);
  refused({ 'remote.storage.enable': 'true', 'remote.copy.lag.bytes': '100', 'retention.bytes': '50' }, /remote\.copy\.lag\.bytes: Value must not exceed local\.retention\.bytes \(effective value: 50\)/);
  refused({ 'remote.storage.enable': 'true', 'remote.log.copy.disable': 'true', 'local.retention.ms': '5', 'retention.ms': '10' }, /remote\.log\.copy\.disable.*identical value/);
  // Turning remote storage off needs remote.log.delete.on.disable=true.
  refused({ 'remote.storage.enable': 'false' }, /invalid to disable remote storage without deleting remote data/, { 'remote.storage.enable': 'true' });
  validateTopicConfigs({ 'remote.storage.enable': 'false', 'remote.log.delete.on.disable': 'true' }, { 'remote.storage.enable': 'true' }, tiered);
  // The checks use the broker's defaults for what the topic does not set.
  refused({ 'remote.storage.enable': 'true', 'local.retention.ms': '5000' }, /not be more than retention\.ms property value: 4000/, {}, brokerWith('--remote.log.storage.system.enable=true', '--log.retention.ms=4000'));
});

test('validated configs come back canonical; the first bad one is refused with INVALID_CONFIG', () => {
  assert.deepEqual(validateTopicConfigs({ preallocate: 'TRUE', 'retention.ms': '+5', 'cleanup.policy': 'delete , compact' }, {}, broker), { preallocate: 'true', 'retention.ms': '5', 'cleanup.policy': 'delete,compact' });
  refused({ 'delete.retention.ms': '900', 'no.such': 'x' }, /Unknown topic config name: no\.such/);
  refused({ 'delete.retention.ms': '-1' }, /Invalid value -1 for configuration delete\.retention\.ms: Value must be at least 0/);
});

test('effective configs overlay topic settings on broker defaults; internal configs only when set', () => {
  const eff = effectiveConfigs({ 'segment.bytes': '1048576' }, broker);
  assert.deepEqual(eff.get('segment.bytes'), { value: '1048576', source: ConfigSource.TOPIC_CONFIG });
  assert.deepEqual(eff.get('retention.ms'), { value: '5000', source: ConfigSource.STATIC_BROKER_CONFIG });
  assert.deepEqual(eff.get('segment.ms'), { value: '604800000', source: ConfigSource.DEFAULT_CONFIG }, 'a broker setting left alone is the default');
  assert.deepEqual(eff.get('cleanup.policy'), { value: 'delete', source: ConfigSource.DEFAULT_CONFIG });
  assert.deepEqual(eff.get('delete.retention.ms'), { value: '86400000', source: ConfigSource.DEFAULT_CONFIG });
  assert.deepEqual(eff.get('leader.replication.throttled.replicas'), { value: '', source: ConfigSource.DEFAULT_CONFIG });
  assert.equal(eff.has('internal.segment.bytes'), false);
  assert.equal(effectiveConfigs({ 'internal.segment.bytes': '2048' }, broker).get('internal.segment.bytes')?.value, '2048');
  assert.equal(eff.get('flush.messages')?.value, '9223372036854775807');
  assert.equal(numericConfig(eff, 'flush.messages'), Number.MAX_SAFE_INTEGER);
  assert.equal(numericConfig(eff, 'segment.bytes'), 1048576);
});

test('the log applies segment and retention configs: internal.segment.bytes, compact cleans without retention', () => {
  assert.equal(logConfigFor({ 'internal.segment.bytes': '2048', 'segment.bytes': '1048576' }, broker)['segment.bytes'], 2048);
  assert.equal(logConfigFor({ 'segment.bytes': '2097152' }, broker)['segment.bytes'], 2097152);
  assert.equal(logConfigFor({}, broker)['retention.ms'], 5000);
  assert.equal(logConfigFor({ 'retention.bytes': '-5' }, broker)['retention.bytes'], -1, 'any negative retention.bytes is no limit');
  for (const policy of ['compact', '']) {
    const log = logConfigFor({ 'cleanup.policy': policy, 'retention.ms': '10', 'retention.bytes': '10' }, broker);
    assert.equal(log['retention.ms'], -1, `cleanup.policy=${policy}: no time retention`);
    assert.equal(log['retention.bytes'], -1, `cleanup.policy=${policy}: no size retention`);
    const table = topicTieringConfig({ 'cleanup.policy': policy, 'retention.ms': '10' }, tiered);
    assert.equal(table.retentionMs, Infinity, 'nor in the table');
  }
  assert.equal(logConfigFor({ 'cleanup.policy': 'compact,delete', 'retention.ms': '10' }, broker)['retention.ms'], 10);
  assert.equal(logConfigFor({ 'cleanup.policy': 'compact,delete' }, broker).compact, true);
  assert.equal(logConfigFor({ 'cleanup.policy': 'compact' }, broker).compact, true);
  assert.equal(logConfigFor({}, broker).compact, false);
  const compaction = logConfigFor({ 'cleanup.policy': 'compact', 'delete.retention.ms': '7', 'min.compaction.lag.ms': '8', 'max.compaction.lag.ms': '9', 'min.cleanable.dirty.ratio': '0.25' }, broker);
  assert.deepEqual(
    [compaction['delete.retention.ms'], compaction['min.compaction.lag.ms'], compaction['max.compaction.lag.ms'], compaction['min.cleanable.dirty.ratio']],
    [7, 8, 9, 0.25],
  );
  assert.equal(topicTieringConfig({ 'retention.ms': '10' }, tiered).retentionMs, 10);
});

test('a tiered compact topic hands committed segments off by an explicit local.retention.*, and its Kafka reads of the table show the compacted view', () => {
  const topic = { 'cleanup.policy': 'compact', 'iceberg.enabled': 'true', 'retention.ms': '10', 'retention.bytes': '10' };
  const local = logConfigFor({ ...topic, 'local.retention.ms': '0', 'local.retention.bytes': '100' }, tiered);
  assert.deepEqual([local['retention.ms'], local['retention.bytes']], [0, 100], 'local.retention.* frees local disk once the table holds the segments');
  const kept = logConfigFor(topic, tiered);
  assert.deepEqual([kept['retention.ms'], kept['retention.bytes']], [-1, -1], 'local.retention.* = -2 (as retention.*): no retention, as compact alone has none');
  const untiered = logConfigFor({ 'cleanup.policy': 'compact', 'iceberg.enabled': 'false', 'local.retention.ms': '0' }, tiered);
  assert.equal(untiered['retention.ms'], -1, 'a topic that is not tiered never drops its compacted log');
  assert.deepEqual(topicTieringConfig({ ...topic, 'delete.retention.ms': '1234' }, tiered).compacted, { deleteRetentionMs: 1234 });
  assert.deepEqual(topicTieringConfig({ 'cleanup.policy': 'compact,delete', 'iceberg.enabled': 'true' }, tiered).compacted, { deleteRetentionMs: 86_400_000 });
  assert.equal(topicTieringConfig({ 'iceberg.enabled': 'true' }, tiered).compacted, undefined, 'delete alone: every record');
  assert.equal(topicTieringConfig(topic, tiered).retentionMs, Infinity, 'the table keeps every record');
});

test('every config without effect says so in its documentation, and only those', () => {
  for (const def of TOPIC_CONFIGS) assert.equal(def.doc.includes(NO_EFFECT), !def.applied, def.name);
});

test('broker/topics/README.md lists every topic config with its type, default and effect', () => {
  const readme = readFileSync(new URL('../../../../broker/topics/README.md', import.meta.url), 'utf8');
  const rows = new Map<string, string[]>();
  for (const line of readme.split('\n')) {
    const m = /^\| `([a-z0-9.]+)` \|(.*)\|$/.exec(line);
    if (m?.[1] && m[2] !== undefined) rows.set(m[1], m[2].split('|').map((c) => c.trim()));
  }
  assert.deepEqual([...rows.keys()].sort(), TOPIC_CONFIGS.map((d) => d.name).sort(), 'one row per config');
  for (const def of TOPIC_CONFIGS) {
    const [kind, dflt, brokerKey, applied] = rows.get(def.name) ?? [];
    assert.equal(kind, def.kind, `${def.name}: type`);
    assert.equal(dflt, def.default === null ? '(none)' : def.default === '' ? '(empty)' : `\`${def.default}\``, `${def.name}: default`);
    assert.equal(brokerKey, def.brokerKey ? `\`${def.brokerKey}\`` : '', `${def.name}: broker setting`);
    assert.equal(applied, def.applied ? 'yes' : 'stored only', `${def.name}: effect`);
  }
});
