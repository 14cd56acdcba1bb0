/**
 * Small filesystem helpers shared by the local FileIO (local.ts) and its object locks (local-lock.ts): errno
 * codes, stat that treats a missing path as undefined, and errors that say what to do.
 */
import type { BigIntStats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { FileIOError } from './file-io.js';

export async function statOrUndefined(path: string): Promise<BigIntStats | undefined> {
  try {
    return await stat(path, { bigint: true });
  } catch (err) {
    if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return undefined;
    throw ioError(err, `stat ${path}`);
  }
}

export function errno(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

export function ioError(err: unknown, what: string): FileIOError {
  if (err instanceof FileIOError) return err;
  const code = errno(err);
  const hint =
    code === 'ENOSPC'
      ? ': the disk is full, free space and retry'
      : code === 'EACCES' || code === 'EPERM'
        ? ': permission denied, check the ownership of the warehouse folder'
        : code === 'ENAMETOOLONG'
          ? ': the name is too long for this filesystem'
          : '';
  return new FileIOError('IO_ERROR', `could not ${what} (${code ?? String(err)})${hint}`, { cause: err });
}
