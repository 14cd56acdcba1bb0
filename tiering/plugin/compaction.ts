/**
 * Compaction's rewrite step: one group of consecutive committed segments (compaction-plan.ts) becomes one
 * merged segment, written exactly as tiering would have written it had the log held one segment there. The
 * codec's rewriteSegments does the work (on a conversion worker when it has them, see convert-codec.ts):
 *
 * 1. The group's record batches are rebuilt from the table through the Kafka read path
 *    (tiering/convert/rebuild-segments.ts: batch by batch in offset order, stored offsets, original
 *    attributes: the batches are re-compressed with their own codec so `kafka.batch.attributes` does not
 *    change) into a temporary local segment file; every batch the inputs' offset indexes list must come
 *    back, in order.
 * 2. That file goes through the copy path's own conversion: data files and offset index come out as
 *    tiering makes them, named `<base>-<last>.c<first>-<last>` after the merged segment (never an input's
 *    name; a retried compaction overwrites its own earlier attempt).
 *
 * Nothing here commits or deletes: the caller swaps the inputs for the result in one rewrite commit, and
 * the inputs' objects stay for older snapshots and fetches in flight (snapshot expiry deletes them).
 */
import type { DataFile } from '../../iceberg/data-file.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import type { Schema } from '../../iceberg/schema.js';
import type { CompactionGroup } from './compaction-plan.js';
import type { SegmentEntry } from './partition-manifest.js';
import type { SegmentCodec } from './segment-codec.js';
import type { RecordTypers } from '../typed/record-typers.js';

export interface RewriteContext {
  readonly io: FileIO;
  readonly codec: SegmentCodec;
  readonly tableLocation: string;
  readonly schema: Schema;
  readonly specId: number;
  readonly topic: string;
  readonly partition: number;
  /** Where the temporary segment file goes (a fresh directory under it, removed after). */
  readonly tmpDir: string;
  /** Waits as long as the rate limit needs for `bytes` more bytes read (compaction's throttle). */
  readonly throttle?: (bytes: number) => Promise<void>;
  /**
   * Schema modes: the merged file is typed as the copy path types (its dead letters are already in the
   * dead-letter table and are not added again).
   */
  readonly typed?: RecordTypers | undefined;
  /** A tag for the outputs' names instead of compactedTag's (rebuilds: never an existing file's name). */
  readonly nameTag?: string;
}

export interface RewrittenGroup {
  readonly inputs: readonly SegmentEntry[];
  readonly entry: SegmentEntry;
  readonly dataFiles: readonly DataFile[];
}

/** The file-name tag of the merged segment [base, last]. */
export function compactedTag(baseOffset: number, lastOffset: number): string {
  return `c${baseOffset}-${lastOffset}`;
}

/** Rebuilds `group` into one merged segment's files (written, not committed). */
export async function rewriteGroup(ctx: RewriteContext, group: CompactionGroup): Promise<RewrittenGroup> {
  const first = group.segments[0];
  const last = group.segments[group.segments.length - 1];
  if (first === undefined || last === undefined) throw new RangeError('empty compaction group');
  const converted = await ctx.codec.rewriteSegments({
    io: ctx.io,
    tableLocation: ctx.tableLocation,
    schema: ctx.schema,
    specId: ctx.specId,
    partition: ctx.partition,
    segments: group.segments,
    nameTag: ctx.nameTag === undefined ? compactedTag(first.baseOffset, last.lastOffset) : `${ctx.nameTag}-${first.baseOffset}-${last.lastOffset}`,
    tmpDir: ctx.tmpDir,
    ...(ctx.throttle ? { throttle: ctx.throttle } : {}),
    ...(ctx.typed ? { typed: ctx.typed } : {}),
    where: `${ctx.topic}-${ctx.partition} segments ${first.baseOffset}..${last.lastOffset}`,
  });
  const entry: SegmentEntry = {
    baseOffset: first.baseOffset,
    lastOffset: last.lastOffset,
    maxTimestamp: Math.max(...group.segments.map((s) => s.maxTimestamp)),
    sizeInBytes: group.segments.reduce((n, s) => n + s.sizeInBytes, 0),
    dataFiles: converted.dataFiles.map((f) => f.file_path),
    indexFiles: [...converted.indexFiles],
  };
  return { inputs: group.segments, entry, dataFiles: converted.dataFiles };
}
