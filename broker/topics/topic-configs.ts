/**
 * Topic-level configuration: Kafka's names, types, defaults (taken from the broker config) and validation.
 * Used by CreateTopics, AlterConfigs, IncrementalAlterConfigs and DescribeConfigs, and by the partition log.
 */
import type { BrokerConfig } from '../config/settings.js';

/** Kafka's DescribeConfigs ConfigType values. */
export const ConfigType = Object.freeze({ BOOLEAN: 1, STRING: 2, INT: 3, SHORT: 4, LONG: 5, DOUBLE: 6, LIST: 7 });
/** Kafka's DescribeConfigs ConfigSource values. */
export const ConfigSource = Object.freeze({ TOPIC_CONFIG: 1, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5 });

type Kind = 'long' | 'int' | 'bool' | 'string' | 'enum' | 'list';

export interface TopicConfigDef {
  readonly name: string;
  readonly kind: Kind;
  readonly doc: string;
  /** The broker setting that supplies the default, if any. */
  readonly brokerKey?: keyof BrokerConfig;
  /** Default when no broker setting supplies one. */
  readonly fallback?: string;
  readonly min?: number;
  readonly values?: readonly string[];
}

const MAX_LONG = 9223372036854775807n;

export const TOPIC_CONFIGS: readonly TopicConfigDef[] = Object.freeze([
  { name: 'cleanup.policy', kind: 'list', values: ['delete', 'compact'], fallback: 'delete', doc: 'delete or compact (compaction is not implemented yet: compact is refused).' },
  { name: 'compression.type', kind: 'enum', values: ['producer', 'uncompressed', 'gzip', 'snappy', 'lz4', 'zstd'], fallback: 'producer', doc: 'Batches are stored as the producer sent them; only producer is accepted for now.' },
  { name: 'retention.ms', kind: 'long', min: -1, brokerKey: 'log.retention.ms', doc: 'Delete segments older than this (-1: forever).' },
  { name: 'retention.bytes', kind: 'long', min: -1, brokerKey: 'log.retention.bytes', doc: 'Delete the oldest segments beyond this size per partition (-1: no limit).' },
  { name: 'segment.bytes', kind: 'int', min: 14, brokerKey: 'log.segment.bytes', doc: 'Roll the active segment at this size.' },
  { name: 'segment.ms', kind: 'long', min: 1, brokerKey: 'log.roll.ms', doc: 'Roll the active segment at this age.' },
  { name: 'max.message.bytes', kind: 'int', min: 0, brokerKey: 'message.max.bytes', doc: 'Largest record batch accepted.' },
  { name: 'message.timestamp.type', kind: 'enum', values: ['CreateTime', 'LogAppendTime'], brokerKey: 'log.message.timestamp.type', doc: 'CreateTime keeps the producer timestamp; LogAppendTime stamps batches on append.' },
  { name: 'flush.messages', kind: 'long', min: 1, brokerKey: 'log.flush.interval.messages', doc: 'fsync after this many records.' },
  { name: 'flush.ms', kind: 'long', min: 0, brokerKey: 'log.flush.interval.ms', doc: 'fsync when unflushed data is this old.' },
  { name: 'index.interval.bytes', kind: 'int', min: 0, brokerKey: 'log.index.interval.bytes', doc: 'Bytes between offset index entries.' },
  { name: 'remote.storage.enable', kind: 'bool', fallback: 'false', doc: 'Tier closed segments to the Iceberg table of the topic (needs remote.log.storage.system.enable on the broker).' },
  { name: 'local.retention.ms', kind: 'long', min: -2, brokerKey: 'log.local.retention.ms', doc: 'With tiering: keep committed segments locally this long (-2: retention.ms).' },
  { name: 'local.retention.bytes', kind: 'long', min: -2, brokerKey: 'log.local.retention.bytes', doc: 'With tiering: keep at most this many local bytes per partition (-2: retention.bytes).' },
  { name: 'iceberg.enabled', kind: 'bool', brokerKey: 'iceberg.enabled.default', doc: 'The topic is an Iceberg table (implies remote.storage.enable; needs remote.log.storage.system.enable on the broker).' },
  { name: 'iceberg.namespace', kind: 'string', fallback: 'kafka', doc: 'Namespace of the topic table (dots separate levels): the table is <namespace>.<topic>.' },
  { name: 'iceberg.commit.interval.ms', kind: 'long', min: 1, brokerKey: 'iceberg.commit.interval.ms', doc: 'Roll and commit at most this often: bounds how far the table lags the log.' },
  { name: 'iceberg.mode', kind: 'enum', values: ['key_value'], fallback: 'key_value', doc: 'How records become rows: key_value (a kafka struct plus the value as binary).' },
  { name: 'min.insync.replicas', kind: 'int', min: 1, fallback: '1', doc: 'Single broker: only 1 is meaningful.' },
  { name: 'unclean.leader.election.enable', kind: 'bool', fallback: 'false', doc: 'Single broker: has no effect.' },
] satisfies TopicConfigDef[]);

const BY_NAME = new Map(TOPIC_CONFIGS.map((d) => [d.name, d]));

export function topicConfigDef(name: string): TopicConfigDef | undefined {
  return BY_NAME.get(name);
}

export function configTypeOf(def: TopicConfigDef): number {
  switch (def.kind) {
    case 'long':
      return ConfigType.LONG;
    case 'int':
      return ConfigType.INT;
    case 'bool':
      return ConfigType.BOOLEAN;
    case 'list':
      return ConfigType.LIST;
    default:
      return ConfigType.STRING;
  }
}

/** The effective default of a topic config on this broker, as a string (Kafka's wire form). */
export function defaultValue(def: TopicConfigDef, broker: BrokerConfig): string {
  if (def.brokerKey !== undefined) {
    const v = broker[def.brokerKey];
    if (def.kind === 'long' && v === Number.MAX_SAFE_INTEGER) return MAX_LONG.toString();
    return String(v);
  }
  return def.fallback ?? '';
}

/** Validates one value; returns an error message or undefined. */
export function validateTopicConfig(name: string, value: string | null): string | undefined {
  const def = BY_NAME.get(name);
  if (!def) return `unknown topic config '${name}'`;
  if (value === null) return undefined; // deletion: back to the default
  switch (def.kind) {
    case 'long':
    case 'int': {
      if (!/^-?\d+$/.test(value)) return `${name} must be a whole number, got '${value}'`;
      const n = BigInt(value);
      const max = def.kind === 'int' ? 2n ** 31n - 1n : MAX_LONG;
      if (n > max || n < -max - 1n) return `${name} is out of range: ${value}`;
      if (def.min !== undefined && n < BigInt(def.min)) return `${name} must be at least ${def.min}, got ${value}`;
      return undefined;
    }
    case 'bool':
      return value === 'true' || value === 'false' ? undefined : `${name} must be true or false, got '${value}'`;
    case 'enum':
      return def.values?.includes(value) ? undefined : `${name} must be one of ${def.values?.join(', ')}, got '${value}'`;
    case 'list': {
      const items = value.split(',').map((v) => v.trim());
      const bad = items.find((v) => !def.values?.includes(v));
      if (bad !== undefined) return `${name} must be a list of ${def.values?.join(', ')}, got '${value}'`;
      if (name === 'cleanup.policy' && items.includes('compact')) {
        return 'cleanup.policy=compact is not supported yet; use delete';
      }
      return undefined;
    }
    case 'string':
      return undefined;
  }
}

/** The full effective config of a topic: defaults overlaid with the topic's own settings. */
export function effectiveConfigs(overrides: Readonly<Record<string, string>>, broker: BrokerConfig): Map<string, { value: string; source: number }> {
  const out = new Map<string, { value: string; source: number }>();
  for (const def of TOPIC_CONFIGS) {
    const own = overrides[def.name];
    if (own !== undefined) out.set(def.name, { value: own, source: ConfigSource.TOPIC_CONFIG });
    else out.set(def.name, { value: defaultValue(def, broker), source: def.brokerKey ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG });
  }
  return out;
}

/** Reads a numeric config as a number (longs beyond 2^53 saturate to MAX_SAFE_INTEGER). */
export function numericConfig(configs: ReadonlyMap<string, { value: string }>, name: string): number {
  const raw = configs.get(name)?.value;
  if (raw === undefined) throw new Error(`no such topic config ${name}`);
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : n > 0 ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
}

/** Kafka's topic-name rules: 1-249 of [a-zA-Z0-9._-], not '.' or '..'. Returns an error message or undefined. */
export function validateTopicName(name: string): string | undefined {
  if (name.length === 0) return 'topic name is empty';
  if (name === '.' || name === '..') return `topic name cannot be '${name}'`;
  if (name.length > 249) return `topic name is ${name.length} characters long; the limit is 249`;
  if (!/^[a-zA-Z0-9._-]+$/.test(name)) return `topic name '${name}' has characters other than ASCII letters, digits, '.', '_' and '-'`;
  return undefined;
}
