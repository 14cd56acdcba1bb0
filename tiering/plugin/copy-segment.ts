/**
 * Copying one closed segment into a topic's table (iceberg-topic.ts copy): its data files and index objects,
 * under deterministic names and not visible until a commit names them, and the position delete files over
 * its rows of aborted transactions and of ones still open (txn-deletes.ts). The 'mid-upload' crash point is
 * reached once its first object is stored (crash-points.ts).
 */
import type { DataFile } from '../../iceberg/data-file.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import type { Table } from '../../iceberg/table.js';
import { FIELD_IDS } from '../convert/schema.js';
import type { LogSegmentData, PartitionTransactions, RemoteLogSegmentMetadata, SegmentRowCounts } from './api.js';
import { crashAfterFirstPut } from './crash-points.js';
import type { SegmentCodec } from './segment-codec.js';
import type { TopicTyping } from './topic-typing.js';
import { writeTxnDeletes } from './txn-deletes.js';

/** What copySegment needs of the topic. */
export interface CopySegmentContext {
  readonly topic: string;
  readonly io: FileIO;
  readonly codec: SegmentCodec;
  readonly table: Table;
  readonly typing: TopicTyping;
}

/** A copied segment: what the copy answers, and the files its commit adds (commit-segments.ts). */
export interface CopiedSegment {
  readonly metadata: RemoteLogSegmentMetadata;
  readonly dataFiles: readonly DataFile[];
  /** Position delete files over its transactional rows. */
  readonly deletes: readonly DataFile[];
}

/**
 * Converts and uploads `segment`, and writes the position delete files over its transactional rows that
 * `txns` (the broker's view of the partition's transactions) calls for; none without `txns`.
 */
export async function copySegment(ctx: CopySegmentContext, segment: LogSegmentData, txns: PartitionTransactions | undefined): Promise<CopiedSegment> {
  const converted = await ctx.codec.convertSegment({
    io: crashAfterFirstPut(ctx.io),
    tableLocation: ctx.table.location,
    schema: ctx.table.schema(),
    specId: ctx.table.specId(),
    partition: segment.partition,
    baseOffset: segment.baseOffset,
    lastOffset: segment.lastOffset,
    segmentPath: segment.path,
    ...(ctx.typing.typers ? { typed: ctx.typing.typers } : {}),
  });
  await ctx.typing.converted(segment, converted);
  const { deletes: aborted } = await writeTxnDeletes(ctx.io, ctx.table.location, { lastOffset: segment.lastOffset, ...converted }, txns);
  const metadata: RemoteLogSegmentMetadata = {
    topic: ctx.topic,
    partition: segment.partition,
    baseOffset: segment.baseOffset,
    lastOffset: segment.lastOffset,
    maxTimestamp: segment.maxTimestamp,
    sizeInBytes: segment.sizeInBytes,
    dataFiles: converted.dataFiles.map((f) => f.file_path),
    indexFiles: [...converted.indexFiles],
    ...(aborted.length > 0 ? { deleteFiles: aborted.map((d) => d.file_path) } : {}),
    // In a schema mode `value` is also null where the typed columns rebuild the value: count tombstones.
    rows: converted.typed ? { ...rowCounts(converted.dataFiles), nullValues: converted.typed.counts.nulls } : rowCounts(converted.dataFiles),
  };
  return { metadata, dataFiles: converted.dataFiles, deletes: aborted };
}

/** Rows, null keys and null values of converted data files, from their Iceberg column metrics. */
function rowCounts(files: readonly DataFile[]): SegmentRowCounts {
  let records = 0;
  let nullKeys = 0;
  let nullValues = 0;
  for (const f of files) {
    records += Number(f.record_count);
    nullKeys += Number(f.null_value_counts?.get(FIELD_IDS.key) ?? 0n);
    nullValues += Number(f.null_value_counts?.get(FIELD_IDS.value) ?? 0n);
  }
  return { records, nullKeys, nullValues };
}
