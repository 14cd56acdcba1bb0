/**
 * The Table API: a table loaded from a catalog, with the operations a writer needs. Data goes in as Arrow
 * (written to Parquet with field ids and metrics), changes go out as snapshots through `commitWithRetry`.
 *
 *   const table = await Table.load(catalog, { namespace: ['kafka'], name: 'orders' }, io);
 *   const file = await table.writeDataFile(arrowTable);
 *   await table.commit(table.newAppend().addFile(file).set('floe.kafka.offsets', '...'));
 */
import { randomUUID } from 'node:crypto';
import * as arrow from 'apache-arrow';
import type { FileIO } from './io/file-io.js';
import { parquetDataFile, type DataFile, type ManifestEntry, type PartitionData } from './data-file.js';
import { writePositionDeletes, type PositionDelete, type PositionDeleteRange } from './position-deletes.js';
import { writeParquet, type ParquetWriteOptions } from './parquet/writer.js';
import { highestFieldId, type Schema } from './schema.js';
import type { Snapshot } from './snapshot.js';
import { currentSchema, currentSnapshot, defaultSpec, type TableMetadata } from './table-metadata.js';
import type { TableRequirement, TableUpdate } from './table-metadata-builder.js';
import { commitWithRetry, type CommitRetryOptions } from './commit.js';
import { liveFiles, SnapshotUpdate, type PreparedCommit } from './transaction.js';
import { CatalogError, type Catalog, type CatalogErrorCode, type LoadTableResult, type TableIdentifier } from './catalog/catalog.js';

const DEFINITE_FAILURES = new Set<CatalogErrorCode>(['NO_SUCH_TABLE', 'NO_SUCH_NAMESPACE', 'FORBIDDEN', 'NOT_AUTHORIZED', 'INVALID_REQUEST', 'INVALID_IDENTIFIER', 'UNSUPPORTED']);
import { IcebergError } from './types.js';

export { DELETE_FILE_PATH_ID, DELETE_POS_ID, POSITION_DELETE_SCHEMA, type PositionDelete, type PositionDeleteRange } from './position-deletes.js';

export interface WriteFileOptions extends ParquetWriteOptions {
  /** Where to write; default `<location>/data/<uuid>.parquet`. */
  readonly location?: string;
  /** Partition tuple (by partition field name); default `{}` (unpartitioned). */
  readonly partition?: PartitionData;
}

export class Table {
  private constructor(
    readonly catalog: Catalog,
    readonly id: TableIdentifier,
    readonly io: FileIO,
    private loaded: LoadTableResult,
    private readonly now: () => number,
  ) {}

  static async load(catalog: Catalog, id: TableIdentifier, io: FileIO, options: { now?: () => number } = {}): Promise<Table> {
    return new Table(catalog, id, io, await catalog.loadTable(id), options.now ?? Date.now);
  }

  get metadata(): TableMetadata {
    return this.loaded.metadata;
  }

  get metadataLocation(): string {
    return this.loaded.metadataLocation;
  }

  get location(): string {
    return this.loaded.metadata.location;
  }

  schema(): Schema {
    return currentSchema(this.metadata);
  }

  currentSnapshot(): Snapshot | undefined {
    return currentSnapshot(this.metadata);
  }

  async refresh(): Promise<this> {
    this.loaded = await this.catalog.loadTable(this.id);
    return this;
  }

  /** Live data and delete files of the current snapshot (or of `snapshotId`). */
  files(snapshotId?: bigint): Promise<{ dataFiles: ManifestEntry[]; deleteFiles: ManifestEntry[] }> {
    return liveFiles(this.io, this.metadata, snapshotId);
  }

  newAppend(): SnapshotUpdate {
    return new SnapshotUpdate({ io: this.io, now: this.now });
  }

  /** Replace files: `deleteFile` the old ones, `addFile` the new ones. */
  newOverwrite(): SnapshotUpdate {
    return new SnapshotUpdate({ io: this.io, now: this.now });
  }

  /** Replace data files by others holding the same rows (compaction): a 'replace' snapshot. */
  newRewrite(): SnapshotUpdate {
    return new SnapshotUpdate({ io: this.io, now: this.now }).asRewrite();
  }

    /** Add delete files (and optionally data files) in one snapshot. */
  newRowDelta(): SnapshotUpdate {
    return new SnapshotUpdate({ io: this.io, now: this.now });
  }

  /** Commits a snapshot update, retrying against the refreshed table on conflicts. Returns the new snapshot. */
  async commit(update: SnapshotUpdate, options: CommitRetryOptions = {}): Promise<Snapshot> {
    try {
      const out = await commitWithRetry(this.catalog, this.id, (base) => update.prepare(base.metadata), {
        ...options,
        onConflict: async (discarded: PreparedCommit) => {
          for (const f of discarded.attemptFiles) await this.io.delete(f).catch(() => undefined);
        },
      });
      this.loaded = { ...this.loaded, metadataLocation: out.metadataLocation, metadata: out.metadata };
      // Manifests this update wrote that the committed snapshot does not list (merged into another).
      for (const f of out.prepared.supersededFiles) await this.io.delete(f).catch(() => undefined);
      return out.prepared.snapshot;
    } catch (err) {
      // Only when the commit certainly did not land: an ambiguous failure (network, 5xx, unknown state) may
      // have committed, and then these manifests are the table's.
      if (err instanceof IcebergError || (err instanceof CatalogError && DEFINITE_FAILURES.has(err.code))) await update.abandon();
      throw err;
    }
  }

  /**
   * Commits metadata-only updates built from the current metadata (schema evolution, properties), retried
   * on conflicts. `build` returns the requirements it relies on and the updates.
   */
  async commitUpdates(build: (base: TableMetadata) => { requirements: TableRequirement[]; updates: TableUpdate[] }, options: CommitRetryOptions = {}): Promise<void> {
    const out = await commitWithRetry(this.catalog, this.id, async (base) => build(base.metadata), options);
    this.loaded = { ...this.loaded, metadataLocation: out.metadataLocation, metadata: out.metadata };
  }

  /**
   * Makes `schema` current: it must be a valid evolution of the current schema (new columns with fresh
   * ids, promotions such as int -> long), which the metadata builder checks.
   */
  async updateSchema(schema: Schema, options: CommitRetryOptions = {}): Promise<void> {
    await this.commitUpdates(
      (base) => ({
        requirements: [
          { type: 'assert-current-schema-id', 'current-schema-id': base['current-schema-id'] },
          { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': base['last-column-id'] },
        ],
        updates: [
          { action: 'add-schema', schema, 'last-column-id': Math.max(base['last-column-id'], highestFieldId(schema)) },
          { action: 'set-current-schema', 'schema-id': -1 },
        ],
      }),
      options,
    );
  }

  async setProperties(updates: Readonly<Record<string, string>>): Promise<void> {
    await this.commitUpdates(() => ({ requirements: [], updates: [{ action: 'set-properties', updates }] }));
  }

  /** Writes Arrow data as a Parquet data file of the current schema; returns its DataFile (not yet committed). */
  async writeDataFile(data: arrow.Table | Iterable<arrow.RecordBatch>, options: WriteFileOptions = {}): Promise<DataFile> {
    const location = options.location ?? `${this.location}/data/${randomUUID()}.parquet`;
    const written = await writeParquet(this.schema(), data, options);
    await this.io.put(location, Buffer.from(written.bytes.buffer, written.bytes.byteOffset, written.bytes.byteLength));
    return parquetDataFile({
      file_path: location,
      partition: options.partition ?? {},
      metrics: written.metrics,
      split_offsets: written.splitOffsets,
      sort_order_id: this.metadata['default-sort-order-id'],
    });
  }

  /**
   * Writes a position delete file (v2, see position-deletes.ts): rows sorted by path then position, full
   * file_path bounds, and `referenced_data_file` when every row names one data file. Give single positions
   * or row ranges `[start, end)`.
   */
  async writePositionDeletes(deletes: readonly (PositionDelete | PositionDeleteRange)[], options: WriteFileOptions = {}): Promise<DataFile> {
    if (this.metadata['format-version'] < 2) throw new IcebergError('INVALID_UPDATE', 'Position deletes need format-version 2 or later; upgrade the table');
    const { location, partition, ...parquet } = options;
    const ranges = deletes.map((d) => ('pos' in d ? { path: d.path, start: d.pos, end: d.pos + 1n } : d));
    return writePositionDeletes(this.io, location ?? `${this.location}/data/${randomUUID()}-deletes.parquet`, ranges, { ...parquet, ...(partition ? { partition } : {}) });
  }

  /** The default partition spec's id (files written now belong to it). */
  specId(): number {
    return defaultSpec(this.metadata)['spec-id'];
  }
}
