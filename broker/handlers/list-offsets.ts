/**
 * ListOffsets (key 2), versions 1-9: the offset for a timestamp, or for one of Kafka's special timestamps.
 *
 *   -1 LATEST                 the high watermark (read_uncommitted) or last stable offset (read_committed);
 *                             both are the log end offset on one broker without transactions
 *   -2 EARLIEST               the log start offset
 *   -3 MAX_TIMESTAMP (v7+)    the record with the largest timestamp, and that timestamp, over the local log
 *                             and the tiered data (from the log start); on ties the earliest offset
 *   -4 EARLIEST_LOCAL (v8+)   the local log start offset (EARLIEST is the remote log start when tiered)
 *   -5 LATEST_TIERED (v9+)    the last offset committed to the topic's table: -1 while nothing is tiered
 *   t >= 0                    the first record whose timestamp is >= t (offset -1 if none); tiered records
 *                             below the local log start are searched first
 *
 * The timestamp answer for -1/-2/-4 is -1, as in Kafka. Any other negative timestamp is searched like a
 * timestamp, which is what Kafka does with it.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { decodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import { checkCurrentLeaderEpoch, LEADER_EPOCH } from '../fetch/leader-epoch.js';
import type { TimestampOffset } from '../log/partition-log.js';
import type { TopicManager } from '../topics/topic-manager.js';
import type { Logger } from '../logger.js';
import type { PartitionAppender } from '../producers/partition-appender.js';
import { READ_COMMITTED } from './fetch.js';
import type { RemoteLogReader } from '../tiering/broker-tiering.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult } from './common.js';

export const LATEST_TIMESTAMP = -1n;
export const EARLIEST_TIMESTAMP = -2n;
export const MAX_TIMESTAMP = -3n;
export const EARLIEST_LOCAL_TIMESTAMP = -4n;
export const LATEST_TIERED_TIMESTAMP = -5n;

interface ListOffsetsRequest {
  replicaId: number;
  isolationLevel: number;
  topics: { name: string; partitions: { partitionIndex: number; currentLeaderEpoch: number; timestamp: bigint }[] }[];
}

interface PartitionResponse {
  partitionIndex: number;
  errorCode: number;
  timestamp: bigint;
  offset: bigint;
  leaderEpoch: number;
}

/**
 * The RecordLocator for PartitionLog: inside one stored batch, the first record whose timestamp is >= target.
 * LogAppendTime batches give every record the batch's max timestamp.
 */
export function locateRecordByTimestamp(batch: Buffer, target: number): TimestampOffset | undefined {
  const b = decodeRecordBatch(batch, 0, { verifyCrc: false });
  const base = Number(b.baseOffset);
  if (b.timestampType === 'log-append') {
    const ts = Number(b.maxTimestamp);
    return ts >= target ? { offset: base, timestamp: ts } : undefined;
  }
  const baseTs = Number(b.baseTimestamp);
  for (const r of b.records) {
    const ts = baseTs + r.timestampDelta;
    if (ts >= target) return { offset: base + r.offsetDelta, timestamp: ts };
  }
  return undefined;
}

/** Kafka's MAX_TIMESTAMP rule between two candidates: the larger timestamp, on a tie the earlier offset. */
function laterOrEarlier(a: TimestampOffset | undefined, b: TimestampOffset | undefined): TimestampOffset | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a.timestamp !== b.timestamp) return a.timestamp > b.timestamp ? a : b;
  return a.offset <= b.offset ? a : b;
}

export class ListOffsetsHandler implements ApiHandler {
  readonly apiKey = 2;
  readonly minVersion = 1;
  readonly maxVersion = 9;

  constructor(
    private readonly topics: TopicManager,
    private readonly log: Logger,
    /** Tiered storage: the earliest offset may be in the table rather than the local log. */
    private readonly remote?: RemoteLogReader,
    /** Producer state, for the last stable offset that read_committed LATEST answers. */
    private readonly producers?: Pick<PartitionAppender, 'readState'>,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as ListOffsetsRequest;
    const topics = [];
    for (const t of req.topics) {
      const partitions: PartitionResponse[] = [];
      for (const p of t.partitions) {
        // DESCRIBE on the topic, as Kafka asks (READ implies it).
        const r = allowed(ctx, 'DESCRIBE', 'TOPIC', t.name)
          ? await this.listOne(t.name, p.partitionIndex, p.currentLeaderEpoch, p.timestamp, req.isolationLevel === READ_COMMITTED)
          : { partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, timestamp: -1n, offset: -1n, leaderEpoch: -1 };
        // leaderEpoch exists from v4 and must keep its default before.
        partitions.push(ctx.apiVersion >= 4 ? r : { ...r, leaderEpoch: -1 });
      }
      topics.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  }

  private async listOne(topic: string, partition: number, currentLeaderEpoch: number, timestamp: bigint, committed: boolean): Promise<PartitionResponse> {
    const answer = (offset: number, ts = -1): PartitionResponse => ({
      partitionIndex: partition,
      errorCode: ErrorCode.NONE,
      timestamp: BigInt(ts),
      offset: BigInt(offset),
      leaderEpoch: offset >= 0 ? LEADER_EPOCH : -1,
    });
    const fail = (errorCode: number): PartitionResponse => ({ partitionIndex: partition, errorCode, timestamp: -1n, offset: -1n, leaderEpoch: -1 });
    const log = this.topics.getTopic(topic) === undefined ? undefined : this.topics.partitionLog(topic, partition);
    if (log === undefined) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const epochError = checkCurrentLeaderEpoch(currentLeaderEpoch);
    if (epochError !== ErrorCode.NONE) return fail(epochError);
    try {
      // read_committed sees the log up to the last stable offset only (Kafka's isolation for ListOffsets).
      const state = committed && this.producers ? await this.producers.readState(log) : undefined;
      const stable = (): number => state?.txns.lastStableOffset(log.logEndOffset) ?? log.logEndOffset;
      switch (timestamp) {
        case LATEST_TIMESTAMP:
          return answer(stable());
        case EARLIEST_TIMESTAMP:
          return answer(this.remote ? this.remote.logStartOffset(topic, partition, log.logStartOffset) : log.logStartOffset);
        case EARLIEST_LOCAL_TIMESTAMP:
          return answer(log.logStartOffset);
        case LATEST_TIERED_TIMESTAMP:
          return answer(this.remote ? this.remote.lastTieredOffset(topic, partition) : -1);
        case MAX_TIMESTAMP: {
          const local = await log.maxTimestampOffset();
          // Tiered records count too: once local segments are handed off, the maximum may only be remote.
          const remote = this.remote ? await this.remote.maxTimestampOffset(topic, partition) : undefined;
          const found = laterOrEarlier(local, remote);
          return found === undefined ? answer(-1) : answer(found.offset, found.timestamp);
        }
        default: {
          // Below the local log start the answer is in tiered storage (Kafka asks the remote log first too).
          const logStart = this.remote ? this.remote.logStartOffset(topic, partition, log.logStartOffset) : log.logStartOffset;
          if (this.remote && logStart < log.logStartOffset) {
            const remote = await this.remote.offsetForTimestamp(topic, partition, Number(timestamp));
            if (remote !== undefined && remote.offset < log.logStartOffset) return answer(remote.offset, remote.timestamp);
          }
          const found = await log.offsetForTimestamp(Number(timestamp));
          return found === undefined || found.offset >= stable() ? answer(-1) : answer(found.offset, found.timestamp);
        }
      }
    } catch (err) {
      return fail(toErrorResult(err, this.log, { topic, partition }).errorCode);
    }
  }
}
