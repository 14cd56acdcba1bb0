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
import type { BatchCache } from '../convert/batch-cache.js';
import { ReadPool } from '../convert/read-pool.js';
import { SegmentReader, type SegmentRead } from '../convert/segment-reader.js';
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
  /**
   * Worker threads serving Kafka reads of tiered segments (../convert/read-pool.ts), which also read ahead;
   * 0 (the default) reads on this thread, without read-ahead. The cache budgets are shared among them.
   */
  readonly readers?: number;
  /** Memory for read-ahead results not yet taken, across the read workers. Default 64 MiB. */
  readonly readAheadBytes?: number;
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
export const DEFAULT_READ_AHEAD_BYTES = 64 * MiB;

export class ConvertCodec implements SegmentCodec {
  /** Reads on this thread (no read workers); its caches stay empty when the workers read. */
  private readonly reader: SegmentReader;
  private readonly readers: ReadPool | null;
  private readonly pool: ConvertPool | null;

  constructor(private readonly options: ConvertCodecOptions = {}) {
    const budgets = { indexCacheBytes: options.indexCacheBytes ?? 64 * MiB, footerCacheBytes: options.footerCacheBytes ?? 64 * MiB, batchCacheBytes: options.batchCacheBytes ?? DEFAULT_BATCH_CACHE_BYTES };
    const readers = options.readers ?? 0;
    this.reader = new SegmentReader(budgets);
    // Each worker gets its share of the budgets (a partition's reads all go to one worker).
    const share = (n: number): number => Math.floor(n / readers);
    this.readers =
      readers > 0
        ? new ReadPool(readers, {
            indexCacheBytes: share(budgets.indexCacheBytes),
            footerCacheBytes: share(budgets.footerCacheBytes),
            batchCacheBytes: share(budgets.batchCacheBytes),
            readAheadBytes: share(options.readAheadBytes ?? DEFAULT_READ_AHEAD_BYTES),
          })
        : null;
    this.pool = (options.workers ?? 0) > 0 ? new ConvertPool(options.workers!, options.workersNice !== undefined ? { nice: options.workersNice } : {}) : null;
  }

  /** Rebuilt batches read on this thread (tests and benchmarks look at its hits and bytes). */
  get batches(): BatchCache {
    return this.reader.batches;
  }

  /** Fetches the read workers served from a read-ahead. */
  get readAheadHits(): number {
    return this.readers?.readAheadHits ?? 0;
  }

  /** Stops the conversion and read workers. */
  async close(): Promise<void> {
    await Promise.all([this.pool?.close(), this.readers?.close()]);
  }

  tableSchema(): Schema {
    return topicTableSchema();
  }

  cacheStats(): readonly CacheStats[] {
    const c = (this.readers ?? this.reader).counters();
    return (['remote_batches', 'parquet_footers', 'offset_indexes'] as const).map((cache) => ({ cache, ...c[cache] }));
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
   * Batches from the segment's first index (data file) holding `fetchOffset` or anything after it, read on
   * a read worker when there are any (reads of one partition on one worker, which reads ahead), else here.
   */
  async readSegment(input: ReadSegmentInput): Promise<RemoteFetchResult> {
    const read: SegmentRead = {
      indexFiles: input.indexFiles,
      fetchOffset: input.fetchOffset,
      maxBytes: input.maxBytes,
      minOneBatch: input.minOneBatch,
      compression: input.compression ?? this.options.compression ?? 'none',
      // The batch cache holds batches rebuilt the codec's way; another compression is rebuilt afresh.
      cached: input.compression === undefined,
    };
    const first = input.indexFiles[0];
    if (this.readers !== null && first !== undefined) {
      return this.readers.read(input.io, `${first.slice(0, first.lastIndexOf('/kafka-index/'))}#${input.partition}`, read);
    }
    return this.reader.read(input.io, read);
  }
}

/** The codec the broker uses. */
export function defaultSegmentCodec(options: ConvertCodecOptions = {}): SegmentCodec {
  return new ConvertCodec(options);
}
