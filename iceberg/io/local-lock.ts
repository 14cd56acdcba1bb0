/**
 * Per-object write locks of the local FileIO (see local.ts): a lock file `<name>.floe-lock` created with
 * O_EXCL, so an etag check and the rename that follows are one step for every cooperating process on this
 * host (and on hosts sharing a filesystem with working O_EXCL), and an in-process queue per object so that
 * callers in one process do not spin on the file. A lock is stale when its owner runs on this host and that
 * pid is dead (broken at once), or when it is older than `staleLockMs`. Breakers serialise on a second O_EXCL
 * file and re-check the lock's identity before removing it.
 */
import { randomUUID } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { FileIOError } from './file-io.js';
import { errno, ioError, statOrUndefined } from './local-fs.js';
import { backoffDelay, sleep } from './retry.js';

/** The mark in lock file names; listings skip files that carry it. */
export const LOCK_MARK = '.floe-lock';
const LOCK_SUFFIX = LOCK_MARK;
const BREAK_SUFFIX = `${LOCK_MARK}.break`;

/** In-process queues, shared by every LocalFileIO in this process, keyed by absolute object path. */
const localQueues = new Map<string, Promise<unknown>>();

export class ObjectLocks {
  constructor(
    /** A lock older than this is taken to be abandoned. */
    private readonly staleLockMs: number,
    /** How long a writer waits for a busy lock before failing with IO_ERROR. */
    private readonly lockWaitMs: number,
  ) {}

  /** Runs `fn` holding the in-process queue and the lock file of `path`. */
  locked<T>(path: string, location: string, fn: (stillHeld: () => Promise<void>) => Promise<T>): Promise<T> {
    const previous = localQueues.get(path) ?? Promise.resolve();
    const run = previous.then(
      () => this.withFileLock(path, location, fn),
      () => this.withFileLock(path, location, fn),
    );
    const tail = run.catch(() => undefined);
    localQueues.set(path, tail);
    void tail.then(() => {
      if (localQueues.get(path) === tail) localQueues.delete(path);
    });
    return run;
  }

  private async withFileLock<T>(
    path: string,
    location: string,
    fn: (stillHeld: () => Promise<void>) => Promise<T>,
  ): Promise<T> {
    const lockPath = path + LOCK_SUFFIX;
    const token = randomUUID();
    const body = JSON.stringify({ pid: process.pid, host: hostname(), token, at: new Date().toISOString() });
    const deadline = Date.now() + this.lockWaitMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const fh = await open(lockPath, 'wx', 0o644);
        try {
          await fh.writeFile(body);
        } finally {
          await fh.close();
        }
        break;
      } catch (err) {
        if (errno(err) !== 'EEXIST') throw ioError(err, `lock "${location}"`);
      }
      if (await this.breakIfStale(lockPath)) continue;
      if (Date.now() > deadline) {
        throw new FileIOError(
          'IO_ERROR',
          `"${location}" stayed locked by another writer for ${this.lockWaitMs} ms (lock file ${lockPath}); ` +
            'if no Floe process is writing it, delete the lock file',
        );
      }
      await sleep(1 + backoffDelay(attempt, { baseDelayMs: 2, maxDelayMs: 50 }));
    }
    const stillHeld = async (): Promise<void> => {
      const owner = await readLock(lockPath);
      if (owner?.token !== token) {
        throw new FileIOError(
          'IO_ERROR',
          `the lock on "${location}" was broken as stale while held (it outlived staleLockMs=${this.staleLockMs}); ` +
            'nothing was written, retry the operation',
        );
      }
    };
    try {
      return await fn(stillHeld);
    } finally {
      const owner = await readLock(lockPath);
      if (owner?.token === token) await unlink(lockPath).catch(() => undefined);
    }
  }

  /** Removes the lock at `lockPath` if it is abandoned; true if the caller should try to take it again now. */
  private async breakIfStale(lockPath: string): Promise<boolean> {
    const seen = await readLock(lockPath);
    if (seen === undefined) return true;
    if (!this.isStale(seen)) return false;
    const breakPath = lockPath.slice(0, -LOCK_SUFFIX.length) + BREAK_SUFFIX;
    try {
      const fh = await open(breakPath, 'wx', 0o644);
      await fh.close();
    } catch (err) {
      if (errno(err) !== 'EEXIST') return false;
      // Another process is breaking this lock; if it died doing so, its marker ages out.
      const st = await statOrUndefined(breakPath);
      if (st !== undefined && Date.now() - Number(st.mtimeMs) > this.staleLockMs) await unlink(breakPath).catch(() => undefined);
      return false;
    }
    try {
      const now = await readLock(lockPath);
      if (now !== undefined && now.ino === seen.ino && now.token === seen.token) await unlink(lockPath).catch(() => undefined);
      return true;
    } finally {
      await unlink(breakPath).catch(() => undefined);
    }
  }

  private isStale(lock: LockState): boolean {
    if (Date.now() - lock.mtimeMs > this.staleLockMs) return true;
    if (lock.pid === undefined || lock.host !== hostname()) return false;
    return !pidAlive(lock.pid);
  }
}

interface LockState {
  readonly ino: bigint;
  readonly mtimeMs: number;
  readonly token: string | undefined;
  readonly pid: number | undefined;
  readonly host: string | undefined;
}

async function readLock(lockPath: string): Promise<LockState | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(lockPath, 'r');
  } catch {
    return undefined;
  }
  try {
    const st = await fh.stat({ bigint: true });
    const text = (await fh.readFile()).toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined; // being written right now, or torn by a crash: only age can make it stale
    }
    const rec = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
    return {
      ino: st.ino,
      mtimeMs: Number(st.mtimeMs),
      token: typeof rec['token'] === 'string' ? rec['token'] : undefined,
      pid: typeof rec['pid'] === 'number' ? rec['pid'] : undefined,
      host: typeof rec['host'] === 'string' ? rec['host'] : undefined,
    };
  } finally {
    await fh.close();
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errno(err) === 'EPERM';
  }
}
