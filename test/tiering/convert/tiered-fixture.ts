/**
 * The fixture segment (./segment-fixture.ts) tiered into a local-folder table: data files and offset indexes
 * stored under the table location, each file's index decoded back from its stored bytes (what the fetch path
 * uses is what was stored). Shared by the fetch-from-Parquet tests.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import type { ParquetCompression } from '../../../iceberg/parquet/writer.js';
import { convertSegment, type ConvertedFile } from '../../../tiering/convert/segment-to-parquet.js';
import { decodeSegmentIndex } from '../../../tiering/offset-index/format.js';
import { resolveLocation } from '../../../tiering/offset-index/location.js';
import { buildSegment } from './segment-fixture.js';

export interface Tiered {
  io: LocalFileIO;
  table: string;
  files: ConvertedFile[];
  segment: Buffer;
}

export interface TierOptions {
  readonly partition: number;
  readonly compression?: ParquetCompression;
  readonly targetFileBytes?: number;
  /** Default 8 KiB, so the fixture spans several row groups. */
  readonly targetRowGroupBytes?: number;
}

export async function tierFixture(t: { after: (fn: () => Promise<void>) => void }, o: TierOptions): Promise<Tiered> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-tier-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: dir, fsync: false });
  t.after(() => io.close());
  const table = `file://${dir}/kafka/topic`;
  const segment = buildSegment();
  const files: ConvertedFile[] = [];
  const options = {
    partition: o.partition,
    targetRowGroupBytes: o.targetRowGroupBytes ?? 8 * 1024,
    ...(o.compression ? { compression: o.compression } : {}),
    ...(o.targetFileBytes ? { targetFileBytes: o.targetFileBytes } : {}),
  };
  for await (const f of convertSegment(segment, options)) {
    if (f.dataPath !== null) await io.put(resolveLocation(table, f.dataPath), Buffer.from(f.parquet!.bytes));
    await io.put(resolveLocation(table, f.indexPath), f.indexBytes);
    files.push({ ...f, index: decodeSegmentIndex(await io.get(resolveLocation(table, f.indexPath))) });
  }
  return { io, table, files, segment };
}
