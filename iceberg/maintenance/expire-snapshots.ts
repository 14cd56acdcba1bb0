/**
 * Snapshot expiry, with the rules of Iceberg's ExpireSnapshots:
 *
 * - Table properties give the defaults: `history.expire.max-snapshot-age-ms` (5 days),
 *   `history.expire.min-snapshots-to-keep` (1) and `history.expire.max-ref-age-ms` (forever). A branch's own
 *   `max-snapshot-age-ms` / `min-snapshots-to-keep` and a ref's `max-ref-age-ms` override them for that ref.
 * - A ref older than its max ref age is removed (never `main`). Each remaining branch keeps its head and the
 *   ancestors that are younger than the age limit or within its minimum count; a tag keeps its snapshot. A
 *   snapshot that no ref reaches is kept while younger than the age limit. The current snapshot and whatever
 *   `protect(metadata)` names (e.g. snapshots Floe's offset index or a running fetch still needs) are kept.
 * - The commit is one `remove-snapshots` (and `remove-snapshot-ref`) update that requires the table uuid and
 *   every ref where it was planned; on a conflict it is planned again on the new metadata.
 * - Only after the commit succeeded, files that only expired snapshots reached are deleted: data and delete
 *   files, manifests, manifest lists, and the non-Iceberg objects `extraReferences` names for expired
 *   snapshots and not for retained ones. Every manifest list and manifest a retained snapshot lists, and
 *   every file live in one, is kept. A file `canDelete`
 *   refuses (a reader holds it) is left and returned in `deferred`; delete it later with
 *   `deleteUnreferencedFiles`. A crash between commit and deletion leaves only unreferenced files, which
 *   orphan removal finds.
 *
 * Not done (as Iceberg's `cleanExpiredMetadata`): removing unused schemas and specs, and statistics entries
 * of expired snapshots (their files are left in place while the metadata still names them).
 */
import { backoffDelay, sleep } from '../io/retry.js';
import { MAIN_BRANCH, type Snapshot } from '../snapshot.js';
import { ancestorsOf, snapshotById, type TableMetadata } from '../table-metadata.js';
import { CommitConflictError, type TableRequirement, type TableUpdate } from '../table-metadata-builder.js';
import { IcebergError } from '../types.js';
import type { Table } from '../table.js';
import { deleteUnreferencedFiles, LocationSet, reachableFiles } from './reachable.js';

/** Table property: snapshots older than this (ms) may expire. */
export const MAX_SNAPSHOT_AGE_MS = 'history.expire.max-snapshot-age-ms';
/** Table property: each branch keeps at least this many snapshots of its history. */
export const MIN_SNAPSHOTS_TO_KEEP = 'history.expire.min-snapshots-to-keep';
/** Table property: refs (other than main) whose snapshot is older than this (ms) are removed. */
export const MAX_REF_AGE_MS = 'history.expire.max-ref-age-ms';
/** Table property: when 'false', expiry refuses (files may be shared with other tables). */
export const GC_ENABLED = 'gc.enabled';

export const EXPIRE_DEFAULTS = Object.freeze({ maxSnapshotAgeMs: 5 * 24 * 60 * 60 * 1000, minSnapshotsToKeep: 1, maxRefAgeMs: Number.MAX_SAFE_INTEGER });

export interface ExpirePlanOptions {
  /** Snapshots older than this timestamp may expire; default now − `history.expire.max-snapshot-age-ms`. */
  readonly olderThanMs?: number;
  /** Snapshots each branch keeps at least (its head included); default `history.expire.min-snapshots-to-keep`. */
  readonly retainLast?: number;
  /** Snapshots that must not expire whatever their age (called with the metadata being planned on). */
  readonly protect?: (metadata: TableMetadata) => Iterable<bigint> | Promise<Iterable<bigint>>;
  readonly now?: () => number;
}

export interface ExpireSnapshotsOptions extends ExpirePlanOptions {
  /**
   * Non-Iceberg objects a snapshot needs (Floe: its offset-index objects). Those named for expired snapshots
   * and for no retained one are deleted with the snapshot's files.
   */
  readonly extraReferences?: (snapshot: Snapshot) => readonly string[] | Promise<readonly string[]>;
  /** False when an in-flight reader holds the file: it is left and returned in `deferred`. */
  readonly canDelete?: (location: string) => boolean | Promise<boolean>;
  /** Plan only: commit nothing, delete nothing; the result says what would expire and be deleted. */
  readonly dryRun?: boolean;
  /** Delete the files of expired snapshots (default true); false only removes the snapshots. */
  readonly cleanExpiredFiles?: boolean;
  /** Commit attempts on conflicts, the first included; default 20. */
  readonly maxAttempts?: number;
}

export interface ExpireSnapshotsResult {
  /** Snapshots removed from the table (or that would be, on a dry run). */
  readonly expired: bigint[];
  /** Files deleted (or that would be). */
  readonly deleted: string[];
  /** Unreferenced files `canDelete` refused: delete them later with `deleteUnreferencedFiles`. */
  readonly deferred: string[];
}

export interface ExpiryPlan {
  /** Snapshot ids to remove, in metadata order. */
  readonly expire: bigint[];
  /** Refs to remove (older than their max ref age). */
  readonly removeRefs: string[];
}

function intProperty(md: TableMetadata, key: string, fallback: number, min: number): number {
  const raw = md.properties[key];
  if (raw === undefined) return fallback;
  const n = Number(raw.trim());
  return Number.isSafeInteger(n) && n >= min ? n : fallback;
}

/** Which snapshots and refs expiry removes from `metadata` (pure but for `protect`). */
export async function planExpiry(metadata: TableMetadata, options: ExpirePlanOptions = {}): Promise<ExpiryPlan> {
  const now = (options.now ?? Date.now)();
  const defaultOlderThan = options.olderThanMs ?? now - intProperty(metadata, MAX_SNAPSHOT_AGE_MS, EXPIRE_DEFAULTS.maxSnapshotAgeMs, 0);
  const defaultMin = options.retainLast ?? intProperty(metadata, MIN_SNAPSHOTS_TO_KEEP, EXPIRE_DEFAULTS.minSnapshotsToKeep, 1);
  if (!Number.isSafeInteger(defaultMin) || defaultMin < 1) {
    throw new IcebergError('INVALID_UPDATE', `retainLast must be an integer of at least 1 (the current snapshot is always kept), got ${defaultMin}`);
  }
  const defaultMaxRefAge = intProperty(metadata, MAX_REF_AGE_MS, EXPIRE_DEFAULTS.maxRefAgeMs, 1);

  const retain = new Set<bigint>();
  const removeRefs: string[] = [];
  const reached = new Set<bigint>();
  for (const [name, ref] of Object.entries(metadata.refs)) {
    const head = snapshotById(metadata, ref['snapshot-id']);
    if (!head) continue;
    if (name !== MAIN_BRANCH && now - head['timestamp-ms'] > (ref['max-ref-age-ms'] ?? defaultMaxRefAge)) {
      removeRefs.push(name);
      continue;
    }
    retain.add(head['snapshot-id']);
    for (const a of ancestorsOf(metadata, head['snapshot-id'])) reached.add(a['snapshot-id']);
    if (ref.type !== 'branch') continue;
    const olderThan = ref['max-snapshot-age-ms'] !== undefined ? now - ref['max-snapshot-age-ms'] : defaultOlderThan;
    const min = ref['min-snapshots-to-keep'] ?? defaultMin;
    let kept = 0;
    for (const a of ancestorsOf(metadata, head['snapshot-id'])) {
      if (a['timestamp-ms'] < olderThan && kept >= min) break;
      retain.add(a['snapshot-id']);
      kept++;
    }
  }
  for (const s of metadata.snapshots) if (!reached.has(s['snapshot-id']) && s['timestamp-ms'] >= defaultOlderThan) retain.add(s['snapshot-id']);
  if (metadata['current-snapshot-id'] !== undefined) retain.add(metadata['current-snapshot-id']);
  if (options.protect) for (const id of await options.protect(metadata)) retain.add(id);
  return { expire: metadata.snapshots.map((s) => s['snapshot-id']).filter((id) => !retain.has(id)), removeRefs };
}

function commitOf(base: TableMetadata, plan: ExpiryPlan): { requirements: TableRequirement[]; updates: TableUpdate[] } {
  const requirements: TableRequirement[] = [{ type: 'assert-table-uuid', uuid: base['table-uuid'] }];
  if (!base.refs[MAIN_BRANCH]) requirements.push({ type: 'assert-ref-snapshot-id', ref: MAIN_BRANCH, 'snapshot-id': null });
  for (const [name, ref] of Object.entries(base.refs)) requirements.push({ type: 'assert-ref-snapshot-id', ref: name, 'snapshot-id': ref['snapshot-id'] });
  const updates: TableUpdate[] = plan.removeRefs.map((name) => ({ action: 'remove-snapshot-ref', 'ref-name': name }));
  if (plan.expire.length > 0) updates.push({ action: 'remove-snapshots', 'snapshot-ids': plan.expire });
  return { requirements, updates };
}

/** Removes expired snapshots from `table` and deletes the files only they reached. */
export async function expireSnapshots(table: Table, options: ExpireSnapshotsOptions = {}): Promise<ExpireSnapshotsResult> {
  const maxAttempts = options.maxAttempts ?? 20;
  let before: TableMetadata | undefined;
  let after: TableMetadata | undefined;
  let plan: ExpiryPlan = { expire: [], removeRefs: [] };
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) await sleep(backoffDelay(attempt - 1, { baseDelayMs: 10, maxDelayMs: 1_000 }));
    const base = (await table.catalog.loadTable(table.id)).metadata;
    if (base.properties[GC_ENABLED]?.trim().toLowerCase() === 'false') {
      throw new IcebergError('INVALID_UPDATE', `Cannot expire snapshots of a table with ${GC_ENABLED}=false (its files may be shared with other tables); set ${GC_ENABLED}=true to allow it`);
    }
    plan = await planExpiry(base, options);
    if (plan.expire.length === 0 && plan.removeRefs.length === 0) {
      await table.refresh();
      return { expired: [], deleted: [], deferred: [] };
    }
    if (options.dryRun) {
      before = base;
      const gone = new Set(plan.expire);
      after = { ...base, snapshots: base.snapshots.filter((s) => !gone.has(s['snapshot-id'])) };
      break;
    }
    const { requirements, updates } = commitOf(base, plan);
    try {
      after = (await table.catalog.commitTable(table.id, requirements, updates)).metadata;
      before = base;
      break;
    } catch (err) {
      if (!(err instanceof CommitConflictError) || attempt + 1 >= maxAttempts) throw err;
    }
  }
  if (!options.dryRun) await table.refresh();
  const retainedIds = new Set(after.snapshots.map((s) => s['snapshot-id']));
  const expired = before.snapshots.filter((s) => !retainedIds.has(s['snapshot-id']));
  if (options.cleanExpiredFiles === false || expired.length === 0) return { expired: expired.map((s) => s['snapshot-id']), deleted: [], deferred: [] };
  const expiredIds = expired.map((s) => s['snapshot-id']);
  let candidates: string[];
  try {
    candidates = await filesOnlyExpiredReach(table, expired, after.snapshots, options);
  } catch (err) {
    if (options.dryRun) throw err;
    throw new IcebergError(
      'MAINTENANCE_INCOMPLETE',
      `Expired snapshots ${expiredIds.join(', ')} of ${table.id.name}, but could not work out which of their files to delete (${err instanceof Error ? err.message : String(err)}); nothing references those files any more, so orphan removal will delete them`,
      { cause: err },
    );
  }
  if (options.dryRun) {
    const deferred: string[] = [];
    const deleted: string[] = [];
    for (const l of candidates) ((options.canDelete && !(await options.canDelete(l))) ? deferred : deleted).push(l);
    return { expired: expiredIds, deleted, deferred };
  }
  const out = await deleteUnreferencedFiles(table.io, candidates, options.canDelete ? { canDelete: options.canDelete } : {});
  return { expired: expiredIds, ...out };
}

/** Files of expired snapshots that no retained snapshot reaches, content files first, manifest lists last. */
async function filesOnlyExpiredReach(table: Table, expired: readonly Snapshot[], retained: readonly Snapshot[], options: ExpireSnapshotsOptions): Promise<string[]> {
  // As Iceberg: a data or delete file is kept when it is live (ADDED or EXISTING) in a retained snapshot; a
  // DELETED entry only records history and keeps nothing alive.
  const keep = await reachableFiles(table.io, retained, { live: true });
  const gone = await reachableFiles(table.io, expired, { skipManifests: keep.manifests, missingOk: true });
  const content = gone.contentFiles.values().filter((l) => !keep.contentFiles.has(l));
  const manifests = gone.manifests.values().filter((l) => !keep.manifests.has(l));
  const lists = gone.manifestLists.values().filter((l) => !keep.manifestLists.has(l));
  const extra: string[] = [];
  if (options.extraReferences) {
    const kept = new LocationSet();
    for (const s of retained) for (const l of await options.extraReferences(s)) kept.add(l);
    const named = new LocationSet();
    for (const s of expired) for (const l of await options.extraReferences(s)) named.add(l);
    for (const l of named.values()) if (!kept.has(l)) extra.push(l);
  }
  const all = new LocationSet([...content, ...manifests, ...lists, ...extra]);
  return all.values();
}
