/**
 * The compacted view of a compacted topic's tiered range (`cleanup.policy` with `compact`): what a Kafka
 * fetch below the local log start returns. The table keeps every record ever tiered (the append table);
 * Kafka readers of the tiered range see what Kafka's log cleaner would have left of it, at the original
 * offsets: the latest record of each key, the tombstones still within `delete.retention.ms`, no aborted
 * transactional record, no record without a key.
 *
 * Which offsets survive is decided per partition by the log cleaner's own first pass
 * (protocol/record-batch/offset-map.ts: latest offset per key, aborted and undecided transactions, from
 * the transaction markers that the table stores with the data), fed the table's batches in offset order:
 * - built lazily, by the first tiered read of the partition after a start: every tiered batch of the
 *   partition is read once through the Kafka read path (the whole rows, values included);
 * - kept up to date by each later read: segments committed since are read and fed before the read is
 *   answered, so the map always covers everything the read can return (batches past it are not returned);
 * - kept across table compaction, retention and DeleteRecords, which change files and the log start but
 *   never which record sits at which offset (records below the start are never served, and a record
 *   below the start never supersedes one above it; an operator's rollback never changes offsets either);
 *   rebuilt when the committed offset is ever below what the map covers, or after an update failed halfway.
 * In memory: one map entry per distinct key (the key's bytes as a string and a number), plus the base
 * offsets of aborted batches.
 *
 * The batches themselves (compactBatches) follow the log cleaner's second pass (clean-batches.ts) with
 * the table's limits: a batch keeps its base offset, last offset delta, attributes, producer fields and
 * max timestamp, and loses the records that do not survive (protocol/record-batch/rewrite.ts, CRC
 * recomputed); a batch left with no record is not returned (the cleaner keeps an empty batch only for the
 * producer state of the local log, which a fetch does not need); a fetch inside a gap gets the next
 * surviving batch. Records of a transaction whose marker the table does not hold yet are kept and
 * supersede nothing, as the cleaner keeps them. Transaction markers are always kept (the cleaner drops
 * one after delete.retention.ms once its transaction has no record left; the view does not track that).
 *
 * Tombstones: the cleaner keeps one for delete.retention.ms after the first clean that kept it, and a
 * segment is cleaned only once the table holds it. The table keeps the original batches (no delete
 * horizon is stamped there), so the view counts from the records themselves: a tombstone is shown until
 * `delete.retention.ms` after the largest timestamp of its tiered segment (Kafka's rule before KIP-534,
 * with the segment's timestamp), so a consumer that reads the topic within delete.retention.ms of a
 * delete sees it. A segment without timestamps keeps its tombstones.
 */
import { decodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import { iterateBatches } from '../../protocol/record-batch/batches.js';
import { keyOf, OffsetMapBuilder, type OffsetMap } from '../../protocol/record-batch/offset-map.js';
import { rewriteBatch } from '../../protocol/record-batch/rewrite.js';
import type { KafkaRecord } from '../../protocol/record-batch/records.js';
import type { RemoteFetchResult } from './api.js';
import { segmentFor, type PartitionManifest } from './partition-manifest.js';

export interface CompactedViewSettings {
  /** `delete.retention.ms` of the topic. */
  readonly deleteRetentionMs: number;
}

/** What the view reads of the topic's table (IcebergTopic's Kafka read path and committed history). */
export interface CompactedViewSource {
  manifest(partition: number): PartitionManifest;
  /** The stored batches from `fetchOffset`, as the table rebuilds them. */
  read(partition: number, fetchOffset: number, maxBytes: number, minOneBatch: boolean): Promise<RemoteFetchResult>;
}

/** Which tiered offsets survive compaction, for one partition. */
interface PartitionKeys {
  readonly builder: OffsetMapBuilder;
  map: OffsetMap;
  /** The map covers every batch up to this offset (the committed offset when it was brought up). */
  appliedOffset: number;
}

export interface CompactedBatches {
  /** The surviving batches, concatenated (possibly empty). */
  readonly records: Buffer;
  /** The offset after the last batch looked at. */
  readonly nextOffset: number;
  /** A batch past `upTo` was met: the map must catch up before reading on. */
  readonly stoppedAtLimit: boolean;
}

/** Tiered bytes read per call while the map is built (batches come back whole; this bounds memory only). */
const BUILD_READ_BYTES = 8 << 20;
const EMPTY = Buffer.alloc(0);

/**
 * The compacted view of `records` (concatenated batches in offset order), given the map of the whole
 * range. Batches starting past `upTo` are not looked at (the map does not cover them). `tombstonesGone`
 * says whether the tombstones of the batch at a base offset are past delete.retention.ms.
 */
export function compactBatches(records: Buffer, map: OffsetMap, upTo: number, tombstonesGone: (baseOffset: number) => boolean): CompactedBatches {
  const out: Buffer[] = [];
  let nextOffset = -1;
  for (const { start, end, baseOffset, lastOffset } of iterateBatches(records)) {
    const base = Number(baseOffset);
    if (base > upTo) return { records: Buffer.concat(out), nextOffset: nextOffset < 0 ? base : nextOffset, stoppedAtLimit: true };
    nextOffset = Number(lastOffset) + 1;
    const kept = compactBatch(records, start, end, map, tombstonesGone);
    if (kept !== undefined) out.push(kept);
  }
  return { records: Buffer.concat(out), nextOffset, stoppedAtLimit: false };
}

function compactBatch(buf: Buffer, start: number, end: number, map: OffsetMap, tombstonesGone: (baseOffset: number) => boolean): Buffer | undefined {
  const b = decodeRecordBatch(buf, start, { verifyCrc: false });
  const base = Number(b.baseOffset);
  if (b.isControl || map.undecided.has(base)) return buf.subarray(start, end);
  if (map.aborted.has(base)) return undefined;
  let gone: boolean | undefined;
  const survives = (r: KafkaRecord): boolean => {
    if (r.key === null) return false;
    const latest = map.latest.get(keyOf(r.key));
    if (latest !== undefined && latest > base + r.offsetDelta) return false;
    return r.value !== null || !(gone ??= tombstonesGone(base));
  };
  const kept = b.records.filter(survives);
  if (kept.length === 0) return undefined;
  if (kept.length === b.records.length) return buf.subarray(start, end);
  return rewriteBatch(b, kept);
}

export class CompactedView {
  private readonly partitions = new Map<number, Promise<PartitionKeys | undefined>>();

  constructor(
    private readonly source: CompactedViewSource,
    private settings: CompactedViewSettings,
    private readonly clock: () => number = Date.now,
  ) {}

  /** New settings (delete.retention.ms) apply to the next read; the maps stay. */
  configure(settings: CompactedViewSettings): void {
    this.settings = settings;
  }

  /**
   * The compacted view from `fetchOffset`: the first surviving batches at or after it (reading on through
   * removed ranges), or nothing when no record survives up to the end of the tiered range.
   */
  async read(partition: number, fetchOffset: number, maxBytes: number, minOneBatch: boolean): Promise<RemoteFetchResult> {
    let from = fetchOffset;
    for (;;) {
      const keys = await this.upToDate(partition);
      const r = await this.source.read(partition, from, maxBytes, minOneBatch);
      if (r.records.length === 0) return { records: EMPTY, nextOffset: from };
      const m = this.source.manifest(partition);
      const view = compactBatches(r.records, keys.map, keys.appliedOffset, (base) => this.tombstonesGone(m, base));
      if (view.records.length > 0) return { records: view.records, nextOffset: view.nextOffset };
      // Nothing survived: read on (a batch past the map's range makes the next round bring the map up first).
      if (view.nextOffset <= from && !view.stoppedAtLimit) return { records: EMPTY, nextOffset: from };
      from = Math.max(from, view.nextOffset);
      if (from > this.source.manifest(partition).committedOffset) return { records: EMPTY, nextOffset: from };
    }
  }

  private tombstonesGone(m: PartitionManifest, baseOffset: number): boolean {
    const seg = segmentFor(m, baseOffset);
    if (seg === undefined || seg.maxTimestamp < 0) return false;
    return this.clock() >= seg.maxTimestamp + this.settings.deleteRetentionMs;
  }

  /** The partition's map, brought up to the table's committed offset (one update at a time per partition). */
  private upToDate(partition: number): Promise<PartitionKeys> {
    const before = this.partitions.get(partition) ?? Promise.resolve(undefined);
    const next = before.catch(() => undefined).then((keys) => this.catchUp(partition, keys));
    // A failed update leaves no map: the next read rebuilds it (a half-fed map could misjudge a transaction).
    this.partitions.set(partition, next.catch(() => undefined));
    return next;
  }

  private async catchUp(partition: number, current: PartitionKeys | undefined): Promise<PartitionKeys> {
    const m = this.source.manifest(partition);
    let keys = current;
    if (keys === undefined || m.committedOffset < keys.appliedOffset) {
      const builder = new OffsetMapBuilder();
      keys = { builder, map: builder.finish(), appliedOffset: -1 };
    }
    const target = m.committedOffset;
    if (target <= keys.appliedOffset) return keys;
    let from = keys.appliedOffset + 1;
    while (from <= target) {
      const start = this.source.manifest(partition).logStartOffset;
      if (from < start) from = start; // retention moved the start meanwhile: what lies below is never served
      if (from > target) break;
      const r = await this.source.read(partition, from, BUILD_READ_BYTES, true);
      if (r.records.length === 0 || r.nextOffset <= from) break;
      for (const b of iterateBatches(r.records)) {
        if (Number(b.lastOffset) <= keys.appliedOffset || Number(b.baseOffset) > target) continue;
        keys.builder.add(r.records.subarray(b.start, b.end));
      }
      from = r.nextOffset;
    }
    keys.map = keys.builder.finish();
    keys.appliedOffset = target;
    return keys;
  }
}
