/**
 * Reads and lookups across a partition log's segments (oldest first, the last one active), for the partition
 * log: they take the segment list as it was when the call started, and never change it.
 */
import { LogError } from './errors.js';
import type { RecordLocator, TimestampOffset } from './partition-log.js';
import type { BatchLocation, LogSegment, SegmentRead } from './segment.js';

/** Index of the last segment whose base offset is <= offset, or -1. */
export function floorSegment(segs: readonly LogSegment[], offset: number): number {
  let lo = 0;
  let hi = segs.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if ((segs[mid] as LogSegment).baseOffset <= offset) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

/**
 * Whole batches from the first segment, starting with the one holding `fetchOffset`, that has any below
 * `upper` (see LogSegment.read); undefined when none has. Throws OFFSET_OUT_OF_RANGE when `fetchOffset` lies
 * below the first segment.
 */
export async function readSegments(segs: readonly LogSegment[], fetchOffset: number, maxBytes: number, upper: number, minOneBatch: boolean, allocate: ((bytes: number) => Buffer) | undefined): Promise<SegmentRead | undefined> {
  const from = floorSegment(segs, fetchOffset);
  if (from < 0) {
    // Its segment was deleted while this read started (retention): never answer with a later segment's batches.
    throw new LogError('OFFSET_OUT_OF_RANGE', `offset ${fetchOffset} is below the first segment (${segs[0]?.baseOffset}); its segment was just deleted, fetch again`);
  }
  for (let i = from; i < segs.length; i++) {
    const seg = segs[i] as LogSegment;
    if (seg.baseOffset >= upper) break;
    const r = await seg.read(Math.max(fetchOffset, seg.baseOffset), maxBytes, upper, minOneBatch, allocate);
    if (r !== undefined) return r;
  }
  return undefined;
}

/**
 * The first batch at or after the log start `lso` whose max timestamp is >= `timestamp`, refined to the first
 * such record with a RecordLocator. Undefined when no batch qualifies.
 */
export async function firstAtOrAfter(segs: readonly LogSegment[], lso: number, timestamp: number, locator: RecordLocator | undefined): Promise<TimestampOffset | undefined> {
  for (const seg of segs) {
    if (seg.nextOffset <= lso || seg.maxTimestamp < timestamp) continue;
    const loc = await seg.findByTimestamp(timestamp);
    if (loc === undefined) continue;
    const found = await refine(seg, loc, timestamp, locator);
    return { offset: Math.max(found.offset, lso), timestamp: found.timestamp };
  }
  return undefined;
}

/** The largest timestamp at or after the log start `lso` and the offset carrying it; undefined when none. */
export async function maxTimestamp(segs: readonly LogSegment[], lso: number, locator: RecordLocator | undefined): Promise<TimestampOffset | undefined> {
  let best: LogSegment | undefined;
  for (const seg of segs) {
    if (seg.nextOffset <= lso || seg.maxTimestamp < 0) continue;
    if (best === undefined || seg.maxTimestamp > best.maxTimestamp) best = seg;
  }
  if (best === undefined) return undefined;
  const loc = await best.locate(best.offsetOfMaxTimestamp);
  if (loc === undefined) return undefined;
  const found = await refine(best, loc, best.maxTimestamp, locator);
  return { offset: Math.max(found.offset, lso), timestamp: found.timestamp };
}

/** The first record's timestamp of the batch holding `from` (or of the first batch after it); undefined past the end. */
export async function firstTimestampFrom(segs: readonly LogSegment[], from: number): Promise<number | undefined> {
  for (let i = Math.max(0, floorSegment(segs, from)); i < segs.length; i++) {
    const seg = segs[i] as LogSegment;
    if (seg.nextOffset <= from) continue;
    const loc = await seg.locate(Math.max(from, seg.baseOffset));
    if (loc !== undefined) return seg.firstTimestamp(loc);
  }
  return undefined;
}

/** The exact record for `timestamp` inside the batch at `loc` when a locator is given, else the batch's own. */
async function refine(seg: LogSegment, loc: BatchLocation, timestamp: number, locator: RecordLocator | undefined): Promise<TimestampOffset> {
  if (locator !== undefined) {
    const exact = locator(await seg.readBatch(loc), timestamp);
    if (exact !== undefined) return exact;
  }
  return { offset: loc.baseOffset, timestamp: loc.maxTimestamp };
}
