/**
 * ListTransactions (key 66), v0-2: the transactional ids this coordinator knows, filtered by state names,
 * producer ids, (v1) how long the transaction has been open and (v2) a regular expression on the id.
 * Unknown state names are echoed back in unknownStateFilters; an invalid pattern is INVALID_REQUEST.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { TxnCoordinator } from '../transactions/txn-coordinator.js';
import { TXN_STATES } from '../transactions/txn-metadata.js';
import type { ApiHandler, Body } from './handler.js';

interface ListTransactionsRequest {
  stateFilters: string[];
  producerIdFilters: bigint[];
  durationFilter: bigint;
  transactionalIdPattern: string | null;
}

export class ListTransactionsHandler implements ApiHandler {
  readonly apiKey = 66;
  readonly minVersion = 0;
  readonly maxVersion = 2;

  constructor(
    private readonly transactions: TxnCoordinator,
    private readonly clock: () => number = Date.now,
  ) {}

  handle(body: Body): Body {
    const req = body as unknown as ListTransactionsRequest;
    const known = new Set<string>(TXN_STATES);
    const unknownStateFilters = req.stateFilters.filter((s) => !known.has(s));
    const states = new Set(req.stateFilters);
    const pids = new Set(req.producerIdFilters);
    const minDuration = Number(req.durationFilter ?? -1n);
    const now = this.clock();
    let pattern: RegExp | undefined;
    try {
      pattern = req.transactionalIdPattern ? new RegExp(`^(?:${req.transactionalIdPattern})$`) : undefined;
    } catch {
      return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, unknownStateFilters: [], transactionStates: [] };
    }
    const transactionStates = this.transactions
      .list()
      .filter((t) => states.size === 0 || states.has(t.state))
      .filter((t) => pids.size === 0 || pids.has(t.producerId))
      .filter((t) => minDuration < 0 || (t.txnStartMs >= 0 && now - t.txnStartMs > minDuration))
      .filter((t) => pattern === undefined || pattern.test(t.transactionalId))
      .map((t) => ({ transactionalId: t.transactionalId, producerId: t.producerId, transactionState: t.state }));
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, unknownStateFilters, transactionStates };
  }
}
