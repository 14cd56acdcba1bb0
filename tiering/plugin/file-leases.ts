/**
 * Leases on the objects a Kafka fetch from the table is reading. Compaction replaces a partition's small
 * files in one commit, but a fetch that loaded the old history a moment before keeps reading the old
 * files; snapshot expiry must not delete them under it. Every read of the tiered history holds a lease on
 * the data and index files of the segment it reads until it has its bytes, and expiry asks `inUse` before
 * deleting a file that no retained snapshot references any more.
 *
 * A lease is taken synchronously, in the same turn of the event loop as the read of the in-memory history
 * that named the files: a file not referenced by the current history can only be held by a read that
 * already holds its lease.
 */
export class FileLeases {
  private readonly counts = new Map<string, number>();

  /** Leases every location (duplicates count once per call); returns the release, which is idempotent. */
  acquire(locations: Iterable<string>): () => void {
    const held = [...new Set(locations)];
    for (const l of held) this.counts.set(l, (this.counts.get(l) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const l of held) {
        const n = (this.counts.get(l) ?? 1) - 1;
        if (n <= 0) this.counts.delete(l);
        else this.counts.set(l, n);
      }
    };
  }

  /** Runs `fn` holding leases on `locations`. */
  async with<T>(locations: Iterable<string>, fn: () => Promise<T>): Promise<T> {
    const release = this.acquire(locations);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Whether a read holds `location` now. */
  inUse(location: string): boolean {
    return this.counts.has(location);
  }

  /** Locations held now (metrics, tests). */
  get size(): number {
    return this.counts.size;
  }
}
