/**
 * What a topic's table holds, read from its metadata for metrics: file and record counts from the current
 * snapshot's summary (the spec's `total-*` keys), the manifests from its manifest list, and the bytes of the
 * live data files. The summary's `total-files-size` counts delete files too, so while the table has delete
 * files the data bytes come from the manifests instead. Whatever needs a read is computed once per
 * snapshot and kept, so a scrape between commits reads nothing.
 */
import type { FileIO } from '../../iceberg/io/file-io.js';
import { currentSnapshot, type TableMetadata } from '../../iceberg/table-metadata.js';
import { liveFiles, snapshotManifests } from '../../iceberg/transaction.js';
import type { TableStats } from './api.js';

export class TableStatsReader {
  /** By table location: the stats of the snapshot they were computed for. */
  private readonly cache = new Map<string, { snapshotId: bigint | undefined; stats: Promise<TableStats> }>();

  constructor(private readonly io: FileIO) {}

  /** The stats of `metadata`'s current snapshot (`table` names it in them). */
  read(table: string, metadata: TableMetadata): Promise<TableStats> {
    const snap = currentSnapshot(metadata);
    const id = snap?.['snapshot-id'];
    const hit = this.cache.get(metadata.location);
    if (hit !== undefined && hit.snapshotId === id) {
      // Snapshot counts change without a new current snapshot (expiry): always from the metadata at hand.
      return hit.stats.then((s) => ({ ...s, snapshots: metadata.snapshots.length }));
    }
    const stats = this.compute(table, metadata);
    this.cache.set(metadata.location, { snapshotId: id, stats });
    // A failed read (object store down) is not kept: the next scrape tries again.
    stats.catch(() => {
      if (this.cache.get(metadata.location)?.stats === stats) this.cache.delete(metadata.location);
    });
    return stats;
  }

  /** Forgets a table (dropped). */
  forget(location: string): void {
    this.cache.delete(location);
  }

  private async compute(table: string, metadata: TableMetadata): Promise<TableStats> {
    const snap = currentSnapshot(metadata);
    const empty: TableStats = { table, dataFiles: 0, dataFileBytes: 0, deleteFiles: 0, records: 0, snapshots: metadata.snapshots.length, manifests: 0, lastCommitMs: -1 };
    if (snap === undefined) return empty;
    const total = (key: string): number | undefined => {
      const v = Number(snap.summary[key]);
      return Number.isSafeInteger(v) ? v : undefined;
    };
    const manifests = (await snapshotManifests(this.io, snap)).length;
    let dataFiles = total('total-data-files');
    let deleteFiles = total('total-delete-files');
    let records = total('total-records');
    let dataFileBytes = deleteFiles === 0 ? total('total-files-size') : undefined;
    if (dataFiles === undefined || deleteFiles === undefined || records === undefined || dataFileBytes === undefined) {
      // No usable totals (a snapshot written without them, or delete files in the size): count the live files.
      const live = await liveFiles(this.io, metadata);
      dataFiles = live.dataFiles.length;
      deleteFiles = live.deleteFiles.length;
      records = live.dataFiles.reduce((n, e) => n + Number(e.data_file.record_count), 0);
      dataFileBytes = live.dataFiles.reduce((n, e) => n + Number(e.data_file.file_size_in_bytes), 0);
    }
    return { ...empty, dataFiles, dataFileBytes, deleteFiles, records, manifests, lastCommitMs: snap['timestamp-ms'] };
  }
}
