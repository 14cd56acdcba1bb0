/**
 * Total retention and DeleteRecords on a topic table (IcebergTopic.removeOldest, truncateBefore): the
 * remote log start moves up and what lies below it leaves the table in one snapshot that also names the
 * partition's new history; the objects are deleted after the commit lands. Reaches the table only through
 * `RetentionHost`, which IcebergTopic builds over its internals.
 */
import type { DataFile } from '../../iceberg/data-file.js';
import type { Table } from '../../iceberg/table.js';
import type { SnapshotUpdate } from '../../iceberg/transaction.js';
import type { PartitionManifest, SegmentEntry } from './partition-manifest.js';
import { deletesOf, HIDDEN_MARK } from './topic-runbook.js';
import { isTxnDeletes } from './txn-deletes.js';

/** What retention needs of its topic table. */
export interface RetentionHost {
  table(): Table;
  manifest(partition: number): PartitionManifest;
  /** Runs `fn` in the topic's chain of table-changing operations. */
  serial<T>(fn: () => Promise<T>): Promise<T>;
  commitHistory(update: SnapshotUpdate, next: PartitionManifest): Promise<void>;
  /** Deletes objects that left the history (unless a fetch or the upsert table still holds them). */
  deleteObjects(locations: readonly string[]): Promise<void>;
  /** hide-below.ts for a segment of the partition. */
  hideBelow(partition: number, segment: SegmentEntry, offset: number): Promise<{ deletes: DataFile[]; entry: SegmentEntry; removedData: string[]; removedIndexes: string[] }>;
}

/** Every object of a committed segment: data, index and delete files. */
export function objectsOf(s: SegmentEntry): string[] {
  return [...s.dataFiles, ...s.indexFiles, ...(s.deleteFiles ?? [])];
}

export class TopicRetention {
  constructor(private readonly host: RetentionHost) {}

  /**
   * Total retention for one partition: removes the oldest committed segments that `expired` picks (in order,
   * stopping at the first it keeps), their rows and files in one snapshot, then deletes their objects.
   */
  removeOldest(partition: number, expired: (s: SegmentEntry, remainingBytes: number) => boolean): Promise<number> {
    return this.host.serial(async () => {
      const m = this.host.manifest(partition);
      let bytes = m.segments.reduce((n, s) => n + s.sizeInBytes, 0);
      const doomed: SegmentEntry[] = [];
      for (const s of m.segments) {
        if (!expired(s, bytes)) break;
        doomed.push(s);
        bytes -= s.sizeInBytes;
      }
      if (doomed.length === 0) return 0;
      const last = doomed[doomed.length - 1] as SegmentEntry;
      const kept = m.segments.slice(doomed.length);
      const next: PartitionManifest = { ...m, logStartOffset: Math.max(m.logStartOffset, kept[0]?.baseOffset ?? last.lastOffset + 1), segments: kept };
      const update = this.host.table().newOverwrite();
      // A segment's delete files leave with its data files, in the same commit: no delete file outlives its target.
      for (const s of doomed) for (const f of [...s.dataFiles, ...(s.deleteFiles ?? [])]) update.deleteFile(f);
      // Only control batches: no rows to remove, the snapshot only moves the manifest and log start.
      if (update.isEmpty) update.allowNoFileChanges();
      await this.host.commitHistory(update, next);
      await this.host.deleteObjects(doomed.flatMap(objectsOf));
      return doomed.length;
    });
  }

  /**
   * DeleteRecords below (or across) the remote history: the remote log start moves up to `offset`, segments
   * wholly below it leave the table in the same commit as the new start (data and delete files), then their
   * objects are deleted. When `offset` cuts through a segment, its data files wholly below `offset` leave the
   * same way, and the rows below `offset` of the file it cuts get a position delete file in that commit
   * (replacing the ones an earlier start gave it), so table readers see exactly the records from `offset`
   * on; Kafka fetches still return the whole batch holding `offset`. No-op when the start is already at or
   * past `offset` (so a retry after the commit landed changes nothing).
   */
  truncateBefore(partition: number, offset: number): Promise<void> {
    return this.host.serial(async () => {
      const m = this.host.manifest(partition);
      if (offset <= m.logStartOffset) return;
      const doomed = m.segments.filter((s) => s.lastOffset < offset);
      const kept = m.segments.slice(doomed.length);
      const update = this.host.table().newOverwrite();
      for (const s of doomed) for (const f of [...s.dataFiles, ...(s.deleteFiles ?? [])]) update.deleteFile(f);
      const retired: string[] = [];
      const cut = kept[0];
      if (cut !== undefined && cut.baseOffset < offset) {
        const { deletes, entry, removedData, removedIndexes } = await this.host.hideBelow(partition, cut, offset);
        const fresh = new Set(deletes.map((d) => d.file_path));
        for (const d of deletes) update.addDeleteFile(d);
        // Data files wholly below the new start leave the table, with the delete files an earlier start gave
        // them; their objects (and indexes) are deleted once the commit lands.
        for (const f of removedData) update.deleteFile(f);
        retired.push(...removedData, ...removedIndexes);
        // Ranges an operator hid (topic-runbook.ts) and aborted transactional rows (txn-deletes.ts) stay
        // hidden while their data file stays.
        const hidden: string[] = [];
        for (const f of cut.deleteFiles ?? []) {
          if (fresh.has(f)) continue;
          if ((f.includes(HIDDEN_MARK) || isTxnDeletes(f)) && !removedData.some((d) => deletesOf(d, f))) {
            hidden.push(f);
            continue;
          }
          update.deleteFile(f);
          retired.push(f);
        }
        const { deleteFiles: _old, ...rest } = entry;
        const keptDeletes = [...hidden, ...fresh];
        kept[0] = keptDeletes.length > 0 ? { ...rest, deleteFiles: keptDeletes } : rest;
      }
      const next: PartitionManifest = { ...m, logStartOffset: offset, segments: kept };
      if (update.isEmpty) update.allowNoFileChanges();
      await this.host.commitHistory(update, next);
      await this.host.deleteObjects([...doomed.flatMap(objectsOf), ...retired]);
    });
  }
}
