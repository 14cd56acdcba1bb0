/**
 * Compaction's rebuild: the record batches of consecutive tiered segments, read back from their data files
 * through the fetch path (`fetchFromParquet`, each batch re-compressed with its own codec so its attributes,
 * a column of the table, do not change) and written in offset order into one local segment file, which the
 * converter then turns into the merged segment's data file. Every batch the segments' offset indexes list
 * must come back, in order, inside its segment.
 *
 * It runs on the broker's thread (typed tables, or no conversion workers) or on a conversion worker
 * (./convert-worker.ts) over local copies of the files, so that decoding and re-compressing a whole group
 * never holds the thread serving produce and fetch.
 */
import { open } from 'node:fs/promises';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { iterateBatches } from '../../protocol/record-batch/batches.js';
import { decodeSegmentIndex } from '../offset-index/format.js';
import { TieringConvertError } from './errors.js';
import { createFooterCache } from './footer-cache.js';
import { fetchFromParquet } from './parquet-to-batches.js';

/** Bytes asked of one read while rebuilding (whole batches; the first is returned whole whatever its size). */
const READ_BYTES = 4 * 1024 * 1024;

/** One tiered segment to rebuild: its offsets and its offset index objects (each names its data file). */
export interface RebuildSegment {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly indexFiles: readonly string[];
}

export interface RebuildInput {
  readonly segments: readonly RebuildSegment[];
  /** The local segment file written (created or truncated). */
  readonly path: string;
  /** What is rebuilt, for error messages (`topic-partition segments a..b`). */
  readonly where: string;
  /** Waits as long as a rate limit needs for `bytes` more bytes read. */
  readonly throttle?: (bytes: number) => Promise<void>;
}

/** Writes the segments' batches into `input.path`; returns its size in bytes. */
export async function rebuildSegments(io: FileIO, input: RebuildInput): Promise<number> {
  const footers = createFooterCache(64 * 1024 * 1024);
  const fh = await open(input.path, 'w');
  let size = 0;
  try {
    for (const seg of input.segments) {
      let expected = 0;
      let got = 0;
      let prevLast = -1n;
      for (const location of seg.indexFiles) {
        const index = decodeSegmentIndex(await io.get(location));
        expected += index.batches.length;
        const tableLocation = location.slice(0, location.lastIndexOf('/kafka-index/'));
        let from = index.baseOffset;
        while (from <= index.lastOffset) {
          const r = await fetchFromParquet({ io, tableLocation, index, fetchOffset: from, maxBytes: READ_BYTES, footers, compression: 'original' });
          if (r.records.length === 0) break;
          for (const b of iterateBatches(r.records)) {
            if (b.baseOffset <= prevLast || b.lastOffset > BigInt(seg.lastOffset) || b.baseOffset < BigInt(seg.baseOffset)) {
              throw new TieringConvertError('INDEX_MISMATCH', `${input.where}: rebuilding segment ${seg.baseOffset}..${seg.lastOffset} returned batch ${b.baseOffset}..${b.lastOffset} out of order; the compaction is abandoned (the table is unchanged)`);
            }
            prevLast = b.lastOffset;
            got++;
          }
          await fh.write(r.records, 0, r.records.length, size);
          size += r.records.length;
          await input.throttle?.(r.records.length);
          if (r.nextOffset <= from) break;
          from = r.nextOffset;
        }
      }
      if (got !== expected) {
        throw new TieringConvertError('INDEX_MISMATCH', `${input.where}: segment ${seg.baseOffset}..${seg.lastOffset} lists ${expected} batches in its offset index, rebuilding it returned ${got}; the compaction is abandoned (the table is unchanged)`);
      }
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
  return size;
}
