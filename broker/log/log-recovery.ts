/**
 * Recovery of a partition's log directory when it opens: finishes or discards a log cleaner swap that a
 * crash interrupted, removes temp files and indexes whose log is gone, opens every segment (after an
 * unclean shutdown the last one is scanned and truncated after its last valid batch, and segments after a
 * corrupt one are deleted, as Kafka does), and reads the log start checkpoint.
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LogConfig } from './config.js';
import { LogError } from './errors.js';
import { recoverSwaps } from './cleaner/segment-swap.js';
import {
  CLEAN_SHUTDOWN_FILE,
  COMPACTED_SUFFIX,
  INDEX_SUFFIX,
  LOG_START_CHECKPOINT_FILE,
  LOG_SUFFIX,
  TIME_INDEX_SUFFIX,
  TMP_SUFFIX,
  parseSegmentFileName,
  segmentFileName,
  syncDir,
  unlinkIfExists,
} from './files.js';
import { LogSegment } from './segment.js';

/** What open() found on disk. */
export interface RecoveryReport {
  cleanShutdown: boolean;
  segments: number;
  truncatedBytes: number;
  rebuiltIndexes: number;
  /** Segments deleted because an earlier segment was corrupt (their offsets can't be trusted). */
  deletedSegments: number;
  /** Log cleaner swaps that a crash interrupted and open() finished. */
  finishedSwaps: number;
}

export interface RecoveredLog {
  readonly segments: LogSegment[];
  readonly startOffset: number;
  readonly report: RecoveryReport;
}

/** Opens (or creates) the log directory `dir`, recovering it if the last shutdown was not clean. */
export async function recoverLog(dir: string, config: LogConfig, clock: () => number): Promise<RecoveredLog> {
  await mkdir(dir, { recursive: true });
  // A log cleaner's swap interrupted by a crash is finished (or its unfinished output discarded) first.
  const swapped = await recoverSwaps(dir, await readdir(dir));
  const names = await readdir(dir);
  const bases: number[] = [];
  for (const name of names) {
    if (name.endsWith(TMP_SUFFIX)) await unlinkIfExists(join(dir, name));
    const base = parseSegmentFileName(name, LOG_SUFFIX);
    if (base !== undefined) bases.push(base);
  }
  bases.sort((a, b) => a - b);
  // Index files whose log is gone (a deletion interrupted by a crash).
  for (const name of names) {
    const base = parseSegmentFileName(name, INDEX_SUFFIX) ?? parseSegmentFileName(name, TIME_INDEX_SUFFIX) ?? parseSegmentFileName(name, COMPACTED_SUFFIX);
    if (base !== undefined && !bases.includes(base)) await unlinkIfExists(join(dir, name));
  }
  const cleanShutdown = names.includes(CLEAN_SHUTDOWN_FILE);
  if (cleanShutdown) {
    // Removed before any append, so a crash from now on is seen as unclean by the next open.
    await unlinkIfExists(join(dir, CLEAN_SHUTDOWN_FILE));
    await syncDir(dir);
  }
  const report: RecoveryReport = { cleanShutdown, segments: 0, truncatedBytes: 0, rebuiltIndexes: 0, deletedSegments: 0, finishedSwaps: swapped };
  const segments: LogSegment[] = [];
  try {
    for (let i = 0; i < bases.length; i++) {
      const base = bases[i] ?? 0;
      const isLast = i === bases.length - 1;
      const prev = segments[segments.length - 1];
      if (prev !== undefined && base < prev.nextOffset) {
        throw new LogError('KAFKA_STORAGE_ERROR', `segment ${base} in ${dir} overlaps the previous segment (ends at ${prev.nextOffset}); move the partition directory aside and restart`);
      }
      const compacted = names.includes(segmentFileName(base, COMPACTED_SUFFIX));
      const { segment, truncatedBytes, rebuilt } = await LogSegment.open(dir, base, config.indexIntervalBytes, !cleanShutdown && isLast, compacted);
      segments.push(segment);
      report.truncatedBytes += truncatedBytes;
      if (rebuilt) report.rebuiltIndexes++;
      if (truncatedBytes > 0 && !isLast) {
        // Like Kafka: after a corrupt batch, later segments can't be trusted to follow on.
        for (const later of bases.slice(i + 1)) {
          for (const suffix of [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, COMPACTED_SUFFIX]) {
            await unlinkIfExists(join(dir, String(later).padStart(20, '0') + suffix));
          }
          report.deletedSegments++;
        }
        break;
      }
    }
    const checkpoint = await readCheckpoint(join(dir, LOG_START_CHECKPOINT_FILE));
    if (segments.length === 0) segments.push(await LogSegment.create(dir, checkpoint ?? 0, config.indexIntervalBytes));
    const first = segments[0] as LogSegment;
    const active = segments[segments.length - 1] as LogSegment;
    const startOffset = Math.min(Math.max(checkpoint ?? 0, first.baseOffset), active.nextOffset);
    if (!active.isEmpty) {
      const firstBatch = await active.locate(active.baseOffset);
      const ts = firstBatch?.maxTimestamp ?? -1;
      active.rollBaseMs = ts >= 0 ? Math.min(ts, clock()) : clock();
    }
    report.segments = segments.length;
    return { segments, startOffset, report };
  } catch (err) {
    await Promise.allSettled(segments.map((s) => s.close()));
    throw err;
  }
}

async function readCheckpoint(path: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const n = Number(text.trim());
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new LogError('KAFKA_STORAGE_ERROR', `${path} holds "${text.trim()}", not an offset; fix or delete the file and restart`);
  }
  return n;
}
