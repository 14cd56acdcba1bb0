/** Rebuilt batches of recent fetches, kept in memory under a byte budget (`BatchCache`). */
import { LRUCache } from 'lru-cache';
import type { IndexedBatch } from '../offset-index/format.js';
import type { RebuildCompression } from './batch-assembly.js';
import { PageBufferPool } from './page-buffer-pool.js';

/**
 * Rebuilt batches kept in memory under a byte budget, so repeated reads of one remote range (several
 * consumers, re-reads after a rebalance) skip the range read, the Parquet decode and the record encoding.
 *
 * The unit kept is a fetch's whole response (a chunk: the cache's own copy, one allocation), with each of its
 * data batches findable by key (data file location, batch base offset, compression mode) as a view into it.
 * A fetch whose batches are all cached is served by copying those views out, whichever fetches cached them;
 * callers get their own buffer, so writing into a response cannot change what the next fetch gets. Chunks
 * are evicted least recently used first (lru-cache `maxSize` over chunk bytes), taking their batches with
 * them. The files are immutable once written (deterministic names: a retry writes the same bytes), so
 * entries never go stale.
 *
 * A response is kept only once one of its batches is asked for a second time (admission on the second
 * request, by key, remembered for a bounded number of keys): a reader moving forward never asks twice (each
 * fetch starts after the last one's batches; the decoded row group kept beside the footers spares it a
 * second decode), so a one-pass scan of history neither pays for copies nobody reads nor evicts the ranges
 * other consumers are re-reading.
 */
export class BatchCache {
  private readonly chunks: LRUCache<number, CachedChunk>;
  private readonly views = new Map<string, { readonly chunk: CachedChunk; readonly start: number; readonly end: number }>();
  private nextChunk = 0;
  /** Keys of batches fetched once and not kept (admission on the second request). */
  private readonly seen: LRUCache<string, true>;
  /** Responses not kept because none of their batches had been asked for before. */
  declined = 0;
  /**
   * Memory of evicted chunks for the next ones: responses are of similar sizes, and fresh memory costs a
   * page fault per page on first write, which here made keeping a copy cost more than the copy itself.
   */
  private readonly pool = new PageBufferPool(16 * 1024 * 1024);
  hits = 0;
  misses = 0;
  constructor(readonly maxBytes: number) {
    // A chunk larger than the whole budget is not kept (lru-cache refuses it); the rest evict oldest first.
    this.seen = new LRUCache<string, true>({ max: Math.min(1 << 16, Math.max(1024, Math.floor(maxBytes / 4096))) });
    this.chunks = new LRUCache<number, CachedChunk>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (c) => Math.max(1, c.memory.length + BATCH_ENTRY_OVERHEAD * c.keys.length),
      dispose: (c) => {
        for (const key of c.keys) if (this.views.get(key)?.chunk === c) this.views.delete(key);
        // No view of it is held outside this class between calls: the memory can take the next response.
        this.pool.give(c.memory);
      },
    });
  }
  static key(location: string, b: IndexedBatch, compression: RebuildCompression): string {
    return `${location}@${b.baseOffset}/${compression}`;
  }
  /** A cached batch (a view into its chunk: copy before handing it out), counting a hit or a miss. */
  get(key: string): Buffer | undefined {
    const v = this.views.get(key);
    // Refresh the chunk's recency; it may have just been evicted by an insertion.
    if (v === undefined || this.chunks.get(v.chunk.id) !== v.chunk) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    return v.chunk.bytes.subarray(v.start, v.end);
  }
  /**
   * Keeps a copy of `records` (a fetch's response) with the batches at `at` ([key, start, end) within it)
   * findable, if one of them was fetched before; otherwise only remembers their keys. Nothing is kept when
   * the budget is 0 or the copy alone exceeds it.
   */
  keep(records: Buffer, at: readonly (readonly [key: string, start: number, end: number])[]): void {
    if (this.maxBytes <= 0 || at.length === 0 || records.length + BATCH_ENTRY_OVERHEAD * at.length > this.maxBytes) return;
    if (!at.some(([key]) => this.seen.has(key))) {
      for (const [key] of at) this.seen.set(key, true);
      this.declined++;
      return;
    }
    const memory = this.pool.take(records.length);
    const bytes = memory.subarray(0, records.length);
    records.copy(bytes);
    const chunk: CachedChunk = { id: this.nextChunk++, bytes, memory, keys: at.map(([key]) => key) };
    this.chunks.set(chunk.id, chunk);
    // lru-cache refuses an entry larger than the budget (the pooled memory may be larger than the response).
    if (this.chunks.peek(chunk.id) !== chunk) {
      this.pool.give(memory);
      return;
    }
    for (const [key, start, end] of at) this.views.set(key, { chunk, start, end });
  }
  /** Bytes charged against the budget (chunk bytes plus a fixed per-batch overhead). */
  get bytes(): number {
    return this.chunks.calculatedSize;
  }
  /** Batches findable in the cache. */
  get size(): number {
    return this.views.size;
  }
  clear(): void {
    this.chunks.clear();
    this.seen.clear();
  }
}

interface CachedChunk {
  readonly id: number;
  /** The response, at the start of `memory` (a pooled buffer, possibly larger). */
  readonly bytes: Buffer;
  readonly memory: Buffer;
  /** The batch keys that pointed into this chunk when it was kept (later chunks may have taken some). */
  readonly keys: readonly string[];
}

/** What one cached batch costs beyond its bytes (key string, map entry, view), roughly. */
const BATCH_ENTRY_OVERHEAD = 256;

export function createBatchCache(maxBytes: number): BatchCache {
  return new BatchCache(maxBytes);
}
