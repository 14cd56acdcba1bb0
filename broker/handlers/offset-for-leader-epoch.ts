/**
 * OffsetForLeaderEpoch (key 23), versions 2-4: the end offset of a leader epoch, which clients use after a
 * leader change to detect a truncated log. This broker has led every partition since epoch 0 and never
 * changes epoch, so, by Kafka's LeaderEpochFileCache.endOffsetFor rules:
 *   - epoch 0 (the latest): ends at the log end offset;
 *   - an epoch above 0 or below 0 (unknown / UNDEFINED_EPOCH): leaderEpoch -1 and endOffset -1.
 * A current leader epoch other than 0 is fenced (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { checkCurrentLeaderEpoch, LEADER_EPOCH } from '../fetch/leader-epoch.js';
import type { TopicManager } from '../topics/topic-manager.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface OffsetForLeaderEpochRequest {
  replicaId: number;
  topics: { topic: string; partitions: { partition: number; currentLeaderEpoch: number; leaderEpoch: number }[] }[];
}

export class OffsetForLeaderEpochHandler implements ApiHandler {
  readonly apiKey = 23;
  readonly minVersion = 2;
  readonly maxVersion = 4;

  constructor(private readonly topics: TopicManager) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const req = body as unknown as OffsetForLeaderEpochRequest;
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p) => {
          const result = (errorCode: number, leaderEpoch = -1, endOffset = -1n) => ({ errorCode, partition: p.partition, leaderEpoch, endOffset });
          if (!allowed(ctx, 'DESCRIBE', 'TOPIC', t.topic)) return result(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          const log = this.topics.getTopic(t.topic) === undefined ? undefined : this.topics.partitionLog(t.topic, p.partition);
          if (log === undefined) return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          const epochError = checkCurrentLeaderEpoch(p.currentLeaderEpoch);
          if (epochError !== ErrorCode.NONE) return result(epochError);
          if (p.leaderEpoch !== LEADER_EPOCH) return result(ErrorCode.NONE);
          return result(ErrorCode.NONE, LEADER_EPOCH, BigInt(log.logEndOffset));
        }),
      })),
    };
  }
}
