/**
 * The recovery runbook's table operations on one topic table, for a single copy: nothing here deletes or
 * rewrites a data file, so whatever a Kafka consumer can read stays readable.
 *
 * - hideRows(p, A, B): hides the rows of offsets [A, B] of partition p from table readers with position
 *   delete files (one per data file the range touches, named from the data file and the range, so a retry
 *   rewrites the same object), committed with the partition's history in one snapshot. The segment lists
 *   them in `deleteFiles`, which keeps them across compaction (a segment with deletes is never merged),
 *   snapshot expiry (the current snapshot references them) and DeleteRecords (only its own
 *   `-deletes-below-` files are replaced); they leave the table with their data file (retention).
 *   Kafka fetches read the data files and ignore position deletes: consumers still get every byte.
 * - rollbackTo(S): makes the table show what snapshot S showed, as a new snapshot, only when that loses
 *   nothing the Kafka log needs. The rule (simple and safe): for every partition, S's history must list the
 *   same segments with the same data and offset-index files, the same log start and committed offset as the
 *   current one. Such a rollback only undoes hides (position deletes); anything else is refused with the
 *   offsets it would take from Kafka consumers.
 * - snapshotInfos(): the snapshots with the committed offsets each one records.
 */
import type { DataFile, PartitionData } from '../../iceberg/data-file.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { writePositionDeletes } from '../../iceberg/position-deletes.js';
import { ancestorsOf, type TableMetadata } from '../../iceberg/table-metadata.js';
import type { Table } from '../../iceberg/table.js';
import type { SnapshotUpdate } from '../../iceberg/transaction.js';
import { decodeSegmentIndex, type SegmentIndex } from '../offset-index/format.js';
import { padOffset, resolveLocation } from '../offset-index/location.js';
import { TieringError, type TableSnapshotInfo } from './api.js';
import { COMMITTED_OFFSET_PREFIX, parseManifest, SEGMENTS_PREFIX, type PartitionManifest, type SegmentEntry } from './partition-manifest.js';

/** What the runbook needs of its topic table (IcebergTopic's internals). */
export interface RunbookHost {
  readonly topic: string;
  readonly io: FileIO;
  table(): Table;
  manifest(partition: number): PartitionManifest;
  partitions(): number[];
  serial<T>(fn: () => Promise<T>): Promise<T>;
  commitHistory(update: SnapshotUpdate, next: PartitionManifest): Promise<void>;
  rowsBelow(partition: number, segment: SegmentEntry, indexLocation: string, index: SegmentIndex, offset: number): Promise<number>;
  partitionTuples(partition: number, segment: SegmentEntry): Promise<Map<string, PartitionData>>;
}

export interface HideResult {
  /** Rows newly hidden (0 when the range was already hidden: a retry). */
  readonly rowsHidden: number;
  readonly deleteFiles: number;
}

export interface RollbackResult {
  /** Partitions whose hidden rows changed (0: the table already showed what S showed). */
  readonly partitionsChanged: number;
}

/** Marks a delete file written by hideRows (DeleteRecords' files are `-deletes-below-`). */
export const HIDDEN_MARK = '-hidden-';

/** Where the position deletes hiding [from, to] of `dataFile` go. */
export function hiddenFileLocation(dataFile: string, from: number, to: number): string {
  return `${dataFile.replace(/\.parquet$/, '')}${HIDDEN_MARK}${padOffset(BigInt(from))}-${padOffset(BigInt(to))}.parquet`;
}

/** Whether `deleteFile` is a hide (or DeleteRecords) delete file of `dataFile` (they are named from it). */
export function deletesOf(dataFile: string, deleteFile: string): boolean {
  return deleteFile.startsWith(dataFile.replace(/\.parquet$/, '') + '-');
}

export class TopicRunbook {
  constructor(private readonly host: RunbookHost) {}

  hideRows(partition: number, from: number, to: number): Promise<HideResult> {
    const { host } = this;
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) {
      return Promise.reject(new TieringError('OFFSET_OUT_OF_RANGE', `hide needs 0 <= from-offset <= to-offset, got ${from}..${to}`));
    }
    return host.serial(async () => {
      const m = host.manifest(partition);
      if (m.segments.length === 0) throw new TieringError('OFFSET_OUT_OF_RANGE', `${host.topic}-${partition} has no rows in its table yet; wait for the first commit (floe table status) and retry`);
      if (to > m.committedOffset) {
        throw new TieringError('OFFSET_OUT_OF_RANGE', `${host.topic}-${partition}: offset ${to} is not in the table yet (committed up to ${m.committedOffset}); wait for the commit (floe table status shows it) and retry`);
      }
      if (from < m.logStartOffset) {
        throw new TieringError('OFFSET_OUT_OF_RANGE', `${host.topic}-${partition}: offset ${from} is below the remote log start ${m.logStartOffset} (those rows are gone already); start the range at ${m.logStartOffset}`);
      }
      const table = host.table();
      const update = table.newRowDelta();
      let rowsHidden = 0;
      let deleteFiles = 0;
      const segments: SegmentEntry[] = [];
      for (const s of m.segments) {
        if (s.lastOffset < from || s.baseOffset > to) {
          segments.push(s);
          continue;
        }
        const tuples = await host.partitionTuples(partition, s);
        const added: string[] = [];
        for (const location of s.indexFiles) {
          const index = decodeSegmentIndex(await host.io.get(location));
          if (index.dataFile === null || index.lastOffset < BigInt(from) || index.baseOffset > BigInt(to)) continue;
          const path = resolveLocation(table.location, index.dataFile.path);
          const start = await host.rowsBelow(partition, s, location, index, from);
          const end = await host.rowsBelow(partition, s, location, index, to + 1);
          if (end <= start) continue;
          const target = hiddenFileLocation(path, from, to);
          if ((s.deleteFiles ?? []).includes(target)) continue; // hidden already (a retry)
          const tuple = tuples.get(path);
          if (tuple === undefined) throw new TieringError('CORRUPT_MANIFEST', `${host.topic}-${partition}: offset index ${location} names data file ${path}, which is not a live data file; re-tier the partition`);
          const del: DataFile = await writePositionDeletes(host.io, target, [{ path, start: BigInt(start), end: BigInt(end) }], { partition: tuple });
          update.addDeleteFile(del);
          added.push(target);
          rowsHidden += end - start;
          deleteFiles++;
        }
        segments.push(added.length === 0 ? s : { ...s, deleteFiles: [...(s.deleteFiles ?? []), ...added] });
      }
      if (deleteFiles === 0) return { rowsHidden: 0, deleteFiles: 0 };
      await host.commitHistory(update, { ...m, segments });
      return { rowsHidden, deleteFiles };
    });
  }

  rollbackTo(snapshotId: string): Promise<RollbackResult> {
    const { host } = this;
    return host.serial(async () => {
      const table = host.table();
      const metadata = table.metadata;
      let id: bigint;
      try {
        id = BigInt(snapshotId);
      } catch {
        throw new TieringError('NOT_FOUND', `snapshot '${snapshotId}' is not a snapshot id; floe table status lists them`);
      }
      const snap = metadata.snapshots.find((s) => s['snapshot-id'] === id);
      if (snap === undefined) throw new TieringError('NOT_FOUND', `table ${host.topic} has no snapshot ${snapshotId} (expired, or never existed); floe table status lists the snapshots kept`);
      if (metadata['current-snapshot-id'] === id) return { partitionsChanged: 0 };
      const plans: { then: PartitionManifest; now: PartitionManifest }[] = [];
      const lost: string[] = [];
      for (const p of host.partitions()) {
        const now = host.manifest(p);
        const location = propertyAsOf(metadata, id, SEGMENTS_PREFIX + p);
        const then = location === undefined || location === '' ? undefined : parseManifest(await host.io.get(location), location);
        const diff = historyDifference(now, then);
        if (diff !== undefined) lost.push(`partition ${p}: offsets ${diff.from}..${diff.to}`);
        else if (then !== undefined) plans.push({ then, now });
      }
      if (lost.length > 0) {
        throw new TieringError(
          'WOULD_LOSE_KAFKA_DATA',
          `rolling table ${host.topic} back to snapshot ${snapshotId} would take records Kafka consumers still read from the table (${lost.join('; ')}): ` +
            'only snapshots with the same offset index as now can be rolled back to (they differ only in hidden rows); hide the bad range with floe table hide instead',
        );
      }
      const thenDeletes = new Map<string, DataFile>();
      for (const e of (await table.files(id)).deleteFiles) thenDeletes.set(e.data_file.file_path, e.data_file);
      let changed = 0;
      for (const { then, now } of plans) {
        const update = table.newOverwrite();
        const segments: SegmentEntry[] = [];
        let differs = false;
        for (const [i, s] of now.segments.entries()) {
          const want = then.segments[i]?.deleteFiles ?? [];
          const have = s.deleteFiles ?? [];
          for (const f of have) {
            if (want.includes(f)) continue;
            update.deleteFile(f);
            differs = true;
          }
          for (const f of want) {
            if (have.includes(f)) continue;
            const file = thenDeletes.get(f);
            if (file === undefined || (await host.io.head(f)) === undefined) {
              throw new TieringError('NOT_FOUND', `delete file ${f} of snapshot ${snapshotId} is gone (expired); that snapshot can no longer be restored`);
            }
            update.addDeleteFile(file);
            differs = true;
          }
          const { deleteFiles: _drop, ...rest } = s;
          segments.push(want.length > 0 ? { ...rest, deleteFiles: [...want] } : rest);
        }
        if (!differs) continue;
        await host.commitHistory(update, { ...now, segments });
        changed++;
      }
      return { partitionsChanged: changed };
    });
  }

  snapshotInfos(): TableSnapshotInfo[] {
    const metadata = this.host.table().metadata;
    const current = metadata['current-snapshot-id'];
    return metadata.snapshots.map((s) => {
      const committedOffsets: Record<string, number> = {};
      for (const a of ancestorsOf(metadata, s['snapshot-id'])) {
        for (const [k, v] of Object.entries(a.summary)) {
          if (!k.startsWith(COMMITTED_OFFSET_PREFIX)) continue;
          const p = k.slice(COMMITTED_OFFSET_PREFIX.length);
          if (!(p in committedOffsets)) committedOffsets[p] = Number(v);
        }
      }
      return {
        snapshotId: String(s['snapshot-id']),
        parentId: s['parent-snapshot-id'] === undefined ? undefined : String(s['parent-snapshot-id']),
        timestampMs: s['timestamp-ms'],
        operation: String(s.summary.operation ?? ''),
        current: s['snapshot-id'] === current,
        committedOffsets,
      };
    });
  }
}

/** A summary property as of snapshot `id` (walking its ancestry). */
function propertyAsOf(metadata: TableMetadata, id: bigint, key: string): string | undefined {
  for (const s of ancestorsOf(metadata, id)) {
    const v = s.summary[key];
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * Where a partition's history at some snapshot (`then`) differs from now in what Kafka reads (segments,
 * their data and offset-index files, log start, committed offset): the offsets affected, or undefined when
 * the two differ at most in delete files.
 */
export function historyDifference(now: PartitionManifest, then: PartitionManifest | undefined): { from: number; to: number } | undefined {
  const end = now.committedOffset;
  if (then === undefined) return now.segments.length === 0 ? undefined : { from: now.logStartOffset, to: end };
  if (then.logStartOffset !== now.logStartOffset) return { from: Math.min(then.logStartOffset, now.logStartOffset), to: end };
  for (let i = 0; i < Math.max(now.segments.length, then.segments.length); i++) {
    const a = now.segments[i];
    const b = then.segments[i];
    if (a === undefined || b === undefined || a.baseOffset !== b.baseOffset || a.lastOffset !== b.lastOffset || !same(a.dataFiles, b.dataFiles) || !same(a.indexFiles, b.indexFiles)) {
      return { from: (a ?? b)?.baseOffset ?? now.logStartOffset, to: Math.max(end, then.committedOffset) };
    }
  }
  if (then.committedOffset !== now.committedOffset) return { from: Math.min(then.committedOffset, now.committedOffset) + 1, to: Math.max(then.committedOffset, now.committedOffset) };
  return undefined;
}

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
