/**
 * Topic-level configuration: parsing and validation by Kafka's rules (ConfigDef types, each config's
 * validator, and LogConfig's checks across configs), and the effective config of a topic (its own settings
 * over the broker's defaults). The configs themselves are declared in topic-config-defs.ts. Used by
 * CreateTopics, AlterConfigs, IncrementalAlterConfigs and DescribeConfigs, and by the partition log.
 */
import { ErrorCode, KafkaError } from '../../protocol/error-codes.js';
import { SETTINGS_BY_KEY, type BrokerConfig } from '../config/settings.js';
import { TOPIC_CONFIGS, type Parsed, type TopicConfigDef } from './topic-config-defs.js';

export { TOPIC_CONFIGS, type TopicConfigDef } from './topic-config-defs.js';

/** Kafka's DescribeConfigs ConfigType values. */
export const ConfigType = Object.freeze({ UNKNOWN: 0, BOOLEAN: 1, STRING: 2, INT: 3, SHORT: 4, LONG: 5, DOUBLE: 6, LIST: 7, CLASS: 8, PASSWORD: 9 });
/** Kafka's DescribeConfigs ConfigSource values. */
export const ConfigSource = Object.freeze({ TOPIC_CONFIG: 1, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5 });

const INT_MAX = 2n ** 31n - 1n;
const LONG_MAX = 2n ** 63n - 1n;

const BY_NAME = new Map(TOPIC_CONFIGS.map((d) => [d.name, d]));

export function topicConfigDef(name: string): TopicConfigDef | undefined {
  return BY_NAME.get(name);
}

export function configTypeOf(def: TopicConfigDef): number {
  const types: Record<TopicConfigDef['kind'], number> = {
    long: ConfigType.LONG,
    int: ConfigType.INT,
    double: ConfigType.DOUBLE,
    boolean: ConfigType.BOOLEAN,
    string: ConfigType.STRING,
    list: ConfigType.LIST,
    class: ConfigType.CLASS,
    password: ConfigType.PASSWORD,
  };
  return types[def.kind];
}

type ParseResult = { readonly value: Parsed; readonly canonical: string } | { readonly error: string };

/**
 * Parses a value as Kafka's ConfigDef.parseType does for the kind (values are trimmed, booleans are
 * case-insensitive, numbers may carry a sign, lists split on commas with the whitespace around them), and
 * returns the canonical form Floe stores (`TRUE` becomes `true`, `+007` becomes `7`).
 */
export function parseConfigValue(def: TopicConfigDef, raw: string): ParseResult {
  const v = def.kind === 'password' ? raw : raw.trim();
  switch (def.kind) {
    case 'boolean': {
      const lower = v.toLowerCase();
      return lower === 'true' || lower === 'false' ? { value: lower === 'true', canonical: lower } : { error: 'Expected value to be either true or false' };
    }
    case 'int':
    case 'long': {
      const max = def.kind === 'int' ? INT_MAX : LONG_MAX;
      const n = /^[+-]?[0-9]+$/.test(v) ? BigInt(v) : undefined;
      if (n === undefined || n > max || n < -max - 1n) return { error: `Not a number of type ${def.kind.toUpperCase()}` };
      return { value: n, canonical: n.toString() };
    }
    case 'double': {
      // Java's Double.parseDouble: decimal or exponent forms with an optional d/f suffix, NaN and Infinity.
      const m = /^([+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|NaN|Infinity))[dDfF]?$/.exec(v);
      if (!m) return { error: 'Not a number of type DOUBLE' };
      const n = Number(m[1]);
      return { value: n, canonical: String(n) };
    }
    case 'list': {
      const items = v === '' ? [] : v.split(/\s*,\s*/);
      return { value: items, canonical: items.join(',') };
    }
    case 'class':
      return /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(v) ? { value: v, canonical: v } : { error: `Class ${v} cannot be found` };
    case 'string':
    case 'password':
      return { value: v, canonical: v };
  }
}

/** Kafka's ValidList refuses empty items ('delete,,compact'); the throttled-replica lists allow them. */
function emptyItemError(def: TopicConfigDef, value: Parsed): string | undefined {
  if (def.kind !== 'list' || def.name.endsWith('.throttled.replicas')) return undefined;
  return (value as readonly string[]).includes('') ? `Configuration '${def.name}' values must not be empty.` : undefined;
}

/**
 * Checks one config. Returns the canonical value to store, or Kafka's message for a bad name or value
 * ("Unknown topic config name: x", "Invalid value -1 for configuration delete.retention.ms: Value must be
 * at least 0").
 */
export function checkTopicConfig(name: string, raw: string): { readonly canonical: string } | { readonly error: string } {
  const def = BY_NAME.get(name);
  if (!def) return { error: `Unknown topic config name: ${name}. Use one of Kafka's topic configs (see broker/topics/README.md) or iceberg.*.` };
  const parsed = parseConfigValue(def, raw);
  const problem = 'error' in parsed ? parsed.error : (emptyItemError(def, parsed.value) ?? def.validator?.check(parsed.value));
  if (problem !== undefined) return { error: `Invalid value ${raw} for configuration ${name}: ${problem}` };
  return { canonical: (parsed as { canonical: string }).canonical };
}

/** Validates one value; returns an error message or undefined (null: deletion, back to the default). */
export function validateTopicConfig(name: string, value: string | null): string | undefined {
  if (value === null) return BY_NAME.has(name) ? undefined : `Unknown topic config name: ${name}`;
  const r = checkTopicConfig(name, value);
  return 'error' in r ? r.error : undefined;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The effective default of a topic config on this broker, as a string (Kafka's wire form). */
export function defaultValue(def: TopicConfigDef, broker: BrokerConfig): string | null {
  if (def.brokerKey !== undefined) {
    const v = broker[def.brokerKey];
    if (def.kind === 'long' && v === Number.MAX_SAFE_INTEGER) return LONG_MAX.toString();
    return String(v);
  }
  return def.default;
}

/** Whether the broker setting behind a topic default was set (file, environment, flag) rather than left alone. */
export function brokerDefaultIsSet(def: TopicConfigDef, broker: BrokerConfig): boolean {
  return def.brokerKey !== undefined && broker[def.brokerKey] !== SETTINGS_BY_KEY.get(def.brokerKey)?.default;
}

/**
 * The full effective config of a topic: defaults overlaid with the topic's own settings. Internal configs
 * appear only when the topic sets them, as in Kafka's DescribeConfigs.
 */
export function effectiveConfigs(overrides: Readonly<Record<string, string>>, broker: BrokerConfig): Map<string, { value: string; source: number }> {
  const out = new Map<string, { value: string; source: number }>();
  for (const def of TOPIC_CONFIGS) {
    const own = overrides[def.name];
    if (own !== undefined) out.set(def.name, { value: own, source: ConfigSource.TOPIC_CONFIG });
    else if (!def.internal) out.set(def.name, { value: defaultValue(def, broker) ?? '', source: brokerDefaultIsSet(def, broker) ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG });
  }
  return out;
}

/** Reads a numeric config as a number (longs beyond 2^53 saturate to MAX_SAFE_INTEGER). */
export function numericConfig(configs: ReadonlyMap<string, { value: string }>, name: string): number {
  const raw = configs.get(name)?.value;
  if (raw === undefined) throw new Error(`no such topic config ${name}`);
  const n = BigInt(raw);
  return n > MAX_SAFE ? Number.MAX_SAFE_INTEGER : n < -MAX_SAFE ? Number.MIN_SAFE_INTEGER : Number(n);
}

/** The items of a list config ('' is the empty list). */
export function listConfig(configs: ReadonlyMap<string, { value: string }>, name: string): string[] {
  const raw = configs.get(name)?.value ?? '';
  return raw === '' ? [] : raw.split(',');
}

/** Whether the topic's cleanup.policy includes delete: without it, Kafka applies no retention. */
export function deletesByRetention(configs: ReadonlyMap<string, { value: string }>): boolean {
  return listConfig(configs, 'cleanup.policy').includes('delete');
}

/** Whether the topic's cleanup.policy includes compact: the log cleaner keeps the latest record per key. */
export function compacts(configs: ReadonlyMap<string, { value: string }>): boolean {
  return listConfig(configs, 'cleanup.policy').includes('compact');
}

function invalid(message: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_CONFIG, message);
}

/**
 * Validates a topic's complete set of overrides as Kafka's controller does before CreateTopics, AlterConfigs
 * or IncrementalAlterConfigs commit them: every name known, every value valid, and LogConfig's checks across
 * configs (compaction lags; with remote.storage.enable: the broker's tiering on, a delete-only policy, local
 * retention within total retention, copy lags within local retention; turning it off needs
 * remote.log.delete.on.disable). `previous` is the topic's overrides before the change ({} on create).
 * Returns the overrides in canonical form; throws KafkaError INVALID_CONFIG (40), as Kafka does.
 */
export function validateTopicConfigs(
  overrides: Readonly<Record<string, string>>,
  previous: Readonly<Record<string, string>>,
  broker: BrokerConfig,
): Record<string, string> {
  const canonical: Record<string, string> = {};
  for (const [name, raw] of Object.entries(overrides)) {
    const r = checkTopicConfig(name, raw);
    if ('error' in r) throw invalid(r.error);
    canonical[name] = r.canonical;
  }
  const eff = effectiveConfigs(canonical, broker);
  const n = (name: string) => BigInt(eff.get(name)?.value ?? '0');
  const bool = (name: string) => eff.get(name)?.value === 'true';

  if (n('min.compaction.lag.ms') > n('max.compaction.lag.ms')) {
    throw invalid(`conflict topic config setting min.compaction.lag.ms (${n('min.compaction.lag.ms')}) > max.compaction.lag.ms (${n('max.compaction.lag.ms')})`);
  }
  if (bool('remote.storage.enable')) {
    if (!broker['remote.log.storage.system.enable']) {
      throw invalid('Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage (set remote.log.storage.system.enable=true on the broker).');
    }
    const policy = listConfig(eff, 'cleanup.policy');
    if (policy.length > 0 && (policy.length !== 1 || policy[0] !== 'delete')) {
      throw invalid('Remote log storage only supports topics with cleanup.policy=delete or cleanup.policy being an empty list.');
    }
    for (const [total, local, lag] of [
      ['retention.ms', 'local.retention.ms', 'remote.copy.lag.ms'],
      ['retention.bytes', 'local.retention.bytes', 'remote.copy.lag.bytes'],
    ] as const) {
      const t = n(total);
      const l = n(local);
      // retention.ms is at least -1; any negative retention.bytes means unlimited.
      if ((total === 'retention.ms' ? t !== -1n : t > -1n) && l !== -2n) {
        if (l === -1n) throw invalid(`Invalid value -1 for configuration ${local}: Value must not be -1 as ${total} value is set as ${t}.`);
        if (l > t) throw invalid(`Invalid value ${l} for configuration ${local}: Value must not be more than ${total} property value: ${t}`);
      }
      const effectiveLocal = l === -2n ? t : l;
      if (n(lag) > 0n && effectiveLocal >= 0n && n(lag) > effectiveLocal) {
        throw invalid(`Invalid value ${n(lag)} for configuration ${lag}: Value must not exceed ${local} (effective value: ${effectiveLocal})`);
      }
      if (bool('remote.log.copy.disable') && l !== -2n && l !== t) {
        throw invalid(`When \`remote.log.copy.disable\` is set to true, the \`${local}\` and \`${total}\` must be set to the identical value because there will be no more logs copied to the remote storage.`);
      }
    }
  } else if (previous['remote.storage.enable'] === 'true' && !bool('remote.log.delete.on.disable')) {
    throw invalid(
      'It is invalid to disable remote storage without deleting remote data. If you want to keep the remote data and turn to read only, please set `remote.storage.enable=true,remote.log.copy.disable=true`. ' +
        'If you want to disable remote storage and delete all remote data, please set `remote.storage.enable=false,remote.log.delete.on.disable=true`.',
    );
  }
  return canonical;
}

/** Kafka's topic-name rules: 1-249 of [a-zA-Z0-9._-], not '.' or '..'. Returns an error message or undefined. */
export function validateTopicName(name: string): string | undefined {
  if (name.length === 0) return 'topic name is empty';
  if (name === '.' || name === '..') return `topic name cannot be '${name}'`;
  if (name.length > 249) return `topic name is ${name.length} characters long; the limit is 249`;
  if (!/^[a-zA-Z0-9._-]+$/.test(name)) return `topic name '${name}' has characters other than ASCII letters, digits, '.', '_' and '-'`;
  return undefined;
}
