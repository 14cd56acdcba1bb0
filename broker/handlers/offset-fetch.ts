/**
 * OffsetFetch (key 9, v1-9): a group's committed offsets; v8+ asks for several groups at once. Offsets a
 * transaction has committed but not yet completed are never returned; with `requireStable` (v7+, what
 * read_committed consumers send, KIP-447) such a partition answers UNSTABLE_OFFSET_COMMIT, so the consumer
 * retries rather than starting from the older offset.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { FetchedTopic, OffsetManager } from '../groups/offset-manager.js';
import { allowed, visible } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

type TopicsRequest = { name: string; partitionIndexes: number[] }[] | null;

interface OffsetFetchRequest {
  requireStable: boolean;
  groupId: string;
  topics: TopicsRequest;
  groups: { groupId: string; topics: TopicsRequest }[];
}

export class OffsetFetchHandler implements ApiHandler {
  readonly apiKey = 9;
  readonly minVersion = 1;
  readonly maxVersion = 9;

  constructor(
    private readonly offsets: OffsetManager,
    /** Whether an open transaction holds an offset for the partition (the transaction coordinator knows). */
    private readonly pendingTxnOffset: (groupId: string, topic: string, partition: number) => boolean = () => false,
  ) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const req = body as unknown as OffsetFetchRequest;
    const v = ctx.apiVersion;
    if (v >= 8) {
      return {
        throttleTimeMs: 0,
        groups: req.groups.map((g) => {
          const r = this.fetch(g.groupId, g.topics, ctx);
          return { groupId: g.groupId, errorCode: r.errorCode, topics: r.topics.map((t) => this.topic(t, req.requireStable === true ? g.groupId : undefined)) };
        }),
      };
    }
    // v1 has no "all topics" (null) and no top-level error code: a group error goes on every partition.
    const r = this.fetch(req.groupId, req.topics, ctx);
    if (v < 2 && r.errorCode !== ErrorCode.NONE) {
      return {
        topics: (req.topics ?? []).map((t) => ({
          name: t.name,
          partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: r.errorCode })),
        })),
      };
    }
    return { throttleTimeMs: 0, errorCode: r.errorCode, topics: r.topics.map((t) => this.topic(t, req.requireStable === true ? req.groupId : undefined)) };
  }

  /**
   * DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED), then on each topic, as Kafka asks: a named topic the
   * principal may not describe answers TOPIC_AUTHORIZATION_FAILED, and "all topics" leaves it out.
   */
  private fetch(groupId: string, topics: TopicsRequest, ctx: HandlerContext): { errorCode: number; topics: FetchedTopic[] } {
    if (!allowed(ctx, 'DESCRIBE', 'GROUP', groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] };
    const r = this.offsets.fetch(groupId, topics === null ? null : topics.map((t) => ({ topic: t.name, partitions: t.partitionIndexes })));
    if (ctx.access === undefined) return r;
    const shown = topics === null ? r.topics.filter((t) => visible(ctx, 'DESCRIBE', 'TOPIC', t.topic)) : r.topics;
    return { errorCode: r.errorCode, topics: shown.map((t) => (allowed(ctx, 'DESCRIBE', 'TOPIC', t.topic) ? t : { ...t, denied: true })) };
  }

  /** `stableFor`: the group whose pending transactional offsets make a partition UNSTABLE_OFFSET_COMMIT. */
  private topic(t: FetchedTopic & { denied?: boolean }, stableFor: string | undefined): Body {
    return {
      name: t.topic,
      partitions: t.partitions.map((p) => {
        if (t.denied === true) return { partitionIndex: p.partition, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
        const unstable = stableFor !== undefined && this.pendingTxnOffset(stableFor, t.topic, p.partition);
        return unstable
          ? { partitionIndex: p.partition, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT }
          : { partitionIndex: p.partition, committedOffset: p.offset, committedLeaderEpoch: p.leaderEpoch, metadata: p.metadata, errorCode: ErrorCode.NONE };
      }),
    };
  }
}
