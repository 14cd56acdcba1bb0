/**
 * Which committed segments of a partition compaction merges, with Iceberg's rewrite option semantics
 * (`rewrite_data_files`): files below `min-file-size-bytes` (75 % of the target) are small; a partition is
 * worth compacting once it has `min-input-files` (5) small data files in a run of consecutive segments;
 * outputs stay at or below the target (`write.target-file-size-bytes`, Iceberg's default 512 MiB), well
 * under `max-file-size-bytes` (180 %).
 *
 * Kafka-specific rules:
 * - Only whole segments, consecutive in offset order, are merged: the merged segment replaces them in the
 *   partition's history, so a fetch finds every offset in exactly one segment before and after.
 * - A segment the log start cuts through (it has position deletes, or begins below the start) is left as
 *   it is: its hidden rows stay hidden without rewriting the delete files.
 * - Groups grow geometrically: a group is merged only when its largest segment is at most half of the
 *   group, so a merged segment is rewritten again only once as much new data sits beside it (each byte is
 *   rewritten O(log n) times, not once per new small file as a plain "merge every small file" rule would).
 * - `maxGroupLogBytes` bounds one output segment's log bytes: compaction rebuilds a group into a local
 *   segment file and converts it like tiering, holding about one output file in memory.
 */
import type { PartitionManifest, SegmentEntry } from './partition-manifest.js';

export const TARGET_FILE_SIZE_PROPERTY = 'write.target-file-size-bytes';
export const DEFAULT_TARGET_FILE_SIZE_BYTES = 512 * 1024 * 1024;
export const DEFAULT_MIN_INPUT_FILES = 5;
/** Iceberg's `min-file-size-bytes` and `max-file-size-bytes` defaults, as fractions of the target. */
export const MIN_FILE_SIZE_RATIO = 0.75;
export const MAX_FILE_SIZE_RATIO = 1.8;
export const DEFAULT_MAX_GROUP_LOG_BYTES = 256 * 1024 * 1024;
export const DEFAULT_MAX_GROUPS = 8;

export interface CompactionSettings {
  readonly targetFileSizeBytes: number;
  readonly minFileSizeBytes: number;
  readonly maxFileSizeBytes: number;
  readonly minInputFiles: number;
  /** Log bytes of one output segment at most. */
  readonly maxGroupLogBytes: number;
  /** Output segments of one compaction (one commit) at most. */
  readonly maxGroups: number;
}

export interface CompactionOverrides {
  /** `iceberg.compaction.target.file.size.bytes` when set (> 0); otherwise the table property. */
  readonly targetFileSizeBytes?: number | undefined;
  readonly minInputFiles?: number | undefined;
  readonly maxGroupLogBytes?: number | undefined;
  readonly maxGroups?: number | undefined;
}

/** The settings of a table: its `write.target-file-size-bytes` unless overridden, Iceberg's ratios. */
export function compactionSettings(tableProperties: Readonly<Record<string, string>>, overrides: CompactionOverrides = {}): CompactionSettings {
  const fromTable = Number(tableProperties[TARGET_FILE_SIZE_PROPERTY]);
  const target =
    overrides.targetFileSizeBytes !== undefined && overrides.targetFileSizeBytes > 0
      ? overrides.targetFileSizeBytes
      : Number.isSafeInteger(fromTable) && fromTable > 0
        ? fromTable
        : DEFAULT_TARGET_FILE_SIZE_BYTES;
  return {
    targetFileSizeBytes: target,
    minFileSizeBytes: Math.floor(target * MIN_FILE_SIZE_RATIO),
    maxFileSizeBytes: Math.floor(target * MAX_FILE_SIZE_RATIO),
    minInputFiles: Math.max(2, overrides.minInputFiles ?? DEFAULT_MIN_INPUT_FILES),
    maxGroupLogBytes: Math.max(1, overrides.maxGroupLogBytes ?? DEFAULT_MAX_GROUP_LOG_BYTES),
    maxGroups: Math.max(1, overrides.maxGroups ?? DEFAULT_MAX_GROUPS),
  };
}

/** Consecutive segments merged into one. */
export interface CompactionGroup {
  readonly segments: readonly SegmentEntry[];
  /** Data file bytes of the inputs. */
  readonly dataBytes: number;
  /** Log bytes (sizeInBytes) of the inputs. */
  readonly logBytes: number;
}

/**
 * The groups to merge in `m`, first run first (empty when the partition does not need compaction).
 * `sizeOf` gives a data file's size in bytes.
 */
export function planCompaction(m: PartitionManifest, sizeOf: (dataFile: string) => number, s: CompactionSettings): CompactionGroup[] {
  const runs: { seg: SegmentEntry; bytes: number }[][] = [];
  let run: { seg: SegmentEntry; bytes: number }[] = [];
  for (const seg of m.segments) {
    const sizes = seg.dataFiles.map(sizeOf);
    const eligible = (seg.deleteFiles ?? []).length === 0 && seg.baseOffset >= m.logStartOffset && sizes.every((b) => b < s.minFileSizeBytes);
    if (eligible) {
      run.push({ seg, bytes: sizes.reduce((a, b) => a + b, 0) });
      continue;
    }
    if (run.length > 0) runs.push(run);
    run = [];
  }
  if (run.length > 0) runs.push(run);

  const groups: CompactionGroup[] = [];
  for (const r of runs) {
    if (r.reduce((n, x) => n + x.seg.dataFiles.length, 0) < s.minInputFiles) continue;
    let i = 0;
    while (i < r.length && groups.length < s.maxGroups) {
      let dataBytes = 0;
      let logBytes = 0;
      let largest = 0;
      let j = i;
      while (j < r.length) {
        const x = r[j] as { seg: SegmentEntry; bytes: number };
        if (j > i && (dataBytes + x.bytes > s.targetFileSizeBytes || logBytes + x.seg.sizeInBytes > s.maxGroupLogBytes)) break;
        dataBytes += x.bytes;
        logBytes += x.seg.sizeInBytes;
        largest = Math.max(largest, x.bytes);
        j++;
      }
      if (j - i >= 2 && largest * 2 <= dataBytes) {
        groups.push({ segments: r.slice(i, j).map((x) => x.seg), dataBytes, logBytes });
        i = j;
      } else {
        i++;
      }
    }
    if (groups.length >= s.maxGroups) break;
  }
  return groups;
}
