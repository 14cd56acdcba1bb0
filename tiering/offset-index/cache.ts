/**
 * In-memory caches for the remote read path, bounded by bytes rather than entries (lru-cache `maxSize`):
 * offset indexes and parsed Parquet footers are small and hot; a partition's whole remote history can be
 * served from the cache without touching object storage for metadata. Concurrent misses for one key share
 * one load, so a burst of fetches for a cold file reads its index once.
 */
import { LRUCache } from 'lru-cache';

export interface ByteBudgetCacheOptions<V> {
  /** Total bytes the cached values may hold. */
  readonly maxBytes: number;
  /** The bytes one value costs (its encoded size is a good estimate). */
  readonly sizeOf: (value: V) => number;
}

export class ByteBudgetCache<V extends object> {
  private readonly lru: LRUCache<string, V>;
  private readonly loading = new Map<string, Promise<V>>();
  /** Lookups answered from memory, and lookups that loaded (or joined a load), since creation. */
  hits = 0;
  misses = 0;
  readonly maxBytes: number;

  constructor(options: ByteBudgetCacheOptions<V>) {
    this.maxBytes = options.maxBytes;
    this.lru = new LRUCache<string, V>({
      maxSize: options.maxBytes,
      // A value larger than the whole budget is simply not kept (lru-cache refuses it).
      sizeCalculation: (v) => Math.max(1, options.sizeOf(v)),
    });
  }

  /** The cached value for `key`, or the result of `load()` (cached, and shared with concurrent callers). */
  async get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.lru.get(key);
    if (hit !== undefined) {
      this.hits++;
      return hit;
    }
    this.misses++;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const p = load().then(
      (v) => {
        this.loading.delete(key);
        this.lru.set(key, v);
        return v;
      },
      (err: unknown) => {
        this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, p);
    return p;
  }

  peek(key: string): V | undefined {
    return this.lru.peek(key);
  }

  set(key: string, value: V): void {
    this.lru.set(key, value);
  }

  delete(key: string): void {
    this.lru.delete(key);
  }

  get size(): number {
    return this.lru.size;
  }

  get bytes(): number {
    return this.lru.calculatedSize;
  }
}
