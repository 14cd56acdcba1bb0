/**
 * Kafka reads of a tiered segment (`SegmentReader`): its offset indexes, the Parquet footers of their data
 * files and rebuilt batches, each under a byte budget, and the fetch itself (./parquet-to-batches.ts). The
 * codec runs one on the broker's thread, or one per read worker (./read-pool.ts); both give the same bytes.
 *
 * Read-ahead (workers only): after serving a fetch, the reader starts the next one (the offset after it,
 * the same maxBytes) so that a consumer reading forward finds it decoded while it was handling the last
 * response. A read-ahead serves only a fetch at its offset with at most its maxBytes, cut to that fetch's
 * maxBytes by the same plan (./fetch-plan.ts), so the bytes are always those a direct read gives.
 * Read-aheads that nobody takes are dropped, oldest first, past a byte budget.
 */
import type { FileIO } from '../../iceberg/io/file-io.js';
import { BATCH_HEADER_SIZE } from '../../protocol/record-batch/header.js';
import { ByteBudgetCache } from '../offset-index/cache.js';
import { decodeSegmentIndex, type SegmentIndex } from '../offset-index/format.js';
import type { RebuildCompression } from './batch-assembly.js';
import { createBatchCache, type BatchCache } from './batch-cache.js';
import { planFetch } from './fetch-plan.js';
import { createFooterCache, type FooterCache } from './footer-cache.js';
import { fetchFromParquet, type RemoteFetchResult } from './parquet-to-batches.js';

const MiB = 1024 * 1024;

export interface SegmentReaderOptions {
  /** Memory for cached offset indexes and Parquet footers. Default 64 MiB each. */
  readonly indexCacheBytes?: number;
  readonly footerCacheBytes?: number;
  /** Memory for rebuilt batches read more than once (../convert/batch-cache.ts); 0 turns it off. */
  readonly batchCacheBytes: number;
  /** Memory for read-ahead results not yet taken; 0 (the default) reads nothing ahead. */
  readonly readAheadBytes?: number;
}

/** One Kafka read of a tiered segment. */
export interface SegmentRead {
  /** The segment's offset indexes, one per data file, in offset order. */
  readonly indexFiles: readonly string[];
  readonly fetchOffset: number;
  readonly maxBytes: number;
  /** KIP-74: whether the batch at fetchOffset comes back even when it alone is larger than maxBytes. */
  readonly minOneBatch: boolean;
  readonly compression: RebuildCompression;
  /** Whether rebuilt batches may come from (and go to) the batch cache. */
  readonly cached: boolean;
}

export interface SegmentReadResult {
  readonly records: Buffer;
  readonly nextOffset: number;
}

export interface CacheCounters {
  readonly hits: number;
  readonly misses: number;
  readonly bytes: number;
  readonly maxBytes: number;
  readonly entries: number;
}

/** Counters of a reader's caches, by the names metrics give them. */
export interface ReaderCacheCounters {
  readonly remote_batches: CacheCounters;
  readonly parquet_footers: CacheCounters;
  readonly offset_indexes: CacheCounters;
}

/** A read-ahead: the fetch at `fetchOffset` of one data file, with the maxBytes it was planned with. */
interface Ahead {
  readonly maxBytes: number;
  readonly compression: RebuildCompression;
  readonly cached: boolean;
  readonly result: Promise<RemoteFetchResult | null>;
  bytes: number;
}

export class SegmentReader {
  private readonly indexes: ByteBudgetCache<SegmentIndex>;
  private readonly sizes = new WeakMap<SegmentIndex, number>();
  readonly footers: FooterCache;
  readonly batches: BatchCache;
  /** Read-aheads by `${index location}@${offset}`, oldest first. */
  private readonly ahead = new Map<string, Ahead>();
  private aheadBytes = 0;
  /** Fetches served from a read-ahead (tests and benchmarks read it). */
  readAheadHits = 0;

  constructor(private readonly options: SegmentReaderOptions) {
    this.indexes = new ByteBudgetCache<SegmentIndex>({ maxBytes: options.indexCacheBytes ?? 64 * MiB, sizeOf: (i) => this.sizes.get(i) ?? 4096 });
    this.footers = createFooterCache(options.footerCacheBytes ?? 64 * MiB);
    this.batches = createBatchCache(options.batchCacheBytes);
  }

  counters(): ReaderCacheCounters {
    const b = this.batches;
    const f = this.footers;
    const i = this.indexes;
    return {
      remote_batches: { hits: b.hits, misses: b.misses, bytes: b.bytes, maxBytes: b.maxBytes, entries: b.size },
      parquet_footers: { hits: f.hits, misses: f.misses, bytes: f.bytes, maxBytes: f.maxBytes, entries: f.size },
      offset_indexes: { hits: i.hits, misses: i.misses, bytes: i.bytes, maxBytes: i.maxBytes, entries: i.size },
    };
  }

  /**
   * Batches from the segment's first index (data file) holding `fetchOffset` or anything after it. Indexes
   * and footers come from byte-bounded LRU caches, so a hot partition costs one range read per fetch, and
   * rebuilt batches from a third, so a range read again is served from memory.
   */
  async read(io: FileIO, req: SegmentRead): Promise<SegmentReadResult> {
    for (const location of req.indexFiles) {
      const index = await this.indexes.get(location, async () => {
        const bytes = await io.get(location);
        const decoded = decodeSegmentIndex(bytes);
        this.sizes.set(decoded, bytes.length);
        return decoded;
      });
      if (index.lastOffset < BigInt(req.fetchOffset)) continue;
      const r = (await this.takeAhead(location, index, req)) ?? (await this.fetch(io, location, index, req.fetchOffset, req.maxBytes, req));
      if (r.records.length === 0) continue;
      // KIP-74: only the first partition of a response may exceed its limit, by its first batch.
      if (!req.minOneBatch && r.records.length > req.maxBytes) return { records: Buffer.alloc(0), nextOffset: req.fetchOffset };
      // The consumer's next fetch starts where this one ends.
      if (this.options.readAheadBytes) this.readAhead(io, location, index, Number(r.nextOffset), req);
      return { records: r.records, nextOffset: Number(r.nextOffset) };
    }
    return { records: Buffer.alloc(0), nextOffset: req.fetchOffset };
  }

  private fetch(io: FileIO, location: string, index: SegmentIndex, fetchOffset: number, maxBytes: number, how: { compression: RebuildCompression; cached: boolean }): Promise<RemoteFetchResult> {
    return fetchFromParquet({
      io,
      tableLocation: location.slice(0, location.lastIndexOf('/kafka-index/')),
      index,
      fetchOffset: BigInt(fetchOffset),
      maxBytes,
      footers: this.footers,
      ...(how.cached && this.batches.maxBytes > 0 ? { batches: this.batches } : {}),
      compression: how.compression,
    });
  }

  /** Starts the fetch after the one just served, unless one is under way or it is past the data file. */
  private readAhead(io: FileIO, location: string, index: SegmentIndex, offset: number, req: SegmentRead): void {
    const key = `${location}@${offset}`;
    if (BigInt(offset) > index.lastOffset || this.ahead.has(key)) return;
    const entry: Ahead = {
      maxBytes: req.maxBytes,
      compression: req.compression,
      cached: req.cached,
      bytes: 0,
      // A failed read-ahead is not an error anyone sees: the fetch it was for reads directly instead.
      result: this.fetch(io, location, index, offset, req.maxBytes, req).then(
        (r) => {
          // Counted only while it waits to be taken (not once taken or dropped).
          if (this.ahead.get(key) === entry) {
            entry.bytes = r.records.length;
            this.aheadBytes += entry.bytes;
            this.trimAhead();
          }
          return r;
        },
        () => null,
      ),
    };
    this.ahead.set(key, entry);
  }

  /** Drops the oldest read-aheads past the budget (pending ones count once done). */
  private trimAhead(): void {
    for (const [key, e] of this.ahead) {
      if (this.aheadBytes <= (this.options.readAheadBytes ?? 0)) break;
      this.ahead.delete(key);
      this.aheadBytes -= e.bytes;
    }
  }

  /**
   * The read-ahead for this fetch, cut to its maxBytes the way planFetch cuts a direct fetch; null when there
   * is none that gives the same bytes (another offset, compression or cache use, or a smaller maxBytes).
   */
  private async takeAhead(location: string, index: SegmentIndex, req: SegmentRead): Promise<RemoteFetchResult | null> {
    const key = `${location}@${req.fetchOffset}`;
    const entry = this.ahead.get(key);
    if (entry === undefined) return null;
    this.ahead.delete(key);
    const r = await entry.result;
    this.aheadBytes -= entry.bytes;
    if (r === null || entry.compression !== req.compression || entry.cached !== req.cached || entry.maxBytes < req.maxBytes) return null;
    if (entry.maxBytes === req.maxBytes) {
      this.readAheadHits++;
      return r;
    }
    // A smaller maxBytes keeps a prefix of the batches: the plan says which, and with uncompressed batches
    // their sizes are exact (a re-compressed batch's size is known only once it is written).
    if (req.compression !== 'none') return null;
    const { first, end } = planFetch(index, BigInt(req.fetchOffset), req.maxBytes, req.compression);
    let length = 0;
    let count = 0;
    for (let i = first; i < end; i++) {
      const b = index.batches[i]!;
      if (b.stored !== null) length += b.stored.length;
      else if (b.recordsCount > 0) length += BATCH_HEADER_SIZE + b.recordsBytes;
      else continue;
      count++;
    }
    const last = index.batches[end - 1]!;
    this.readAheadHits++;
    return { records: Buffer.from(r.records.subarray(0, length)), batchCount: count, nextOffset: last.baseOffset + BigInt(last.lastOffsetDelta) + 1n, bytesRead: 0, decodedWith: null };
  }
}
