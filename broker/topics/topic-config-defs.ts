/**
 * Every topic config Floe accepts, declared once: Apache Kafka 4.4's topic configs (its LogConfig, with the
 * same types, defaults and validators) plus Floe's own `iceberg.*`. Each entry says whether Floe acts on the
 * config today; the others are validated, stored and returned by DescribeConfigs, and have no effect yet.
 * broker/topics/README.md documents the same table, and a test keeps the two in step.
 */
import type { BrokerConfig } from '../config/settings.js';

/** Kafka's ConfigDef types. */
export type ConfigKind = 'long' | 'int' | 'double' | 'boolean' | 'string' | 'list' | 'class' | 'password';

/** A value parsed by its kind: bigint for long/int, number for double, string[] for list. */
export type Parsed = bigint | number | boolean | string | readonly string[];

export interface Validator {
  /** Kafka's wording of the valid values, for docs. */
  readonly describe: string;
  /** Returns what is wrong with a parsed value, or undefined. */
  check(value: Parsed): string | undefined;
}

export interface TopicConfigDef {
  readonly name: string;
  readonly kind: ConfigKind;
  /** Kafka's default in wire form ('' for an empty list); the broker setting below overrides it. */
  readonly default: string | null;
  /** The Floe broker setting that supplies the default, when Floe has one. */
  readonly brokerKey?: keyof BrokerConfig;
  readonly validator?: Validator;
  /** true: Floe acts on it. false: accepted, validated, stored and described, with no effect yet. */
  readonly applied: boolean;
  /** What the config does in Floe (or would do in Kafka, for those without effect). */
  readonly doc: string;
  /** Kafka's internal configs: accepted, but only described when a topic sets them. */
  readonly internal?: boolean;
}

const toNumber = (v: Parsed): number => (typeof v === 'bigint' ? Number(v) : (v as number));

/** Kafka's Range.atLeast. */
export function atLeast(min: number): Validator {
  return { describe: `[${min},...]`, check: (v) => (toNumber(v) < min ? `Value must be at least ${min}` : undefined) };
}

/** Kafka's Range.between (inclusive). NaN is refused, where Kafka lets it through. */
export function between(min: number, max: number): Validator {
  return {
    describe: `[${min},...,${max}]`,
    check: (v) => {
      const n = toNumber(v);
      if (Number.isNaN(n)) return `Value must be a number between ${min} and ${max}`;
      if (n < min) return `Value must be at least ${min}`;
      return n > max ? `Value must be no more than ${max}` : undefined;
    },
  };
}

/** Kafka's gzip level validator: 1 to 9, or -1 for the codec's default. */
function levelOrDefault(min: number, max: number, fallback: number): Validator {
  return {
    describe: `[${min},...,${max}] or ${fallback}`,
    check: (v) => {
      const n = toNumber(v);
      return n === fallback || (n >= min && n <= max) ? undefined : `Value must be between ${min} and ${max} or equal to ${fallback}`;
    },
  };
}

/** Kafka's ValidString.in: one of the values, case-sensitive. */
export function oneOf(...values: string[]): Validator {
  return { describe: `[${values.join(', ')}]`, check: (v) => (values.includes(v as string) ? undefined : `String must be one of: ${values.join(', ')}`) };
}

/** iceberg.table.name: empty (the topic's name) or a name of the characters a Kafka topic name may hold. */
function tableName(): Validator {
  return {
    describe: "empty, or up to 249 of [a-zA-Z0-9._-]",
    check: (v) => (v === '' || /^[a-zA-Z0-9._-]{1,249}$/.test(v as string) ? undefined : "Table name must be empty (the topic's name) or up to 249 ASCII letters, digits, '.', '_' and '-'"),
  };
}

/** iceberg.upsert.id.columns: empty, or comma-separated column paths (names joined by dots). */
function idColumns(): Validator {
  return {
    describe: 'empty, or comma-separated column names (dots reach into structs)',
    check: (v) => ((v as string).split(',').every((c) => /^[^.,\s][^,]*$/.test(c.trim()) && !c.includes('..') && !c.trim().endsWith('.')) || v === '' ? undefined : 'Id columns must be comma-separated column names, with dots between the names of nested fields (e.g. id,key.region)'),
  };
}

/** Kafka's ValidList.in: every item one of the values (an empty list is valid). */
export function listOf(...values: string[]): Validator {
  return {
    describe: `[${values.join(', ')}]`,
    check: (v) => ((v as readonly string[]).every((item) => values.includes(item)) ? undefined : `String must be one of: ${values.join(', ')}`),
  };
}

/** Kafka's ThrottledReplicaListValidator: '*' alone, or partitionId:brokerId pairs. */
function throttledReplicas(name: string): Validator {
  return {
    describe: '[partitionId]:[brokerId],[partitionId]:[brokerId],...',
    check: (v) => {
      const items = v as readonly string[];
      if (items.length === 1 && items[0] === '*') return undefined;
      if (items.every((i) => /^[0-9]+:[0-9]+$/.test(i))) return undefined;
      return `${name} must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...`;
    },
  };
}

const LONG_MAX = '9223372036854775807';
/** Ends or leads the doc of every config Floe does not act on yet; DescribeConfigs returns it as the documentation. */
export const NO_EFFECT = 'Accepted and stored; no effect in Floe yet.';

export const TOPIC_CONFIGS: readonly TopicConfigDef[] = Object.freeze([
  // Retention and cleanup
  { name: 'cleanup.policy', kind: 'list', default: 'delete', validator: listOf('compact', 'delete'), applied: true, doc: 'delete: segments expire by retention.ms and retention.bytes. compact: the log cleaner keeps the latest record per key in the local log (tombstones for delete.retention.ms); the topic\'s table keeps every record it tiered. compact,delete does both; an empty list keeps every record.' },
  { name: 'retention.ms', kind: 'long', default: '604800000', brokerKey: 'log.retention.ms', validator: atLeast(-1), applied: true, doc: 'Delete segments (and table rows, for tiered topics) older than this (-1: keep forever). Needs delete in cleanup.policy.' },
  { name: 'retention.bytes', kind: 'long', default: '-1', brokerKey: 'log.retention.bytes', applied: true, doc: 'Delete the oldest segments beyond this size per partition (any negative value: no limit). Needs delete in cleanup.policy.' },
  { name: 'delete.retention.ms', kind: 'long', default: '86400000', validator: atLeast(0), applied: true, doc: 'How long tombstones (and emptied transaction markers) stay on compacted topics after the cleaner first kept them.' },
  { name: 'min.compaction.lag.ms', kind: 'long', default: '0', validator: atLeast(0), applied: true, doc: 'Shortest time a record stays uncompacted: the cleaner stops at the first segment with a younger record. At most max.compaction.lag.ms.' },
  { name: 'max.compaction.lag.ms', kind: 'long', default: LONG_MAX, validator: atLeast(1), applied: true, doc: 'Longest time a record stays uncompacted: a partition whose oldest dirty record waited this long is cleaned whatever its dirty ratio.' },
  { name: 'min.cleanable.dirty.ratio', kind: 'double', default: '0.5', validator: between(0, 1), applied: true, doc: 'Share of the log (dirty bytes over cleanable bytes) that must be uncompacted before the cleaner cleans a partition.' },
  { name: 'file.delete.delay.ms', kind: 'long', default: '60000', validator: atLeast(0), applied: false, doc: `Wait before deleting a file from disk. ${NO_EFFECT} Floe deletes expired segments at once.` },
  // Segments and indexes
  { name: 'segment.bytes', kind: 'int', default: '1073741824', brokerKey: 'log.segment.bytes', validator: atLeast(1048576), applied: true, doc: 'Roll the active segment at this size (at least 1 MiB, as in Kafka 4).' },
  { name: 'internal.segment.bytes', kind: 'int', default: null, applied: true, internal: true, doc: 'Kafka\'s internal override of segment.bytes, for tests: segments smaller than 1 MiB (at least 14 bytes in Floe).' },
  { name: 'segment.ms', kind: 'long', default: '604800000', brokerKey: 'log.roll.ms', validator: atLeast(1), applied: true, doc: 'Roll the active segment at this age.' },
  { name: 'segment.jitter.ms', kind: 'long', default: '0', validator: atLeast(0), applied: false, doc: `Random jitter subtracted from segment.ms. ${NO_EFFECT}` },
  { name: 'segment.index.bytes', kind: 'int', default: '10485760', validator: atLeast(4), applied: false, doc: `Size of the offset index preallocated per segment. ${NO_EFFECT} Floe's indexes grow as needed.` },
  { name: 'index.interval.bytes', kind: 'int', default: '4096', brokerKey: 'log.index.interval.bytes', validator: atLeast(0), applied: true, doc: 'Bytes between offset index entries.' },
  { name: 'preallocate', kind: 'boolean', default: 'false', applied: false, doc: `Preallocate segment files on disk. ${NO_EFFECT}` },
  { name: 'flush.messages', kind: 'long', default: LONG_MAX, brokerKey: 'log.flush.interval.messages', validator: atLeast(1), applied: true, doc: 'fsync after this many records.' },
  { name: 'flush.ms', kind: 'long', default: LONG_MAX, brokerKey: 'log.flush.interval.ms', validator: atLeast(0), applied: true, doc: 'fsync when unflushed data is this old.' },
  // Records
  { name: 'max.message.bytes', kind: 'int', default: '1048588', brokerKey: 'message.max.bytes', validator: atLeast(0), applied: true, doc: 'Largest record batch accepted (after compression).' },
  { name: 'max.decompressed.message.bytes', kind: 'int', default: '2147483639', validator: between(1, 2147483639), applied: false, doc: `Largest record batch once decompressed. ${NO_EFFECT}` },
  { name: 'message.timestamp.type', kind: 'string', default: 'CreateTime', brokerKey: 'log.message.timestamp.type', validator: oneOf('CreateTime', 'LogAppendTime'), applied: true, doc: 'CreateTime keeps the producer timestamp; LogAppendTime stamps batches on append.' },
  { name: 'message.timestamp.before.max.ms', kind: 'long', default: LONG_MAX, validator: atLeast(0), applied: false, doc: `Largest age of a CreateTime timestamp accepted. ${NO_EFFECT}` },
  { name: 'message.timestamp.after.max.ms', kind: 'long', default: '3600000', validator: atLeast(0), applied: false, doc: `Farthest a CreateTime timestamp may be in the future. ${NO_EFFECT}` },
  { name: 'compression.type', kind: 'string', default: 'producer', validator: oneOf('uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'), applied: false, doc: `Codec batches are stored with (producer: as sent). ${NO_EFFECT} Batches are always stored as the producer sent them.` },
  { name: 'compression.gzip.level', kind: 'int', default: '-1', validator: levelOrDefault(1, 9, -1), applied: false, doc: `gzip level when compression.type=gzip. ${NO_EFFECT}` },
  { name: 'compression.lz4.level', kind: 'int', default: '9', validator: between(1, 17), applied: false, doc: `lz4 level when compression.type=lz4. ${NO_EFFECT}` },
  { name: 'compression.zstd.level', kind: 'int', default: '3', validator: between(-131072, 22), applied: false, doc: `zstd level when compression.type=zstd. ${NO_EFFECT}` },
  // Replication (one broker)
  { name: 'min.insync.replicas', kind: 'int', default: '1', validator: atLeast(1), applied: false, doc: `Replicas that must acknowledge an acks=all write. ${NO_EFFECT} Floe has one replica per partition.` },
  { name: 'unclean.leader.election.enable', kind: 'boolean', default: 'false', applied: false, doc: `Allow an out-of-sync replica to lead. ${NO_EFFECT} Floe has one replica per partition.` },
  { name: 'leader.replication.throttled.replicas', kind: 'list', default: '', validator: throttledReplicas('leader.replication.throttled.replicas'), applied: false, doc: `Replicas throttled on the leader side ('*' for all). ${NO_EFFECT}` },
  { name: 'follower.replication.throttled.replicas', kind: 'list', default: '', validator: throttledReplicas('follower.replication.throttled.replicas'), applied: false, doc: `Replicas throttled on the follower side ('*' for all). ${NO_EFFECT}` },
  // Tiered storage
  { name: 'remote.storage.enable', kind: 'boolean', default: 'false', applied: true, doc: 'Tier closed segments to the topic\'s Iceberg table (needs remote.log.storage.system.enable on the broker, and cleanup.policy=delete or empty, as in Kafka).' },
  { name: 'local.retention.ms', kind: 'long', default: '-2', brokerKey: 'log.local.retention.ms', validator: atLeast(-2), applied: true, doc: 'Tiered topics: keep committed segments locally this long (-2: retention.ms; at most retention.ms).' },
  { name: 'local.retention.bytes', kind: 'long', default: '-2', brokerKey: 'log.local.retention.bytes', validator: atLeast(-2), applied: true, doc: 'Tiered topics: keep at most this many local bytes per partition (-2: retention.bytes; at most retention.bytes).' },
  { name: 'remote.log.copy.disable', kind: 'boolean', default: 'false', applied: false, doc: `Stop copying segments to remote storage, keeping what is there (then local.retention.* must equal retention.*). ${NO_EFFECT}` },
  { name: 'remote.log.delete.on.disable', kind: 'boolean', default: 'false', applied: false, doc: `Must be true to turn remote.storage.enable off: the remote data is then deleted. ${NO_EFFECT}` },
  { name: 'remote.copy.lag.ms', kind: 'long', default: '0', validator: atLeast(-1), applied: false, doc: `Delay before a closed segment is copied to remote storage (-1: local.retention.ms). ${NO_EFFECT}` },
  { name: 'remote.copy.lag.bytes', kind: 'long', default: '-1', validator: atLeast(-1), applied: false, doc: `Local bytes kept before segments are copied to remote storage (-1: local.retention.bytes). ${NO_EFFECT}` },
  // Share groups
  { name: 'errors.deadletterqueue.group.enable', kind: 'boolean', default: 'false', applied: false, doc: `Let share groups use this topic as their dead-letter queue. ${NO_EFFECT}` },
  // Floe's Iceberg tables
  { name: 'iceberg.enabled', kind: 'boolean', default: 'true', brokerKey: 'iceberg.enabled.default', applied: true, doc: 'The topic is an Iceberg table (implies remote.storage.enable; needs remote.log.storage.system.enable on the broker).' },
  { name: 'iceberg.namespace', kind: 'string', default: 'kafka', brokerKey: 'iceberg.namespace', applied: true, doc: 'Namespace of the topic table (dots separate levels): the table is <namespace>.<iceberg.table.name>.' },
  { name: 'iceberg.table.name', kind: 'string', default: '', validator: tableName(), applied: true, doc: 'Name of the topic table in its namespace (empty: the topic name). A table of that name that Floe did not create is never taken over: tiering refuses it and says so.' },
  { name: 'iceberg.commit.interval.ms', kind: 'long', default: '60000', brokerKey: 'iceberg.commit.interval.ms', validator: atLeast(1), applied: true, doc: 'Roll and commit at most this often: bounds how far the table lags the log.' },
  { name: 'iceberg.mode', kind: 'string', default: 'key_value', validator: oneOf('key_value', 'value_schema_id_prefix', 'value_schema_latest'), applied: true, doc: 'How records become rows: key_value (a kafka struct plus the value as binary); value_schema_id_prefix (values carry the Confluent wire-format prefix naming their registry schema: its fields become typed columns); value_schema_latest (values without a prefix, typed with the latest schema of iceberg.value.subject).' },
  { name: 'iceberg.value.subject', kind: 'string', default: '', applied: true, doc: 'Registry subject value_schema_latest types values with (empty: <topic>-value).' },
  { name: 'iceberg.key.mode', kind: 'string', default: 'binary', validator: oneOf('binary', 'key_schema_id_prefix', 'key_schema_latest'), applied: true, doc: 'How keys become columns: binary (kafka.key holds the bytes); key_schema_id_prefix (keys carry the Confluent wire-format prefix naming their registry schema: the key becomes the typed struct column key); key_schema_latest (keys without a prefix, typed with the latest schema of iceberg.key.subject).' },
  { name: 'iceberg.key.subject', kind: 'string', default: '', applied: true, doc: 'Registry subject key_schema_latest types keys with (empty: <topic>-key).' },
  { name: 'iceberg.invalid.record.action', kind: 'string', default: 'dlq_table', validator: oneOf('dlq_table', 'drop'), applied: true, doc: 'Records whose value or key a schema mode cannot type (no prefix, unknown schema, incompatible change, corrupt payload): dlq_table copies them to the <topic>~dlq table with the reason; drop only counts them. Either way Kafka consumers still read them.' },
  { name: 'iceberg.upsert.enabled', kind: 'boolean', default: 'false', applied: true, doc: 'Also keep the table <table>_latest: one row per Kafka key, the key\'s newest record; a tombstone (or a CDC delete) removes the row. It names the topic table\'s own data files and hides superseded rows with position deletes: no second copy of the data. Turning it off drops it.' },
  { name: 'iceberg.upsert.cdc.format', kind: 'string', default: 'none', validator: oneOf('none', 'debezium'), applied: true, doc: 'How values say what they do to their key in the upsert table: none (every non-null value upserts); debezium (Debezium change events in JSON, bare or in a {schema, payload} envelope: op d deletes, c, u and r upsert).' },
  { name: 'iceberg.upsert.id.columns', kind: 'string', default: '', validator: idColumns(), applied: true, doc: 'Columns of the table that identify a row of the upsert table, comma separated (a typed table\'s value fields, or key.<field> for a typed key; dots reach into structs). A row with a null id column has no identity and is not in the upsert table. Empty: the Kafka key. Rows of one id must be in one Kafka partition (produce them with the id as key), as each partition keeps its own rows.' },
  { name: 'iceberg.upsert.format.version', kind: 'int', default: '2', validator: between(2, 3), applied: true, doc: 'Iceberg format version of the upsert table: 2 hides superseded rows with position delete files, 3 with deletion vectors (one Puffin blob per data file). Changing it rebuilds the table.' },
  { name: 'iceberg.upsert.order.field', kind: 'string', default: '', applied: true, doc: 'Numeric field of the JSON value (dot separated, inside the Debezium payload when there is one, e.g. ts_ms or source.lsn) that orders a key\'s events in the upsert table: an event lower than the key\'s current one is late and changes nothing. Empty: Kafka offset order.' },
  { name: 'iceberg.compaction.enabled', kind: 'boolean', default: 'true', applied: true, doc: 'Merge the table\'s small data files of each partition in the background (one rewrite commit each; Kafka reads and table readers see no gap or duplicate).' },
  { name: 'iceberg.compaction.min.input.files', kind: 'int', default: '5', validator: atLeast(2), applied: true, doc: 'Small data files (below 75 % of the target size) in a run of consecutive segments that trigger a compaction of the partition (Iceberg\'s rewrite option min-input-files).' },
  { name: 'iceberg.compaction.target.file.size.bytes', kind: 'long', default: '-1', validator: atLeast(-1), applied: true, doc: 'Size compaction merges data files up to (-1 or 0: the table property write.target-file-size-bytes, 512 MiB when unset).' },
] satisfies TopicConfigDef[]);
