/**
 * One clean of one partition log: which segments may be cleaned (planClean), and the clean itself
 * (cleanPartition), which reads them twice (clean-batches.ts), writes one cleaned segment per group of
 * consecutive segments and swaps each group in (segment-swap.ts, PartitionLog.replaceSegments).
 *
 * The cleanable range, as in Kafka: the closed segments from the log start, never the active one, ending
 * before the first segment that holds the last stable offset (an open transaction is never cleaned past),
 * that has a record younger than min.compaction.lag.ms, or that `mayClean` refuses (a tiered topic's
 * segment that its table does not hold yet: the table keeps every record, so tiering must read the segment
 * before it is cleaned). Segments past the cleaner's checkpoint are dirty; the partition needs a clean when
 * dirty / (clean + dirty) bytes reach min.cleanable.dirty.ratio, when its oldest dirty record has waited
 * max.compaction.lag.ms, or when a tombstone's delete horizon has passed.
 */
import { readFile } from 'node:fs/promises';
import type { PartitionLog } from '../partition-log.js';
import type { LogSegment } from '../segment.js';
import { BatchCleaner, OffsetMapBuilder, type CleanStats } from './clean-batches.js';
import { writeSwap } from './segment-swap.js';

/** A segment may be cleaned (false: not yet, e.g. not tiered yet). */
export type MayClean = (baseOffset: number, lastOffset: number) => boolean | Promise<boolean>;

export interface CleanPlan {
  readonly segments: readonly LogSegment[];
  readonly cleanBytes: number;
  readonly dirtyBytes: number;
  /** dirty / (clean + dirty); 0 when the range is empty. */
  readonly dirtyRatio: number;
  /** How long the oldest dirty record in the range has waited, in ms (0 when none). */
  readonly compactionDelayMs: number;
  /** Why a clean is due, or undefined when none is. */
  readonly reason: 'dirty-ratio' | 'max-compaction-lag' | 'delete-horizon' | undefined;
}

export interface PlanInputs {
  now: number;
  /** Offsets at or beyond this are never cleaned (the partition's last stable offset). */
  lastStableOffset: number;
  /** Offsets below this were cleaned before (the cleaner's checkpoint). */
  firstDirtyOffset: number;
  /** Earliest delete horizon stamped by earlier cleans, if known: a clean is due once it passes. */
  nextDeleteHorizon?: number;
  mayClean?: MayClean;
}

export async function planClean(log: PartitionLog, inputs: PlanInputs): Promise<CleanPlan> {
  const config = log.topicConfig;
  const range: LogSegment[] = [];
  for (const seg of log.cleanableSegments()) {
    if (seg.nextOffset > inputs.lastStableOffset) break;
    if (seg.maxTimestamp >= 0 && inputs.now - seg.maxTimestamp < config.minCompactionLagMs) break;
    if (inputs.mayClean !== undefined && !(await inputs.mayClean(seg.baseOffset, seg.lastOffset))) break;
    range.push(seg);
  }
  let cleanBytes = 0;
  let dirtyBytes = 0;
  let firstDirty: LogSegment | undefined;
  for (const seg of range) {
    if (seg.nextOffset > inputs.firstDirtyOffset) {
      dirtyBytes += seg.size;
      firstDirty ??= seg;
    } else {
      cleanBytes += seg.size;
    }
  }
  const total = cleanBytes + dirtyBytes;
  const dirtyRatio = total === 0 ? 0 : dirtyBytes / total;
  let compactionDelayMs = 0;
  if (firstDirty !== undefined) {
    const ts = await log.firstTimestampFrom(Math.max(inputs.firstDirtyOffset, firstDirty.baseOffset));
    if (ts !== undefined && ts >= 0) compactionDelayMs = Math.max(0, inputs.now - ts);
  }
  let reason: CleanPlan['reason'];
  if (dirtyBytes > 0 && dirtyRatio >= config.minCleanableDirtyRatio) reason = 'dirty-ratio';
  else if (dirtyBytes > 0 && compactionDelayMs > config.maxCompactionLagMs) reason = 'max-compaction-lag';
  else if (total > 0 && inputs.nextDeleteHorizon !== undefined && inputs.nextDeleteHorizon <= inputs.now) reason = 'delete-horizon';
  return { segments: range, cleanBytes, dirtyBytes, dirtyRatio, compactionDelayMs, reason };
}

/** Groups consecutive segments whose total size fits one segment and whose offsets fit int32 deltas. */
export function groupSegments(segments: readonly LogSegment[], maxBytes: number): LogSegment[][] {
  const groups: LogSegment[][] = [];
  let group: LogSegment[] = [];
  let size = 0;
  for (const seg of segments) {
    const first = group[0];
    if (first !== undefined && (size + seg.size > maxBytes || seg.nextOffset - first.baseOffset > 0x7fffffff)) {
      groups.push(group);
      group = [];
      size = 0;
    }
    group.push(seg);
    size += seg.size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

export interface CleanResult {
  readonly stats: CleanStats;
  /** Groups swapped in; fewer than planned when the log changed underneath (retention), then the clean stopped. */
  readonly groupsSwapped: number;
  readonly groupsPlanned: number;
  /** The offset after the cleaned range: the new checkpoint (only if every group was swapped in). */
  readonly cleanedTo: number;
  /** The earliest delete horizon among batches kept with one, Infinity when none. */
  readonly nextDeleteHorizon: number;
}

export interface CleanOptions {
  now: number;
  /** Waits as the I/O throttle requires before `bytes` more are read or written. */
  throttle?: (bytes: number) => Promise<void>;
  /** Test hook: runs after a group's swap file is committed, before it replaces the old segments. */
  afterSwapWritten?: () => Promise<void>;
}

/** Thrown when a planned segment was deleted (retention, DeleteRecords) during the clean: it stops. */
class SegmentGone extends Error {}

async function readSegment(seg: LogSegment, throttle: CleanOptions['throttle']): Promise<Buffer> {
  await throttle?.(seg.size);
  if (seg.retired) throw new SegmentGone();
  try {
    const bytes = await readFile(seg.logPath);
    return bytes.length > seg.size ? bytes.subarray(0, seg.size) : bytes;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && seg.retired) throw new SegmentGone();
    throw err;
  }
}

/**
 * Cleans the planned range of `log`. Stops early, with the groups swapped so far, when retention or
 * DeleteRecords removed a planned segment meanwhile.
 */
export async function cleanPartition(log: PartitionLog, plan: CleanPlan, options: CleanOptions): Promise<CleanResult> {
  const config = log.topicConfig;
  const builder = new OffsetMapBuilder();
  const groups = groupSegments(plan.segments, config.segmentBytes);
  const end = plan.segments[plan.segments.length - 1];
  const result = (stats: CleanStats, swapped: number, nextDeleteHorizon: number): CleanResult => ({
    stats,
    groupsSwapped: swapped,
    groupsPlanned: groups.length,
    cleanedTo: end === undefined ? 0 : end.nextOffset,
    nextDeleteHorizon,
  });
  try {
    for (const seg of plan.segments) builder.add(await readSegment(seg, options.throttle));
  } catch (err) {
    if (err instanceof SegmentGone) return result(new BatchCleaner(builder.finish(), options.now, 0).stats, 0, Infinity);
    throw err;
  }
  const cleaner = new BatchCleaner(builder.finish(), options.now, config.deleteRetentionMs);
  let swapped = 0;
  for (const group of groups) {
    const parts: Buffer[] = [];
    try {
      for (const seg of group) parts.push(cleaner.clean(await readSegment(seg, options.throttle)));
    } catch (err) {
      if (err instanceof SegmentGone) break;
      throw err;
    }
    const data = Buffer.concat(parts);
    await options.throttle?.(data.length);
    const first = group[0] as LogSegment;
    const last = group[group.length - 1] as LogSegment;
    const range = { base: first.baseOffset, end: last.nextOffset };
    const swapPath = await writeSwap(log.dir, range, data);
    await options.afterSwapWritten?.();
    if (!(await log.replaceSegments(group, swapPath, range))) break;
    swapped++;
  }
  return result(cleaner.stats, swapped, cleaner.nextDeleteHorizon);
}
