/**
 * Snapshot-producing changes to a table: appends, overwrites (replacing files) and row deltas (v2 position or
 * equality deletes). A `SnapshotUpdate` collects files, then `prepare(base)` turns them into the REST
 * `{ requirements, updates }` of one commit against that base: manifests for the new files (written once and
 * reused on retries: their entries inherit snapshot id and sequence number from the manifest list), rewritten
 * manifests for removed files, and a new manifest list that carries every other manifest of the parent over.
 * The requirements pin the table uuid and the parent of `main`, so a concurrent commit makes the catalog
 * refuse, and `commit.ts` calls `prepare` again against the new base.
 */
import { randomUUID } from 'node:crypto';
import type { FileIO } from './io/file-io.js';
import { DataFileContent, ManifestEntryStatus, type DataFile, type ManifestEntry } from './data-file.js';
import { inheritFromManifestFile, readManifest, writeManifestFile, type ManifestWriteOptions } from './manifest.js';
import { readManifestList, writeManifestList, type ManifestFile } from './manifest-list.js';
import { manifestMergeSettings, mergeManifests } from './manifest-merge.js';
import { computeSummary, MAIN_BRANCH, newSnapshotId, type FileChange, type Operation, type Snapshot } from './snapshot.js';
import type { TableRequirement, TableUpdate } from './table-metadata-builder.js';
import { ancestorsOf, currentSchema, currentSnapshot, defaultSpec, snapshotById, type TableMetadata } from './table-metadata.js';
import { IcebergError } from './types.js';
import { sameSchemaStructure, type Schema } from './schema.js';

export interface PreparedCommit {
  readonly requirements: TableRequirement[];
  readonly updates: TableUpdate[];
  /** The snapshot this commit adds. */
  readonly snapshot: Snapshot;
  /** Files written for this attempt only (manifest list, rewritten and merged manifests): delete them if it fails. */
  readonly attemptFiles: string[];
  /**
   * Files this update wrote earlier that the new snapshot does not list (its new-files manifest when manifest
   * merging folded it into a merged one): delete them once the commit has succeeded.
   */
  readonly supersededFiles: string[];
}

interface CachedManifest {
  readonly location: string;
  readonly file: ManifestFile;
  readonly entries: ManifestEntry[];
}

const pathKey = (f: DataFile): string => f.file_path;

function change(f: DataFile): FileChange {
  return {
    content: f.content === DataFileContent.DATA ? 'data' : f.content === DataFileContent.POSITION_DELETES ? 'position-deletes' : 'equality-deletes',
    recordCount: Number(f.record_count),
    fileSizeInBytes: Number(f.file_size_in_bytes),
    partitionKey: JSON.stringify(f.partition, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v)),
  };
}

/** The live entries of one manifest, with inherited values filled in. */
export async function readLiveEntries(io: FileIO, manifest: ManifestFile): Promise<ManifestEntry[]> {
  const m = readManifest(await io.get(manifest.manifest_path));
  return inheritFromManifestFile(m.entries, manifest).filter((e) => e.status !== ManifestEntryStatus.DELETED);
}

/** The manifests of a snapshot (none for no snapshot). */
export async function snapshotManifests(io: FileIO, snapshot: Snapshot | undefined): Promise<ManifestFile[]> {
  if (!snapshot) return [];
  return readManifestList(await io.get(snapshot['manifest-list'])).manifests;
}

/**
 * The newest value of a snapshot summary property along the current snapshot's ancestry (e.g. the Kafka
 * offsets Floe recorded in its last commit), or undefined.
 */
export function latestSummaryProperty(metadata: TableMetadata, key: string): string | undefined {
  for (const s of ancestorsOf(metadata, metadata['current-snapshot-id'])) {
    const v = s.summary[key];
    if (v !== undefined) return v;
  }
  return undefined;
}

/** Live data and delete files of a snapshot (default: the current one). */
export async function liveFiles(io: FileIO, metadata: TableMetadata, snapshotId?: bigint): Promise<{ dataFiles: ManifestEntry[]; deleteFiles: ManifestEntry[] }> {
  const snap = snapshotId === undefined ? currentSnapshot(metadata) : snapshotById(metadata, snapshotId);
  const dataFiles: ManifestEntry[] = [];
  const deleteFiles: ManifestEntry[] = [];
  for (const m of await snapshotManifests(io, snap)) {
    for (const e of await readLiveEntries(io, m)) (e.data_file.content === DataFileContent.DATA ? dataFiles : deleteFiles).push(e);
  }
  return { dataFiles, deleteFiles };
}

export interface SnapshotUpdateOptions {
  readonly io: FileIO;
  readonly now?: () => number;
}

/**
 * One snapshot's worth of file changes. Build it with `addFile`, `deleteFile`, `addDeleteFile` and `set`,
 * then hand it to `commitSnapshot` (commit.ts) or `Table.commit`.
 */
export class SnapshotUpdate {
  private readonly added: DataFile[] = [];
  private readonly addedDeletes: DataFile[] = [];
  private readonly removed = new Map<string, DataFile | undefined>();
  private readonly properties: Record<string, string> = {};
  private readonly io: FileIO;
  private readonly now: () => number;
  private snapshotId: bigint | undefined;
  private dataManifest: CachedManifest | undefined;
  private deleteManifest: CachedManifest | undefined;
  private attempt = 0;
  private readonly validations: ((base: TableMetadata) => void)[] = [];
  private noFilesAllowed = false;
  private newSchema: { readonly schema: Schema; readonly lastColumnId: number } | undefined;

  constructor(options: SnapshotUpdateOptions) {
    this.io = options.io;
    this.now = options.now ?? Date.now;
  }

  /**
   * Makes `schema` the table's current schema in this same commit (its schema id is assigned against the
   * base: an existing schema of the same structure is reused). For files written with a newer schema than
   * the table's: readers never see those files without the columns they hold.
   */
  setSchema(schema: Schema, lastColumnId: number): this {
    this.newSchema = { schema, lastColumnId };
    return this;
  }

  /** Adds a data file. */
  addFile(file: DataFile): this {
    if (file.content !== DataFileContent.DATA) throw new IcebergError('INVALID_UPDATE', `${file.file_path} is a delete file; add it with addDeleteFile`);
    this.added.push(file);
    return this;
  }

  /** Adds a position or equality delete file (format v2 and later). */
  addDeleteFile(file: DataFile): this {
    if (file.content === DataFileContent.DATA) throw new IcebergError('INVALID_UPDATE', `${file.file_path} is a data file; add it with addFile`);
    this.addedDeletes.push(file);
    return this;
  }

  /**
   * Removes a live file of the parent snapshot, by path or by the DataFile: a data file, or a delete file
   * (position or equality deletes, e.g. when the data file it applies to leaves the table in the same commit,
   * or when a newer delete file replaces it).
   */
  deleteFile(file: DataFile | string): this {
    const path = typeof file === 'string' ? file : file.file_path;
    this.removed.set(path, typeof file === 'string' ? undefined : file);
    return this;
  }

  /** A snapshot summary property (Floe records committed offsets this way). */
  set(key: string, value: string): this {
    this.properties[key] = value;
    return this;
  }

  /**
   * A check run against every base this update is prepared on, first attempt and retries alike; throw to
   * abandon the commit. Idempotent writers use it: "my offsets are already in the table, stop".
   */
  validate(check: (base: TableMetadata) => void): this {
    this.validations.push(check);
    return this;
  }

  /**
   * Lets this update commit with no file changes: an 'append' snapshot of nothing that only records its
   * summary properties (Floe records the committed offset of log segments holding only control records
   * this way, so the segment list moves on without rows). Without it, an empty update is refused.
   */
  allowNoFileChanges(): this {
    this.noFilesAllowed = true;
    return this;
  }

  private rewrite = false;

  /**
   * Marks this update as a rewrite: data files replaced by others holding the same rows (compaction), which
   * the spec calls a 'replace' snapshot (readers and incremental scans may skip it: no data changed). It
   * must remove data files and add data files, and add no delete files; `prepare` still refuses files that
   * are not live in its base, so a rewrite whose inputs a concurrent commit removed fails.
   */
  asRewrite(): this {
    this.rewrite = true;
    this.validations.push(() => {
      if (this.added.length === 0 || this.removed.size === 0 || this.addedDeletes.length > 0) {
        throw new IcebergError('INVALID_UPDATE', 'A rewrite replaces data files with data files: add and delete at least one data file each, and add no delete files');
      }
    });
    return this;
  }

  get isEmpty(): boolean {
    return this.added.length === 0 && this.addedDeletes.length === 0 && this.removed.size === 0;
  }

  /** The operation the spec names for these changes. */
  operation(): Operation {
    if (this.rewrite) return 'replace';
    const addsData = this.added.length > 0;
    const removes = this.removed.size > 0;
    const addsDeletes = this.addedDeletes.length > 0;
    if (!removes && !addsDeletes) return 'append';
    if (!addsData && (removes || addsDeletes) && !(removes && addsDeletes)) return 'delete';
    return 'overwrite';
  }

  private async writeNewManifest(files: readonly DataFile[], options: ManifestWriteOptions, location: string): Promise<CachedManifest> {
    const entries: ManifestEntry[] = files.map((f) => ({ status: ManifestEntryStatus.ADDED, snapshot_id: null, sequence_number: null, file_sequence_number: null, data_file: f }));
    const { bytes, manifestFile } = writeManifestFile(entries, options, { manifest_path: location, added_snapshot_id: this.snapshotId ?? 0n });
    await this.io.put(location, bytes);
    return { location, file: manifestFile, entries };
  }

  /** The commit of these changes against `base`. Safe to call again against a newer base after a conflict. */
  async prepare(base: TableMetadata): Promise<PreparedCommit> {
    if (this.isEmpty && !this.noFilesAllowed) throw new IcebergError('INVALID_UPDATE', 'Nothing to commit: add or delete at least one file (or call allowNoFileChanges for a properties-only snapshot)');
    for (const check of this.validations) check(base);
    const formatVersion = base['format-version'];
    if (this.addedDeletes.length > 0 && formatVersion < 2) throw new IcebergError('INVALID_UPDATE', 'Delete files need format-version 2 or later; upgrade the table');
    const taken = (id: bigint): boolean => base.snapshots.some((s) => s['snapshot-id'] === id);
    if (this.snapshotId === undefined || taken(this.snapshotId)) this.snapshotId = newSnapshotId(taken);
    const snapshotId = this.snapshotId;
    const attempt = this.attempt++;
    let schema = currentSchema(base);
    const schemaUpdates: TableUpdate[] = [];
    const schemaRequirements: TableRequirement[] = [];
    if (this.newSchema && !sameSchemaStructure(schema, this.newSchema.schema)) {
      const existing = base.schemas.find((x) => sameSchemaStructure(x, this.newSchema!.schema));
      const id = existing ? existing['schema-id'] : base.schemas.reduce((m, x) => Math.max(m, x['schema-id'] + 1), 0);
      schema = { ...this.newSchema.schema, 'schema-id': id };
      schemaUpdates.push({ action: 'add-schema', schema, 'last-column-id': Math.max(this.newSchema.lastColumnId, base['last-column-id']) }, { action: 'set-current-schema', 'schema-id': -1 });
      schemaRequirements.push({ type: 'assert-current-schema-id', 'current-schema-id': base['current-schema-id'] });
    }
    const spec = defaultSpec(base);
    const meta = `${base.location}/metadata`;
    const options: ManifestWriteOptions = { formatVersion, schema, partitionSpec: spec };
    if (this.added.length > 0) this.dataManifest ??= await this.writeNewManifest(this.added, options, `${meta}/${randomUUID()}-m0.avro`);
    if (this.addedDeletes.length > 0) {
      this.deleteManifest ??= await this.writeNewManifest(this.addedDeletes, { ...options, content: 'deletes' }, `${meta}/${randomUUID()}-m1.avro`);
    }

    const parent = currentSnapshot(base);
    const sequenceNumber = base['last-sequence-number'] + 1;
    const attemptFiles: string[] = [];
    const carried: ManifestFile[] = [];
    // Rewritten manifests are held in memory until merging decides which of them the list keeps.
    const pending = new Map<string, { bytes: Buffer; entries: ManifestEntry[] }>();
    const removedFiles: DataFile[] = [];
    const stillToRemove = new Set(this.removed.keys());
    for (const m of await snapshotManifests(this.io, parent)) {
      if (stillToRemove.size === 0 || (m.added_files_count === 0 && m.existing_files_count === 0)) {
        carried.push(m);
        continue;
      }
      const manifest = readManifest(await this.io.get(m.manifest_path));
      const entries = inheritFromManifestFile(manifest.entries, m).filter((e) => e.status !== ManifestEntryStatus.DELETED);
      if (!entries.some((e) => stillToRemove.has(pathKey(e.data_file)))) {
        carried.push(m);
        continue;
      }
      const rewritten: ManifestEntry[] = entries.map((e) => {
        if (stillToRemove.has(pathKey(e.data_file))) {
          stillToRemove.delete(pathKey(e.data_file));
          removedFiles.push(e.data_file);
          return { ...e, status: ManifestEntryStatus.DELETED, snapshot_id: snapshotId };
        }
        return { ...e, status: ManifestEntryStatus.EXISTING };
      });
      const location = `${meta}/${randomUUID()}-m${attempt + 2}.avro`;
      const { bytes, manifestFile } = writeManifestFile(
        rewritten,
        { formatVersion, schema: manifest.metadata.schema, partitionSpec: manifest.metadata.partitionSpec, content: manifest.metadata.content },
        { manifest_path: location, added_snapshot_id: snapshotId },
      );
      pending.set(location, { bytes, entries: rewritten });
      carried.push(manifestFile);
    }
    if (stillToRemove.size > 0) {
      throw new IcebergError('INVALID_UPDATE', `Cannot delete ${[...stillToRemove].join(', ')}: not a live data file (nor a live delete file) of the table (a concurrent commit may have removed it); reload the table and rebuild the change`);
    }

    const freshManifests = [this.dataManifest, this.deleteManifest].filter((m): m is CachedManifest => m !== undefined);
    const fresh = freshManifests.map((m) => ({ ...m.file, added_snapshot_id: snapshotId }));
    const merge = await mergeManifests({
      manifests: [...fresh, ...carried],
      snapshotId,
      formatVersion,
      schema,
      specs: base['partition-specs'],
      settings: manifestMergeSettings(base.properties),
      io: this.io,
      metadataDir: meta,
      readEntries: async (m) => {
        const held = pending.get(m.manifest_path) ?? freshManifests.find((f) => f.location === m.manifest_path);
        if (held) return inheritFromManifestFile(held.entries, m);
        return inheritFromManifestFile(readManifest(await this.io.get(m.manifest_path)).entries, m);
      },
    });
    attemptFiles.push(...merge.written);
    const listed = new Set(merge.manifests.map((m) => m.manifest_path));
    for (const [location, { bytes }] of pending) {
      if (!listed.has(location)) continue;
      await this.io.put(location, bytes);
      attemptFiles.push(location);
    }
    const supersededFiles = freshManifests.filter((m) => !listed.has(m.location)).map((m) => m.location);
    const listLocation = `${meta}/snap-${snapshotId}-${attempt}-${randomUUID()}.avro`;
    const list = writeManifestList(merge.manifests, {
      formatVersion,
      snapshotId,
      parentSnapshotId: parent?.['snapshot-id'] ?? null,
      sequenceNumber: BigInt(sequenceNumber),
      ...(formatVersion >= 3 ? { firstRowId: BigInt(base['next-row-id'] ?? 0) } : {}),
    });
    await this.io.put(listLocation, list.bytes);
    attemptFiles.push(listLocation);

    const summary = computeSummary({
      operation: this.operation(),
      added: [...this.added, ...this.addedDeletes].map(change),
      removed: removedFiles.map(change),
      ...(parent ? { previous: parent.summary } : {}),
      properties: this.properties,
    });
    let snapshot: Snapshot = {
      'snapshot-id': snapshotId,
      ...(parent ? { 'parent-snapshot-id': parent['snapshot-id'] } : {}),
      'sequence-number': sequenceNumber,
      'timestamp-ms': Math.max(this.now(), base['last-updated-ms']),
      'manifest-list': listLocation,
      summary,
      'schema-id': schema['schema-id'],
    };
    if (formatVersion >= 3) snapshot = { ...snapshot, 'first-row-id': base['next-row-id'] ?? 0, 'added-rows': Number(list.assignedRows) };
    const mainRef = base.refs[MAIN_BRANCH];
    return {
      requirements: [
        { type: 'assert-table-uuid', uuid: base['table-uuid'] },
        { type: 'assert-ref-snapshot-id', ref: MAIN_BRANCH, 'snapshot-id': mainRef ? mainRef['snapshot-id'] : null },
        ...schemaRequirements,
      ],
      updates: [
        ...schemaUpdates,
        { action: 'add-snapshot', snapshot },
        { action: 'set-snapshot-ref', 'ref-name': MAIN_BRANCH, type: 'branch', 'snapshot-id': snapshotId },
      ],
      snapshot,
      attemptFiles,
      supersededFiles,
    };
  }

  /** Deletes the files written for all attempts (after the change is abandoned). */
  async abandon(): Promise<void> {
    for (const m of [this.dataManifest, this.deleteManifest]) if (m) await this.io.delete(m.location).catch(() => undefined);
  }
}
