/**
 * Re-encodes a record batch with fewer records and nothing else changed, the way Kafka's log cleaner
 * rewrites a batch: the base offset and last offset delta (removed records leave gaps, never renumbered),
 * the attributes (compression, timestamp type, transactional, control), the partition leader epoch, the
 * producer id, epoch and base sequence and the max timestamp stay; surviving records keep their offset
 * deltas, timestamps and headers; the CRC is computed afresh. Used by the broker's log cleaner and by the
 * compacted view of a tiered topic (tiering/plugin/compacted-view.ts).
 *
 *   const cleaned = rewriteBatch(batch, batch.records.filter(keep));
 *   const stamped = rewriteBatch(batch, kept, { deleteHorizon: BigInt(now + deleteRetentionMs) });
 */
import { encodeRecordBatch, type RecordBatch } from './record-batch.js';
import type { KafkaRecord, RecordInput } from './records.js';

export interface RewriteOptions {
  /**
   * KIP-534: stamps the batch with this delete horizon (attribute bit 6, baseTimestamp = horizon), shifting
   * the records' timestamp deltas so their timestamps are unchanged.
   */
  readonly deleteHorizon?: bigint;
}

export function rewriteBatch(b: RecordBatch, records: readonly KafkaRecord[], options: RewriteOptions = {}): Buffer {
  const baseTimestamp = options.deleteHorizon ?? b.baseTimestamp;
  const shift = Number(b.baseTimestamp - baseTimestamp);
  const inputs: RecordInput[] = records.map((r) => ({
    attributes: r.attributes,
    timestampDelta: r.timestampDelta + shift,
    offsetDelta: r.offsetDelta,
    key: r.key,
    value: r.value,
    headers: r.headers,
  }));
  return encodeRecordBatch({
    baseOffset: b.baseOffset,
    partitionLeaderEpoch: b.partitionLeaderEpoch,
    compression: b.compression,
    timestampType: b.timestampType,
    isTransactional: b.isTransactional,
    isControl: b.isControl,
    hasDeleteHorizon: options.deleteHorizon !== undefined || b.hasDeleteHorizon,
    lastOffsetDelta: b.lastOffsetDelta,
    baseTimestamp,
    maxTimestamp: b.maxTimestamp,
    producerId: b.producerId,
    producerEpoch: b.producerEpoch,
    baseSequence: b.baseSequence,
    records: inputs,
  });
}
