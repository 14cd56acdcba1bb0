/**
 * InitProducerId (key 22), versions 0-5: hands producers a producer id and epoch.
 *
 * - Idempotent producers (no transactionalId) always get a fresh id from the MetadataStore (persistent,
 *   never reused) with epoch 0, whatever producerId/epoch they send, as Kafka does: only the transaction
 *   coordinator bumps epochs of an existing id. Returning the id a client presents would let one producer
 *   take over another's sequence state (seen with @platformatic/kafka, which sends producerId 0: its second
 *   producer's first batch was acknowledged as a duplicate and never stored).
 * - transactionalId set: the transaction coordinator answers (broker/transactions/txn-coordinator.ts): a new
 *   id, or the same id with a bumped epoch that fences older instances, aborting their open transaction;
 *   KIP-360 producers (v3+) present their current id and epoch. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH
 *   before v4, as in Kafka.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { Logger } from '../logger.js';
import { fencedCode, type TxnCoordinator } from '../transactions/txn-coordinator.js';
import { allowed, allowedOnAny, allowedOnCluster } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult } from './common.js';

interface InitProducerIdRequest {
  transactionalId: string | null;
  transactionTimeoutMs: number;
  producerId: bigint;
  producerEpoch: number;
}

/** The first InitProducerId version whose clients know PRODUCER_FENCED. */
const FENCED_SINCE = 4;

export class InitProducerIdHandler implements ApiHandler {
  readonly apiKey = 22;
  readonly minVersion = 0;
  readonly maxVersion = 5;

  constructor(
    private readonly metadata: MetadataStore,
    private readonly transactions: TxnCoordinator,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as InitProducerIdRequest;
    const answer = (errorCode: number, producerId: bigint, producerEpoch: number): Body => ({ throttleTimeMs: 0, errorCode, producerId, producerEpoch });
    // WRITE on the transactional id; an idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic (Kafka 3+).
    if (req.transactionalId !== null && !allowed(ctx, 'WRITE', 'TRANSACTIONAL_ID', req.transactionalId)) return answer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1n, -1);
    if (req.transactionalId === null && !allowedOnCluster(ctx, 'IDEMPOTENT_WRITE', true) && !allowedOnAny(ctx, 'WRITE', 'TOPIC')) return answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, -1n, -1);
    try {
      if (req.transactionalId !== null) {
        const r = await this.transactions.initProducerId(req.transactionalId, req.transactionTimeoutMs, req.producerId ?? -1n, req.producerEpoch ?? -1);
        return answer(fencedCode(r.errorCode, ctx.apiVersion, FENCED_SINCE), r.producerId, r.producerEpoch);
      }
      return answer(ErrorCode.NONE, await this.metadata.allocateProducerId(), 0);
    } catch (err) {
      return answer(toErrorResult(err, this.log).errorCode, -1n, -1);
    }
  }
}
