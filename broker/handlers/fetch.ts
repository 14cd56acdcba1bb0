/**
 * Fetch (key 1), versions 4-12 (v13+ names topics by id; the schema declares up to 17 but we serve 12).
 *
 * Reads partitions in request order within `maxBytes` overall and `partitionMaxBytes` each; the first batch
 * of the first partition that has data is returned whole even if it is larger (Kafka's KIP-74 rule), so a
 * consumer can always make progress. Reads stop at the high watermark (read_uncommitted) or the last stable
 * offset (read_committed); on a single broker without transactions both are the log end offset, and there
 * are never aborted transactions.
 *
 * Long polling: with fewer than `minBytes` available the request waits in FetchWaiters until one of its
 * partitions grows, `maxWaitMs` runs out or the broker stops, then reads again. A partition error answers
 * at once, as in Kafka. Sessions: see fetch/fetch-session.ts (sessionless, always full responses).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { fetchContext } from '../fetch/fetch-session.js';
import type { FetchWaiters } from '../fetch/fetch-waiters.js';
import { checkCurrentLeaderEpoch } from '../fetch/leader-epoch.js';
import { isLogError } from '../log/errors.js';
import type { PartitionLog } from '../log/partition-log.js';
import type { TopicManager } from '../topics/topic-manager.js';
import type { Logger } from '../logger.js';
import type { RemoteLogReader } from '../tiering/broker-tiering.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult } from './common.js';

interface FetchPartitionRequest {
  partition: number;
  currentLeaderEpoch: number;
  fetchOffset: bigint;
  partitionMaxBytes: number;
}

interface FetchRequest {
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  isolationLevel: number;
  sessionId: number;
  sessionEpoch: number;
  topics: { topic: string; partitions: FetchPartitionRequest[] }[];
}

interface PartitionData {
  partitionIndex: number;
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  abortedTransactions: { producerId: bigint; firstOffset: bigint }[] | null;
  preferredReadReplica: number;
  records: Buffer;
}

interface ReadPass {
  responses: { topic: string; partitions: PartitionData[] }[];
  bytes: number;
  errors: boolean;
  /** Each partition read and the log end offset it had when read: a change means new data. */
  seen: { log: PartitionLog; logEndOffset: number }[];
}

const EMPTY = Buffer.alloc(0);
export const READ_COMMITTED = 1;

export class FetchHandler implements ApiHandler {
  readonly apiKey = 1;
  readonly minVersion = 4;
  readonly maxVersion = 12;

  constructor(
    private readonly topics: TopicManager,
    private readonly waiters: FetchWaiters,
    private readonly log: Logger,
    private readonly clock: () => number = Date.now,
    /** Tiered storage: serves offsets below the local log start offset. */
    private readonly remote?: RemoteLogReader,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as FetchRequest;
    const session = fetchContext(ctx.apiVersion, req.sessionId, req.sessionEpoch);
    if (session.kind === 'error') return { throttleTimeMs: 0, errorCode: session.errorCode, sessionId: 0, responses: [] };
    const deadline = this.clock() + Math.max(0, req.maxWaitMs);
    for (;;) {
      const pass = await this.readAll(req);
      const remaining = deadline - this.clock();
      if (pass.bytes >= req.minBytes || pass.errors || remaining <= 0 || pass.seen.length === 0) return this.response(pass, session.sessionId);
      // Appends that landed while we were reading would not wake us: check before waiting (synchronously).
      if (pass.seen.some((s) => s.log.logEndOffset !== s.logEndOffset)) continue;
      const reason = await this.waiters.wait(
        pass.seen.map((s) => s.log),
        remaining,
      );
      if (reason === 'shutdown') return this.response(pass, session.sessionId);
    }
  }

  private response(pass: ReadPass, sessionId: number): Body {
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId, responses: pass.responses };
  }

  private async readAll(req: FetchRequest): Promise<ReadPass> {
    const pass: ReadPass = { responses: [], bytes: 0, errors: false, seen: [] };
    let budget = req.maxBytes;
    const committed = req.isolationLevel === READ_COMMITTED;
    for (const t of req.topics) {
      const partitions: PartitionData[] = [];
      const topic = this.topics.getTopic(t.topic);
      for (const p of t.partitions) {
        const log = topic === undefined ? undefined : this.topics.partitionLog(t.topic, p.partition);
        if (log === undefined) {
          partitions.push(failure(p.partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
          pass.errors = true;
          continue;
        }
        const epochError = checkCurrentLeaderEpoch(p.currentLeaderEpoch);
        if (epochError !== ErrorCode.NONE) {
          partitions.push(failure(p.partition, epochError));
          pass.errors = true;
          continue;
        }
        const logEndOffset = log.logEndOffset;
        // Single broker, no transactions: high watermark = last stable offset = log end offset.
        const highWatermark = logEndOffset;
        const data: PartitionData = {
          partitionIndex: p.partition,
          errorCode: ErrorCode.NONE,
          highWatermark: BigInt(highWatermark),
          lastStableOffset: BigInt(highWatermark),
          logStartOffset: BigInt(log.logStartOffset),
          abortedTransactions: committed ? [] : null,
          preferredReadReplica: -1,
          records: EMPTY,
        };
        const fetchOffset = Number(p.fetchOffset);
        const localStart = log.logStartOffset;
        const logStart = this.remote ? this.remote.logStartOffset(t.topic, p.partition, localStart) : localStart;
        data.logStartOffset = BigInt(logStart);
        try {
          if (fetchOffset < localStart && fetchOffset >= logStart && this.remote) {
            // Below the local log: tiered storage answers with the stored batches (offsets, CRCs as produced).
            const limit = Math.max(0, Math.min(p.partitionMaxBytes, budget));
            let records = await this.remote.read(t.topic, p.partition, fetchOffset, limit, pass.bytes === 0);
            if (records.length === 0) {
              // A gap between the table and the local log (e.g. records deleted before they were tiered).
              records = (await log.read(localStart, limit, { maxOffset: highWatermark, minOneBatch: pass.bytes === 0 })).records;
            }
            data.records = records;
            pass.bytes += records.length;
            budget -= records.length;
          } else if (fetchOffset < localStart || fetchOffset > highWatermark) {
            data.errorCode = ErrorCode.OFFSET_OUT_OF_RANGE;
            pass.errors = true;
          } else if (fetchOffset < highWatermark) {
            // The first partition with data may exceed the limits by one batch; later ones may not.
            const limit = Math.max(0, Math.min(p.partitionMaxBytes, budget));
            const r = await log.read(fetchOffset, limit, { maxOffset: highWatermark, minOneBatch: pass.bytes === 0 }).catch(async (err: unknown) => {
              // The local hand-off deleted the segment during the read: tiered storage holds it now.
              const remote = this.remote;
              if (!(isLogError(err, 'OFFSET_OUT_OF_RANGE') && remote && fetchOffset < log.logStartOffset && fetchOffset >= remote.logStartOffset(t.topic, p.partition, log.logStartOffset))) throw err;
              const records = await remote.read(t.topic, p.partition, fetchOffset, limit, pass.bytes === 0);
              return { records, logStartOffset: log.logStartOffset };
            });
            data.records = r.records;
            data.logStartOffset = BigInt(this.remote ? this.remote.logStartOffset(t.topic, p.partition, r.logStartOffset) : r.logStartOffset);
            pass.bytes += r.records.length;
            budget -= r.records.length;
          }
        } catch (err) {
          data.errorCode = toErrorResult(err, this.log, { topic: t.topic, partition: p.partition }).errorCode;
          data.records = EMPTY;
          pass.errors = true;
        }
        pass.seen.push({ log, logEndOffset });
        partitions.push(data);
      }
      pass.responses.push({ topic: t.topic, partitions });
    }
    return pass;
  }
}

function failure(partitionIndex: number, errorCode: number): PartitionData {
  return {
    partitionIndex,
    errorCode,
    highWatermark: -1n,
    lastStableOffset: -1n,
    logStartOffset: -1n,
    abortedTransactions: null,
    preferredReadReplica: -1,
    records: EMPTY,
  };
}
