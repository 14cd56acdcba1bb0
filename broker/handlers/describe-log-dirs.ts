/**
 * DescribeLogDirs (key 35), versions 1-4 (Kafka 4 removed v0): the one log directory of this broker with the
 * size in bytes of every partition log in it (its segment files, as Kafka's log.size), an offset lag of 0 (the
 * log end is the high watermark on a single broker), no future replicas, and (v4) the volume's total and
 * usable bytes. A null topic list means every partition; a requested topic or partition that has no log here
 * is left out, as Kafka leaves it out. A volume that cannot be read makes the directory KAFKA_STORAGE_ERROR,
 * as Kafka reports an offline log dir.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { LogDir } from '../log/log-dir.js';
import type { Logger } from '../logger.js';
import type { TopicManager } from '../topics/topic-manager.js';
import { allowedOnCluster } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface DescribeLogDirsRequest {
  topics: { topic: string; partitions: number[] }[] | null;
}

export class DescribeLogDirsHandler implements ApiHandler {
  readonly apiKey = 35;
  readonly minVersion = 1;
  readonly maxVersion = 4;

  constructor(
    private readonly topics: TopicManager,
    private readonly dir: LogDir,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as DescribeLogDirsRequest;
    // DESCRIBE on the cluster, as Kafka asks.
    if (!allowedOnCluster(ctx, 'DESCRIBE')) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] };
    const wanted = req.topics === null ? this.topics.metadata.listTopics().map((t) => ({ topic: t.name, partitions: range(t.partitions) })) : req.topics;
    const topics: Body[] = [];
    for (const { topic, partitions } of wanted) {
      if (this.topics.getTopic(topic) === undefined) continue;
      const found: Body[] = [];
      for (const p of new Set(partitions)) {
        const log = this.topics.partitionLog(topic, p);
        if (log !== undefined) found.push({ partitionIndex: p, partitionSize: BigInt(log.size), offsetLag: 0n, isFutureKey: false });
      }
      if (found.length > 0) topics.push({ name: topic, partitions: found });
    }
    try {
      const { totalBytes, usableBytes } = await this.dir.volume();
      return reply(ErrorCode.NONE, { logDir: this.dir.path, topics, totalBytes: BigInt(totalBytes), usableBytes: BigInt(usableBytes) });
    } catch (err) {
      this.log.error('cannot read the log directory volume', { err, dir: this.dir.path });
      return reply(ErrorCode.KAFKA_STORAGE_ERROR, { logDir: this.dir.path, topics: [], totalBytes: -1n, usableBytes: -1n });
    }
  }
}

function reply(errorCode: number, result: Body): Body {
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, results: [{ errorCode, ...result }] };
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
