/**
 * The record-level rules of Kafka's log cleaner, on the bytes of segments (no I/O here). A clean runs in two
 * passes over a range of closed segments, oldest first:
 *
 * 1. `OffsetMapBuilder` (protocol/record-batch/offset-map.ts, shared with the compacted view of tiered
 *    data) reads every batch and learns, per key, the offset of its latest record, and which transactional
 *    batches were aborted (their producer's ABORT marker follows them in the range). Records of a
 *    transaction whose marker is not in the range yet are "undecided": kept, and never allowed to supersede
 *    anything.
 * 2. `BatchCleaner` rewrites every batch (protocol/record-batch/rewrite.ts), keeping a record when it is the
 *    latest of its key. A batch keeps its base offset, its last offset delta, its attributes (compression,
 *    timestamp type, transactional), its producer id, epoch and base sequence and its max timestamp;
 *    surviving records keep their offset deltas, timestamps and headers. Offsets are never renumbered: removed records leave gaps.
 *
 * Tombstones (null values) and transaction markers whose data is all gone follow KIP-534: the first clean
 * that keeps one stamps its batch with a delete horizon (attribute bit 6, baseTimestamp = now +
 * delete.retention.ms, record timestamp deltas shifted so timestamps are unchanged); a later clean after the
 * horizon removes it. Records without a key are removed, as Kafka's cleaner does (produce refuses them).
 * The last batch of each idempotent producer in the range is kept even when none of its records is: an
 * empty batch with its producer id, epoch and sequence range, as Kafka keeps it for the producer state
 * (idempotent, non-transactional batches only).
 */
import { decodeRecordBatch, type RecordBatch } from '../../../protocol/record-batch/record-batch.js';
import type { KafkaRecord } from '../../../protocol/record-batch/records.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { keyOf, type OffsetMap } from '../../../protocol/record-batch/offset-map.js';
import { rewriteBatch } from '../../../protocol/record-batch/rewrite.js';
import { ATTR_DELETE_HORIZON, BATCH_OFFSETS } from '../../../protocol/record-batch/header.js';

export { keyOf, OffsetMapBuilder, type OffsetMap } from '../../../protocol/record-batch/offset-map.js';

export interface CleanStats {
  recordsRead: number;
  recordsRemoved: number;
  batchesRewritten: number;
  bytesRead: number;
  bytesWritten: number;
}

export function emptyStats(): CleanStats {
  return { recordsRead: 0, recordsRemoved: 0, batchesRewritten: 0, bytesRead: 0, bytesWritten: 0 };
}

/** Pass 2: cleans the segments of the same range, in the same order, with the map of pass 1. */
export class BatchCleaner {
  /** Per producer: whether any record of its current transaction survived this clean. */
  private readonly txnRetained = new Map<bigint, boolean>();
  readonly stats = emptyStats();
  /** The earliest delete horizon of the batches kept with one (Infinity when none): when the next clean is due. */
  nextDeleteHorizon = Infinity;

  constructor(
    private readonly map: OffsetMap,
    private readonly now: number,
    private readonly deleteRetentionMs: number,
  ) {}

  /** Returns the cleaned batches of one segment, concatenated (possibly empty). */
  clean(segmentBytes: Buffer): Buffer {
    const out: Buffer[] = [];
    this.stats.bytesRead += segmentBytes.length;
    for (const { start, end } of iterateBatches(segmentBytes)) {
      const kept = this.cleanBatch(segmentBytes, start, end);
      if (kept !== undefined) out.push(kept);
    }
    const cleaned = Buffer.concat(out);
    this.stats.bytesWritten += cleaned.length;
    return cleaned;
  }

  private cleanBatch(buf: Buffer, start: number, end: number): Buffer | undefined {
    const kept = this.cleanBatchRecords(buf, start, end);
    if (kept !== undefined && (kept.readInt16BE(BATCH_OFFSETS.attributes) & ATTR_DELETE_HORIZON) !== 0) {
      // A passed horizon on a kept batch has nothing left to remove (its tombstones are gone).
      const horizon = Number(kept.readBigInt64BE(BATCH_OFFSETS.baseTimestamp));
      if (horizon > this.now) this.nextDeleteHorizon = Math.min(this.nextDeleteHorizon, horizon);
    }
    return kept;
  }

  private cleanBatchRecords(buf: Buffer, start: number, end: number): Buffer | undefined {
    const b = decodeRecordBatch(buf, start, { verifyCrc: false });
    const base = Number(b.baseOffset);
    this.stats.recordsRead += b.records.length;
    const horizonPassed = b.hasDeleteHorizon && Number(b.baseTimestamp) <= this.now;
    if (b.isControl) {
      const retained = this.txnRetained.get(b.producerId) ?? false;
      this.txnRetained.delete(b.producerId);
      if (b.control?.kind === 'other' || retained || this.map.undecided.has(base)) return buf.subarray(start, end);
      // Nothing of its transaction is left: the marker goes after delete.retention.ms.
      if (horizonPassed) {
        this.stats.recordsRemoved += b.records.length;
        return undefined;
      }
      return b.hasDeleteHorizon ? buf.subarray(start, end) : this.rewrite(b, b.records, true);
    }
    // Not for transactional batches: replaying an empty one whose marker is gone would reopen its transaction.
    const keepEmpty = !b.isTransactional && this.map.producerLast.has(base);
    if (this.map.aborted.has(base)) {
      this.stats.recordsRemoved += b.records.length;
      return undefined;
    }
    const undecided = this.map.undecided.has(base);
    const kept: KafkaRecord[] = [];
    let tombstones = false;
    for (const r of b.records) {
      if (!undecided && !this.retain(r, base, horizonPassed)) continue;
      if (r.value === null) tombstones = true;
      kept.push(r);
    }
    this.stats.recordsRemoved += b.records.length - kept.length;
    if (b.isTransactional && kept.length > 0) this.txnRetained.set(b.producerId, true);
    if (kept.length === 0) return keepEmpty ? this.rewrite(b, [], false) : undefined;
    const stamp = tombstones && !b.hasDeleteHorizon;
    if (kept.length === b.records.length && !stamp) return buf.subarray(start, end);
    return this.rewrite(b, kept, stamp);
  }

  private retain(r: KafkaRecord, base: number, horizonPassed: boolean): boolean {
    if (r.key === null) return false;
    const latest = this.map.latest.get(keyOf(r.key));
    if (latest !== undefined && latest > base + r.offsetDelta) return false;
    return !(r.value === null && horizonPassed);
  }

  /** Re-encodes a batch with `records`, keeping everything else; `stamp` sets the delete horizon. */
  private rewrite(b: RecordBatch, records: readonly KafkaRecord[], stamp: boolean): Buffer {
    this.stats.batchesRewritten++;
    return rewriteBatch(b, records, stamp ? { deleteHorizon: BigInt(this.now + this.deleteRetentionMs) } : {});
  }
}
