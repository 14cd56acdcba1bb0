import { open, rename, unlink } from 'node:fs/promises';
import { constants } from 'node:fs';
import { join } from 'node:path';

/** Segment files are named by base offset, zero-padded to 20 digits, like Kafka's. */
export const LOG_SUFFIX = '.log';
export const INDEX_SUFFIX = '.index';
export const TIME_INDEX_SUFFIX = '.timeindex';
export const TMP_SUFFIX = '.tmp';
/** A cleaned segment being written by the log cleaner; removed at open (the clean never finished). */
export const CLEANED_SUFFIX = '.log.cleaned';
/** A complete cleaned segment that replaces the segments in its range: `<base>-<end>.log.swap`. */
export const SWAP_SUFFIX = '.log.swap';
/** Beside a segment the cleaner wrote: its offsets have gaps (removed records), which recovery must accept. */
export const COMPACTED_SUFFIX = '.compacted';
/** Written on clean close, removed on open; its absence means the last segment must be recovered. */
export const CLEAN_SHUTDOWN_FILE = '.clean-shutdown';
export const LOG_START_CHECKPOINT_FILE = 'log-start-offset.checkpoint';

export function segmentFileName(baseOffset: number, suffix: string): string {
  return String(baseOffset).padStart(20, '0') + suffix;
}

export function segmentPath(dir: string, baseOffset: number, suffix: string): string {
  return join(dir, segmentFileName(baseOffset, suffix));
}

/** Parses `00000000000000001234.log` into 1234, or returns undefined for other names. */
export function parseSegmentFileName(name: string, suffix: string): number | undefined {
  if (!name.endsWith(suffix)) return undefined;
  const digits = name.slice(0, -suffix.length);
  if (!/^\d{20}$/.test(digits)) return undefined;
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** fsyncs a directory so that creations, renames and unlinks in it survive a power loss. */
export async function syncDir(dir: string): Promise<void> {
  const h = await open(dir, constants.O_RDONLY);
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/** Replaces `path` with `data` atomically (write temp, fsync, rename, fsync dir): readers see old or new, never half. */
export async function writeFileAtomic(dir: string, path: string, data: Uint8Array, sync = true): Promise<void> {
  const tmp = path + TMP_SUFFIX;
  const h = await open(tmp, 'w');
  try {
    let off = 0;
    while (off < data.length) {
      const { bytesWritten } = await h.write(data, off, data.length - off, off);
      off += bytesWritten;
    }
    if (sync) await h.datasync();
  } finally {
    await h.close();
  }
  await rename(tmp, path);
  if (sync) await syncDir(dir);
}

export async function unlinkIfExists(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
