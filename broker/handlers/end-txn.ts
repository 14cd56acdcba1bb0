/**
 * EndTxn (key 26), versions 0-4: commits or aborts a producer's transaction. Answered once the outcome is
 * durable and the markers are written (see TxnCoordinator.endTxn). v5 belongs to transaction version 2
 * (KIP-890 part 2: an epoch bump at every commit), which Floe does not offer, so it is not advertised.
 * PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { fencedCode, type TxnCoordinator } from '../transactions/txn-coordinator.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface EndTxnRequest {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  committed: boolean;
}

const FENCED_SINCE = 2;

export class EndTxnHandler implements ApiHandler {
  readonly apiKey = 26;
  readonly minVersion = 0;
  readonly maxVersion = 4;

  constructor(private readonly transactions: TxnCoordinator) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as EndTxnRequest;
    if (!allowed(ctx, 'WRITE', 'TRANSACTIONAL_ID', req.transactionalId)) return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 };
    const code = await this.transactions.endTxn(req.transactionalId, req.producerId, req.producerEpoch, req.committed);
    return { throttleTimeMs: 0, errorCode: fencedCode(code, ctx.apiVersion, FENCED_SINCE), producerId: -1n, producerEpoch: -1 };
  }
}
