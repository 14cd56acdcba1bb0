/**
 * OffsetCommit (key 8, v2-9): stores a group's consumed positions durably before answering. Members commit
 * with their generation; tools outside group management commit with generation -1 while the group is empty.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { partitionExists, type CommitPartition, type OffsetManager, type TopicLookup } from '../groups/offset-manager.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface OffsetCommitRequest {
  groupId: string;
  generationIdOrMemberEpoch: number;
  memberId: string;
  groupInstanceId: string | null;
  retentionTimeMs: bigint;
  topics: {
    name: string;
    partitions: { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }[];
  }[];
}

export class OffsetCommitHandler implements ApiHandler {
  readonly apiKey = 8;
  readonly minVersion = 2;
  readonly maxVersion = 9;

  constructor(
    private readonly offsets: OffsetManager,
    private readonly topics: TopicLookup,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as OffsetCommitRequest;
    const v = ctx.apiVersion;
    // Error codes laid out like the request; unknown partitions are answered here, the rest by the coordinator.
    // READ on the group, then READ on each topic, as Kafka asks.
    const groupAllowed = allowed(ctx, 'READ', 'GROUP', req.groupId);
    const codes = req.topics.map((t) => {
      const topicAllowed = groupAllowed && allowed(ctx, 'READ', 'TOPIC', t.name);
      return t.partitions.map((p) =>
        !groupAllowed ? ErrorCode.GROUP_AUTHORIZATION_FAILED : !topicAllowed ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : partitionExists(this.topics, t.name, p.partitionIndex) ? ErrorCode.NONE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      );
    });
    const toCommit: CommitPartition[] = [];
    const slots: [number, number][] = [];
    req.topics.forEach((t, ti) =>
      t.partitions.forEach((p, pi) => {
        if (codes[ti]?.[pi] !== ErrorCode.NONE) return;
        slots.push([ti, pi]);
        toCommit.push({
          topic: t.name,
          partition: p.partitionIndex,
          offset: p.committedOffset,
          leaderEpoch: v >= 6 ? p.committedLeaderEpoch : -1,
          metadata: p.committedMetadata,
        });
      }),
    );
    if (toCommit.length > 0) {
      const results = await this.offsets.commit({
        groupId: req.groupId,
        generationId: req.generationIdOrMemberEpoch,
        memberId: req.memberId,
        groupInstanceId: v >= 7 ? req.groupInstanceId : null,
        retentionTimeMs: v <= 4 ? Number(req.retentionTimeMs) : -1,
        partitions: toCommit,
      });
      results.forEach((code, i) => {
        const [ti, pi] = slots[i] as [number, number];
        (codes[ti] as number[])[pi] = code;
      });
    }
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t, ti) => ({
        name: t.name,
        partitions: t.partitions.map((p, pi) => ({ partitionIndex: p.partitionIndex, errorCode: codes[ti]?.[pi] ?? ErrorCode.UNKNOWN_SERVER_ERROR })),
      })),
    };
  }
}
