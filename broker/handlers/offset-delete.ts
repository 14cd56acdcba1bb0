/** OffsetDelete (key 47): removes some committed offsets of a group, except for topics it still subscribes to. */
import { ErrorCode } from '../../protocol/error-codes.js';
import { partitionExists, type OffsetManager, type TopicLookup } from '../groups/offset-manager.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface OffsetDeleteRequest {
  groupId: string;
  topics: { name: string; partitions: { partitionIndex: number }[] }[];
}

export class OffsetDeleteHandler implements ApiHandler {
  readonly apiKey = 47;
  readonly minVersion = 0;
  readonly maxVersion = 0;

  constructor(
    private readonly offsets: OffsetManager,
    private readonly topics: TopicLookup,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as OffsetDeleteRequest;
    if (!allowed(ctx, 'DELETE', 'GROUP', req.groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, throttleTimeMs: 0, topics: [] };
    // READ on each topic, as Kafka asks; the others answer TOPIC_AUTHORIZATION_FAILED.
    const exists = (topic: string, partition: number) => allowed(ctx, 'READ', 'TOPIC', topic) && partitionExists(this.topics, topic, partition);
    const wanted: { topic: string; partition: number }[] = [];
    for (const t of req.topics) {
      for (const p of t.partitions) if (exists(t.name, p.partitionIndex)) wanted.push({ topic: t.name, partition: p.partitionIndex });
    }
    const r = await this.offsets.deleteOffsets(req.groupId, wanted);
    if (r.errorCode !== ErrorCode.NONE) return { errorCode: r.errorCode, throttleTimeMs: 0, topics: [] };
    let i = 0;
    return {
      errorCode: ErrorCode.NONE,
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex,
          errorCode: exists(t.name, p.partitionIndex)
            ? (r.partitions[i++] ?? ErrorCode.UNKNOWN_SERVER_ERROR)
            : allowed(ctx, 'READ', 'TOPIC', t.name)
              ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
              : ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        })),
      })),
    };
  }
}
