/** CreatePartitions (key 37): grows a topic's partition count. */
import { ErrorCode, KafkaError } from '../../protocol/error-codes.js';
import type { TopicManager } from '../topics/topic-manager.js';
import type { Logger } from '../logger.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult, type BrokerIdentity } from './common.js';

interface TopicRequest {
  name: string;
  count: number;
  assignments: { brokerIds: number[] }[] | null;
}

export class CreatePartitionsHandler implements ApiHandler {
  readonly apiKey = 37;
  readonly minVersion = 0;
  readonly maxVersion = 3;

  constructor(
    private readonly topics: TopicManager,
    private readonly identity: BrokerIdentity,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const results: Body[] = [];
    for (const t of body.topics as TopicRequest[]) {
      try {
        if (!allowed(ctx, 'ALTER', 'TOPIC', t.name)) throw new KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, `The principal may not add partitions to topic '${t.name}'; grant ALTER on it.`);
        if (t.assignments?.some((a) => a.brokerIds.some((b) => b !== this.identity.nodeId))) {
          throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `This cluster has one broker (${this.identity.nodeId}).`);
        }
        await this.topics.createPartitions(t.name, t.count, body.validateOnly === true);
        results.push({ name: t.name, errorCode: ErrorCode.NONE, errorMessage: null });
      } catch (err) {
        results.push({ name: t.name, ...toErrorResult(err, this.log, { topic: t.name }) });
      }
    }
    return { throttleTimeMs: 0, results };
  }
}
