/**
 * The SegmentCodec over the conversion layer: `../convert/segment-to-parquet.ts` turns a segment into
 * Parquet data files plus one offset index per file (`../offset-index`), and this adapter stores them under
 * the table location with their deterministic names (data first, then its index, one file at a time, which
 * bounds memory to one file) and describes them as Iceberg DataFiles with metrics and split offsets,
 * partitioned by identity on `kafka.partition`.
 */
import { readFile } from 'node:fs/promises';
import { parquetDataFile, type DataFile } from '../../iceberg/data-file.js';
import type { PartitionSpec } from '../../iceberg/partition-spec.js';
import type { Schema } from '../../iceberg/schema.js';
import { convertSegment, type ConvertOptions } from '../convert/segment-to-parquet.js';
import { FIELD_IDS, topicTableSchema } from '../convert/schema.js';
import { resolveLocation } from '../offset-index/location.js';
import { TieringError, type RemoteFetchResult } from './api.js';
import type { ConvertedSegment, ConvertSegmentInput, ReadSegmentInput, SegmentCodec } from './segment-codec.js';

/** Name of the table's partition field (identity of `kafka.partition`). */
export const PARTITION_FIELD = 'kafka_partition';

export interface ConvertCodecOptions {
  /** Passed to the converter (file and row-group sizes, compression). */
  readonly convert?: Omit<ConvertOptions, 'partition'>;
  /** Rebuilds batches from a tiered segment; the conversion layer's Parquet reader. */
  readonly read?: (input: ReadSegmentInput) => Promise<RemoteFetchResult>;
}

export class ConvertCodec implements SegmentCodec {
  constructor(private readonly options: ConvertCodecOptions = {}) {}

  tableSchema(): Schema {
    return topicTableSchema();
  }

  partitionSpec(_schema: Schema): PartitionSpec {
    return { 'spec-id': 0, fields: [{ 'source-id': FIELD_IDS.partition, 'field-id': 1000, name: PARTITION_FIELD, transform: 'identity' }] };
  }

  async convertSegment(input: ConvertSegmentInput): Promise<ConvertedSegment> {
    const segment = await readFile(input.segmentPath);
    const dataFiles: DataFile[] = [];
    const indexFiles: string[] = [];
    for await (const file of convertSegment(segment, { ...this.options.convert, partition: input.partition })) {
      if (file.dataPath !== null && file.parquet !== null) {
        const location = resolveLocation(input.tableLocation, file.dataPath);
        const bytes = file.parquet.bytes;
        await input.io.put(location, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        dataFiles.push(
          parquetDataFile({
            file_path: location,
            partition: { [PARTITION_FIELD]: input.partition },
            metrics: file.parquet.metrics,
            split_offsets: file.parquet.splitOffsets,
          }),
        );
      }
      const indexLocation = resolveLocation(input.tableLocation, file.indexPath);
      await input.io.put(indexLocation, file.indexBytes);
      indexFiles.push(indexLocation);
    }
    return { dataFiles, indexFiles };
  }

  async readSegment(input: ReadSegmentInput): Promise<RemoteFetchResult> {
    if (this.options.read === undefined) {
      throw new TieringError('CONVERSION_FAILED', `cannot read ${input.partition}@${input.fetchOffset} from the table: this build has no Parquet-to-batches reader configured; pass ConvertCodecOptions.read`);
    }
    return this.options.read(input);
  }
}

/** The codec the broker uses. */
export function defaultSegmentCodec(): SegmentCodec {
  return new ConvertCodec();
}
