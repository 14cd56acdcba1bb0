/**
 * DescribeProducers (key 61), v0: the idempotent and transactional producers a partition's producer state
 * holds (Kafka's kafka-transactions.sh describe-producers): id, epoch, last sequence, last append time, the
 * coordinator epoch of its last marker, and the first offset of its open transaction (-1 if none).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { Logger } from '../logger.js';
import type { PartitionAppender } from '../producers/partition-appender.js';
import type { TopicManager } from '../topics/topic-manager.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult } from './common.js';

interface DescribeProducersRequest {
  topics: { name: string; partitionIndexes: number[] }[];
}

export class DescribeProducersHandler implements ApiHandler {
  readonly apiKey = 61;
  readonly minVersion = 0;
  readonly maxVersion = 0;

  constructor(
    private readonly topics: TopicManager,
    private readonly producers: Pick<PartitionAppender, 'readState'>,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as DescribeProducersRequest;
    const topics = [];
    for (const t of req.topics) {
      const partitions = [];
      // READ on the topic, as Kafka asks.
      const readable = allowed(ctx, 'READ', 'TOPIC', t.name);
      for (const partitionIndex of t.partitionIndexes) {
        partitions.push(readable ? await this.partition(t.name, partitionIndex) : { partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: `The principal may not read topic '${t.name}'; grant READ on it.`, activeProducers: [] });
      }
      topics.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  }

  private async partition(topic: string, partitionIndex: number): Promise<Body> {
    const fail = (errorCode: number, errorMessage: string | null) => ({ partitionIndex, errorCode, errorMessage, activeProducers: [] });
    const log = this.topics.getTopic(topic) === undefined ? undefined : this.topics.partitionLog(topic, partitionIndex);
    if (log === undefined) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Partition ${topic}-${partitionIndex} does not exist.`);
    try {
      const state = await this.producers.readState(log);
      const activeProducers = [...state.entries()].map((e) => ({
        producerId: e.producerId,
        producerEpoch: e.epoch,
        lastSequence: e.batches[e.batches.length - 1]?.lastSeq ?? -1,
        lastTimestamp: BigInt(e.lastAppendMs),
        coordinatorEpoch: e.coordinatorEpoch,
        currentTxnStartOffset: BigInt(state.txns.openTxn(e.producerId)?.firstOffset ?? -1),
      }));
      return { partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers };
    } catch (err) {
      const r = toErrorResult(err, this.log, { topic, partition: partitionIndex });
      return fail(r.errorCode, r.errorMessage);
    }
  }
}
