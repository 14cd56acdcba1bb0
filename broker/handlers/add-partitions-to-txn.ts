/**
 * AddPartitionsToTxn (key 24), versions 0-5: a transactional producer registers the partitions it is about
 * to write. v0-3 (clients) carry one transaction; v4+ (KIP-890, broker to coordinator) batch several and may
 * only verify (`verifyOnly`: is each partition already in the transaction? INVALID_TXN_STATE if not).
 * PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2, as in Kafka.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { fencedCode, type TxnCoordinator } from '../transactions/txn-coordinator.js';
import { allowed, allowedOnCluster } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface TopicPartitions {
  name: string;
  partitions: number[];
}

interface AddPartitionsToTxnRequest {
  transactions: { transactionalId: string; producerId: bigint; producerEpoch: number; verifyOnly: boolean; topics: TopicPartitions[] }[];
  v3AndBelowTransactionalId: string;
  v3AndBelowProducerId: bigint;
  v3AndBelowProducerEpoch: number;
  v3AndBelowTopics: TopicPartitions[];
}

const FENCED_SINCE = 2;
const FIRST_BATCHED_VERSION = 4;

export class AddPartitionsToTxnHandler implements ApiHandler {
  readonly apiKey = 24;
  readonly minVersion = 0;
  readonly maxVersion = 5;

  constructor(private readonly transactions: TxnCoordinator) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as AddPartitionsToTxnRequest;
    const v = ctx.apiVersion;
    if (v < FIRST_BATCHED_VERSION) {
      const results = await this.add(req.v3AndBelowTransactionalId, req.v3AndBelowProducerId, req.v3AndBelowProducerEpoch, req.v3AndBelowTopics, false, v, ctx);
      return { throttleTimeMs: 0, resultsByTopicV3AndBelow: results };
    }
    // v4+ is the brokers' batched form: it needs CLUSTER_ACTION, as in Kafka.
    if (!allowedOnCluster(ctx, 'CLUSTER_ACTION')) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [] };
    const resultsByTransaction = await Promise.all(
      req.transactions.map(async (t) => ({ transactionalId: t.transactionalId, topicResults: await this.add(t.transactionalId, t.producerId, t.producerEpoch, t.topics, t.verifyOnly, v, ctx) })),
    );
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, resultsByTransaction };
  }

  private async add(transactionalId: string, producerId: bigint, epoch: number, topics: TopicPartitions[], verifyOnly: boolean, version: number, ctx: HandlerContext): Promise<Body[]> {
    const flat = topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })));
    // WRITE on the transactional id (53 everywhere), then on each topic: 29 where refused, OPERATION_NOT_ATTEMPTED elsewhere (Kafka).
    const refused = !allowed(ctx, 'WRITE', 'TRANSACTIONAL_ID', transactionalId)
      ? flat.map(() => ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
      : flat.some((p) => !allowed(ctx, 'WRITE', 'TOPIC', p.topic))
        ? flat.map((p) => (allowed(ctx, 'WRITE', 'TOPIC', p.topic) ? ErrorCode.OPERATION_NOT_ATTEMPTED : ErrorCode.TOPIC_AUTHORIZATION_FAILED))
        : undefined;
    const codes = refused !== undefined ? refused : verifyOnly
      ? flat.map((p) => this.transactions.verifyPartition(transactionalId, producerId, epoch, p.topic, p.partition))
      : await this.transactions.addPartitions(transactionalId, producerId, epoch, flat);
    let i = 0;
    return topics.map((t) => ({
      name: t.name,
      resultsByPartition: t.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: fencedCode(codes[i++] ?? ErrorCode.UNKNOWN_SERVER_ERROR, version, FENCED_SINCE) })),
    }));
  }
}
