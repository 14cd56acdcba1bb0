/** CreateTopics (key 19): validates names, partition counts, replication factors and configs with Kafka's codes. */
import { ErrorCode, KafkaError } from '../../protocol/error-codes.js';
import { configTypeOf, effectiveConfigs, topicConfigDef } from '../topics/topic-configs.js';
import type { TopicManager } from '../topics/topic-manager.js';
import type { Logger } from '../logger.js';
import { allowed, allowedOnCluster } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult, type BrokerIdentity } from './common.js';

interface CreatableTopic {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  assignments: { partitionIndex: number; brokerIds: number[] }[];
  configs: { name: string; value: string | null }[];
}

const ZERO_UUID = Buffer.alloc(16);

export class CreateTopicsHandler implements ApiHandler {
  readonly apiKey = 19;
  readonly minVersion = 0;
  readonly maxVersion = 7;

  constructor(
    private readonly topics: TopicManager,
    private readonly identity: BrokerIdentity,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const requested = body.topics as CreatableTopic[];
    const validateOnly = body.validateOnly === true;
    const counts = new Map<string, number>();
    for (const t of requested) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const results: Body[] = [];
    for (const t of requested) {
      if ((counts.get(t.name) ?? 0) > 1) {
        results.push(this.failure(t.name, ErrorCode.INVALID_REQUEST, `Topic '${t.name}' appears more than once in the request.`));
        continue;
      }
      // CREATE on the cluster or on the topic, as Kafka asks.
      if (!allowedOnCluster(ctx, 'CREATE', true) && !allowed(ctx, 'CREATE', 'TOPIC', t.name)) {
        results.push(this.failure(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, `The principal may not create topic '${t.name}'; grant CREATE on it or on the cluster.`));
        continue;
      }
      try {
        results.push(await this.createOne(t, validateOnly));
      } catch (err) {
        const { errorCode, errorMessage } = toErrorResult(err, this.log, { topic: t.name });
        results.push(this.failure(t.name, errorCode, errorMessage));
      }
    }
    return { throttleTimeMs: 0, topics: results };
  }

  private async createOne(t: CreatableTopic, validateOnly: boolean): Promise<Body> {
    let partitions = t.numPartitions;
    if (t.assignments.length > 0) {
      if (t.numPartitions !== -1 || t.replicationFactor !== -1) {
        throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Give either numPartitions/replicationFactor or a manual assignment, not both.');
      }
      const indexes = t.assignments.map((a) => a.partitionIndex).sort((a, b) => a - b);
      if (indexes.some((p, i) => p !== i)) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'Manual assignments must cover partitions 0..n-1 exactly once.');
      if (t.assignments.some((a) => a.brokerIds.length !== 1 || a.brokerIds[0] !== this.identity.nodeId)) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `This cluster has one broker (${this.identity.nodeId}); assign every partition to it alone.`);
      }
      partitions = t.assignments.length;
    }
    const configs: Record<string, string> = {};
    for (const c of t.configs) {
      if (c.value === null) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Null value not supported for topic configs: ${c.name}. Give a value, or leave the config out for its default.`);
      configs[c.name] = c.value;
    }
    const rf = t.assignments.length > 0 ? 1 : t.replicationFactor;
    let id: Buffer = ZERO_UUID;
    let count: number;
    let stored: Readonly<Record<string, string>>;
    if (validateOnly) {
      ({ partitions: count, configs: stored } = this.topics.validateCreate(t.name, partitions, rf, configs));
    } else {
      const record = await this.topics.createTopic(t.name, partitions, rf, configs);
      id = record.id;
      count = record.partitions;
      stored = record.configs;
    }
    const eff = effectiveConfigs(stored, this.topics.config);
    return {
      name: t.name,
      topicId: id,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      numPartitions: count,
      replicationFactor: 1,
      configs: [...eff].map(([name, { value, source }]) => {
        const def = topicConfigDef(name);
        const sensitive = def?.kind === 'password';
        return { name, value: sensitive ? null : value, readOnly: false, configSource: source, isSensitive: sensitive, ...(def ? { configType: configTypeOf(def) } : {}) };
      }),
    };
  }

  private failure(name: string, errorCode: number, errorMessage: string | null): Body {
    return { name, topicId: ZERO_UUID, errorCode, errorMessage, numPartitions: -1, replicationFactor: -1, configs: null };
  }
}
