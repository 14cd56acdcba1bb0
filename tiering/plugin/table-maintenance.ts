/**
 * Upkeep of one topic table that no other engine has to run: snapshot expiry and orphan file removal, with
 * what the Kafka path needs kept. The Iceberg rules live in iceberg/maintenance/; this file adds Floe's:
 *
 * - the snapshots that name each partition's current history (`historySnapshots`) never expire, so a new
 *   process still finds every partition's history from the table alone;
 * - Floe's offset-index objects are references too: a snapshot needs the partition manifests its summary
 *   names and the index files those list. They are deleted with the snapshots that alone needed them, and
 *   orphan removal never takes one a retained snapshot needs;
 * - a file an in-flight Kafka fetch holds (`inUse`) is not deleted; it is retried at the next run.
 *
 * Floe's tables are created with FLOE_TABLE_PROPERTIES, and the same values apply to tables that lack them:
 * Iceberg's names, with a shorter snapshot age than Iceberg's 5 days because a table commits every interval
 * (at the default 60 s, 5 days is 7,200 snapshots copied into every metadata file and read by every expiry
 * run), and old metadata files deleted after each commit for the same reason.
 */
import type { FileIO } from '../../iceberg/io/file-io.js';
import { expireSnapshots, MAX_SNAPSHOT_AGE_MS, MIN_SNAPSHOTS_TO_KEEP } from '../../iceberg/maintenance/expire-snapshots.js';
import { deleteUnreferencedFiles } from '../../iceberg/maintenance/reachable.js';
import { ORPHAN_DEFAULT_WINDOW_MS, removeOrphanFiles } from '../../iceberg/maintenance/remove-orphan-files.js';
import { DELETE_AFTER_COMMIT_ENABLED, PREVIOUS_VERSIONS_MAX } from '../../iceberg/catalog/warehouse.js';
import type { Snapshot } from '../../iceberg/snapshot.js';
import type { Table } from '../../iceberg/table.js';
import { historySnapshots, parseManifest, SEGMENTS_PREFIX } from './partition-manifest.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Table properties Floe creates its tables with (Iceberg's names); the same values apply where one is absent. */
export const FLOE_TABLE_PROPERTIES: Readonly<Record<string, string>> = Object.freeze({
  [MAX_SNAPSHOT_AGE_MS]: String(DAY_MS),
  [MIN_SNAPSHOTS_TO_KEEP]: '1',
  [DELETE_AFTER_COMMIT_ENABLED]: 'true',
  [PREVIOUS_VERSIONS_MAX]: '100',
});

/**
 * Properties users may set on a Floe table through the REST catalog (e.g. Spark's ALTER TABLE ... SET
 * TBLPROPERTIES), although the table is otherwise read-only to them: how it is maintained, never what it holds.
 */
export function isMaintenanceProperty(key: string): boolean {
  return key.startsWith('history.expire.') || key.startsWith('commit.manifest') || key === 'write.metadata.delete-after-commit.enabled' || key === 'write.metadata.previous-versions-max' || key === 'write.target-file-size-bytes';
}

export interface MaintenanceOptions {
  /** Unreferenced files younger than this are never removed as orphans. Default 3 days (Iceberg's). */
  readonly orphanWindowMs?: number;
  /**
   * Orphan removal lists the whole table location, so it runs at most this often. Default 1 hour. The first
   * maintenance run after start does it (a restart is when what a crash left behind is found).
   */
  readonly orphanIntervalMs?: number;
  /** True while a Kafka fetch reads the file. */
  readonly inUse?: (location: string) => boolean;
  /**
   * True for an object tiering may still write and commit under that name (data and index files are named
   * from their offsets, so a re-copy after a crash overwrites what the crash left): never an orphan.
   */
  readonly mayStillBeCommitted?: (location: string) => boolean;
  readonly now?: () => number;
}

export interface MaintenanceResult {
  readonly expiredSnapshots: number;
  readonly deletedFiles: number;
  /** Files of expired snapshots left for the next run because a fetch held them or the store refused. */
  readonly deferredFiles: number;
  readonly orphansDeleted: number;
}

/** One table's maintenance state (deferred deletes, when orphans were last looked for). */
export class TableMaintenance {
  private deferred: string[] = [];
  private lastOrphanRun: number;
  /** Index objects named by a partition manifest, by manifest location (they never change once written). */
  private readonly named = new Map<string, readonly string[]>();

  constructor(
    private readonly io: FileIO,
    private readonly options: MaintenanceOptions = {},
  ) {
    this.lastOrphanRun = -Infinity;
  }

  /** Expires snapshots, deletes what only they needed, and now and then removes orphans. Call it serialised with the table's commits. */
  async run(table: Table, also: { readonly held?: (location: string) => boolean } = {}): Promise<MaintenanceResult> {
    const props = { ...FLOE_TABLE_PROPERTIES, ...table.metadata.properties };
    const now = this.now();
    // `held`: another table (the topic's upsert table) names the file; it stays, like one a fetch reads.
    const canDelete = (location: string): boolean => !(this.options.inUse?.(location) ?? false) && !(also.held?.(location) ?? false);
    const retry = await deleteUnreferencedFiles(this.io, this.deferred, { canDelete });
    const expiry = await expireSnapshots(table, {
      olderThanMs: now - positive(props[MAX_SNAPSHOT_AGE_MS], DAY_MS),
      retainLast: Math.max(1, positive(props[MIN_SNAPSHOTS_TO_KEEP], 1)),
      protect: (metadata) => historySnapshots(metadata),
      extraReferences: (snapshot) => this.extraReferences(snapshot),
      canDelete,
      now: () => now,
    });
    this.deferred = [...retry.deferred, ...expiry.deferred];
    let orphansDeleted = 0;
    if (now - this.lastOrphanRun >= (this.options.orphanIntervalMs ?? 60 * 60 * 1000)) {
      this.lastOrphanRun = now;
      const olderThan = now - (this.options.orphanWindowMs ?? ORPHAN_DEFAULT_WINDOW_MS);
      const orphans = await removeOrphanFiles(table, {
        olderThanMs: olderThan,
        extraReferenced: async () => (await Promise.all(table.metadata.snapshots.map((s) => this.extraReferences(s)))).flat(),
        // Checked again just before deleting: an object rewritten since the listing (a compaction retried under
        // the same name) is young again and stays.
        canDelete: async (location) => {
          if (!canDelete(location) || (this.options.mayStillBeCommitted?.(location) ?? false)) return false;
          const info = await this.io.head(location);
          return info !== undefined && info.lastModified.getTime() < olderThan;
        },
        now: () => now,
      });
      // Orphans refused now are not retried blindly: tiering may commit one of them meanwhile. The next orphan
      // run looks at them again.
      orphansDeleted = orphans.deleted.length;
    }
    return { expiredSnapshots: expiry.expired.length, deletedFiles: retry.deleted.length + expiry.deleted.length, deferredFiles: this.deferred.length, orphansDeleted };
  }

  /** The partition manifests a snapshot's summary names, and the index files they list. */
  private async extraReferences(snapshot: Snapshot): Promise<string[]> {
    const out: string[] = [];
    for (const [key, location] of Object.entries(snapshot.summary)) {
      if (!key.startsWith(SEGMENTS_PREFIX) || location === '') continue;
      out.push(location, ...(await this.indexFilesOf(location)));
    }
    return out;
  }

  private async indexFilesOf(location: string): Promise<readonly string[]> {
    const cached = this.named.get(location);
    if (cached) return cached;
    const m = parseManifest(await this.io.get(location), location);
    const files = m.segments.flatMap((s) => s.indexFiles);
    this.named.set(location, files);
    // Bounded: manifests of expired snapshots are never asked for again.
    if (this.named.size > 4096) this.named.delete(this.named.keys().next().value as string);
    return files;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

function positive(v: string | undefined, fallback: number): number {
  const n = v === undefined ? NaN : Number(v);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}
