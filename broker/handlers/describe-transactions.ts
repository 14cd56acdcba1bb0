/**
 * DescribeTransactions (key 65), v0: the coordinator's state of each transactional id (state, timeout,
 * start time, producer id and epoch, partitions of the open transaction); TRANSACTIONAL_ID_NOT_FOUND for
 * ids it does not know.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { TxnCoordinator } from '../transactions/txn-coordinator.js';
import { partitionsByTopic } from '../transactions/txn-metadata.js';
import type { ApiHandler, Body } from './handler.js';

export class DescribeTransactionsHandler implements ApiHandler {
  readonly apiKey = 65;
  readonly minVersion = 0;
  readonly maxVersion = 0;

  constructor(private readonly transactions: TxnCoordinator) {}

  handle(body: Body): Body {
    const ids = (body as { transactionalIds: string[] }).transactionalIds;
    return {
      throttleTimeMs: 0,
      transactionStates: ids.map((transactionalId) => {
        const t = this.transactions.describe(transactionalId);
        if (t === undefined) {
          return { errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, transactionalId, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1n, producerId: -1n, producerEpoch: -1, topics: [] };
        }
        return {
          errorCode: ErrorCode.NONE,
          transactionalId,
          transactionState: t.state,
          transactionTimeoutMs: t.timeoutMs,
          transactionStartTimeMs: BigInt(t.txnStartMs),
          producerId: t.producerId,
          producerEpoch: t.producerEpoch,
          topics: partitionsByTopic(t.partitions).map((x) => ({ topic: x.name, partitions: x.partitionIndexes })),
        };
      }),
    };
  }
}
