/**
 * The committed remote history of one Kafka partition: its segments (offset range, max timestamp, data files,
 * index files) and its remote log start offset. Each commit writes a fresh manifest object for every
 * partition it changes, `<table>/kafka-index/partition=<p>/segments-<uuid>.json`, and names it in the snapshot
 * summary; so the data files, the offset index and this list become visible in the same Iceberg commit, and
 * a broker with an empty disk recovers a partition's remote history from the table alone.
 *
 * A segment the log start cuts through (DeleteRecords) lists `deleteFiles`: position delete files, committed
 * with the same snapshot as the start, hiding its rows below the start from table readers. At most one of
 * those per data file: a later start replaces them in its commit. A segment may also list an operator's
 * hides (`floe table hide`, topic-runbook.ts, named `-hidden-<from>-<to>`), any number per data file, which
 * a later start keeps, and the deletes of transactional rows (txn-deletes.ts: `-aborted-txns`, or
 * `-open-txns` while a transaction in it is open, replaced by a later commit), which a later start keeps
 * too. All of them leave the table with their data file.
 *
 * Snapshot summary properties (per Kafka partition p):
 *   floe.kafka.committed-offset.<p>   highest offset committed to the table (Redpanda's idempotence key)
 *   floe.kafka.segments.<p>           location of the partition's manifest
 * A manifest written by a commit that did not land is never named by a summary, so it is ignored.
 */
import { randomUUID } from 'node:crypto';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { latestSummaryProperty, type SnapshotUpdate } from '../../iceberg/transaction.js';
import { ancestorsOf, type TableMetadata } from '../../iceberg/table-metadata.js';
import { TieringError, type RemoteLogSegmentMetadata, type TopicPartitionId } from './api.js';

export const COMMITTED_OFFSET_PREFIX = 'floe.kafka.committed-offset.';
export const SEGMENTS_PREFIX = 'floe.kafka.segments.';
const FORMAT_VERSION = 1;

/** A committed segment as the partition's manifest lists it: the remote metadata without its topic-partition. */
export type SegmentEntry = Omit<RemoteLogSegmentMetadata, keyof TopicPartitionId>;

export interface PartitionManifest {
  readonly partition: number;
  /** First offset held remotely; moves up with total retention. */
  readonly logStartOffset: number;
  /** Highest committed offset, -1 when nothing was ever committed. */
  readonly committedOffset: number;
  /** Committed segments in offset order. */
  readonly segments: readonly SegmentEntry[];
}

export function emptyManifest(partition: number): PartitionManifest {
  return { partition, logStartOffset: 0, committedOffset: -1, segments: [] };
}

export function manifestLocation(tableLocation: string, partition: number): string {
  return `${tableLocation.replace(/\/+$/, '')}/kafka-index/partition=${partition}/segments-${randomUUID()}.json`;
}

export function serializeManifest(m: PartitionManifest): Buffer {
  return Buffer.from(JSON.stringify({ 'format-version': FORMAT_VERSION, ...m }));
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

export function parseManifest(bytes: Buffer, where: string): PartitionManifest {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new TieringError('CORRUPT_MANIFEST', `${where} is not JSON; restore it from a backup or re-tier the partition`, { cause: err });
  }
  const bad = (what: string): never => {
    throw new TieringError('CORRUPT_MANIFEST', `${where}: ${what}; restore it from a backup or re-tier the partition`);
  };
  if (typeof json !== 'object' || json === null) return bad('not an object');
  const o = json as Record<string, unknown>;
  if (o['format-version'] !== FORMAT_VERSION) bad(`format-version ${String(o['format-version'])} is not ${FORMAT_VERSION}`);
  const { partition, logStartOffset, committedOffset, segments } = o;
  if (!isInt(partition) || !isInt(logStartOffset) || !isInt(committedOffset) || !Array.isArray(segments)) return bad('missing partition, logStartOffset, committedOffset or segments');
  const parsed: SegmentEntry[] = segments.map((s: unknown, i) => {
    const e = (typeof s === 'object' && s !== null ? s : {}) as Record<string, unknown>;
    const { baseOffset, lastOffset, maxTimestamp, sizeInBytes, dataFiles, indexFiles, deleteFiles } = e;
    if (!isInt(baseOffset) || !isInt(lastOffset) || !isInt(maxTimestamp) || !isInt(sizeInBytes) || !isStrings(dataFiles) || !isStrings(indexFiles)) {
      return bad(`segment ${i} is malformed`);
    }
    // deleteFiles: absent in manifests written before position deletes existed (same format version: optional).
    if (deleteFiles !== undefined && !isStrings(deleteFiles)) return bad(`segment ${i} has malformed deleteFiles`);
    return deleteFiles === undefined || deleteFiles.length === 0
      ? { baseOffset, lastOffset, maxTimestamp, sizeInBytes, dataFiles, indexFiles }
      : { baseOffset, lastOffset, maxTimestamp, sizeInBytes, dataFiles, indexFiles, deleteFiles };
  });
  return { partition, logStartOffset, committedOffset, segments: parsed };
}

/** The partitions a table's summaries know about, with their manifest locations. */
export function manifestLocations(metadata: TableMetadata): Map<number, string> {
  const out = new Map<number, string>();
  const keys = new Set<string>();
  for (const s of metadata.snapshots) for (const k of Object.keys(s.summary)) if (k.startsWith(SEGMENTS_PREFIX)) keys.add(k);
  for (const k of keys) {
    const p = Number(k.slice(SEGMENTS_PREFIX.length));
    const loc = latestSummaryProperty(metadata, k);
    if (Number.isSafeInteger(p) && loc !== undefined && loc !== '') out.set(p, loc);
  }
  return out;
}

/**
 * A partition that has not changed for this many snapshots is named again by the next Floe commit (see
 * `carryHistory`), so the current history is always within the newest snapshots: snapshot expiry can keep
 * those (`historySnapshots`) and drop the rest, while each summary names only a few partitions.
 */
export const RENAME_AFTER_SNAPSHOTS = 16;

/**
 * For each partition the table's summaries know, how many snapshots back from the current one (0 = the
 * current snapshot) its history was last named; partitions named only outside the current ancestry are
 * left out.
 */
export function historyDepths(metadata: TableMetadata): Map<number, number> {
  const out = new Map<number, number>();
  let depth = 0;
  for (const s of ancestorsOf(metadata, metadata['current-snapshot-id'])) {
    for (const k of Object.keys(s.summary)) {
      if (!k.startsWith(SEGMENTS_PREFIX)) continue;
      const p = Number(k.slice(SEGMENTS_PREFIX.length));
      if (Number.isSafeInteger(p) && !out.has(p)) out.set(p, depth);
    }
    depth++;
  }
  return out;
}

/**
 * Stores `m` as a fresh manifest object of its partition and names it, with the partition's committed
 * offset, in the summary of `update`: once that commit lands, `m` is the partition's committed history.
 */
export async function nameHistory(io: FileIO, tableLocation: string, update: SnapshotUpdate, m: PartitionManifest): Promise<void> {
  const loc = manifestLocation(tableLocation, m.partition);
  await io.put(loc, serializeManifest(m));
  update.set(COMMITTED_OFFSET_PREFIX + m.partition, String(m.committedOffset)).set(SEGMENTS_PREFIX + m.partition, loc);
}

/**
 * Names again, in the summary of `update` (a commit on `metadata`), every partition but the `changed` ones
 * whose history was last named RENAME_AFTER_SNAPSHOTS or more snapshots ago. So the current history of every
 * partition is always named within the newest snapshots, and snapshot expiry may drop everything older (see
 * `historySnapshots`) without losing a partition that has not changed for a while, while each summary stays
 * small.
 */
export function carryHistory(update: SnapshotUpdate, metadata: TableMetadata, changed: Iterable<number>): void {
  const skip = new Set(changed);
  for (const [p, depth] of historyDepths(metadata)) {
    if (skip.has(p) || depth < RENAME_AFTER_SNAPSHOTS - 1) continue;
    const loc = latestSummaryProperty(metadata, SEGMENTS_PREFIX + p);
    const offset = latestSummaryProperty(metadata, COMMITTED_OFFSET_PREFIX + p);
    if (loc !== undefined) update.set(SEGMENTS_PREFIX + p, loc);
    if (offset !== undefined) update.set(COMMITTED_OFFSET_PREFIX + p, offset);
  }
}

/**
 * The snapshots the Kafka path needs: the current one and its ancestors back to the oldest that names a
 * partition's current history. Snapshot expiry must keep them, or a partition's history would be lost.
 */
export function historySnapshots(metadata: TableMetadata): Set<bigint> {
  const deepest = Math.max(0, ...historyDepths(metadata).values());
  const out = new Set<bigint>();
  let depth = 0;
  for (const s of ancestorsOf(metadata, metadata['current-snapshot-id'])) {
    if (depth++ > deepest) break;
    out.add(s['snapshot-id']);
  }
  return out;
}

/** The highest committed offset of a partition in a table version (-1 when none). */
export function committedOffsetIn(metadata: TableMetadata, partition: number): number {
  const v = latestSummaryProperty(metadata, COMMITTED_OFFSET_PREFIX + partition);
  return v === undefined ? -1 : Number(v);
}

/** Loads every partition's committed manifest named by the table's current snapshot ancestry. */
export async function loadManifests(io: FileIO, metadata: TableMetadata): Promise<Map<number, PartitionManifest>> {
  const out = new Map<number, PartitionManifest>();
  for (const [p, loc] of manifestLocations(metadata)) out.set(p, parseManifest(await io.get(loc), loc));
  return out;
}

/** Converts an entry to the plugin's metadata type. */
export function toMetadata(topic: string, partition: number, e: SegmentEntry): RemoteLogSegmentMetadata {
  return { topic, partition, ...e };
}

/** The segment holding `offset`, or the first segment after it; undefined past the end. */
export function segmentFor(m: PartitionManifest, offset: number): SegmentEntry | undefined {
  const segs = m.segments;
  let lo = 0;
  let hi = segs.length - 1;
  let found: SegmentEntry | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const s = segs[mid] as SegmentEntry;
    if (s.lastOffset >= offset) {
      found = s;
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  return found;
}
