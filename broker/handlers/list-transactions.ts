/**
 * ListTransactions (key 66), v0-1: the transactional ids this coordinator knows, filtered by state names,
 * producer ids and (v1) how long the transaction has been open. Unknown state names are echoed back in
 * unknownStateFilters, as Kafka does.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { TxnCoordinator } from '../transactions/txn-coordinator.js';
import { TXN_STATES } from '../transactions/txn-metadata.js';
import { visible } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface ListTransactionsRequest {
  stateFilters: string[];
  producerIdFilters: bigint[];
  durationFilter: bigint;
}

export class ListTransactionsHandler implements ApiHandler {
  readonly apiKey = 66;
  readonly minVersion = 0;
  readonly maxVersion = 1;

  constructor(
    private readonly transactions: TxnCoordinator,
    private readonly clock: () => number = Date.now,
  ) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const req = body as unknown as ListTransactionsRequest;
    const known = new Set<string>(TXN_STATES);
    const unknownStateFilters = req.stateFilters.filter((s) => !known.has(s));
    const states = new Set(req.stateFilters);
    const pids = new Set(req.producerIdFilters);
    const minDuration = Number(req.durationFilter ?? -1n);
    const now = this.clock();
    const transactionStates = this.transactions
      .list()
      .filter((t) => states.size === 0 || states.has(t.state))
      .filter((t) => pids.size === 0 || pids.has(t.producerId))
      .filter((t) => visible(ctx, 'DESCRIBE', 'TRANSACTIONAL_ID', t.transactionalId))
      .filter((t) => minDuration < 0 || (t.txnStartMs >= 0 && now - t.txnStartMs > minDuration))
      .map((t) => ({ transactionalId: t.transactionalId, producerId: t.producerId, transactionState: t.state }));
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, unknownStateFilters, transactionStates };
  }
}
