/**
 * The broker's log directory as DescribeLogDirs reports it: its absolute path and the size of the volume it
 * is on (Kafka's FileStore total and usable space).
 */
import { statfs } from 'node:fs/promises';
import { resolve } from 'node:path';

export interface VolumeSpace {
  readonly totalBytes: number;
  /** What an unprivileged writer may still use (statfs `bavail`). */
  readonly usableBytes: number;
}

export interface LogDir {
  /** Absolute path. */
  readonly path: string;
  /** Rejects when the volume cannot be read (the directory is gone or its disk failed). */
  volume(): Promise<VolumeSpace>;
}

export function localLogDir(dir: string): LogDir {
  const path = resolve(dir);
  return {
    path,
    async volume() {
      const s = await statfs(path, { bigint: false });
      return { totalBytes: s.blocks * s.bsize, usableBytes: s.bavail * s.bsize };
    },
  };
}
