/**
 * AddOffsetsToTxn (key 25), versions 0-4: a transactional producer adds a consumer group's offset commit
 * to its transaction (sendOffsetsToTransaction); TxnOffsetCommit follows. PRODUCER_FENCED is
 * INVALID_PRODUCER_EPOCH before v2.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { fencedCode, type TxnCoordinator } from '../transactions/txn-coordinator.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface AddOffsetsToTxnRequest {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  groupId: string;
}

const FENCED_SINCE = 2;

export class AddOffsetsToTxnHandler implements ApiHandler {
  readonly apiKey = 25;
  readonly minVersion = 0;
  readonly maxVersion = 4;

  constructor(private readonly transactions: TxnCoordinator) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as AddOffsetsToTxnRequest;
    if (!allowed(ctx, 'WRITE', 'TRANSACTIONAL_ID', req.transactionalId)) return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
    if (!allowed(ctx, 'READ', 'GROUP', req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    const code = await this.transactions.addOffsets(req.transactionalId, req.producerId, req.producerEpoch, req.groupId);
    return { throttleTimeMs: 0, errorCode: fencedCode(code, ctx.apiVersion, FENCED_SINCE) };
  }
}
