/** DeleteTopics (key 20): by name (all versions) or by topic id (v6+). */
import { ErrorCode, KafkaError } from '../../protocol/error-codes.js';
import type { TopicManager } from '../topics/topic-manager.js';
import type { Logger } from '../logger.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult } from './common.js';

const ZERO_UUID = Buffer.alloc(16);

export class DeleteTopicsHandler implements ApiHandler {
  readonly apiKey = 20;
  readonly minVersion = 0;
  readonly maxVersion = 6;

  constructor(
    private readonly topics: TopicManager,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const wanted: { name: string | null; topicId: Buffer }[] =
      ctx.apiVersion >= 6
        ? (body.topics as { name: string | null; topicId: Buffer }[])
        : (body.topicNames as string[]).map((name) => ({ name, topicId: ZERO_UUID }));
    const responses: Body[] = [];
    for (const w of wanted) {
      let name = w.name;
      let topicId = w.topicId;
      try {
        if (name === null) {
          const byId = this.topics.metadata.getTopicById(w.topicId);
          if (!byId) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, 'No topic has this id.');
          // Asked by id and not describable: the answer does not name the topic (as Kafka).
          if (!allowed(ctx, 'DESCRIBE', 'TOPIC', byId.name)) throw new KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'The principal may not delete this topic; grant DELETE on it.');
          name = byId.name;
        }
        if (!allowed(ctx, 'DELETE', 'TOPIC', name)) throw new KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, `The principal may not delete topic '${name}'; grant DELETE on it.`);
        const deleted = await this.topics.deleteTopic(name);
        topicId = deleted.id;
        responses.push({ name, topicId, errorCode: ErrorCode.NONE, errorMessage: null });
      } catch (err) {
        const { errorCode, errorMessage } = toErrorResult(err, this.log, { topic: name });
        responses.push({ name, topicId, errorCode, errorMessage });
      }
    }
    return { throttleTimeMs: 0, responses };
  }
}
