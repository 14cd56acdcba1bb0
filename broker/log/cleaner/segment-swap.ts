/**
 * The on-disk protocol by which the log cleaner replaces a run of segments with one cleaned segment, so that
 * a kill -9 at any point leaves either the old segments or the new one, never a mix and never a loss
 * (Kafka's `.cleaned` → `.swap` → `.log` sequence):
 *
 * 1. The cleaned batches are written to `<base>.log.cleaned` and fsynced. A crash now leaves the old
 *    segments; open() deletes the `.cleaned` file.
 * 2. It is renamed to `<base>-<end>.log.swap` (the commit point) and the directory is fsynced. The name holds
 *    the range it replaces: every segment whose base offset is in [base, end).
 * 3. completeSwap: the old segments in (base, end) and the index files of `<base>` are deleted, a
 *    `<base>.compacted` marker says the segment's offsets have gaps, and the swap file is renamed over
 *    `<base>.log` (atomic). A crash anywhere in 3 is finished by recoverSwaps at the next open, which runs
 *    the same idempotent steps.
 */
import { open, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CLEANED_SUFFIX,
  COMPACTED_SUFFIX,
  INDEX_SUFFIX,
  LOG_SUFFIX,
  SWAP_SUFFIX,
  TIME_INDEX_SUFFIX,
  parseSegmentFileName,
  segmentFileName,
  segmentPath,
  syncDir,
  unlinkIfExists,
} from '../files.js';

export interface SwapRange {
  /** Base offset of the first replaced segment, and of the cleaned one. */
  base: number;
  /** Exclusive: segments with base offsets in [base, end) are replaced. */
  end: number;
}

export function swapFileName(range: SwapRange): string {
  return `${segmentFileName(range.base, '')}-${segmentFileName(range.end, '')}${SWAP_SUFFIX}`;
}

/** Parses `<20 digits>-<20 digits>.log.swap`; undefined for any other name. */
export function parseSwapFileName(name: string): SwapRange | undefined {
  const m = /^(\d{20})-(\d{20})\.log\.swap$/.exec(name);
  if (m === null) return undefined;
  const base = Number(m[1]);
  const end = Number(m[2]);
  return Number.isSafeInteger(base) && Number.isSafeInteger(end) && base < end ? { base, end } : undefined;
}

/** Steps 1 and 2: writes the cleaned bytes durably and commits them as a swap file; returns its path. */
export async function writeSwap(dir: string, range: SwapRange, data: Buffer): Promise<string> {
  const cleaned = segmentPath(dir, range.base, CLEANED_SUFFIX);
  const h = await open(cleaned, 'w');
  try {
    let off = 0;
    while (off < data.length) off += (await h.write(data, off, data.length - off, off)).bytesWritten;
    await h.datasync();
  } finally {
    await h.close();
  }
  const swap = join(dir, swapFileName(range));
  await rename(cleaned, swap);
  await syncDir(dir);
  return swap;
}

/** Step 3, idempotent: deletes what the swap replaces and renames it to `<base>.log`. */
export async function completeSwap(dir: string, range: SwapRange, names?: readonly string[]): Promise<void> {
  const listed = names ?? (await readdir(dir));
  for (const name of listed) {
    for (const suffix of [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, COMPACTED_SUFFIX]) {
      const b = parseSegmentFileName(name, suffix);
      if (b !== undefined && b > range.base && b < range.end) await unlinkIfExists(join(dir, name));
    }
  }
  await unlinkIfExists(segmentPath(dir, range.base, INDEX_SUFFIX));
  await unlinkIfExists(segmentPath(dir, range.base, TIME_INDEX_SUFFIX));
  const marker = await open(segmentPath(dir, range.base, COMPACTED_SUFFIX), 'w');
  await marker.close();
  await syncDir(dir);
  await rename(join(dir, swapFileName(range)), segmentPath(dir, range.base, LOG_SUFFIX));
  await syncDir(dir);
}

/**
 * At open: deletes unfinished `.cleaned` files and finishes every committed swap, oldest first. Returns how
 * many swaps were finished.
 */
export async function recoverSwaps(dir: string, names: readonly string[]): Promise<number> {
  let done = 0;
  for (const name of names) if (name.endsWith(CLEANED_SUFFIX)) await unlinkIfExists(join(dir, name));
  const swaps = names.map(parseSwapFileName).filter((r): r is SwapRange => r !== undefined);
  swaps.sort((a, b) => a.base - b.base);
  for (const range of swaps) {
    await completeSwap(dir, range, names);
    done++;
  }
  return done;
}
