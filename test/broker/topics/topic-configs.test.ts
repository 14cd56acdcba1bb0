import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../../broker/config/config.js';
import {
  ConfigSource,
  effectiveConfigs,
  numericConfig,
  validateTopicConfig,
  validateTopicName,
} from '../../../broker/topics/topic-configs.js';

const res = loadConfig({ argv: ['--log.retention.ms=5000'] });
const broker = res.help ? assert.fail('help') : res.config;

test('topic names follow Kafka rules', () => {
  assert.equal(validateTopicName('orders.v1_x-2'), undefined);
  assert.match(validateTopicName('') ?? '', /empty/);
  assert.match(validateTopicName('..') ?? '', /cannot be/);
  assert.match(validateTopicName('a'.repeat(250)) ?? '', /249/);
  assert.match(validateTopicName('bad name') ?? '', /characters/);
  assert.match(validateTopicName('ü') ?? '', /characters/);
});

test('config values are validated by kind', () => {
  assert.equal(validateTopicConfig('retention.ms', '-1'), undefined);
  assert.equal(validateTopicConfig('retention.ms', '9223372036854775807'), undefined);
  assert.match(validateTopicConfig('retention.ms', '-2') ?? '', /at least -1/);
  assert.match(validateTopicConfig('segment.bytes', '99999999999') ?? '', /out of range/);
  assert.match(validateTopicConfig('segment.bytes', 'big') ?? '', /whole number/);
  assert.match(validateTopicConfig('message.timestamp.type', 'Now') ?? '', /one of CreateTime, LogAppendTime/);
  assert.match(validateTopicConfig('cleanup.policy', 'compact') ?? '', /not supported yet/);
  assert.match(validateTopicConfig('no.such', '1') ?? '', /unknown topic config/);
  assert.equal(validateTopicConfig('retention.ms', null), undefined);
});

test('effective configs overlay topic settings on broker defaults', () => {
  const eff = effectiveConfigs({ 'segment.bytes': '1024' }, broker);
  assert.deepEqual(eff.get('segment.bytes'), { value: '1024', source: ConfigSource.TOPIC_CONFIG });
  assert.deepEqual(eff.get('retention.ms'), { value: '5000', source: ConfigSource.STATIC_BROKER_CONFIG });
  assert.deepEqual(eff.get('cleanup.policy'), { value: 'delete', source: ConfigSource.DEFAULT_CONFIG });
  assert.equal(eff.get('flush.messages')?.value, '9223372036854775807');
  assert.equal(numericConfig(eff, 'flush.messages'), Number.MAX_SAFE_INTEGER);
  assert.equal(numericConfig(eff, 'segment.bytes'), 1024);
});
