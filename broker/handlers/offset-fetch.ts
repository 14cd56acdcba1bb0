/** OffsetFetch (key 9, v1-9): a group's committed offsets; v8+ asks for several groups at once. */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { FetchedTopic, OffsetManager } from '../groups/offset-manager.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

type TopicsRequest = { name: string; partitionIndexes: number[] }[] | null;

interface OffsetFetchRequest {
  groupId: string;
  topics: TopicsRequest;
  groups: { groupId: string; topics: TopicsRequest }[];
}

export class OffsetFetchHandler implements ApiHandler {
  readonly apiKey = 9;
  readonly minVersion = 1;
  readonly maxVersion = 9;

  constructor(private readonly offsets: OffsetManager) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const req = body as unknown as OffsetFetchRequest;
    const v = ctx.apiVersion;
    if (v >= 8) {
      return {
        throttleTimeMs: 0,
        groups: req.groups.map((g) => {
          const r = this.fetch(g.groupId, g.topics);
          return { groupId: g.groupId, errorCode: r.errorCode, topics: r.topics.map((t) => this.topic(t, ErrorCode.NONE)) };
        }),
      };
    }
    // v1 has no "all topics" (null) and no top-level error code: a group error goes on every partition.
    const r = this.fetch(req.groupId, req.topics);
    if (v < 2 && r.errorCode !== ErrorCode.NONE) {
      return {
        topics: (req.topics ?? []).map((t) => ({
          name: t.name,
          partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: r.errorCode })),
        })),
      };
    }
    return { throttleTimeMs: 0, errorCode: r.errorCode, topics: r.topics.map((t) => this.topic(t, ErrorCode.NONE)) };
  }

  private fetch(groupId: string, topics: TopicsRequest): { errorCode: number; topics: FetchedTopic[] } {
    return this.offsets.fetch(groupId, topics === null ? null : topics.map((t) => ({ topic: t.name, partitions: t.partitionIndexes })));
  }

  private topic(t: FetchedTopic, errorCode: number): Body {
    return {
      name: t.topic,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, committedOffset: p.offset, committedLeaderEpoch: p.leaderEpoch, metadata: p.metadata, errorCode })),
    };
  }
}
