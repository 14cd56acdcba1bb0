/**
 * Topic lifecycle: validates requests with Kafka's error codes, records topics in the MetadataStore and
 * keeps the partition logs in step with it. Logs are created before the topic enters metadata (so a visible
 * topic always has its logs) and removed after it leaves metadata; logs that no topic owns are removed at
 * start-up, so a crash between the two steps never leaves a half-existing topic after restart.
 */
import { ErrorCode, KafkaError } from '../../protocol/error-codes.js';
import type { BrokerConfig } from '../config/settings.js';
import type { LogManager } from '../log/log-manager.js';
import type { LogTopicConfig } from '../log/config.js';
import type { PartitionLog } from '../log/partition-log.js';
import type { Logger } from '../logger.js';
import { MetadataError, type MetadataStore, type TopicRecord } from '../metadata/metadata-store.js';
import { compacts, deletesByRetention, effectiveConfigs, numericConfig, validateTopicConfigs, validateTopicName } from './topic-configs.js';

/** Partition counts above this are refused (Kafka has no fixed limit; this guards the disk). */
export const MAX_PARTITIONS = 10_000;

/** The partition log configuration of a topic from its overrides and the broker defaults. */
export function logConfigFor(overrides: Readonly<Record<string, string>>, broker: BrokerConfig): LogTopicConfig {
  const eff = effectiveConfigs(overrides, broker);
  const n = (name: string) => numericConfig(eff, name);
  // A tiered topic keeps local segments by local.retention.*; the tiering plugin applies retention.* to the
  // table, and the log's canDeleteSegment gate keeps segments that are not committed there yet. Without
  // delete in cleanup.policy (compact, or empty) Kafka applies no retention: a compact topic is only
  // cleaned (broker/log/cleaner), an empty policy keeps every record. A tiered compact topic still hands
  // its committed segments off by an explicit local.retention.* (not -2, "as retention.*", which is no
  // retention here): the table keeps every record and Kafka reads below the local log show its compacted
  // view. Any negative retention.bytes means no limit, as in Kafka.
  const tiered = broker['remote.log.storage.system.enable'] && (eff.get('remote.storage.enable')?.value === 'true' || eff.get('iceberg.enabled')?.value === 'true');
  const unlimited = (v: number) => (v < 0 ? -1 : v);
  const local = (name: string, total: string) => {
    if (deletesByRetention(eff)) return unlimited(tiered && n(name) !== -2 ? n(name) : n(total));
    return tiered && compacts(eff) && n(name) !== -2 ? unlimited(n(name)) : -1;
  };
  return {
    // internal.segment.bytes: Kafka's override for segments below segment.bytes' 1 MiB minimum (tests).
    'segment.bytes': eff.has('internal.segment.bytes') ? n('internal.segment.bytes') : n('segment.bytes'),
    'segment.ms': n('segment.ms'),
    'retention.ms': local('local.retention.ms', 'retention.ms'),
    'retention.bytes': local('local.retention.bytes', 'retention.bytes'),
    'flush.messages': n('flush.messages'),
    'flush.ms': n('flush.ms'),
    'index.interval.bytes': n('index.interval.bytes'),
    'message.timestamp.type': eff.get('message.timestamp.type')?.value === 'LogAppendTime' ? 'LogAppendTime' : 'CreateTime',
    compact: compacts(eff),
    'delete.retention.ms': n('delete.retention.ms'),
    'min.compaction.lag.ms': n('min.compaction.lag.ms'),
    'max.compaction.lag.ms': n('max.compaction.lag.ms'),
    'min.cleanable.dirty.ratio': Number(eff.get('min.cleanable.dirty.ratio')?.value ?? '0.5'),
  };
}

/** Told after a topic is created, altered or deleted (record undefined); used by tiering to follow configs. */
export type TopicChangeListener = (name: string, record: TopicRecord | undefined) => void;

/**
 * Runs after a new topic's logs exist and before the topic is visible to clients (tiering: an empty log of a
 * topic whose table already holds offsets continues after them, before anything can be produced at 0).
 */
export type TopicPrepareHook = (name: string, partitions: number, configs: Readonly<Record<string, string>>) => Promise<void>;

export class TopicManager {
  private readonly changeListeners = new Set<TopicChangeListener>();

  constructor(
    readonly metadata: MetadataStore,
    readonly logs: LogManager,
    readonly config: BrokerConfig,
    private readonly log: Logger,
  ) {}

  /** Subscribes to topic changes; returns the unsubscribe function. */
  onChange(listener: TopicChangeListener): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Sets the hook run before a created topic becomes visible (one hook; the broker's tiering). */
  setPrepareHook(hook: TopicPrepareHook | undefined): void {
    this.prepareHook = hook;
  }

  private prepareHook: TopicPrepareHook | undefined;

  private changed(name: string, record: TopicRecord | undefined): void {
    for (const l of this.changeListeners) l(name, record);
  }

  logConfigFor(overrides: Readonly<Record<string, string>>): LogTopicConfig {
    return logConfigFor(overrides, this.config);
  }

  /** Opens every partition of every known topic and removes logs of topics that no longer exist. */
  async reconcile(): Promise<void> {
    for (const topic of this.metadata.listTopics()) {
      for (let p = 0; p < topic.partitions; p++) await this.logs.getOrCreate(topic.name, p, this.logConfigFor(topic.configs));
    }
    for (const [tp] of [...this.logs.entries()]) {
      const topic = this.metadata.getTopic(tp.topic);
      if (!topic || tp.partition >= topic.partitions) {
        this.log.warn('removing the log of a deleted topic-partition', { topic: tp.topic, partition: tp.partition });
        await this.logs.delete(tp.topic, tp.partition);
      }
    }
  }

  getTopic(name: string): TopicRecord | undefined {
    return this.metadata.getTopic(name);
  }

  partitionLog(topic: string, partition: number): PartitionLog | undefined {
    return this.logs.get(topic, partition);
  }

  /**
   * Checks a CreateTopics request; throws KafkaError with Kafka's code for the first problem. Returns the
   * partition count and the configs in the canonical form they are stored in.
   */
  validateCreate(name: string, partitions: number, replicationFactor: number, configs: Readonly<Record<string, string>>): { partitions: number; configs: Record<string, string> } {
    const nameError = validateTopicName(name);
    if (nameError) throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError);
    if (this.metadata.getTopic(name)) throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`);
    const count = partitions === -1 ? this.config['num.partitions'] : partitions;
    if (!Number.isInteger(count) || count < 1 || count > MAX_PARTITIONS) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Number of partitions must be between 1 and ${MAX_PARTITIONS}, got ${partitions}.`);
    }
    if (replicationFactor !== -1 && replicationFactor !== 1) {
      throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, `Replication factor ${replicationFactor} is larger than the 1 broker available; use 1 or -1.`);
    }
    return { partitions: count, configs: validateTopicConfigs(configs, {}, this.config) };
  }

  async createTopic(name: string, partitions: number, replicationFactor = -1, requested: Readonly<Record<string, string>> = {}): Promise<TopicRecord> {
    const { partitions: count, configs } = this.validateCreate(name, partitions, replicationFactor, requested);
    // Logs first: once the topic is in metadata, clients may produce and fetch, so its logs must exist.
    const logConfig = this.logConfigFor(configs);
    for (let p = 0; p < count; p++) await this.logs.getOrCreate(name, p, logConfig);
    let record: TopicRecord;
    try {
      await this.prepareHook?.(name, count, configs);
      record = await this.metadata.createTopic(name, count, configs);
    } catch (err) {
      // Lost a race with another create, or the metadata write failed: drop the logs no topic owns.
      const owner = this.metadata.getTopic(name)?.partitions ?? 0;
      for (let p = owner; p < count; p++) await this.logs.delete(name, p);
      // Two creates of one name both pass validateCreate while neither is in metadata yet (two clients
      // auto-creating the same new topic at once); the store refuses the second: Kafka's TOPIC_ALREADY_EXISTS.
      if (err instanceof MetadataError && err.code === 'TOPIC_EXISTS') throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`);
      throw err;
    }
    this.log.info('created topic', { topic: name, partitions: count });
    this.changed(name, record);
    return record;
  }

  /** Whether Metadata and Produce may create unknown topics (`auto.create.topics.enable`). */
  get autoCreateEnabled(): boolean {
    return this.config['auto.create.topics.enable'];
  }

  /** Auto-creation on Metadata/Produce when `auto.create.topics.enable` is on. */
  async autoCreate(name: string): Promise<TopicRecord | undefined> {
    if (!this.config['auto.create.topics.enable'] || validateTopicName(name) !== undefined) return undefined;
    const existing = this.metadata.getTopic(name);
    if (existing) return existing;
    try {
      return await this.createTopic(name, -1);
    } catch (err) {
      if (err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS) return this.metadata.getTopic(name);
      throw err;
    }
  }

  async deleteTopic(name: string): Promise<TopicRecord> {
    const topic = this.metadata.getTopic(name);
    if (!topic) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${name}' does not exist.`);
    await this.metadata.deleteTopic(name);
    for (let p = 0; p < topic.partitions; p++) await this.logs.delete(name, p);
    this.log.info('deleted topic', { topic: name });
    this.changed(name, undefined);
    return topic;
  }

  async createPartitions(name: string, count: number, validateOnly: boolean): Promise<void> {
    const topic = this.metadata.getTopic(name);
    if (!topic) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${name}' does not exist.`);
    if (count <= topic.partitions) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Topic '${name}' already has ${topic.partitions} partitions; the new count must be larger, got ${count}.`);
    }
    if (count > MAX_PARTITIONS) throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `At most ${MAX_PARTITIONS} partitions are allowed, got ${count}.`);
    if (validateOnly) return;
    await this.metadata.setPartitionCount(name, count);
    const logConfig = this.logConfigFor(topic.configs);
    for (let p = topic.partitions; p < count; p++) await this.logs.getOrCreate(name, p, logConfig);
    this.changed(name, this.metadata.getTopic(name));
  }

  /**
   * Validates then applies config changes (null removes an override). As in Kafka, the topic's whole
   * resulting set is validated, and removing an override the topic does not have (even under an unknown
   * name) changes nothing.
   */
  async alterConfigs(name: string, changes: Readonly<Record<string, string | null>>, validateOnly: boolean): Promise<void> {
    const topic = this.metadata.getTopic(name);
    if (!topic) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${name}' does not exist.`);
    const next: Record<string, string> = { ...topic.configs };
    for (const [k, v] of Object.entries(changes)) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
    const canonical = validateTopicConfigs(next, topic.configs, this.config);
    if (validateOnly) return;
    const stored: Record<string, string | null> = {};
    for (const k of Object.keys(changes)) stored[k] = canonical[k] ?? null;
    const updated = await this.metadata.alterTopicConfigs(name, stored);
    const logConfig = this.logConfigFor(updated.configs);
    for (let p = 0; p < updated.partitions; p++) this.logs.get(name, p)?.updateConfig(logConfig);
    this.changed(name, updated);
  }
}
