/**
 * The SegmentCodec over the conversion layer: `../convert/segment-to-parquet.ts` turns a segment into
 * Parquet data files plus one offset index per file (`../offset-index`), and this adapter stores them under
 * the table location with their deterministic names (data first, then its index, one file at a time, which
 * bounds memory to one file) and describes them as Iceberg DataFiles with metrics and split offsets,
 * partitioned by identity on `kafka.partition`.
 */
import { open } from 'node:fs/promises';
import { parquetDataFile, type DataFile } from '../../iceberg/data-file.js';
import type { PartitionSpec } from '../../iceberg/partition-spec.js';
import type { Schema } from '../../iceberg/schema.js';
import { convertSegment, type ConvertOptions } from '../convert/segment-to-parquet.js';
import { FIELD_IDS, topicTableSchema } from '../convert/schema.js';
import { resolveLocation } from '../offset-index/location.js';
import { ByteBudgetCache } from '../offset-index/cache.js';
import { decodeSegmentIndex, type SegmentIndex } from '../offset-index/format.js';
import { createBatchCache, createFooterCache, fetchFromParquet, type BatchCache, type FooterCache, type RebuildCompression } from '../convert/parquet-to-batches.js';
import type { RemoteFetchResult } from './api.js';
import type { ConvertedSegment, ConvertSegmentInput, ReadSegmentInput, SegmentCodec } from './segment-codec.js';

/** Name of the table's partition field (identity of `kafka.partition`). */
export const PARTITION_FIELD = 'kafka_partition';

export interface ConvertCodecOptions {
  /** Passed to the converter (file and row-group sizes, compression). */
  readonly convert?: Omit<ConvertOptions, 'partition'>;
  /** Memory for cached offset indexes and Parquet footers. Default 64 MiB each. */
  readonly indexCacheBytes?: number;
  readonly footerCacheBytes?: number;
  /**
   * Memory for rebuilt record batches, so repeated reads of one remote range are served from memory
   * (broker setting `remote.log.reader.cache.total.size.bytes`). Default 128 MiB; 0 turns the cache off.
   */
  readonly batchCacheBytes?: number;
  /** How rebuilt batches are compressed (see ../convert/parquet-to-batches.ts). Default 'none'. */
  readonly compression?: RebuildCompression;
}

const MiB = 1024 * 1024;
/** Largest segment buffer kept for reuse between conversions (segments roll at 1 GiB by default). */
const MAX_SPARE_SEGMENT_BYTES = 128 * MiB;
export const DEFAULT_BATCH_CACHE_BYTES = 128 * MiB;

export class ConvertCodec implements SegmentCodec {
  private readonly indexes: ByteBudgetCache<SegmentIndex>;
  private readonly footers: FooterCache;
  /** Rebuilt batches; exposed so operators (metrics) and tests can see its hits and bytes. */
  readonly batches: BatchCache;

  constructor(private readonly options: ConvertCodecOptions = {}) {
    const indexSizes = new WeakMap<SegmentIndex, number>();
    this.sizes = indexSizes;
    this.indexes = new ByteBudgetCache<SegmentIndex>({ maxBytes: options.indexCacheBytes ?? 64 * MiB, sizeOf: (i) => indexSizes.get(i) ?? 4096 });
    this.footers = createFooterCache(options.footerCacheBytes ?? 64 * MiB);
    this.batches = createBatchCache(options.batchCacheBytes ?? DEFAULT_BATCH_CACHE_BYTES);
  }

  private readonly sizes: WeakMap<SegmentIndex, number>;

  tableSchema(): Schema {
    return topicTableSchema();
  }

  partitionSpec(_schema: Schema): PartitionSpec {
    return { 'spec-id': 0, fields: [{ 'source-id': FIELD_IDS.partition, 'field-id': 1000, name: PARTITION_FIELD, transform: 'identity' }] };
  }

  async convertSegment(input: ConvertSegmentInput): Promise<ConvertedSegment> {
    const { segment, arena } = await this.readSegmentFile(input.segmentPath);
    try {
      return await this.convertBytes(segment, input);
    } finally {
      // Nothing the conversion returns points into the segment (stored batches are copies): reusable now.
      if (arena.length <= MAX_SPARE_SEGMENT_BYTES && (this.spare === null || arena.length > this.spare.length)) this.spare = arena;
    }
  }

  /**
   * One closed segment read into memory; the buffer is reused for the next segment of this codec (a
   * segment is tens of MiB, and fresh memory costs more to touch here than the read itself). At most one
   * buffer of up to MAX_SPARE_SEGMENT_BYTES is kept between conversions; larger segments are not kept.
   */
  private spare: Buffer | null = null;

  private async readSegmentFile(path: string): Promise<{ segment: Buffer; arena: Buffer }> {
    const fh = await open(path, 'r');
    try {
      const size = (await fh.stat()).size;
      const taken = this.spare !== null && this.spare.length >= size ? this.spare : null;
      if (taken !== null) this.spare = null;
      const arena = taken ?? Buffer.allocUnsafe(Math.max(1, size));
      let read = 0;
      while (read < size) {
        const { bytesRead } = await fh.read(arena, read, size - read, read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      // A segment is closed before it is tiered; a short read means it shrank, which convertSegment reports.
      return { segment: arena.subarray(0, read), arena };
    } finally {
      await fh.close();
    }
  }

  private async convertBytes(segment: Buffer, input: ConvertSegmentInput): Promise<ConvertedSegment> {
    const dataFiles: DataFile[] = [];
    const indexFiles: string[] = [];
    for await (const file of convertSegment(segment, { ...this.options.convert, partition: input.partition })) {
      if (file.dataPath !== null && file.parquet !== null) {
        const location = resolveLocation(input.tableLocation, file.dataPath);
        const bytes = file.parquet.bytes;
        await input.io.put(location, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        // Uploaded and not kept: the next file's writer may reuse the memory.
        file.parquet.release();
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

  /**
   * Batches from the segment's first index (data file) holding `fetchOffset` or anything after it. Indexes
   * and footers come from byte-bounded LRU caches, so a hot partition costs one range read per fetch, and
   * rebuilt batches from a third, so a range read again is served from memory.
   */
  async readSegment(input: ReadSegmentInput): Promise<RemoteFetchResult> {
    for (const location of input.indexFiles) {
      const index = await this.indexes.get(location, async () => {
        const bytes = await input.io.get(location);
        const decoded = decodeSegmentIndex(bytes);
        this.sizes.set(decoded, bytes.length);
        return decoded;
      });
      if (index.lastOffset < BigInt(input.fetchOffset)) continue;
      const tableLocation = location.slice(0, location.lastIndexOf('/kafka-index/'));
      const r = await fetchFromParquet({
        io: input.io,
        tableLocation,
        index,
        fetchOffset: BigInt(input.fetchOffset),
        maxBytes: input.maxBytes,
        footers: this.footers,
        ...(this.batches.maxBytes > 0 ? { batches: this.batches } : {}),
        compression: this.options.compression ?? 'none',
      });
      if (r.records.length === 0) continue;
      // KIP-74: only the first partition of a response may exceed its limit, by its first batch.
      if (!input.minOneBatch && r.records.length > input.maxBytes) return { records: Buffer.alloc(0), nextOffset: input.fetchOffset };
      return { records: r.records, nextOffset: Number(r.nextOffset) };
    }
    return { records: Buffer.alloc(0), nextOffset: input.fetchOffset };
  }
}

/** The codec the broker uses. */
export function defaultSegmentCodec(options: ConvertCodecOptions = {}): SegmentCodec {
  return new ConvertCodec(options);
}
