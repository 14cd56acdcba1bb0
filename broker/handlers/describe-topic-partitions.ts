/**
 * DescribeTopicPartitions (key 75, v0, KIP-966): what Apache Kafka's 4.x AdminClient.describeTopics asks a
 * broker that serves it. Topics are answered in name order (every topic when the list is empty), from the
 * request's cursor on, with at most min(responsePartitionLimit, 2000) partitions (Kafka's
 * max.request.partition.size.limit default); where that cuts, `nextCursor` names the topic and partition to
 * go on from. An unknown topic is UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal name),
 * never auto-created; a cursor on a topic the request does not name is INVALID_REQUEST for every topic, as
 * Kafka answers. Every partition is led by this broker, its only replica and in-sync replica; eligible leader
 * replicas are empty (no ELR on a single broker).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { TopicRecord } from '../metadata/metadata-store.js';
import { validateTopicName } from '../topics/topic-configs.js';
import type { TopicManager } from '../topics/topic-manager.js';
import { allowed, visible } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { ALL_TOPIC_OPERATIONS, type BrokerIdentity } from './common.js';

/** Kafka's max.request.partition.size.limit default: the most partitions one response carries. */
export const MAX_PARTITIONS_PER_RESPONSE = 2000;
const ZERO_UUID = Buffer.alloc(16);

interface Cursor {
  topicName: string;
  partitionIndex: number;
}

interface DescribeTopicPartitionsRequest {
  topics: { name: string }[];
  responsePartitionLimit: number;
  cursor: Cursor | null;
}

export class DescribeTopicPartitionsHandler implements ApiHandler {
  readonly apiKey = 75;
  readonly minVersion = 0;
  readonly maxVersion = 0;

  constructor(
    private readonly topics: TopicManager,
    private readonly identity: BrokerIdentity,
  ) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const req = body as unknown as DescribeTopicPartitionsRequest;
    const requested = req.topics.map((t) => t.name);
    const all = requested.length === 0;
    const cursor = req.cursor;
    if (cursor !== null && !all && !requested.includes(cursor.topicName)) {
      const topics = requested.map((name) => missing(name, ErrorCode.INVALID_REQUEST));
      return { throttleTimeMs: 0, topics, nextCursor: null };
    }
    // Listing every topic shows only the describable ones; a named one the principal may not describe is refused (as Metadata).
    const names = [...new Set(all ? this.topics.metadata.listTopics().map((t) => t.name).filter((n) => visible(ctx, 'DESCRIBE', 'TOPIC', n)) : requested)].sort(byCodePoint).filter((n) => cursor === null || byCodePoint(n, cursor.topicName) >= 0);
    let remaining = Math.min(req.responsePartitionLimit, MAX_PARTITIONS_PER_RESPONSE);
    const topics: Body[] = [];
    let nextCursor: Cursor | null = null;
    for (const name of names) {
      if (remaining <= 0) {
        nextCursor = { topicName: name, partitionIndex: 0 };
        break;
      }
      if (!allowed(ctx, 'DESCRIBE', 'TOPIC', name)) {
        topics.push(missing(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED));
        continue;
      }
      const record = this.topics.getTopic(name);
      if (record === undefined) {
        topics.push(missing(name, validateTopicName(name) === undefined ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.INVALID_TOPIC_EXCEPTION));
        continue;
      }
      const start = cursor !== null && name === cursor.topicName ? Math.max(0, cursor.partitionIndex) : 0;
      const end = Math.min(record.partitions, start + remaining);
      topics.push(this.describe(record, start, end));
      if (end < record.partitions) {
        nextCursor = { topicName: name, partitionIndex: end };
        break;
      }
      remaining -= end - start;
    }
    return { throttleTimeMs: 0, topics, nextCursor };
  }

  private describe(t: TopicRecord, start: number, end: number): Body {
    const nodeId = this.identity.nodeId;
    const partitions: Body[] = [];
    for (let partitionIndex = start; partitionIndex < end; partitionIndex++) {
      partitions.push({ errorCode: ErrorCode.NONE, partitionIndex, leaderId: nodeId, leaderEpoch: 0, replicaNodes: [nodeId], isrNodes: [nodeId], eligibleLeaderReplicas: [], lastKnownElr: [], offlineReplicas: [] });
    }
    return { errorCode: ErrorCode.NONE, name: t.name, topicId: t.id, isInternal: false, partitions, topicAuthorizedOperations: ALL_TOPIC_OPERATIONS };
  }
}

function missing(name: string, errorCode: number): Body {
  return { errorCode, name, topicId: ZERO_UUID, isInternal: false, partitions: [], topicAuthorizedOperations: ALL_TOPIC_OPERATIONS };
}

/** Java's String.compareTo order for the names Kafka allows (ASCII), which is what Kafka sorts topics by. */
function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
