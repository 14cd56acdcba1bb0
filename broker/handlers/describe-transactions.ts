/**
 * DescribeTransactions (key 65), v0: the coordinator's state of each transactional id (state, timeout,
 * start time, producer id and epoch, partitions of the open transaction); TRANSACTIONAL_ID_NOT_FOUND for
 * ids it does not know.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { TxnCoordinator } from '../transactions/txn-coordinator.js';
import { partitionsByTopic } from '../transactions/txn-metadata.js';
import { allowed, visible } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

export class DescribeTransactionsHandler implements ApiHandler {
  readonly apiKey = 65;
  readonly minVersion = 0;
  readonly maxVersion = 0;

  constructor(private readonly transactions: TxnCoordinator) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const ids = (body as { transactionalIds: string[] }).transactionalIds;
    return {
      throttleTimeMs: 0,
      transactionStates: ids.map((transactionalId) => {
        if (!allowed(ctx, 'DESCRIBE', 'TRANSACTIONAL_ID', transactionalId)) {
          return { errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, transactionalId, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1n, producerId: -1n, producerEpoch: -1, topics: [] };
        }
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
          // Only the topics the principal may describe, as Kafka shows them.
          topics: partitionsByTopic(t.partitions).filter((x) => visible(ctx, 'DESCRIBE', 'TOPIC', x.name)).map((x) => ({ topic: x.name, partitions: x.partitionIndexes })),
        };
      }),
    };
  }
}
