/**
 * Orphan file removal, like Iceberg's `remove_orphan_files`: everything under the table location (or a folder
 * inside it) that the table does not reference and that is older than a safety window is deleted. Such files
 * are what a crashed upload or an interrupted commit left behind.
 *
 * Referenced, and never deleted: the manifest list and manifests of every snapshot the metadata holds and
 * every data or delete file live (ADDED or EXISTING) in one of them; statistics and partition-statistics files; the current metadata
 * file, every file of the metadata log and `metadata/version-hint.text`; and whatever `extraReferenced`
 * returns (Floe: the offset-index objects in use). Locations are compared by canonical key, so `file:/x`,
 * `file:///x` and `/x`, or `s3a://` and `s3://`, match.
 *
 * The window (default 3 days) must be longer than any write or commit takes: a file written for a commit
 * still in progress is not referenced yet.
 */
import type { Table } from '../table.js';
import { IcebergError } from '../types.js';
import { deleteUnreferencedFiles, isWithin, LocationSet, reachableFiles, statisticsFiles } from './reachable.js';

/** Iceberg's suggested safety window for orphan removal: 3 days. */
export const ORPHAN_DEFAULT_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;

export interface RemoveOrphanFilesOptions {
  /** Only files last modified before this timestamp are deleted; default now − 3 days. */
  readonly olderThanMs?: number;
  /** More locations that count as referenced (read after listing, so a file referenced meanwhile is kept). */
  readonly extraReferenced?: () => Promise<Iterable<string>>;
  /** Where to look: the table location (default) or a folder inside it. */
  readonly location?: string;
  /** List only: delete nothing; `deleted` says what would be deleted. */
  readonly dryRun?: boolean;
  /** False when an in-flight reader holds the file: it is kept (and returned in `deferred`). */
  readonly canDelete?: (location: string) => boolean | Promise<boolean>;
  readonly now?: () => number;
}

export interface RemoveOrphanFilesResult {
  /** Orphans deleted (or that would be, on a dry run). */
  readonly deleted: string[];
  /** Unreferenced files still inside the safety window. */
  readonly kept: string[];
  /** Orphans `canDelete` refused. */
  readonly deferred: string[];
}

/** Deletes the files under the table location that nothing references and that are older than the window. */
export async function removeOrphanFiles(table: Table, options: RemoveOrphanFilesOptions = {}): Promise<RemoveOrphanFilesResult> {
  const now = (options.now ?? Date.now)();
  const olderThan = options.olderThanMs ?? now - ORPHAN_DEFAULT_WINDOW_MS;
  const root = table.location.replace(/\/+$/, '');
  const where = (options.location ?? root).replace(/\/+$/, '');
  if (!isWithin(where, root)) {
    throw new IcebergError('INVALID_UPDATE', `Orphan removal location ${where} is outside the table location ${root}; pass a folder inside the table, or omit it`);
  }

  // List first, then read what is referenced: a file that becomes referenced after the listing was written
  // before it, so it is either in the metadata read below or younger than the window.
  const listed: { location: string; lastModified: number }[] = [];
  for await (const o of table.io.list(`${where}/`)) listed.push({ location: o.location, lastModified: o.lastModified.getTime() });

  await table.refresh();
  const referenced = await referencedFiles(table);
  if (options.extraReferenced) for (const l of await options.extraReferenced()) referenced.add(l);

  const orphans: string[] = [];
  const kept: string[] = [];
  for (const f of listed) {
    if (referenced.has(f.location)) continue;
    (f.lastModified < olderThan ? orphans : kept).push(f.location);
  }
  if (options.dryRun) {
    const deferred: string[] = [];
    const deleted: string[] = [];
    for (const l of orphans) ((options.canDelete && !(await options.canDelete(l))) ? deferred : deleted).push(l);
    return { deleted, kept, deferred };
  }
  const out = await deleteUnreferencedFiles(table.io, orphans, options.canDelete ? { canDelete: options.canDelete } : {});
  return { ...out, kept };
}

/** Every file the table's current metadata references (see the module comment). */
export async function referencedFiles(table: Table): Promise<LocationSet> {
  const md = table.metadata;
  // As in expiry: a file only DELETED entries name is read by no snapshot (a crash between an expiry commit
  // and its deletes leaves such files).
  const reach = await reachableFiles(table.io, md.snapshots, { live: true });
  const out = new LocationSet([...reach.manifestLists.values(), ...reach.manifests.values(), ...reach.contentFiles.values()]);
  for (const l of statisticsFiles(md)) out.add(l);
  out.add(table.metadataLocation);
  for (const e of md['metadata-log']) out.add(e['metadata-file']);
  out.add(`${table.location.replace(/\/+$/, '')}/metadata/version-hint.text`);
  return out;
}
