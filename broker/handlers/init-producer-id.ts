/**
 * InitProducerId (key 22), versions 0-5: hands idempotent producers a producer id and epoch.
 *
 * - Idempotent producers (no transactionalId) always get a fresh id from the MetadataStore (persistent,
 *   never reused) with epoch 0, whatever producerId/epoch they send, as Kafka does: only the transaction
 *   coordinator bumps epochs of an existing id. Returning the id a client presents would let one producer
 *   take over another's sequence state (seen with @platformatic/kafka, which sends producerId 0: its second
 *   producer's first batch was acknowledged as a duplicate and never stored).
 * - transactionalId set: transactions do not exist yet. We answer TRANSACTIONAL_ID_AUTHORIZATION_FAILED
 *   (53): every client treats it as fatal for transactional producers (Java and librdkafka raise a fatal
 *   error, kafkajs throws a non-retriable one) and none retries forever, whereas the retriable
 *   COORDINATOR_NOT_AVAILABLE would spin, and TRANSACTIONAL_ID_NOT_FOUND is not expected from this API.
 *   The broker logs the reason.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { Logger } from '../logger.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult } from './common.js';

interface InitProducerIdRequest {
  transactionalId: string | null;
  transactionTimeoutMs: number;
  producerId: bigint;
  producerEpoch: number;
}

export class InitProducerIdHandler implements ApiHandler {
  readonly apiKey = 22;
  readonly minVersion = 0;
  readonly maxVersion = 5;

  constructor(
    private readonly metadata: MetadataStore,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, _ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as InitProducerIdRequest;
    const answer = (errorCode: number, producerId: bigint, producerEpoch: number): Body => ({ throttleTimeMs: 0, errorCode, producerId, producerEpoch });
    if (req.transactionalId !== null) {
      this.log.warn('refused a transactional producer: transactions are not supported yet; produce without transactional.id', { transactionalId: req.transactionalId });
      return answer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1n, -1);
    }
    try {
      return answer(ErrorCode.NONE, await this.metadata.allocateProducerId(), 0);
    } catch (err) {
      return answer(toErrorResult(err, this.log).errorCode, -1n, -1);
    }
  }
}
