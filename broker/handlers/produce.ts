/**
 * Produce (key 0): validates each partition's record batch and appends it through the PartitionAppender.
 *
 * Versions: 0-11 are advertised because librdkafka 2.0.2 stops compressing when the advertised minimum is
 * above 0 (KAFKA-18659); v0-2 carry the legacy message formats and are answered per partition with
 * UNSUPPORTED_VERSION, so the client picks v3+.
 *
 * Per partition, in Kafka's order: the topic exists (auto-created if enabled) and the partition is in range;
 * exactly one batch (ProduceRequest.validateRecords for v3+, else INVALID_RECORD); validateBatch (magic, size
 * vs max.message.bytes, CRC, codec, records); no control batches from clients (INVALID_RECORD); every record
 * keyed on a topic whose cleanup.policy includes compact (INVALID_RECORD, as Kafka's LogValidator); a
 * transactional batch must come from the producer id and epoch of an open transaction that holds the
 * partition (KIP-890 verification against the transaction coordinator; INVALID_TXN_STATE otherwise, or
 * INVALID_PRODUCER_EPOCH for a fenced epoch, as Kafka answers); then the idempotence check and the append,
 * atomically per partition (the partition's open transaction starts there and holds back the LSO).
 *
 * acks: 1 and -1 (all) are the same here (the in-sync replica set is this broker); the log applies the
 * topic's flush policy before the append resolves. acks=0 gets no response; if any partition failed the
 * connection is closed instead, as Kafka does, so the client refreshes its metadata.
 */
import { ErrorCode, KafkaError } from '../../protocol/error-codes.js';
import { ATTR_CONTROL, ATTR_TRANSACTIONAL, BATCH_OFFSETS } from '../../protocol/record-batch/header.js';
import { RecordBatchError } from '../../protocol/record-batch/errors.js';
import { validateBatch } from '../../protocol/record-batch/validate.js';
import type { BrokerConfig } from '../config/settings.js';
import type { TopicRecord } from '../metadata/metadata-store.js';
import type { PartitionAppender } from '../producers/partition-appender.js';
import type { ProducerBatch } from '../producers/producer-state.js';
import { compacts, effectiveConfigs, numericConfig, validateTopicName } from '../topics/topic-configs.js';
import { decodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import type { TopicManager } from '../topics/topic-manager.js';
import type { Logger } from '../logger.js';
import type { TxnCoordinator } from '../transactions/txn-coordinator.js';
import { allowed, allowedOnCluster } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult } from './common.js';

interface ProduceRequest {
  transactionalId: string | null;
  acks: number;
  timeoutMs: number;
  topicData: { name: string; partitionData: { index: number; records: Buffer | null }[] }[];
}

interface PartitionResponse {
  index: number;
  errorCode: number;
  baseOffset: bigint;
  logAppendTimeMs: bigint;
  logStartOffset: bigint;
  recordErrors: { batchIndex: number; batchIndexErrorMessage: string | null }[];
  errorMessage: string | null;
}

/** The first version that carries record batches v2. */
const MIN_SERVED_VERSION = 3;

export class ProduceHandler implements ApiHandler {
  readonly apiKey = 0;
  readonly minVersion = 0;
  readonly maxVersion = 11;
  /**
   * Every partition's append has settled before `handle` resolves (each promise in the response is the
   * append's own, errors included), the log write has completed by then (segment.ts), and nothing keeps the
   * records: producer state keeps numbers, validation decodes into values it drops.
   */
  readonly keepsNoRequestBytes = true;
  private readonly maxMessageBytes = new WeakMap<TopicRecord, number>();
  private readonly compacts = new WeakMap<TopicRecord, boolean>();
  /**
   * Requests that had to wait (auto-creating a topic, or a partition log still opening) and those behind
   * them: appends are queued in request order, so a later request must not overtake one that is waiting.
   */
  private waitingTail: Promise<void> | undefined;
  private waitingCount = 0;

  constructor(
    private readonly topics: TopicManager,
    private readonly appender: PartitionAppender,
    private readonly config: BrokerConfig,
    private readonly log: Logger,
    private readonly transactions: TxnCoordinator,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body | undefined> {
    const req = body as unknown as ProduceRequest;
    const requestError = this.requestError(req, ctx.apiVersion) ?? transactionalIdDenied(req, ctx);
    const denied = topicsDenied(req, ctx, this.topics);
    // Appends are queued synchronously here, in request order, unless this request (or an earlier one still
    // waiting) must first create a topic or open a log; then it queues its appends in turn behind those.
    const enqueue = (): Promise<PartitionResponse>[][] =>
      req.topicData.map((t) => {
        const topic = this.topics.getTopic(t.name);
        return t.partitionData.map((p) => {
          if (requestError !== undefined) return Promise.resolve(failure(p.index, requestError.code, requestError.message));
          const refusal = denied.get(t.name);
          if (refusal !== undefined) return Promise.resolve(failure(p.index, refusal.code, refusal.message));
          return this.producePartition(t.name, topic, p.index, p.records, req.transactionalId);
        });
      });
    const mustWait = requestError === undefined && (this.waitingCount > 0 || this.needsPreparation(req, denied));
    const pending = mustWait ? await this.inOrder(req, enqueue, denied) : enqueue();
    const responses = await Promise.all(
      req.topicData.map(async (t, i) => ({ name: t.name, partitionResponses: await Promise.all(pending[i] ?? []) })),
    );
    if (req.acks === 0) {
      const failed = responses.flatMap((t) => t.partitionResponses.filter((p) => p.errorCode !== ErrorCode.NONE).map((p) => `${t.name}-${p.index}: ${p.errorMessage ?? p.errorCode}`));
      if (failed.length > 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `acks=0 produce failed (${failed.join('; ')}); closing the connection so the client refreshes metadata`);
      return undefined;
    }
    return { responses, throttleTimeMs: 0 };
  }

  /** True if a topic must be auto-created or a partition log is still being opened. */
  private needsPreparation(req: ProduceRequest, denied: ReadonlyMap<string, unknown>): boolean {
    return req.topicData.some((t) => {
      if (denied.has(t.name)) return false;
      const topic = this.topics.getTopic(t.name);
      if (topic === undefined) return validateTopicName(t.name) === undefined;
      return t.partitionData.some((p) => p.index >= 0 && p.index < topic.partitions && this.topics.partitionLog(t.name, p.index) === undefined);
    });
  }

  /** Auto-creates topics and waits for opening logs, then enqueues, behind every earlier request that had to wait. */
  private async inOrder<T>(req: ProduceRequest, enqueue: () => T, denied: ReadonlyMap<string, unknown>): Promise<T> {
    const prepare = async () => {
      for (const t of req.topicData) {
        if (denied.has(t.name)) continue;
        let topic = this.topics.getTopic(t.name);
        if (topic === undefined && validateTopicName(t.name) === undefined) topic = await this.topics.autoCreate(t.name).catch(() => undefined);
        if (topic === undefined) continue;
        const config = this.topics.logConfigFor(topic.configs);
        for (const p of t.partitionData) {
          if (p.index >= 0 && p.index < topic.partitions && this.topics.partitionLog(t.name, p.index) === undefined) {
            await this.topics.logs.getOrCreate(t.name, p.index, config).catch(() => undefined);
          }
        }
      }
    };
    this.waitingCount++;
    const mine = (this.waitingTail ?? Promise.resolve()).then(async () => {
      await prepare();
      return enqueue();
    });
    this.waitingTail = mine.then(
      () => undefined,
      () => undefined,
    );
    try {
      return await mine;
    } finally {
      this.waitingCount--;
      if (this.waitingCount === 0) this.waitingTail = undefined;
    }
  }

  private requestError(req: ProduceRequest, version: number): { code: number; message: string } | undefined {
    if (version < MIN_SERVED_VERSION) {
      return { code: ErrorCode.UNSUPPORTED_VERSION, message: `Produce v${version} carries the legacy message format; Floe serves Produce v${MIN_SERVED_VERSION}-${this.maxVersion} with record batches v2` };
    }
    if (req.acks !== -1 && req.acks !== 0 && req.acks !== 1) {
      return { code: ErrorCode.INVALID_REQUIRED_ACKS, message: `acks=${req.acks} is not supported; use -1 (all), 0 or 1` };
    }
    return undefined;
  }

  private producePartition(name: string, topic: TopicRecord | undefined, index: number, records: Buffer | null, transactionalId: string | null): Promise<PartitionResponse> {
    const where = `${name}-${index}`;
    try {
      if (topic === undefined) {
        const invalid = validateTopicName(name);
        if (invalid !== undefined) throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid);
        throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${name}' does not exist; create it first (auto-creation is off).`);
      }
      const log = this.topics.partitionLog(name, index);
      if (log === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${name}' has ${topic.partitions} partitions; partition ${index} does not exist.`);
      const { batch, producer } = this.validate(records, topic, where);
      if (producer?.transactional === true) {
        const code = this.transactions.verifyPartition(transactionalId, producer.producerId, producer.epoch, name, index);
        if (code !== ErrorCode.NONE) {
          throw new KafkaError(code, `Transactional batch for ${where} from producer ${producer.producerId} epoch ${producer.epoch} is not part of an open transaction of '${transactionalId ?? ''}'; add the partition with AddPartitionsToTxn first (or stop using a fenced producer).`);
        }
      }
      return this.appender.append(log, batch, producer, where).then(
        (r): PartitionResponse => ({
          index,
          errorCode: ErrorCode.NONE,
          baseOffset: BigInt(r.baseOffset),
          logAppendTimeMs: BigInt(r.logAppendTime),
          logStartOffset: BigInt(r.logStartOffset),
          recordErrors: [],
          errorMessage: null,
        }),
        (err: unknown) => this.toFailure(index, err, where),
      );
    } catch (err) {
      return Promise.resolve(this.toFailure(index, err, where));
    }
  }

  private validate(records: Buffer | null, topic: TopicRecord, where: string): { batch: Buffer; producer: ProducerBatch | undefined } {
    if (records === null || records.length === 0) {
      throw new KafkaError(ErrorCode.INVALID_RECORD, `The produce request for ${where} holds no record batch; send exactly one batch per partition.`);
    }
    if (records.length > BATCH_OFFSETS.magic && records[BATCH_OFFSETS.magic] === 2) {
      const end = 12 + records.readInt32BE(BATCH_OFFSETS.batchLength);
      if (end > 0 && end < records.length) {
        throw new KafkaError(ErrorCode.INVALID_RECORD, `The produce request for ${where} holds more than one record batch; Produce v3+ allows exactly one per partition.`);
      }
    }
    const { header } = validateBatch(records, { maxBytes: this.maxMessageBytesOf(topic) });
    if ((header.attributes & ATTR_CONTROL) !== 0) {
      throw new KafkaError(ErrorCode.INVALID_RECORD, `Clients may not write control batches (to ${where}); only the transaction coordinator writes them.`);
    }
    if (this.compactsOf(topic)) {
      // Kafka's LogValidator: the cleaner keeps the latest record per key, so a record needs a key.
      const keyless = decodeRecordBatch(records, 0, { verifyCrc: false }).records.findIndex((r) => r.key === null);
      if (keyless >= 0) throw new KafkaError(ErrorCode.INVALID_RECORD, `Compacted topic cannot accept message without key in topic partition ${where} (record ${keyless} of the batch); give every record a key or use cleanup.policy=delete.`);
    }
    const transactional = (header.attributes & ATTR_TRANSACTIONAL) !== 0;
    if (header.producerId < 0n) {
      if (transactional) throw new KafkaError(ErrorCode.INVALID_RECORD, `Transactional batch for ${where} has no producer id; a transactional producer gets one from InitProducerId.`);
      return { batch: records, producer: undefined };
    }
    if (header.producerEpoch < 0 || header.baseSequence < 0) {
      throw new KafkaError(ErrorCode.INVALID_RECORD, `Batch for ${where} has producer id ${header.producerId} but epoch ${header.producerEpoch} and sequence ${header.baseSequence}; an idempotent batch needs both.`);
    }
    return {
      batch: records,
      producer: { producerId: header.producerId, epoch: header.producerEpoch, firstSeq: header.baseSequence, offsetCount: header.lastOffsetDelta + 1, transactional },
    };
  }

  private compactsOf(topic: TopicRecord): boolean {
    let c = this.compacts.get(topic);
    if (c === undefined) {
      c = compacts(effectiveConfigs(topic.configs, this.config));
      this.compacts.set(topic, c);
    }
    return c;
  }

  private maxMessageBytesOf(topic: TopicRecord): number {
    let n = this.maxMessageBytes.get(topic);
    if (n === undefined) {
      n = numericConfig(effectiveConfigs(topic.configs, this.config), 'max.message.bytes');
      this.maxMessageBytes.set(topic, n);
    }
    return n;
  }

  private toFailure(index: number, err: unknown, where: string): PartitionResponse {
    if (err instanceof RecordBatchError) return failure(index, err.kafkaErrorCode, `${where}: ${err.message}`);
    const { errorCode, errorMessage } = toErrorResult(err, this.log, { partition: where });
    return failure(index, errorCode, errorMessage);
  }
}

function failure(index: number, errorCode: number, errorMessage: string | null): PartitionResponse {
  return { index, errorCode, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [], errorMessage };
}

/** Transactional records need WRITE on the transactional id (Kafka answers every partition with 53). */
function transactionalIdDenied(req: ProduceRequest, ctx: HandlerContext): { code: number; message: string } | undefined {
  if (req.transactionalId === null || allowed(ctx, 'WRITE', 'TRANSACTIONAL_ID', req.transactionalId)) return undefined;
  return { code: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, message: `The principal may not write with transactional id '${req.transactionalId}'; grant WRITE on it.` };
}

/**
 * The topics this request may not write to (TOPIC_AUTHORIZATION_FAILED, as Kafka), and the unknown ones it
 * may not create (auto-creation needs CREATE on the cluster or the topic): those answer UNKNOWN_TOPIC_OR_PARTITION.
 */
function topicsDenied(req: ProduceRequest, ctx: HandlerContext, topics: TopicManager): Map<string, { code: number; message: string }> {
  const denied = new Map<string, { code: number; message: string }>();
  if (ctx.access === undefined) return denied;
  for (const t of req.topicData) {
    if (!allowed(ctx, 'WRITE', 'TOPIC', t.name)) {
      denied.set(t.name, { code: ErrorCode.TOPIC_AUTHORIZATION_FAILED, message: `The principal may not write to topic '${t.name}'; grant WRITE on it.` });
    } else if (topics.getTopic(t.name) === undefined && !allowedOnCluster(ctx, 'CREATE', true) && !allowed(ctx, 'CREATE', 'TOPIC', t.name)) {
      denied.set(t.name, { code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: `Topic '${t.name}' does not exist, and the principal may not create it (CREATE on the topic or the cluster).` });
    }
  }
  return denied;
}
