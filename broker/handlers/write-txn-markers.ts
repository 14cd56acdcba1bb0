/**
 * WriteTxnMarkers (key 27), versions 0-1: writes commit or abort markers to partitions for producers.
 * Floe's own coordinator writes its markers directly (one broker leads every partition); this API serves
 * admin tools, such as `kafka-transactions.sh abort`, which ends a hanging transaction found with
 * DescribeProducers. Per partition: UNKNOWN_TOPIC_OR_PARTITION, INVALID_PRODUCER_EPOCH for an epoch older
 * than the producer's, TRANSACTION_COORDINATOR_FENCED for an older coordinator epoch.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { Logger } from '../logger.js';
import type { PartitionAppender } from '../producers/partition-appender.js';
import type { TopicManager } from '../topics/topic-manager.js';
import { allowedOnCluster } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult } from './common.js';

interface WriteTxnMarkersRequest {
  markers: { producerId: bigint; producerEpoch: number; transactionResult: boolean; topics: { name: string; partitionIndexes: number[] }[]; coordinatorEpoch: number }[];
}

export class WriteTxnMarkersHandler implements ApiHandler {
  readonly apiKey = 27;
  readonly minVersion = 0;
  readonly maxVersion = 1;

  constructor(
    private readonly topics: TopicManager,
    private readonly appender: Pick<PartitionAppender, 'appendMarker'>,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as WriteTxnMarkersRequest;
    // Inter-broker: CLUSTER_ACTION on the cluster, as Kafka asks.
    if (!allowedOnCluster(ctx, 'CLUSTER_ACTION')) {
      return { markers: req.markers.map((m) => ({ producerId: m.producerId, topics: m.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED })) })) })) };
    }
    const markers = [];
    for (const m of req.markers) {
      const topics = [];
      for (const t of m.topics) {
        const partitions = await Promise.all(
          t.partitionIndexes.map(async (partitionIndex) => {
            const log = this.topics.getTopic(t.name) === undefined ? undefined : this.topics.partitionLog(t.name, partitionIndex);
            if (log === undefined) return { partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
            try {
              await this.appender.appendMarker(log, { producerId: m.producerId, epoch: m.producerEpoch, commit: m.transactionResult, coordinatorEpoch: m.coordinatorEpoch });
              this.log.info('wrote a transaction marker on request', { topic: t.name, partition: partitionIndex, producerId: String(m.producerId), commit: m.transactionResult });
              return { partitionIndex, errorCode: ErrorCode.NONE };
            } catch (err) {
              return { partitionIndex, errorCode: toErrorResult(err, this.log, { topic: t.name, partition: partitionIndex }).errorCode };
            }
          }),
        );
        topics.push({ name: t.name, partitions });
      }
      markers.push({ producerId: m.producerId, topics });
    }
    return { markers };
  }
}
