/**
 * Fetch (key 1), versions 4-17.
 *
 * Topics: up to v12 a request names each topic; from v13 it carries the topic id instead (as Metadata
 * returned it) and the response echoes that id. An id this broker does not know (never created, or the
 * topic was deleted, even if recreated under the same name) is UNKNOWN_TOPIC_ID on each of its partitions,
 * as in Kafka; a known topic with a missing partition stays UNKNOWN_TOPIC_OR_PARTITION. v15 moves the
 * replica id into the tagged ReplicaState (consumers send -1 either way; like v4-14 it is not consulted:
 * this broker has no followers). v16 adds the tagged NodeEndpoints that come with KIP-951 leader hints,
 * which a single broker never sends; v17 adds the tagged ReplicaDirectoryId of follower fetches (ignored).
 *
 * Reads partitions in request order within `maxBytes` overall and `partitionMaxBytes` each; the first batch
 * of the first partition that has data is returned whole even if it is larger (Kafka's KIP-74 rule), so a
 * consumer can always make progress. Reads stop at the high watermark (read_uncommitted; on a single broker
 * the log end offset) or the last stable offset (read_committed: the first offset of the earliest open
 * transaction). read_committed responses list the aborted transactions (producer id, first offset) that
 * overlap the returned batches, from the partition's producer state (which does not depend on local
 * segments, so ranges served from tiered storage get the same list); the consumer drops their batches.
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
import type { PartitionAppender } from '../producers/partition-appender.js';
import { iterateBatches } from '../../protocol/record-batch/batches.js';
import type { TopicManager } from '../topics/topic-manager.js';
import { allowed } from '../security/acls/access.js';
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

interface FetchTopicRequest {
  /** v4-12. */
  topic: string;
  /** v13+. */
  topicId: Buffer;
  partitions: FetchPartitionRequest[];
}

interface FetchRequest {
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  isolationLevel: number;
  sessionId: number;
  sessionEpoch: number;
  topics: FetchTopicRequest[];
}

/** A request topic resolved against metadata: its name, or the error every partition gets. */
interface ResolvedTopic {
  name: string;
  id: Buffer;
  error: number;
  partitions: FetchPartitionRequest[];
}

/** Fetch requests carry topic ids instead of names from this version on. */
export const FIRST_TOPIC_ID_VERSION = 13;
const ZERO_UUID = Buffer.alloc(16);

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
  /** Both name and id are filled; the codec writes the one the version carries. */
  responses: { topic: string; topicId: Buffer; partitions: PartitionData[] }[];
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
  readonly maxVersion = 17;

  constructor(
    private readonly topics: TopicManager,
    private readonly waiters: FetchWaiters,
    private readonly log: Logger,
    private readonly clock: () => number = Date.now,
    /** Tiered storage: serves offsets below the local log start offset. */
    private readonly remote?: RemoteLogReader,
    /** Producer state: last stable offsets and aborted transactions. */
    private readonly producers?: Pick<PartitionAppender, 'readState' | 'loadedState'>,
    /**
     * Memory the local log's record sets are read into. The connection gives it back once the socket has
     * written the response (ConnectionOptions.responsePool), so nothing else may keep a view of those bytes.
     */
    private readonly readBuffers: (bytes: number) => Buffer = Buffer.allocUnsafe,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as FetchRequest;
    const session = fetchContext(ctx.apiVersion, req.sessionId, req.sessionEpoch);
    if (session.kind === 'error') return { throttleTimeMs: 0, errorCode: session.errorCode, sessionId: 0, responses: [] };
    const deadline = this.clock() + Math.max(0, req.maxWaitMs);
    for (;;) {
      // Resolved on every pass: a topic deleted while the request waits is not read by its old name.
      const pass = await this.readAll(req, this.resolve(req.topics, ctx));
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

  /** Names the request's topics: by name up to v12, by id from v13 (UNKNOWN_TOPIC_ID if the id is not ours). */
  private resolve(topics: readonly FetchTopicRequest[], ctx: HandlerContext): ResolvedTopic[] {
    // Reading needs READ on the topic (TOPIC_AUTHORIZATION_FAILED, also for a topic that does not exist, as Kafka).
    return topics.map((t) => {
      if (ctx.apiVersion < FIRST_TOPIC_ID_VERSION) {
        const record = this.topics.getTopic(t.topic);
        const error = !allowed(ctx, 'READ', 'TOPIC', t.topic) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : record === undefined ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.NONE;
        return { name: t.topic, id: record?.id ?? ZERO_UUID, error, partitions: t.partitions };
      }
      const record = t.topicId.equals(ZERO_UUID) ? undefined : this.topics.metadata.getTopicById(t.topicId);
      const error = record === undefined ? ErrorCode.UNKNOWN_TOPIC_ID : !allowed(ctx, 'READ', 'TOPIC', record.name) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : ErrorCode.NONE;
      return { name: record?.name ?? '', id: t.topicId, error, partitions: t.partitions };
    });
  }

  private async readAll(req: FetchRequest, topics: readonly ResolvedTopic[]): Promise<ReadPass> {
    const pass: ReadPass = { responses: [], bytes: 0, errors: false, seen: [] };
    let budget = req.maxBytes;
    const committed = req.isolationLevel === READ_COMMITTED;
    for (const t of topics) {
      const partitions: PartitionData[] = [];
      for (const p of t.partitions) {
        if (t.error !== ErrorCode.NONE) {
          partitions.push(failure(p.partition, t.error));
          pass.errors = true;
          continue;
        }
        const log = this.topics.partitionLog(t.name, p.partition);
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
        // read_committed needs the producer state (loaded once per partition); read_uncommitted uses it if loaded.
        let state;
        try {
          state = committed && this.producers ? await this.producers.readState(log) : this.producers?.loadedState(log);
        } catch (err) {
          partitions.push(failure(p.partition, toErrorResult(err, this.log, { topic: t.name, partition: p.partition }).errorCode));
          pass.errors = true;
          continue;
        }
        // Read synchronously together: the state changes in the same step as the log end (see PartitionAppender).
        const logEndOffset = log.logEndOffset;
        // Single broker: the high watermark is the log end offset.
        const highWatermark = logEndOffset;
        const lastStable = state?.txns.lastStableOffset(logEndOffset) ?? logEndOffset;
        const readLimit = committed ? lastStable : highWatermark;
        const data: PartitionData = {
          partitionIndex: p.partition,
          errorCode: ErrorCode.NONE,
          highWatermark: BigInt(highWatermark),
          lastStableOffset: BigInt(lastStable),
          logStartOffset: BigInt(log.logStartOffset),
          abortedTransactions: committed ? [] : null,
          preferredReadReplica: -1,
          records: EMPTY,
        };
        const fetchOffset = Number(p.fetchOffset);
        const localStart = log.logStartOffset;
        const logStart = this.remote ? this.remote.logStartOffset(t.name, p.partition, localStart) : localStart;
        data.logStartOffset = BigInt(logStart);
        try {
          if (fetchOffset < localStart && fetchOffset >= logStart && this.remote) {
            // Below the local log: tiered storage answers with the stored batches (offsets, CRCs as produced).
            const limit = Math.max(0, Math.min(p.partitionMaxBytes, budget));
            let records = await this.remote.read(t.name, p.partition, fetchOffset, limit, pass.bytes === 0);
            if (records.length === 0 && pass.bytes === 0) {
              // Nothing at or after fetchOffset in the table: a gap between the table and the local log (records
              // deleted before they were tiered), or the rest of a compacted topic's tiered range compacted away.
              // (Without minOneBatch an empty answer may only mean the next batch is over the limit: reading the
              // local log then would skip the rest of the tiered range.)
              records = (await log.read(localStart, limit, { maxOffset: readLimit, minOneBatch: true })).records;
            }
            if (committed) records = batchesBelow(records, readLimit);
            data.records = records;
            pass.bytes += records.length;
            budget -= records.length;
          } else if (fetchOffset < localStart || fetchOffset > highWatermark) {
            data.errorCode = ErrorCode.OFFSET_OUT_OF_RANGE;
            pass.errors = true;
          } else if (fetchOffset < readLimit) {
            // The first partition with data may exceed the limits by one batch; later ones may not.
            const limit = Math.max(0, Math.min(p.partitionMaxBytes, budget));
            const r = await log.read(fetchOffset, limit, { maxOffset: readLimit, minOneBatch: pass.bytes === 0, allocate: this.readBuffers }).catch(async (err: unknown) => {
              // The local hand-off deleted the segment during the read: tiered storage holds it now.
              const remote = this.remote;
              if (!(isLogError(err, 'OFFSET_OUT_OF_RANGE') && remote && fetchOffset < log.logStartOffset && fetchOffset >= remote.logStartOffset(t.name, p.partition, log.logStartOffset))) throw err;
              const records = await remote.read(t.name, p.partition, fetchOffset, limit, pass.bytes === 0);
              return { records: committed ? batchesBelow(records, readLimit) : records, logStartOffset: log.logStartOffset };
            });
            data.records = r.records;
            data.logStartOffset = BigInt(this.remote ? this.remote.logStartOffset(t.name, p.partition, r.logStartOffset) : r.logStartOffset);
            pass.bytes += r.records.length;
            budget -= r.records.length;
          }
        } catch (err) {
          data.errorCode = toErrorResult(err, this.log, { topic: t.name, partition: p.partition }).errorCode;
          data.records = EMPTY;
          pass.errors = true;
        }
        if (committed && state !== undefined && data.records.length > 0) {
          data.abortedTransactions = state.txns
            .abortedOverlapping(fetchOffset, nextOffsetAfter(data.records, readLimit))
            .map((a) => ({ producerId: a.producerId, firstOffset: BigInt(a.firstOffset) }));
        }
        pass.seen.push({ log, logEndOffset });
        partitions.push(data);
      }
      pass.responses.push({ topic: t.name, topicId: t.id, partitions });
    }
    return pass;
  }
}

/** The offset after the last batch in `records` (or `fallback` if none can be read). */
function nextOffsetAfter(records: Buffer, fallback: number): number {
  let next = -1;
  for (const b of iterateBatches(records)) next = Number(b.lastOffset) + 1;
  return next < 0 ? fallback : next;
}

/** The leading batches of `records` whose base offset is below `maxOffset` (read_committed from tiered storage). */
function batchesBelow(records: Buffer, maxOffset: number): Buffer {
  for (const b of iterateBatches(records)) {
    if (b.baseOffset >= BigInt(maxOffset)) return records.subarray(0, b.start);
  }
  return records;
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
