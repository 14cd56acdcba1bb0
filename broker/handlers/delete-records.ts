/**
 * DeleteRecords (key 21), versions 0-2: moves a partition's log start offset forward; segments wholly below
 * it are deleted. Offset -1 means "up to the high watermark" (the log end offset here). An offset beyond the
 * high watermark, or another negative one, is OFFSET_OUT_OF_RANGE. Answers the new low watermark. For a tiered
 * topic the remote log start moves too (segments wholly below it leave the table), so the low watermark is
 * the partition's log start, remote or local.
 */
import { ErrorCode, KafkaError } from '../../protocol/error-codes.js';
import type { TopicManager } from '../topics/topic-manager.js';
import type { Logger } from '../logger.js';
import type { RemoteLogReader } from '../tiering/broker-tiering.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult } from './common.js';

interface DeleteRecordsRequest {
  topics: { name: string; partitions: { partitionIndex: number; offset: bigint }[] }[];
  timeoutMs: number;
}

export const HIGH_WATERMARK = -1n;

export class DeleteRecordsHandler implements ApiHandler {
  readonly apiKey = 21;
  readonly minVersion = 0;
  readonly maxVersion = 2;

  constructor(
    private readonly topics: TopicManager,
    private readonly log: Logger,
    /** Tiered storage: the log start may lie in the table, and deleting below the local log moves it there. */
    private readonly remote?: RemoteLogReader,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as DeleteRecordsRequest;
    const refused = (partitionIndex: number) => ({ partitionIndex, lowWatermark: -1n, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED });
    const topics = await Promise.all(
      req.topics.map(async (t) => ({
        name: t.name,
        // DELETE on the topic, as Kafka asks.
        partitions: allowed(ctx, 'DELETE', 'TOPIC', t.name)
          ? await Promise.all(t.partitions.map((p) => this.deleteOne(t.name, p.partitionIndex, p.offset)))
          : t.partitions.map((p) => refused(p.partitionIndex)),
      })),
    );
    return { throttleTimeMs: 0, topics };
  }

  private async deleteOne(topic: string, partitionIndex: number, offset: bigint): Promise<Body> {
    try {
      const log = this.topics.getTopic(topic) === undefined ? undefined : this.topics.partitionLog(topic, partitionIndex);
      if (log === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `${topic}-${partitionIndex} does not exist.`);
      const highWatermark = log.logEndOffset;
      const target = offset === HIGH_WATERMARK ? highWatermark : Number(offset);
      if (target < 0 || target > highWatermark) {
        throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `Cannot delete records of ${topic}-${partitionIndex} before ${offset}: the high watermark is ${highWatermark}.`);
      }
      // The remote log start first: if the local step then fails, the low watermark has not moved, and a retry completes it.
      await this.remote?.deleteRecordsBefore(topic, partitionIndex, target);
      const localStart = await log.deleteRecordsBefore(target);
      const lowWatermark = this.remote ? this.remote.logStartOffset(topic, partitionIndex, localStart) : localStart;
      return { partitionIndex, lowWatermark: BigInt(lowWatermark), errorCode: ErrorCode.NONE };
    } catch (err) {
      return { partitionIndex, lowWatermark: -1n, errorCode: toErrorResult(err, this.log, { topic, partition: partitionIndex }).errorCode };
    }
  }
}
