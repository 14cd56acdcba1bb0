/**
 * TxnOffsetCommit (key 28), versions 0-4: a transactional producer commits consumer offsets inside its
 * transaction (sendOffsetsToTransaction). The group coordinator checks the member (v3+, KIP-447) and the
 * partitions; the offsets wait in the transaction coordinator and reach the committed-offsets store (and
 * OffsetFetch) only when the transaction commits. A stale producer epoch is INVALID_PRODUCER_EPOCH.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { partitionExists, type OffsetManager, type TopicLookup } from '../groups/offset-manager.js';
import type { TxnCoordinator } from '../transactions/txn-coordinator.js';
import type { PendingOffset } from '../transactions/txn-metadata.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface TxnOffsetCommitRequest {
  transactionalId: string;
  groupId: string;
  producerId: bigint;
  producerEpoch: number;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  topics: { name: string; partitions: { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }[] }[];
}

export class TxnOffsetCommitHandler implements ApiHandler {
  readonly apiKey = 28;
  readonly minVersion = 0;
  readonly maxVersion = 4;

  constructor(
    private readonly transactions: TxnCoordinator,
    private readonly offsets: OffsetManager,
    private readonly topics: TopicLookup,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as TxnOffsetCommitRequest;
    const flat = req.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, p })));
    // WRITE on the transactional id, READ on the group, READ on each topic, as Kafka asks.
    const refusal = !allowed(ctx, 'WRITE', 'TRANSACTIONAL_ID', req.transactionalId)
      ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
      : !allowed(ctx, 'READ', 'GROUP', req.groupId)
        ? ErrorCode.GROUP_AUTHORIZATION_FAILED
        : undefined;
    const codes =
      refusal !== undefined
        ? flat.map(() => refusal)
        : this.offsets.checkTxnCommit(req.groupId, req.generationId ?? -1, req.memberId ?? '', req.groupInstanceId ?? null, flat.map((f) => f.p.committedMetadata));
    flat.forEach((f, i) => {
      if (codes[i] === ErrorCode.NONE && !allowed(ctx, 'READ', 'TOPIC', f.topic)) codes[i] = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
    });
    flat.forEach((f, i) => {
      if (codes[i] === ErrorCode.NONE && !partitionExists(this.topics, f.topic, f.p.partitionIndex)) codes[i] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    });
    const accepted: PendingOffset[] = [];
    flat.forEach((f, i) => {
      if (codes[i] === ErrorCode.NONE) accepted.push({ topic: f.topic, partition: f.p.partitionIndex, offset: f.p.committedOffset, leaderEpoch: f.p.committedLeaderEpoch ?? -1, metadata: f.p.committedMetadata });
    });
    if (accepted.length > 0) {
      const code = await this.transactions.txnOffsetCommit(req.transactionalId, req.producerId, req.producerEpoch, req.groupId, accepted);
      if (code !== ErrorCode.NONE) codes.forEach((c, i) => (codes[i] = c === ErrorCode.NONE ? code : c));
    }
    let i = 0;
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: codes[i++] ?? ErrorCode.UNKNOWN_SERVER_ERROR })) })),
    };
  }
}
