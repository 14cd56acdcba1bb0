/**
 * What table maintenance needs to know about files: which ones a set of snapshots reaches (manifest lists,
 * manifests, data and delete files), one canonical key per location so that `file:/x`, `file:///x` and `/x`
 * (or `s3a://b/k` and `s3://b/k`) compare equal, and a careful delete that leaves a file a reader still holds.
 */
import type { FileIO } from '../io/file-io.js';
import { FileIOError } from '../io/file-io.js';
import { readManifest } from '../manifest.js';
import { readManifestList, type ManifestFile } from '../manifest-list.js';
import type { Snapshot } from '../snapshot.js';
import type { TableMetadata } from '../table-metadata.js';
import { isJsonObject } from '../json.js';
import { IcebergError } from '../types.js';

const EQUAL_SCHEMES: Readonly<Record<string, string>> = { s3a: 's3', s3n: 's3', file: 'file' };

/**
 * A canonical key of a location: scheme folded (`s3a`/`s3n` → `s3`, no scheme → `file`), duplicate slashes
 * in the path collapsed, trailing slashes dropped. Two locations naming the same object have the same key.
 */
export function locationKey(location: string): string {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$/.exec(location);
  let scheme = 'file';
  let rest = location;
  if (m && !/^[a-zA-Z]:[\\/]/.test(location)) {
    scheme = (m[1] as string).toLowerCase();
    rest = m[2] as string;
  }
  scheme = EQUAL_SCHEMES[scheme] ?? scheme;
  if (scheme === 'file') {
    // file:/x, file:///x, file://localhost/x and /x all name /x.
    let path = rest.replace(/^\/\/(localhost)?(?=\/)/, '');
    path = `/${path.replace(/^\/+/, '')}`.replace(/\/{2,}/g, '/').replace(/(.)\/+$/, '$1');
    return `file://${path}`;
  }
  // scheme://authority/key
  const body = rest.replace(/^\/\//, '');
  const slash = body.indexOf('/');
  const authority = slash < 0 ? body : body.slice(0, slash);
  const key = slash < 0 ? '' : body.slice(slash).replace(/\/{2,}/g, '/').replace(/\/+$/, '');
  return `${scheme}://${authority}${key}`;
}

/** True when `location` is `prefix` itself or inside it (by canonical keys). */
export function isWithin(location: string, prefix: string): boolean {
  const l = locationKey(location);
  const p = locationKey(prefix);
  return l === p || l.startsWith(`${p}/`);
}

/** A set of locations compared by canonical key. */
export class LocationSet {
  private readonly keys = new Map<string, string>();
  constructor(locations: Iterable<string> = []) {
    for (const l of locations) this.add(l);
  }
  add(location: string): this {
    const k = locationKey(location);
    if (!this.keys.has(k)) this.keys.set(k, location);
    return this;
  }
  has(location: string): boolean {
    return this.keys.has(locationKey(location));
  }
  get size(): number {
    return this.keys.size;
  }
  /** The locations, each as first added. */
  values(): string[] {
    return [...this.keys.values()];
  }
}

const isNotFound = (err: unknown): boolean => err instanceof FileIOError && err.code === 'NOT_FOUND';

/** The files a set of snapshots reaches. */
export interface ReachableFiles {
  readonly manifestLists: LocationSet;
  readonly manifests: LocationSet;
  /** Data and delete files named by entries of those manifests (only live ones with `live: true`). */
  readonly contentFiles: LocationSet;
}

export interface ReachableOptions {
  /** Count only files live in a manifest (ADDED or EXISTING); default: every entry. */
  readonly live?: boolean;
  /** Manifests not to read (already accounted for). */
  readonly skipManifests?: LocationSet;
  /**
   * Skip a manifest list or manifest that is gone (right for snapshots being expired). Default false: a
   * missing one throws, since what it would have named can then not be protected.
   */
  readonly missingOk?: boolean;
}

function missingError(what: string, location: string, err: unknown): IcebergError {
  return new IcebergError(
    'MAINTENANCE_INCOMPLETE',
    `${what} ${location} of a snapshot the table keeps is missing, so the files it names cannot be told apart from unreferenced ones; nothing was deleted. Restore it, or expire the snapshots that need it first`,
    { cause: err },
  );
}

/** Every file that `snapshots` reach. Each distinct manifest is read once. */
export async function reachableFiles(io: FileIO, snapshots: Iterable<Snapshot>, options: ReachableOptions = {}): Promise<ReachableFiles> {
  const manifestLists = new LocationSet();
  const manifests = new LocationSet();
  const contentFiles = new LocationSet();
  const toRead: ManifestFile[] = [];
  for (const s of snapshots) {
    manifestLists.add(s['manifest-list']);
    let listed: ManifestFile[];
    try {
      listed = readManifestList(await io.get(s['manifest-list'])).manifests;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      if (!options.missingOk) throw missingError('Manifest list', s['manifest-list'], err);
      listed = [];
    }
    for (const m of listed) {
      if (manifests.has(m.manifest_path)) continue;
      manifests.add(m.manifest_path);
      if (!options.skipManifests?.has(m.manifest_path)) toRead.push(m);
    }
  }
  await forEachLimited(toRead, 8, async (m) => {
    let bytes: Buffer;
    try {
      bytes = await io.get(m.manifest_path);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      if (!options.missingOk) throw missingError('Manifest', m.manifest_path, err);
      return;
    }
    for (const e of readManifest(bytes).entries) {
      if (options.live && e.status === 2) continue;
      contentFiles.add(e.data_file.file_path);
    }
  });
  return { manifestLists, manifests, contentFiles };
}

/** Statistics and partition-statistics files the metadata names for the given snapshots (all when omitted). */
export function statisticsFiles(metadata: TableMetadata, snapshotIds?: ReadonlySet<bigint>): string[] {
  const out: string[] = [];
  for (const entry of [...(metadata.statistics ?? []), ...(metadata['partition-statistics'] ?? [])]) {
    if (!isJsonObject(entry) || typeof entry['statistics-path'] !== 'string') continue;
    const id = entry['snapshot-id'];
    if (snapshotIds && (typeof id === 'number' || typeof id === 'bigint') && !snapshotIds.has(BigInt(id))) continue;
    out.push(entry['statistics-path']);
  }
  return out;
}

/** Runs `fn` over `items` with at most `limit` calls in flight. */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export interface DeleteFilesOptions {
  /** False when an in-flight reader holds the file: it is not deleted but returned in `deferred`. */
  readonly canDelete?: (location: string) => boolean | Promise<boolean>;
  /** Deletes in flight at once; default 8. */
  readonly concurrency?: number;
}

/**
 * Deletes files that nothing references any more, skipping (and returning as `deferred`) those `canDelete`
 * refuses and those the store failed to delete. Call it again later with the deferred ones. A file already
 * gone counts as deleted. It never throws for one file, so a committed expiry always reports what it did.
 */
export async function deleteUnreferencedFiles(io: FileIO, locations: readonly string[], options: DeleteFilesOptions = {}): Promise<{ deleted: string[]; deferred: string[] }> {
  const deleted: string[] = [];
  const deferred: string[] = [];
  await forEachLimited(locations, options.concurrency ?? 8, async (location) => {
    if (options.canDelete && !(await options.canDelete(location))) {
      deferred.push(location);
      return;
    }
    try {
      await io.delete(location);
      deleted.push(location);
    } catch {
      // The store refused or failed: nothing references the file, so it can wait for the next attempt.
      deferred.push(location);
    }
  });
  const order = new Map(locations.map((l, i) => [l, i]));
  const byInput = (a: string, b: string): number => (order.get(a) ?? 0) - (order.get(b) ?? 0);
  return { deleted: deleted.sort(byInput), deferred: deferred.sort(byInput) };
}
