/** Metadata (key 3): brokers, topics with stable ids, partitions and their leader (always this broker). */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { TopicRecord } from '../metadata/metadata-store.js';
import { validateTopicName } from '../topics/topic-configs.js';
import type { TopicManager } from '../topics/topic-manager.js';
import type { Logger } from '../logger.js';
import { allowed, allowedOnCluster, authorizedOperations, visible } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { ALL_CLUSTER_OPERATIONS, ALL_TOPIC_OPERATIONS, AUTHORIZED_OPERATIONS_OMITTED, toErrorResult, endpointFor, type BrokerIdentity } from './common.js';

interface MetadataRequest {
  topics: { topicId: Buffer; name: string | null }[] | null;
  allowAutoTopicCreation: boolean;
  includeClusterAuthorizedOperations: boolean;
  includeTopicAuthorizedOperations: boolean;
}

const ZERO_UUID = Buffer.alloc(16);

export class MetadataHandler implements ApiHandler {
  readonly apiKey = 3;
  readonly minVersion = 0;
  readonly maxVersion = 12;

  constructor(
    private readonly topics: TopicManager,
    private readonly identity: BrokerIdentity,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as MetadataRequest;
    // v0: an empty list means every topic; v1+: null means every topic. Before v4 auto-creation is implied.
    const all = req.topics === null || (ctx.apiVersion === 0 && req.topics.length === 0);
    const allowAuto = ctx.apiVersion < 4 ? true : req.allowAutoTopicCreation;
    const topics: Body[] = [];
    if (all) {
      // Topics the principal may not describe are left out, as Kafka leaves them out.
      for (const t of this.topics.metadata.listTopics()) if (visible(ctx, 'DESCRIBE', 'TOPIC', t.name)) topics.push(this.describe(t, req, ctx));
    } else {
      for (const wanted of req.topics ?? []) topics.push(await this.lookup(wanted, allowAuto, req, ctx));
    }
    const { nodeId, clusterId } = this.identity;
    const { host, port } = endpointFor(this.identity, ctx.conn.security.listener);
    return {
      throttleTimeMs: 0,
      brokers: [{ nodeId, host, port, rack: null }],
      clusterId,
      controllerId: nodeId,
      topics,
      clusterAuthorizedOperations: req.includeClusterAuthorizedOperations ? authorizedOperations(ctx, 'CLUSTER', 'kafka-cluster', ALL_CLUSTER_OPERATIONS) : AUTHORIZED_OPERATIONS_OMITTED,
    };
  }

  private async lookup(wanted: { topicId: Buffer; name: string | null }, allowAuto: boolean, req: MetadataRequest, ctx: HandlerContext): Promise<Body> {
    if (wanted.name === null) {
      const byId = wanted.topicId.equals(ZERO_UUID) ? undefined : this.topics.metadata.getTopicById(wanted.topicId);
      if (byId && !allowed(ctx, 'DESCRIBE', 'TOPIC', byId.name)) return this.missing(null, wanted.topicId, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      if (byId) return this.describe(byId, req, ctx);
      return this.missing(null, wanted.topicId, ErrorCode.UNKNOWN_TOPIC_ID);
    }
    const name = wanted.name;
    // As Kafka: no DESCRIBE is TOPIC_AUTHORIZATION_FAILED whether or not the topic exists, so names do not leak.
    if (!allowed(ctx, 'DESCRIBE', 'TOPIC', name)) return this.missing(name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const existing = this.topics.getTopic(name);
    if (existing) return this.describe(existing, req, ctx);
    if (validateTopicName(name) !== undefined) return this.missing(name, ZERO_UUID, ErrorCode.INVALID_TOPIC_EXCEPTION);
    // Auto-creation needs CREATE on the cluster or on the topic.
    if (allowAuto && this.topics.autoCreateEnabled && !allowedOnCluster(ctx, 'CREATE', true) && !allowed(ctx, 'CREATE', 'TOPIC', name)) {
      return this.missing(name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    }
    if (allowAuto) {
      try {
        const created = await this.topics.autoCreate(name);
        if (created) return this.describe(created, req, ctx);
      } catch (err) {
        return this.missing(name, ZERO_UUID, toErrorResult(err, this.log, { topic: name }).errorCode);
      }
    }
    return this.missing(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  }

  private missing(name: string | null, topicId: Buffer, errorCode: number): Body {
    return { errorCode, name, topicId, isInternal: false, partitions: [], topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED };
  }

  private describe(t: TopicRecord, req: MetadataRequest, ctx: HandlerContext): Body {
    const nodeId = this.identity.nodeId;
    const partitions = Array.from({ length: t.partitions }, (_, partitionIndex) => ({
      errorCode: ErrorCode.NONE,
      partitionIndex,
      leaderId: nodeId,
      leaderEpoch: 0,
      replicaNodes: [nodeId],
      isrNodes: [nodeId],
      offlineReplicas: [],
    }));
    return {
      errorCode: ErrorCode.NONE,
      name: t.name,
      topicId: t.id,
      isInternal: false,
      partitions,
      topicAuthorizedOperations: req.includeTopicAuthorizedOperations ? authorizedOperations(ctx, 'TOPIC', t.name, ALL_TOPIC_OPERATIONS) : AUTHORIZED_OPERATIONS_OMITTED,
    };
  }
}
