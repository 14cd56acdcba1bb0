/**
 * ListOffsets by timestamp and MAX_TIMESTAMP over a partition's remote history (the segments in the table),
 * with Kafka's answers: control records (transaction markers) count, LogAppendTime batches count every
 * record at the batch's max timestamp, and nothing below the remote log start counts. Segments are chosen by
 * the max timestamps the manifest keeps, and read batch by batch through `read` (the Kafka path's fetch from
 * the table), so a lookup reads as little as it can.
 */
import { decodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import { iterateBatches } from '../../protocol/record-batch/batches.js';
import type { PartitionManifest, SegmentEntry } from './partition-manifest.js';
import type { RemoteFetchResult } from './api.js';

export interface TimestampOffset {
  readonly offset: number;
  readonly timestamp: number;
}

/** Reads the partition's remote batches from `fetchOffset` (at least one batch, up to 1 MiB). */
export type ReadFrom = (fetchOffset: number) => Promise<RemoteFetchResult>;

/**
 * ListOffsets by timestamp over the remote history: the first record (from the remote log start) whose
 * timestamp is >= `timestamp`, a control record (transaction marker) included, as Kafka and the hot log
 * answer. Segments whose max timestamp is below it are skipped without reading; the first candidate
 * segment is read batch by batch from the table. LogAppendTime batches count every record at the batch's
 * max timestamp, as Kafka does.
 */
export async function offsetForTimestamp(m: PartitionManifest, read: ReadFrom, timestamp: number): Promise<TimestampOffset | undefined> {
  for (const s of m.segments) {
    if (s.lastOffset < m.logStartOffset || (s.maxTimestamp >= 0 && s.maxTimestamp < timestamp)) continue;
    let from = Math.max(s.baseOffset, m.logStartOffset);
    while (from <= s.lastOffset) {
      const r = await read(from);
      if (r.records.length === 0 || r.nextOffset <= from) break;
      const found = firstAtOrAfter(r.records, timestamp, m.logStartOffset);
      if (found !== undefined) return found;
      from = r.nextOffset;
    }
  }
  return undefined;
}

/**
 * ListOffsets MAX_TIMESTAMP over the remote history from the remote log start: the largest timestamp of a
 * record (control records included, as in Kafka), and the earliest offset carrying it (Kafka's rule on
 * ties). Segments are visited by their max timestamp, largest first, and read until no unread segment can
 * beat what was found; a segment the start cuts through is read from the start, so records below it do
 * not count.
 */
export async function maxTimestampOffset(m: PartitionManifest, read: ReadFrom): Promise<TimestampOffset | undefined> {
  const candidates = m.segments.filter((s) => s.lastOffset >= m.logStartOffset && s.maxTimestamp >= 0).sort((a, b) => b.maxTimestamp - a.maxTimestamp || a.baseOffset - b.baseOffset);
  let best: TimestampOffset | undefined;
  for (const s of candidates) {
    if (best !== undefined && (s.maxTimestamp < best.timestamp || (s.maxTimestamp === best.timestamp && s.baseOffset > best.offset))) break;
    const found = await maxInSegment(read, s, m.logStartOffset);
    if (found !== undefined && (best === undefined || found.timestamp > best.timestamp || (found.timestamp === best.timestamp && found.offset < best.offset))) best = found;
  }
  return best;
}

async function maxInSegment(read: ReadFrom, s: SegmentEntry, logStart: number): Promise<TimestampOffset | undefined> {
  let best: TimestampOffset | undefined;
  let from = Math.max(s.baseOffset, logStart);
  while (from <= s.lastOffset) {
    const r = await read(from);
    if (r.records.length === 0 || r.nextOffset <= from) break;
    for (const b of iterateBatches(r.records)) {
      const batch = decodeRecordBatch(r.records, b.start, { verifyCrc: false });
      if (Number(batch.baseOffset) > s.lastOffset) continue;
      const base = Number(batch.baseOffset);
      for (const rec of batch.records) {
        const offset = base + rec.offsetDelta;
        const ts = batch.timestampType === 'log-append' ? Number(batch.maxTimestamp) : Number(batch.baseTimestamp) + rec.timestampDelta;
        if (offset < logStart || offset > s.lastOffset) continue;
        if (best === undefined || ts > best.timestamp) best = { offset, timestamp: ts };
        // Nothing in the segment is later than its max timestamp, and this is its earliest record carrying it.
        if (ts >= s.maxTimestamp) return best;
      }
    }
    from = r.nextOffset;
  }
  return best;
}

/** The first data record in `batches` at or after `minOffset` whose timestamp is >= `timestamp`. */
function firstAtOrAfter(batches: Buffer, timestamp: number, minOffset: number): TimestampOffset | undefined {
  for (const b of iterateBatches(batches)) {
    const batch = decodeRecordBatch(batches, b.start, { verifyCrc: false });
    // Control batches count, as in Kafka's segment search and in the hot log: a marker can be the answer.
    if (Number(batch.maxTimestamp) < timestamp) continue;
    const base = Number(batch.baseOffset);
    for (const r of batch.records) {
      const offset = base + r.offsetDelta;
      const ts = batch.timestampType === 'log-append' ? Number(batch.maxTimestamp) : Number(batch.baseTimestamp) + r.timestampDelta;
      if (offset >= minOffset && ts >= timestamp) return { offset, timestamp: ts };
    }
  }
  return undefined;
}
