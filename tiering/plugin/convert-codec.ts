/**
 * The SegmentCodec over the conversion layer: `../convert/segment-to-parquet.ts` turns a segment into
 * Parquet data files plus one offset index per file (`../offset-index`), and this adapter stores them under
 * the table location with their deterministic names (data first, then its index, one file at a time; the
 * segment is read a window of about one file at a time, so memory stays about two files' worth whatever the
 * segment's size) and describes them as Iceberg DataFiles with metrics and split offsets,
 * partitioned by identity on `kafka.partition`.
 */
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parquetDataFile, type DataFile } from '../../iceberg/data-file.js';
import type { PartitionSpec } from '../../iceberg/partition-spec.js';
import type { Schema } from '../../iceberg/schema.js';
import { convertSegment, type ConvertOptions, type SegmentSource } from '../convert/segment-to-parquet.js';
import { FIELD_IDS, topicTableSchema } from '../convert/schema.js';
import { resolveLocation } from '../offset-index/location.js';
import { ByteBudgetCache } from '../offset-index/cache.js';
import { decodeSegmentIndex, type SegmentIndex } from '../offset-index/format.js';
import { fetchFromParquet } from '../convert/parquet-to-batches.js';
import { createBatchCache, type BatchCache } from '../convert/batch-cache.js';
import { createFooterCache, type FooterCache } from '../convert/footer-cache.js';
import type { RebuildCompression } from '../convert/batch-assembly.js';
import type { RemoteFetchResult } from './api.js';
import type { DataFileMetrics } from '../../iceberg/metrics.js';
import { ConvertPool, MAX_SPARE_WINDOW_BYTES } from '../convert/convert-pool.js';
import type { DeadLetter, TypedCounts } from '../typed/typed-rows.js';
import { rebuildSegments, type RebuildSegment } from '../convert/rebuild-segments.js';
import type { CacheStats, ConvertedSegment, ConvertSegmentInput, ReadSegmentInput, RewriteSegmentsInput, SegmentCodec } from './segment-codec.js';

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
  /**
   * Worker threads converting segments (../convert/convert-pool.ts), off the thread that serves produce and
   * fetch; 0 (the default) converts in this thread. Typed (schema mode) segments always convert here.
   */
  readonly workers?: number;
  /** Nice value of the workers' threads (see ConvertPoolOptions); default 0. */
  readonly workersNice?: number;
}

/** One converted file, from this thread's converter or a worker's, ready to upload. */
interface OutputFile {
  readonly dataPath: string | null;
  readonly parquet: { readonly bytes: Uint8Array; readonly metrics: DataFileMetrics; readonly splitOffsets: bigint[]; readonly release?: () => void } | null;
  readonly indexPath: string;
  readonly indexBytes: Uint8Array;
}

const MiB = 1024 * 1024;
export const DEFAULT_BATCH_CACHE_BYTES = 128 * MiB;

export class ConvertCodec implements SegmentCodec {
  private readonly indexes: ByteBudgetCache<SegmentIndex>;
  private readonly footers: FooterCache;
  /** Rebuilt batches; exposed so operators (metrics) and tests can see its hits and bytes. */
  readonly batches: BatchCache;
  private readonly pool: ConvertPool | null;

  constructor(private readonly options: ConvertCodecOptions = {}) {
    const indexSizes = new WeakMap<SegmentIndex, number>();
    this.sizes = indexSizes;
    this.indexes = new ByteBudgetCache<SegmentIndex>({ maxBytes: options.indexCacheBytes ?? 64 * MiB, sizeOf: (i) => indexSizes.get(i) ?? 4096 });
    this.footers = createFooterCache(options.footerCacheBytes ?? 64 * MiB);
    this.batches = createBatchCache(options.batchCacheBytes ?? DEFAULT_BATCH_CACHE_BYTES);
    this.pool = (options.workers ?? 0) > 0 ? new ConvertPool(options.workers!, options.workersNice !== undefined ? { nice: options.workersNice } : {}) : null;
  }

  /** Stops the conversion workers. */
  async close(): Promise<void> {
    await this.pool?.close();
  }

  private readonly sizes: WeakMap<SegmentIndex, number>;

  tableSchema(): Schema {
    return topicTableSchema();
  }

  cacheStats(): readonly CacheStats[] {
    const b = this.batches;
    return [
      { cache: 'remote_batches', hits: b.hits, misses: b.misses, bytes: b.bytes, maxBytes: b.maxBytes, entries: b.size },
      { cache: 'parquet_footers', hits: this.footers.hits, misses: this.footers.misses, bytes: this.footers.bytes, maxBytes: this.footers.maxBytes, entries: this.footers.size },
      { cache: 'offset_indexes', hits: this.indexes.hits, misses: this.indexes.misses, bytes: this.indexes.bytes, maxBytes: this.indexes.maxBytes, entries: this.indexes.size },
    ];
  }

  partitionSpec(_schema: Schema): PartitionSpec {
    return { 'spec-id': 0, fields: [{ 'source-id': FIELD_IDS.partition, 'field-id': 1000, name: PARTITION_FIELD, transform: 'identity' }] };
  }

  async convertSegment(input: ConvertSegmentInput): Promise<ConvertedSegment> {
    if (this.pool !== null && input.typed === undefined) {
      const { typed: _, ...convert } = this.options.convert ?? {};
      return this.store(input, this.pool.convert(input.segmentPath, { ...convert, ...this.fileOptions(input) }));
    }
    const fh = await open(input.segmentPath, 'r');
    // A window of about one data file's log bytes is reused from conversion to conversion (fresh memory
    // costs more to touch here than the read itself); concurrent conversions each get their own.
    const window = { buf: this.spare };
    this.spare = null;
    try {
      const size = (await fh.stat()).size;
      const source: SegmentSource = { size, read: async (target, offset, length, position) => (await fh.read(target, offset, length, position)).bytesRead };
      return await this.convertSource(source, input, window);
    } finally {
      await fh.close();
      // Nothing the conversion returns points into the window (stored batches are copies): reusable now.
      if (window.buf !== null) this.keepSpare(window.buf);
    }
  }

  private keepSpare(buf: Buffer): void {
    if (buf.length <= MAX_SPARE_WINDOW_BYTES && (this.spare === null || buf.length > this.spare.length)) this.spare = buf;
  }

  /** The window kept for the next conversion (at most one, of at most MAX_SPARE_WINDOW_BYTES). */
  private spare: Buffer | null = null;

  private fileOptions(input: ConvertSegmentInput): { partition: number; targetFileBytes?: number; nameTag?: string } {
    return {
      partition: input.partition,
      ...(input.targetFileBytes !== undefined ? { targetFileBytes: input.targetFileBytes } : {}),
      ...(input.nameTag !== undefined ? { nameTag: input.nameTag } : {}),
    };
  }

  private async convertSource(source: SegmentSource, input: ConvertSegmentInput, window: { buf: Buffer | null }): Promise<ConvertedSegment> {
    const options: ConvertOptions = {
      ...this.options.convert,
      ...this.fileOptions(input),
      ...(input.typed !== undefined ? { typed: input.typed } : {}),
    };
    const counts: TypedCounts = { exact: 0, rawKept: 0, dead: 0, nulls: 0 };
    const deadLetters: DeadLetter[] = [];
    async function* files(): AsyncGenerator<OutputFile, void, void> {
      for await (const file of convertSegment(source, options, window)) {
        if (file.typed) {
          counts.exact += file.typed.counts.exact;
          counts.rawKept += file.typed.counts.rawKept;
          counts.dead += file.typed.counts.dead;
          counts.nulls += file.typed.counts.nulls;
          deadLetters.push(...file.typed.deadLetters);
        }
        yield file;
      }
    }
    const stored = await this.store(input, files());
    return { ...stored, ...(input.typed !== undefined ? { typed: { counts, deadLetters } } : {}) };
  }

  /** Uploads converted files as they come (data, then its index), and describes the data files. */
  private async store(input: ConvertSegmentInput, files: AsyncIterable<OutputFile>): Promise<ConvertedSegment> {
    const dataFiles: DataFile[] = [];
    const indexFiles: string[] = [];
    for await (const file of files) {
      if (file.dataPath !== null && file.parquet !== null) {
        const location = resolveLocation(input.tableLocation, file.dataPath);
        const bytes = file.parquet.bytes;
        await input.io.put(location, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        // Uploaded and not kept: the next file's writer may reuse the memory.
        file.parquet.release?.();
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
      const ib = file.indexBytes;
      await input.io.put(indexLocation, Buffer.isBuffer(ib) ? ib : Buffer.from(ib.buffer, ib.byteOffset, ib.byteLength));
      indexFiles.push(indexLocation);
    }
    return { dataFiles, indexFiles };
  }

  /**
   * Compaction's rewrite. With conversion workers (and a `key_value` table) the inputs' data and index files
   * are copied into a local folder (I/O only, throttled by the data bytes read) and a worker rebuilds the
   * merged segment from them and converts it, so decoding and re-compressing the group never runs on this
   * thread; otherwise this thread rebuilds it (throttled by the log bytes rebuilt) and converts it as a
   * closed segment would be. Either way the merged segment becomes one data file.
   */
  async rewriteSegments(input: RewriteSegmentsInput): Promise<ConvertedSegment> {
    const first = input.segments[0];
    const last = input.segments[input.segments.length - 1];
    if (first === undefined || last === undefined) throw new RangeError('rewriteSegments needs at least one segment');
    const dir = await mkdtemp(join(input.tmpDir, 'floe-compact-'));
    try {
      const segmentPath = join(dir, `${input.partition}-${first.baseOffset}.log`);
      const target: ConvertSegmentInput = { io: input.io, tableLocation: input.tableLocation, schema: input.schema, specId: input.specId, partition: input.partition, baseOffset: first.baseOffset, lastOffset: last.lastOffset, segmentPath, nameTag: input.nameTag };
      if (this.pool !== null && input.typed === undefined) {
        const root = `file://${join(dir, 'table')}`;
        const segments = await this.localCopies(input, root);
        if (segments !== null) {
          const { typed: _, ...convert } = this.options.convert ?? {};
          return await this.store(target, this.pool.rebuild({ root, segments, segmentPath, where: input.where }, { ...convert, partition: input.partition, nameTag: input.nameTag }));
        }
      }
      const size = await rebuildSegments(input.io, { segments: input.segments, path: segmentPath, where: input.where, ...(input.throttle ? { throttle: input.throttle } : {}) });
      return await this.convertSegment({ ...target, targetFileBytes: Math.max(1, size + 1), ...(input.typed !== undefined ? { typed: input.typed } : {}) });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Copies the inputs' index and data files under `root` (a local folder's file:// location) at their paths
   * relative to the table; null when a file is not under the table location (then the rewrite stays here).
   */
  private async localCopies(input: RewriteSegmentsInput, root: string): Promise<RebuildSegment[] | null> {
    const prefix = `${input.tableLocation}/`;
    const all = input.segments.flatMap((s) => [...s.indexFiles, ...s.dataFiles]);
    if (!all.every((loc) => loc.startsWith(prefix) && !loc.slice(prefix.length).split('/').includes('..'))) return null;
    const local = (loc: string): string => `${root}/${loc.slice(prefix.length)}`;
    for (const seg of input.segments) {
      for (const loc of [...seg.indexFiles, ...seg.dataFiles]) {
        const bytes = await input.io.get(loc);
        const path = local(loc).slice('file://'.length);
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, bytes);
        if (seg.dataFiles.includes(loc)) await input.throttle?.(bytes.length);
      }
    }
    return input.segments.map((s) => ({ baseOffset: s.baseOffset, lastOffset: s.lastOffset, indexFiles: s.indexFiles.map(local) }));
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
        // The batch cache holds batches rebuilt the codec's way; another compression is rebuilt afresh.
        ...(this.batches.maxBytes > 0 && input.compression === undefined ? { batches: this.batches } : {}),
        compression: input.compression ?? this.options.compression ?? 'none',
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
