/**
 * The registry's durable state: the internal topic `_schemas` (one partition, `cleanup.policy=compact`, as
 * Confluent keeps it), written through the broker's own produce path and replayed at start-up.
 *
 * - Writes: one record batch per registry change (a soft or permanent delete of a subject is one batch, so
 *   it is all-or-nothing after a crash), appended by the PartitionAppender like a produced batch (fetch long
 *   polls wake up, tiering sees the segments). The topic has `flush.messages=1`: the log fsyncs before the
 *   append resolves, so a change is acknowledged only once it is on disk.
 * - Tiering: when the broker tiers, `_schemas` is an Iceberg topic like any other (`iceberg.enabled=true`);
 *   its closed segments go to the warehouse. A broker rebuilt from the warehouse alone recreates the topic,
 *   the tiering prepare hook starts its empty log after the table's history, and replay reads that history
 *   back through the remote read path, so ids and versions stay the same.
 * - Replay: from the log start offset (remote, then local) to the log end, every record in offset order.
 */
import { decodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import { iterateBatches } from '../../protocol/record-batch/batches.js';
import { encodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import type { PartitionLog } from '../log/partition-log.js';
import type { Logger } from '../logger.js';
import type { PartitionAppender } from '../producers/partition-appender.js';
import type { RemoteLogReader } from '../tiering/broker-tiering.js';
import type { TopicManager } from '../topics/topic-manager.js';
import type { EncodedRecord } from './records.js';

export const SCHEMAS_TOPIC = '_schemas';
const READ_BYTES = 1024 * 1024;

export interface RegistryLog {
  /** Appends the records as one batch; resolves once they are durable. */
  append(records: readonly EncodedRecord[]): Promise<void>;
  /** Calls `visit` with every record from the start of the log, in offset order; resolves with the count. */
  replay(visit: (key: Buffer | null, value: Buffer | null, offset: number) => void): Promise<number>;
}

export interface TopicRegistryLogOptions {
  readonly topics: TopicManager;
  readonly appender: PartitionAppender;
  /** The broker's tiered storage, when it tiers: `_schemas` then becomes a table and replay reads remote history. */
  readonly tiering?: RemoteLogReader;
  readonly log: Logger;
  readonly topic?: string;
}

export class TopicRegistryLog implements RegistryLog {
  private constructor(
    private readonly options: TopicRegistryLogOptions,
    private readonly topic: string,
    private readonly partitionLog: PartitionLog,
  ) {}

  /** Creates the topic when it does not exist yet (a new broker, or one rebuilt from the warehouse). */
  static async open(options: TopicRegistryLogOptions): Promise<TopicRegistryLog> {
    const topic = options.topic ?? SCHEMAS_TOPIC;
    if (!options.topics.getTopic(topic)) {
      const configs: Record<string, string> = { 'cleanup.policy': 'compact', 'flush.messages': '1', 'iceberg.enabled': options.tiering ? 'true' : 'false' };
      await options.topics.createTopic(topic, 1, -1, configs);
      options.log.info('created the schema registry topic', { topic });
    }
    const plog = options.topics.partitionLog(topic, 0);
    if (!plog) throw new Error(`the schema registry topic ${topic} has no partition 0; delete the topic so the registry can recreate it`);
    return new TopicRegistryLog(options, topic, plog);
  }

  async append(records: readonly EncodedRecord[]): Promise<void> {
    const batch = encodeRecordBatch({ baseTimestamp: BigInt(Date.now()), records: records.map((r) => ({ key: r.key, value: r.value })) });
    await this.options.appender.append(this.partitionLog, batch, undefined, `${this.topic}-0`);
    // flush.messages=1 fsyncs inside the append; a topic whose configs were changed by hand still gets one here.
    if (this.partitionLog.topicConfig.flushMessages > 1) await this.partitionLog.flush();
  }

  async replay(visit: (key: Buffer | null, value: Buffer | null, offset: number) => void): Promise<number> {
    const plog = this.partitionLog;
    const remote = this.options.tiering;
    let offset = remote ? remote.logStartOffset(this.topic, 0, plog.logStartOffset) : plog.logStartOffset;
    const end = plog.logEndOffset;
    let count = 0;
    while (offset < end) {
      const localStart = plog.logStartOffset;
      let buf: Buffer;
      if (offset < localStart) {
        buf = remote ? await remote.read(this.topic, 0, offset, READ_BYTES, true) : Buffer.alloc(0);
        if (buf.length === 0) {
          this.options.log.error('schema registry history is missing between the remote and the local log; ids in that range are lost', { topic: this.topic, from: offset, to: localStart });
          offset = localStart;
          continue;
        }
      } else {
        buf = (await plog.read(offset, READ_BYTES, { minOneBatch: true })).records;
        if (buf.length === 0) break;
      }
      let next = offset;
      for (const bounds of iterateBatches(buf)) {
        const batch = decodeRecordBatch(buf, bounds.start);
        const base = Number(batch.baseOffset);
        next = Math.max(next, base + batch.lastOffsetDelta + 1);
        if (batch.isControl) continue;
        for (const r of batch.records) {
          const at = base + r.offsetDelta;
          if (at < offset) continue;
          visit(r.key, r.value, at);
          count++;
        }
      }
      if (next <= offset) break;
      offset = next;
    }
    return count;
  }
}
