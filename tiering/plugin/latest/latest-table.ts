/**
 * The `_latest` upsert table of a topic (`iceberg.upsert.enabled`): one row per key, the key's newest
 * record, made from the topic table's own data files. It adds no copy of the data: its manifests name the
 * same Parquet files as the topic table, and position delete files of its own hide every row that is not
 * the current state of its key (superseded, deleted by a tombstone or a CDC delete, a late event, keyless,
 * or hidden in the topic table itself). What a record means is row-reading.ts's; which row is current,
 * latest-keys.ts's.
 *
 * `sync` brings it up to the topic table's committed history, partition by partition:
 * - incrementally while the topic table only appended segments since: the new segments' data files are
 *   added, and one delete file per partition hides the rows they supersede, old and new, in one snapshot;
 * - by a rebuild of the partition when the history it was made from changed otherwise (compaction merged
 *   files, retention or DeleteRecords removed them, a transaction settled, an operator hid rows) or when
 *   the partition has gathered MAX_DELETE_FILES delete files (the compaction of accumulated deletes): the
 *   partition's rows are read again, data files without a live row leave the table, and a single delete
 *   file hides the rest.
 * A segment whose transactions are still undecided, and every later one, waits for its settlement.
 *
 * What it has applied is recorded per partition in its snapshot summary (`floe.latest.applied.<p>`: the
 * last offset and a digest of the topic table's segments it was made from), so a new process rebuilds its
 * key index from those segments and carries on, or rebuilds the partition when they changed meanwhile.
 *
 * The topic table owns the data files: it never deletes one this table still names (`holds`), and this
 * table's maintenance expires its own snapshots (it keeps only the current state; history is the topic
 * table's) and deletes only its own delete files.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Catalog, TableIdentifier } from '../../../iceberg/catalog/catalog.js';
import { createTableIfMissing } from '../../../iceberg/catalog/catalog.js';
import type { DataFile, PartitionData } from '../../../iceberg/data-file.js';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { expireSnapshots } from '../../../iceberg/maintenance/expire-snapshots.js';
import type { PartitionSpec } from '../../../iceberg/partition-spec.js';
import { writePositionDeletes, type PositionDeleteRange } from '../../../iceberg/position-deletes.js';
import { FLOE_OWNER_PROPERTY } from '../../../iceberg/rest/server.js';
import { sameSchemaStructure, type Schema } from '../../../iceberg/schema.js';
import { Table } from '../../../iceberg/table.js';
import { latestSummaryProperty, type SnapshotUpdate } from '../../../iceberg/transaction.js';
import { padOffset } from '../../offset-index/location.js';
import type { PartitionManifest, SegmentEntry } from '../partition-manifest.js';
import type { SegmentCodec } from '../segment-codec.js';
import { FLOE_TABLE_PROPERTIES } from '../table-maintenance.js';
import { checkFieldIds, checkOwnership, FLOE_OWNER, TOPIC_PROPERTY } from '../table-checks.js';
import { isUndecidedDeletes } from '../txn-deletes.js';
import { LatestKeys, type DeadRow } from './latest-keys.js';
import { columnProbes, rowReading, type RowReading, type RowReadingSettings } from './row-reading.js';
import { readSegmentColumnRows, readSegmentRows, type KeyedRow, type RowColumnProbes } from './segment-rows.js';
import { TOPIC_SCHEMA } from '../../convert/schema.js';
import { rewriteVectors, type VectorTarget } from './latest-vectors.js';
import { TieringError } from '../api.js';
import { crashPoint } from '../crash-points.js';

/** Marks a table as the upsert table of `<namespace>.<table>` (its value). */
export const LATEST_OF_PROPERTY = 'floe.latest.of';
/** Summary property per partition: `<last applied offset>:<digest of the topic table's segments applied>`. */
export const APPLIED_PREFIX = 'floe.latest.applied.';
/** The upsert table's name beside the topic table's. */
export const LATEST_SUFFIX = '_latest';
/** A partition with this many delete files is rebuilt into one at its next sync. */
export const MAX_DELETE_FILES = 16;

export interface UpsertSettings extends RowReadingSettings {
  /** `iceberg.upsert.format.version`: 2 (position delete files) or 3 (deletion vectors). */
  readonly formatVersion?: 2 | 3;
}

/** What the upsert table reads of its topic table (IcebergTopic's internals). */
export interface LatestSource {
  readonly topic: string;
  readonly io: FileIO;
  readonly codec: SegmentCodec;
  readonly tableLocation: string;
  schema(): Schema;
  spec(): PartitionSpec;
  partitions(): number[];
  manifest(partition: number): PartitionManifest;
  /** The topic table's live data files (their manifest entries carry the metrics this table's need). */
  dataFiles(): Promise<Map<string, DataFile>>;
}

export interface LatestSyncResult {
  readonly committed: boolean;
  /** Partitions applied incrementally, and rebuilt. */
  readonly appended: number;
  readonly rebuilt: number;
  /** Rows read from the topic table's data files. */
  readonly rowsRead: number;
  /** Rows this sync hid. */
  readonly rowsHidden: number;
}

interface PartitionState {
  keys: LatestKeys;
  /** Fingerprints of the topic table's segments applied, in offset order. */
  applied: string[];
  appliedOffset: number;
  /** This table's data files and delete files of the partition. */
  files: Set<string>;
  deletes: Set<string>;
  /** Format v3: each data file's deletion vector (the Puffin file's path), also in `deletes`. */
  vectors: Map<string, string>;
  /** Whether the state can be trusted (false after a failed commit: rebuild). */
  sound: boolean;
}

const fingerprint = (s: SegmentEntry): string => JSON.stringify([s.baseOffset, s.lastOffset, s.dataFiles, s.deleteFiles ?? []]);
const digest = (fps: readonly string[]): string => createHash('sha256').update(fps.join('\n')).digest('hex').slice(0, 32);

export class LatestTable {
  private readonly states = new Map<number, PartitionState>();
  private readonly reading: RowReading;
  private readonly probes: RowColumnProbes | undefined;
  private readonly formatVersion: 2 | 3;
  /** Manifest entries of the topic table's data files by path (they never change for a path). */
  private readonly known = new Map<string, DataFile>();

  private constructor(
    readonly id: TableIdentifier,
    private table: Table,
    private readonly source: LatestSource,
    settings: UpsertSettings,
  ) {
    this.reading = rowReading(settings);
    this.probes = columnProbes(settings);
    this.formatVersion = settings.formatVersion ?? 2;
  }

  /** Loads (creating if missing) the upsert table of the topic table `of`, and rebuilds its key index. */
  static async open(options: { catalog: Catalog; of: TableIdentifier; source: LatestSource; settings: UpsertSettings }): Promise<LatestTable> {
    const { catalog, of, source } = options;
    const id: TableIdentifier = { namespace: of.namespace, name: `${of.name}${LATEST_SUFFIX}` };
    const ofName = [...of.namespace, of.name].join('.');
    await createTableIfMissing(catalog, id, {
      schema: source.schema(),
      partitionSpec: source.spec(),
      properties: { ...FLOE_TABLE_PROPERTIES, [FLOE_OWNER_PROPERTY]: FLOE_OWNER, [TOPIC_PROPERTY]: source.topic, [LATEST_OF_PROPERTY]: ofName, 'write.parquet.compression-codec': 'zstd' },
      formatVersion: options.settings.formatVersion ?? 2,
    });
    const table = await Table.load(catalog, id, source.io);
    checkOwnership(source.topic, id, table.metadata.properties, catalog.name);
    checkFieldIds(source.topic, id, table.schema(), source.schema(), catalog.name);
    if (table.metadata['format-version'] !== (options.settings.formatVersion ?? 2)) {
      throw new TieringError('INVALID_CONFIG', `the upsert table ${ofName}${LATEST_SUFFIX} has format-version ${table.metadata['format-version']}, not ${options.settings.formatVersion ?? 2} as iceberg.upsert.format.version says; turn iceberg.upsert.enabled off and on again to rebuild it`);
    }
    const latest = new LatestTable(id, table, source, options.settings);
    await latest.load();
    return latest;
  }

  /** Entries of data files the topic table just committed, so a sync need not read its manifests for them. */
  learn(files: readonly DataFile[]): void {
    for (const f of files) this.known.set(f.file_path, f);
  }

  /** Whether this table's current snapshot names the data file (the topic table must not delete it yet). */
  holds(path: string): boolean {
    for (const s of this.states.values()) if (s.files.has(path)) return true;
    return false;
  }

  /**
   * The rows of a segment that table readers see: from the data files' columns for a `key_value` table (its
   * key and value columns are what readers see), through the Kafka read path for a typed one (which rebuilds
   * typed keys and values) or when id columns are read.
   */
  private rowsOf(p: number, seg: SegmentEntry, visit: (r: KeyedRow) => void): Promise<Map<string, Set<number>>> {
    if (this.probes === undefined && sameSchemaStructure(this.source.schema(), TOPIC_SCHEMA)) return readSegmentColumnRows(this.source, seg, visit);
    return readSegmentRows(this.source, p, seg, visit, this.probes);
  }

  /** Reads what the table holds and rebuilds the key index of every partition whose history is unchanged. */
  private async load(): Promise<void> {
    const { dataFiles, deleteFiles } = await this.table.files();
    const field = this.table.metadata['partition-specs'].find((s) => s['spec-id'] === this.table.metadata['default-spec-id'])?.fields[0]?.name;
    const partitionOf = (d: DataFile): number => Number(field === undefined ? NaN : d.partition[field]);
    const state = (p: number): PartitionState => {
      let s = this.states.get(p);
      if (s === undefined) this.states.set(p, (s = { keys: new LatestKeys(this.reading), applied: [], appliedOffset: -1, files: new Set(), deletes: new Set(), vectors: new Map(), sound: false }));
      return s;
    };
    for (const p of this.source.partitions()) state(p);
    for (const e of dataFiles) state(partitionOf(e.data_file)).files.add(e.data_file.file_path);
    for (const e of deleteFiles) {
      const s = state(partitionOf(e.data_file));
      s.deletes.add(e.data_file.file_path);
      if (e.data_file.file_format === 'puffin' && e.data_file.referenced_data_file) s.vectors.set(e.data_file.referenced_data_file, e.data_file.file_path);
    }
    for (const [p, s] of this.states) {
      const recorded = latestSummaryProperty(this.table.metadata, APPLIED_PREFIX + p);
      if (recorded === undefined) continue;
      const [offset, hash] = recorded.split(':');
      const segments = this.source.manifest(p).segments.filter((e) => e.lastOffset <= Number(offset));
      const fps = segments.map(fingerprint);
      if (digest(fps) !== hash) continue; // the history changed meanwhile: the next sync rebuilds the partition
      for (const seg of segments) await this.rowsOf(p, seg, (r) => s.keys.apply(r, () => undefined));
      s.applied = fps;
      s.appliedOffset = Number(offset);
      s.sound = true;
    }
  }

  /** Brings the table up to the topic table's committed history; one snapshot, or none when nothing changed. */
  async sync(): Promise<LatestSyncResult> {
    if (!sameSchemaStructure(this.table.schema(), this.source.schema())) await this.table.updateSchema(this.source.schema());
    const update = this.table.newOverwrite();
    const next = new Map<number, PartitionState>();
    // Entries of the topic table's data files: learned from its commits, else read from its manifests once.
    let refreshed = false;
    const dataFile = async (path: string): Promise<DataFile> => {
      if (!this.known.has(path) && !refreshed) {
        refreshed = true;
        for (const [p, f] of await this.source.dataFiles()) this.known.set(p, f);
      }
      const f = this.known.get(path);
      if (f === undefined) throw new Error(`${this.source.topic}: data file ${path} of the topic table's history is not live in it; the table changed meanwhile, the next sync retries`);
      return f;
    };
    // A failure before the commit lands leaves key indexes half applied: those partitions are rebuilt next time.
    let touching: number | undefined;
    const distrust = (): void => {
      for (const p of [...next.keys(), ...(touching === undefined ? [] : [touching])]) {
        const s = this.states.get(p);
        if (s !== undefined) s.sound = false;
      }
    };
    try {
      return await this.apply(update, next, dataFile, (p) => (touching = p));
    } catch (err) {
      distrust();
      await this.reloadFiles().catch(() => undefined);
      throw err;
    }
  }

  private async apply(update: SnapshotUpdate, next: Map<number, PartitionState>, dataFile: (path: string) => Promise<DataFile>, touching: (p: number) => void): Promise<LatestSyncResult> {
    let appended = 0;
    let rebuilt = 0;
    let rowsRead = 0;
    let rowsHidden = 0;
    for (const p of this.source.partitions()) {
      touching(p);
      const before = this.states.get(p);
      const segments = this.source.manifest(p).segments;
      // Undecided transactions: their segment and every later one wait for settlement.
      const firstUndecided = segments.findIndex((s) => (s.deleteFiles ?? []).some(isUndecidedDeletes));
      const ready = firstUndecided < 0 ? segments : segments.slice(0, firstUndecided);
      const fps = ready.map(fingerprint);
      const appendOnly = before !== undefined && before.sound && before.applied.length <= fps.length && before.applied.every((f, i) => fps[i] === f) && (this.formatVersion === 3 || before.deletes.size < MAX_DELETE_FILES);
      if (appendOnly && before.applied.length === fps.length) continue;
      const lastOffset = ready[ready.length - 1]?.lastOffset ?? -1;
      const deleteLocation = `${this.table.location.replace(/\/+$/, '')}/data/partition=${p}/latest-${padOffset(BigInt(Math.max(lastOffset, 0)))}-${randomUUID()}-deletes.parquet`;
      const vectorTarget = (state: PartitionState): VectorTarget => ({
        io: this.source.io,
        location: () => `${this.table.location.replace(/\/+$/, '')}/data/partition=${p}/latest-${padOffset(BigInt(Math.max(lastOffset, 0)))}-${randomUUID()}-dv.puffin`,
        dataFile,
        update,
        files: state.files,
        vectors: state.vectors,
      });
      if (appendOnly) {
        // The new segments' rows: what they supersede (old rows and their own) is hidden, their files added.
        const state: PartitionState = { ...before, applied: fps, appliedOffset: lastOffset, files: new Set(before.files), deletes: new Set(before.deletes), vectors: new Map(before.vectors) };
        const ranges: PositionDeleteRange[] = [];
        const touched = new Set<string>();
        const dead = (d: DeadRow): void => {
          ranges.push({ path: d.file, start: BigInt(d.row), end: BigInt(d.row) + 1n });
          touched.add(d.file);
        };
        let tuple: PartitionData | undefined;
        for (const seg of ready.slice(before.applied.length)) {
          const hidden = await this.rowsOf(p, seg, (r) => {
            rowsRead++;
            state.keys.apply(r, dead);
          });
          for (const [path, rows] of hidden) for (const row of rows) dead({ file: path, row });
          for (const path of seg.dataFiles) {
            touched.add(path);
            if (this.formatVersion === 3) continue; // added with its vector below, if it has a live row
            const f = await dataFile(path);
            tuple = f.partition;
            update.addFile(f);
            state.files.add(path);
          }
        }
        if (this.formatVersion === 3) {
          rowsHidden += await rewriteVectors(vectorTarget(state), state.keys, touched);
          state.deletes = new Set(state.vectors.values());
        } else if (ranges.length > 0) {
          const del = await writePositionDeletes(this.source.io, deleteLocation, ranges, tuple === undefined ? {} : { partition: tuple });
          update.addDeleteFile(del);
          state.deletes.add(del.file_path);
          rowsHidden += Number(del.record_count);
        }
        next.set(p, state);
        appended++;
      } else {
        const keys = new LatestKeys(this.reading);
        for (const seg of ready) {
          await this.rowsOf(p, seg, (r) => {
            rowsRead++;
            keys.apply(r, () => undefined);
          });
        }
        if (this.formatVersion === 3) {
          // Every file's vector is rewritten from the rebuilt rows; files without a live row leave.
          const state: PartitionState = { keys, applied: fps, appliedOffset: lastOffset, files: new Set(before?.files), deletes: new Set(), vectors: new Map(before?.vectors), sound: true };
          rowsHidden += await rewriteVectors(vectorTarget(state), keys, [...ready.flatMap((s) => s.dataFiles), ...(before?.files ?? [])]);
          state.deletes = new Set(state.vectors.values());
          next.set(p, state);
          rebuilt++;
          continue;
        }
        const live = keys.liveRows();
        const state: PartitionState = { keys, applied: fps, appliedOffset: lastOffset, files: new Set(), deletes: new Set(), vectors: new Map(), sound: true };
        const ranges: PositionDeleteRange[] = [];
        let tuple: PartitionData | undefined;
        for (const seg of ready) {
          for (const path of seg.dataFiles) {
            const rows = live.get(path);
            if (rows === undefined) continue; // no current row: the file is not part of this table
            const f = await dataFile(path);
            tuple = f.partition;
            state.files.add(path);
            if (!before?.files.has(path)) update.addFile(f);
            let at = 0;
            for (const row of rows) {
              if (row > at) ranges.push({ path, start: BigInt(at), end: BigInt(row) });
              at = row + 1;
            }
            if (BigInt(at) < BigInt(f.record_count)) ranges.push({ path, start: BigInt(at), end: BigInt(f.record_count) });
          }
        }
        for (const path of before?.files ?? []) if (!state.files.has(path)) update.deleteFile(path);
        for (const path of before?.deletes ?? []) update.deleteFile(path);
        if (ranges.length > 0) {
          const del = await writePositionDeletes(this.source.io, deleteLocation, ranges, tuple === undefined ? {} : { partition: tuple });
          update.addDeleteFile(del);
          state.deletes.add(del.file_path);
          rowsHidden += Number(del.record_count);
        }
        next.set(p, state);
        rebuilt++;
      }
    }
    if (next.size === 0) return { committed: false, appended, rebuilt, rowsRead, rowsHidden };
    for (const [p, s] of this.states) if (!next.has(p) && s.sound) update.set(APPLIED_PREFIX + p, `${s.appliedOffset}:${digest(s.applied)}`);
    for (const [p, s] of next) update.set(APPLIED_PREFIX + p, `${s.appliedOffset}:${digest(s.applied)}`);
    if (update.isEmpty) update.allowNoFileChanges();
    // A failed commit may still have landed: the caller rebuilds the partitions it touched from the table.
    crashPoint('before-upsert-commit');
    await this.table.commit(update);
    for (const [p, s] of next) this.states.set(p, s);
    // Only the entries of files the topic table's history still names are worth keeping.
    const live = new Set(this.source.partitions().flatMap((p) => this.source.manifest(p).segments.flatMap((seg) => seg.dataFiles)));
    for (const path of this.known.keys()) if (!live.has(path)) this.known.delete(path);
    return { committed: true, appended, rebuilt, rowsRead, rowsHidden };
  }

  /** Re-reads which files the table names (after a failed commit); the key index is rebuilt by the next sync. */
  private async reloadFiles(): Promise<void> {
    await this.table.refresh();
    const { dataFiles, deleteFiles } = await this.table.files();
    const field = this.table.metadata['partition-specs'].find((s) => s['spec-id'] === this.table.metadata['default-spec-id'])?.fields[0]?.name;
    for (const s of this.states.values()) {
      s.files.clear();
      s.deletes.clear();
      s.vectors.clear();
    }
    for (const [entries, kind] of [[dataFiles, 'files'], [deleteFiles, 'deletes']] as const) {
      for (const e of entries) {
        const s = this.states.get(Number(field === undefined ? NaN : e.data_file.partition[field]));
        s?.[kind].add(e.data_file.file_path);
        if (kind === 'deletes' && e.data_file.file_format === 'puffin' && e.data_file.referenced_data_file) s?.vectors.set(e.data_file.referenced_data_file, e.data_file.file_path);
      }
    }
  }

  /**
   * Expires every snapshot but the current one (the table holds current state; the history is the topic
   * table's) and deletes the delete files only they named. Data files belong to the topic table: never deleted here.
   */
  async maintain(now = Date.now()): Promise<number> {
    await this.table.refresh();
    const own = `${this.table.location.replace(/\/+$/, '')}/`;
    const r = await expireSnapshots(this.table, { olderThanMs: now, retainLast: 1, canDelete: (location) => location.startsWith(own), now: () => now });
    return r.expired.length;
  }

  /**
   * Drops the upsert table of `of` with what it wrote (delete files, metadata), which all sit under its own
   * location; the data files it names are the topic table's and stay.
   */
  static async drop(catalog: Catalog, of: TableIdentifier, topic: string, io: FileIO): Promise<boolean> {
    const id: TableIdentifier = { namespace: of.namespace, name: `${of.name}${LATEST_SUFFIX}` };
    if (!(await catalog.tableExists(id))) return false;
    const { metadata } = await catalog.loadTable(id);
    const props = metadata.properties;
    if (props[FLOE_OWNER_PROPERTY] !== FLOE_OWNER || props[TOPIC_PROPERTY] !== topic || props[LATEST_OF_PROPERTY] === undefined) return false;
    await catalog.dropTable(id, { purge: false });
    const own = `${metadata.location.replace(/\/+$/, '')}/`;
    const objects: string[] = [];
    for await (const o of io.list(own)) objects.push(o.location);
    for (const o of objects) await io.delete(o).catch(() => undefined);
    return true;
  }
}
