/**
 * FileIO over a local folder. Locations are `file:///abs/path` (also accepted: Hadoop's `file:/abs/path`), and
 * every one must lie inside the root folder. Names are taken literally, without percent-decoding.
 *
 * Guarantees (the contract in file-io.ts, made concrete):
 * - Crash consistency. Every write goes to a temp file in the target folder, is fsynced, and only then becomes
 *   visible, by `rename` (put, putIfMatch) or `link` (putIfAbsent); the folder is fsynced after. A crash leaves
 *   either the old object or the new one, never a torn one. Orphaned temp files (`.floe-tmp-*`) are invisible.
 * - putIfAbsent is atomic across processes: `link(temp, final)` fails with EEXIST if anything is there.
 * - put, putIfMatch and delete run under a per-object lock file (local-lock.ts: `<name>.floe-lock`, O_EXCL), so
 *   the etag check and the rename are one step for every cooperating process on this host, and for hosts
 *   sharing a filesystem with working O_EXCL (not NFSv2/3). Inside a process, a queue per object keeps callers
 *   from spinning on the file. A lock is stale when its owner runs on this host and that pid is dead (broken
 *   at once), or when it is older than `staleLockMs` (the holder hung, or runs elsewhere). Breakers serialise
 *   on a second O_EXCL file and re-check the lock's identity before removing it. The lock is held only around
 *   check + rename, never while data is written, so a live holder never comes near `staleLockMs`.
 * - etag = inode + mtime (ns) + size, read by fstat, so head, list and the writers agree without hashing data.
 *   To rule out A-B-A (a freed inode reused by a later version of the same size), every write stamps its temp
 *   file with an mtime strictly above the version it replaces, and at least the current time sampled after
 *   the temp file exists. No version can thus repeat an earlier version's (inode, mtime) pair.
 * - Range reads keep a few read handles open (`readHandles`, least recently used closed first), so a reader
 *   walking a data file does not open, stat and close it for every range. Each read stats the path beside
 *   the read and compares (inode, mtime, size) with the handle's: an object replaced or deleted by any
 *   writer (another process, another LocalFileIO) is never read through an old handle. This instance's own
 *   put and delete drop the handle at once; close() closes them all.
 */
import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { link, mkdir, open, readdir, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, resolve as resolvePath, sep } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FileIOError, type FileIO, type FileIOCapabilities, type ObjectInfo } from './file-io.js';
import { errno, ioError, statOrUndefined } from './local-fs.js';
import { LOCK_MARK, ObjectLocks } from './local-lock.js';

export interface LocalFileIOOptions {
  /** The folder every location must be inside: an absolute path or a `file://` URL. Created if missing. */
  readonly root: string;
  /** A lock older than this is taken to be abandoned. Default 30 s. */
  readonly staleLockMs?: number;
  /** How long a writer waits for a busy lock before failing with IO_ERROR. Default staleLockMs + 10 s. */
  readonly lockWaitMs?: number;
  /** fsync data and folders (default true). Only benchmarks and throwaway tests should turn it off. */
  readonly fsync?: boolean;
  /** Read handles kept open for range reads (default 16; 0 opens and closes the file on every read). */
  readonly readHandles?: number;
}

/** An open read handle and the version of the object it was opened on. */
interface ReadHandle {
  readonly fh: FileHandle;
  readonly ino: bigint;
  readonly mtimeNs: bigint;
  readonly size: number;
  /** Reads in progress through it; a dropped handle is closed when the last one ends. */
  users: number;
  dropped: boolean;
}

const TEMP_MARK = '.floe-tmp-';

type WriteMode = { kind: 'put' } | { kind: 'ifMatch'; etag: string } | { kind: 'ifAbsent' };

export class LocalFileIO implements FileIO {
  readonly root: string;
  readonly rootLocation: string;
  private readonly locks: ObjectLocks;
  private readonly fsyncEnabled: boolean;
  private rootReady: Promise<void> | undefined;
  private readonly maxReadHandles: number;
  /** Open read handles by absolute path, least recently used first (Map insertion order). */
  private readonly readHandles = new Map<string, Promise<ReadHandle>>();
  private closed = false;

  constructor(options: LocalFileIOOptions) {
    const raw = options.root.startsWith('file:') ? locationPath(options.root) : options.root;
    if (!raw.startsWith('/')) {
      throw new FileIOError('INVALID_LOCATION', `local FileIO root must be an absolute path, got "${options.root}"`);
    }
    const root = resolvePath(raw);
    this.root = root === sep ? '' : root;
    this.rootLocation = `file://${this.root}`;
    const staleLockMs = options.staleLockMs ?? 30_000;
    this.locks = new ObjectLocks(staleLockMs, options.lockWaitMs ?? staleLockMs + 10_000);
    this.fsyncEnabled = options.fsync ?? true;
    this.maxReadHandles = Math.max(0, Math.floor(options.readHandles ?? 16));
  }

  async capabilities(_location: string): Promise<FileIOCapabilities> {
    return { conditionalWrites: true };
  }

  async get(location: string): Promise<Buffer> {
    const path = this.toPath(location);
    try {
      return await readFile(path);
    } catch (err) {
      throw mapReadError(err, location);
    }
  }

  async getRange(location: string, offset: number, length: number): Promise<Buffer> {
    checkRange(offset, length);
    const path = this.toPath(location);
    if (this.maxReadHandles === 0 || this.closed) return this.getRangeOnce(path, location, offset, length);
    for (let attempt = 0; ; attempt++) {
      let h: ReadHandle;
      try {
        h = await this.readHandle(path);
      } catch (err) {
        throw mapReadError(err, location);
      }
      // Dropped while we waited for it (evicted, replaced, or this FileIO closed): it may be closed already.
      if (h.dropped) return this.getRangeOnce(path, location, offset, length);
      h.users++;
      try {
        const want = Math.max(0, Math.min(length, h.size - offset));
        const buf = Buffer.allocUnsafe(want);
        // The stat runs beside the read: it says whether the handle still holds the object at `path`.
        const [st, got] = await Promise.all([stat(path, { bigint: true }).catch((err: unknown) => err as Error), readFully(h.fh, buf, offset)]);
        if (!(st instanceof Error) && st.ino === h.ino && st.mtimeNs === h.mtimeNs && Number(st.size) === h.size) {
          return got === want ? buf : buf.subarray(0, got);
        }
        this.dropReadHandle(path, h);
        if (st instanceof Error) throw st;
      } catch (err) {
        throw mapReadError(err, location);
      } finally {
        h.users--;
        if (h.dropped && h.users === 0) await h.fh.close().catch(() => undefined);
      }
      // Replaced since the handle was opened: open the new version (a writer replacing it on every read
      // could starve us, so fall back to a plain read after a few tries).
      if (attempt >= 2) return this.getRangeOnce(path, location, offset, length);
    }
  }

  /** A range read that opens, reads and closes the file. */
  private async getRangeOnce(path: string, location: string, offset: number, length: number): Promise<Buffer> {
    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch (err) {
      throw mapReadError(err, location);
    }
    try {
      const { size } = await fh.stat();
      const want = Math.max(0, Math.min(length, size - offset));
      const buf = Buffer.allocUnsafe(want);
      const got = await readFully(fh, buf, offset);
      return got === want ? buf : buf.subarray(0, got);
    } catch (err) {
      throw mapReadError(err, location);
    } finally {
      await fh.close();
    }
  }

  /** The cached read handle of `path`, opened (and the least recently used one beyond the limit dropped) if none. */
  private readHandle(path: string): Promise<ReadHandle> {
    const cached = this.readHandles.get(path);
    if (cached !== undefined) {
      this.readHandles.delete(path);
      this.readHandles.set(path, cached);
      return cached;
    }
    const opening = (async (): Promise<ReadHandle> => {
      const fh = await open(path, 'r');
      try {
        const st = await fh.stat({ bigint: true });
        return { fh, ino: st.ino, mtimeNs: st.mtimeNs, size: Number(st.size), users: 0, dropped: false };
      } catch (err) {
        await fh.close().catch(() => undefined);
        throw err;
      }
    })();
    this.readHandles.set(path, opening);
    opening.catch(() => {
      if (this.readHandles.get(path) === opening) this.readHandles.delete(path);
    });
    while (this.readHandles.size > this.maxReadHandles) {
      const [oldest, p] = this.readHandles.entries().next().value as [string, Promise<ReadHandle>];
      this.readHandles.delete(oldest);
      void p.then((h) => this.closeWhenIdle(h), () => undefined);
    }
    return opening;
  }

  /** Forgets `h` as the handle of `path` (if it still is) and closes it once no read uses it. */
  private dropReadHandle(path: string, h: ReadHandle): void {
    const cached = this.readHandles.get(path);
    if (cached !== undefined) {
      void cached.then(
        (c) => {
          if (c === h && this.readHandles.get(path) === cached) this.readHandles.delete(path);
        },
        () => undefined,
      );
    }
    h.dropped = true;
  }

  /** Drops the read handle of `path` after this instance replaced or deleted the object. */
  private forgetReadHandle(path: string): void {
    const cached = this.readHandles.get(path);
    if (cached === undefined) return;
    this.readHandles.delete(path);
    void cached.then((h) => this.closeWhenIdle(h), () => undefined);
  }

  private async closeWhenIdle(h: ReadHandle): Promise<void> {
    h.dropped = true;
    if (h.users === 0) await h.fh.close().catch(() => undefined);
  }

  async head(location: string): Promise<ObjectInfo | undefined> {
    const path = this.toPath(location);
    const st = await statOrUndefined(path);
    return st?.isFile() ? toInfo(location, st) : undefined;
  }

  put(location: string, data: Buffer): Promise<ObjectInfo> {
    return this.write(location, data, { kind: 'put' });
  }

  putIfAbsent(location: string, data: Buffer): Promise<ObjectInfo> {
    return this.write(location, data, { kind: 'ifAbsent' });
  }

  putIfMatch(location: string, data: Buffer, etag: string): Promise<ObjectInfo> {
    return this.write(location, data, { kind: 'ifMatch', etag });
  }

  async delete(location: string): Promise<void> {
    const path = this.toPath(location);
    if ((await statOrUndefined(dirname(path))) === undefined) return;
    await this.locks.locked(path, location, async () => {
      try {
        await unlink(path);
      } catch (err) {
        if (errno(err) === 'ENOENT') return;
        if (errno(err) === 'EISDIR' || errno(err) === 'EPERM') {
          throw new FileIOError('INVALID_LOCATION', `"${location}" is a folder, not an object`, { cause: err });
        }
        throw ioError(err, `delete "${location}"`);
      } finally {
        this.forgetReadHandle(path);
      }
      await this.fsyncDir(dirname(path));
    });
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    const prefixPath = this.prefixPath(prefix);
    let start: string;
    let firstFilter: string | undefined;
    if (`${this.root}/`.startsWith(prefixPath)) {
      start = this.root || '/';
    } else if (prefixPath.endsWith('/')) {
      start = prefixPath.slice(0, -1);
    } else {
      start = dirname(prefixPath);
      firstFilter = prefixPath.slice(start.length + 1);
    }
    for await (const [path, st] of walk(start, firstFilter)) {
      if (path.startsWith(prefixPath)) yield toInfo(`file://${path}`, st);
    }
  }

  async close(): Promise<void> {
    // Later range reads open and close the file each time; handles in use close when their read ends.
    this.closed = true;
    const open = [...this.readHandles.values()];
    this.readHandles.clear();
    await Promise.all(open.map((p) => p.then((h) => this.closeWhenIdle(h), () => undefined)));
  }

  /** Maps a location to an absolute path inside the root, or throws INVALID_LOCATION. */
  toPath(location: string): string {
    const path = locationPath(location);
    if (path.endsWith('/')) {
      throw new FileIOError('INVALID_LOCATION', `"${location}" names a folder; an object location must not end with "/"`);
    }
    checkSegments(path, location);
    if (!path.startsWith(`${this.root}/`)) {
      throw new FileIOError('INVALID_LOCATION', `"${location}" is outside the warehouse root ${this.rootLocation}`);
    }
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (name.includes(TEMP_MARK) || name.includes(LOCK_MARK)) {
      throw new FileIOError(
        'INVALID_LOCATION',
        `"${location}": names containing "${TEMP_MARK}" or "${LOCK_MARK}" are reserved for FileIO's own temp and lock files`,
      );
    }
    return path;
  }

  private prefixPath(prefix: string): string {
    const path = locationPath(prefix);
    checkSegments(path, prefix);
    if (!`${this.root}/`.startsWith(path) && !path.startsWith(`${this.root}/`)) {
      throw new FileIOError('INVALID_LOCATION', `list prefix "${prefix}" is outside the warehouse root ${this.rootLocation}`);
    }
    return path;
  }

  private async write(location: string, data: Buffer, mode: WriteMode): Promise<ObjectInfo> {
    const path = this.toPath(location);
    const dir = dirname(path);
    await this.ensureDir(dir, location);
    const temp = `${dir}/${TEMP_MARK}${process.pid}-${randomBytes(6).toString('hex')}`;
    let fh: FileHandle;
    try {
      fh = await open(temp, 'wx', 0o644);
    } catch (err) {
      throw ioError(err, `create a temp file for "${location}"`);
    }
    let published = false;
    try {
      await fh.writeFile(data);
      if (this.fsyncEnabled) await fh.datasync();
      if (mode.kind === 'ifAbsent') {
        const st = await this.stamp(fh, undefined);
        try {
          await link(temp, path);
        } catch (err) {
          if (errno(err) === 'EEXIST') {
            throw new FileIOError('ALREADY_EXISTS', `"${location}" already exists; putIfAbsent never replaces an object`);
          }
          throw ioError(err, `publish "${location}"`);
        }
        published = true;
        this.forgetReadHandle(path);
        await unlink(temp).catch(() => undefined);
        await this.fsyncDir(dir);
        return toInfo(location, st);
      }
      return await this.locks.locked(path, location, async (stillHeld) => {
        const current = await statOrUndefined(path);
        if (mode.kind === 'ifMatch') {
          const currentEtag = current?.isFile() ? etagOf(current) : undefined;
          if (currentEtag !== mode.etag) {
            throw new FileIOError(
              'PRECONDITION_FAILED',
              currentEtag === undefined
                ? `"${location}" does not exist, so etag ${mode.etag} cannot match; reload and retry`
                : `"${location}" changed (etag ${currentEtag}, expected ${mode.etag}); reload and retry`,
            );
          }
        }
        const st = await this.stamp(fh, current);
        await stillHeld();
        try {
          await rename(temp, path);
        } catch (err) {
          if (errno(err) === 'EISDIR' || errno(err) === 'ENOTEMPTY' || errno(err) === 'EEXIST') {
            throw new FileIOError('INVALID_LOCATION', `"${location}" is a folder, not an object`, { cause: err });
          }
          throw ioError(err, `publish "${location}"`);
        }
        published = true;
        this.forgetReadHandle(path);
        await this.fsyncDir(dir);
        return toInfo(location, st);
      });
    } catch (err) {
      throw err instanceof FileIOError ? err : ioError(err, `write "${location}"`);
    } finally {
      await fh.close().catch(() => undefined);
      if (!published) await unlink(temp).catch(() => undefined);
    }
  }

  /** Sets the temp file's mtime above `previous` and the current time, fsyncs, and returns its final stats. */
  private async stamp(fh: FileHandle, previous: BigIntStats | undefined): Promise<BigIntStats> {
    let seconds = (performance.timeOrigin + performance.now()) / 1000;
    for (let i = 1; ; i++) {
      if (previous !== undefined) seconds = Math.max(seconds, Number(previous.mtimeNs) / 1e9 + i * 1e-6);
      await fh.utimes(seconds, seconds);
      const st = await fh.stat({ bigint: true });
      if (previous === undefined || st.mtimeNs > previous.mtimeNs) {
        if (this.fsyncEnabled) await fh.sync();
        return st;
      }
    }
  }

  private async ensureDir(dir: string, location: string): Promise<void> {
    this.rootReady ??= mkdir(this.root || '/', { recursive: true }).then(() => undefined);
    await this.rootReady;
    let first: string | undefined;
    try {
      first = await mkdir(dir, { recursive: true });
    } catch (err) {
      if (errno(err) === 'ENOTDIR' || errno(err) === 'EEXIST') {
        throw new FileIOError('INVALID_LOCATION', `a parent of "${location}" is an object, not a folder`, { cause: err });
      }
      throw ioError(err, `create the folder of "${location}"`);
    }
    if (first !== undefined && this.fsyncEnabled) {
      // Make each new folder's entry durable in its parent (the last one is fsynced after the publish).
      const created: string[] = [];
      for (let d = dir; d.length >= first.length; d = dirname(d)) created.unshift(d);
      await this.fsyncDir(dirname(first));
      for (const d of created.slice(0, -1)) await this.fsyncDir(d);
    }
  }

  private async fsyncDir(dir: string): Promise<void> {
    if (!this.fsyncEnabled) return;
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

}

/** `file:///a/b` or `file:/a/b` -> `/a/b`, literally. */
function locationPath(location: string): string {
  let path: string | undefined;
  if (location.startsWith('file:///')) path = location.slice('file://'.length);
  else if (location.startsWith('file:/') && !location.startsWith('file://')) path = location.slice('file:'.length);
  if (path === undefined) {
    throw new FileIOError('INVALID_LOCATION', `"${location}" is not a local location; expected file:///absolute/path`);
  }
  if (path.includes('\0')) throw new FileIOError('INVALID_LOCATION', `"${location}" contains a NUL character`);
  return path;
}

function checkSegments(path: string, location: string): void {
  const segments = path.split('/').slice(1);
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i];
    if (s === '.' || s === '..' || (s === '' && i < segments.length - 1)) {
      throw new FileIOError(
        'INVALID_LOCATION',
        `"${location}" contains an empty, "." or ".." path segment; locations must be normalised absolute paths`,
      );
    }
  }
}

/** Reads into all of `buf` from file position `offset`, stopping early at the end of the file; returns the bytes read. */
async function readFully(fh: FileHandle, buf: Buffer, offset: number): Promise<number> {
  let got = 0;
  while (got < buf.length) {
    const { bytesRead } = await fh.read(buf, got, buf.length - got, offset + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

function checkRange(offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
    throw new RangeError(`getRange needs a non-negative integer offset and length, got offset=${offset} length=${length}`);
  }
}

/** Files under `dir`, recursively, in UTF-8 byte order of their paths (the order S3 lists keys in). */
async function* walk(dir: string, nameFilter?: string): AsyncGenerator<[string, BigIntStats]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return;
    throw ioError(err, `list folder ${dir}`);
  }
  const base = dir === '/' ? '' : dir;
  const items: { name: string; key: Buffer; isDir: boolean }[] = [];
  for (const e of entries) {
    if (nameFilter !== undefined && !e.name.startsWith(nameFilter)) continue;
    if (e.name.includes(TEMP_MARK) || e.name.includes(LOCK_MARK)) continue;
    let isDir = e.isDirectory();
    if (e.isSymbolicLink()) {
      const st = await statOrUndefined(`${base}/${e.name}`);
      if (st === undefined) continue;
      isDir = st.isDirectory();
    } else if (!isDir && !e.isFile()) {
      continue;
    }
    items.push({ name: e.name, key: Buffer.from(isDir ? `${e.name}/` : e.name), isDir });
  }
  items.sort((a, b) => Buffer.compare(a.key, b.key));
  for (const item of items) {
    const path = `${base}/${item.name}`;
    if (item.isDir) {
      yield* walk(path);
    } else {
      const st = await statOrUndefined(path);
      if (st?.isFile()) yield [path, st];
    }
  }
}

export function etagOf(st: BigIntStats): string {
  return `${st.ino.toString(36)}-${st.mtimeNs.toString(36)}-${st.size.toString(36)}`;
}

function toInfo(location: string, st: BigIntStats): ObjectInfo {
  return { location, size: Number(st.size), etag: etagOf(st), lastModified: new Date(Number(st.mtimeMs)) };
}

function mapReadError(err: unknown, location: string): FileIOError {
  const code = errno(err);
  if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') {
    return new FileIOError('NOT_FOUND', `"${location}" does not exist`, { cause: err });
  }
  return ioError(err, `read "${location}"`);
}
