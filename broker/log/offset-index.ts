/**
 * Sparse offset index of one segment: entries map a batch's base offset (relative to the segment's base, int32)
 * to the batch's byte position in the segment (int32). On disk each entry is 8 bytes big-endian, Kafka's layout.
 * Kept in memory for every open segment (a 1 GiB segment with a 4 KiB interval needs ~2 MiB) and written to
 * disk when the segment rolls or the log closes.
 */
export const OFFSET_INDEX_ENTRY_SIZE = 8;

export class OffsetIndex {
  /** Pairs [relativeOffset, position], packed. */
  private entries: Int32Array;
  private count = 0;

  constructor(readonly baseOffset: number, capacity = 64) {
    this.entries = new Int32Array(Math.max(2, capacity * 2));
  }

  get length(): number {
    return this.count;
  }

  /** Appends an entry; offsets and positions must both be strictly larger than the last entry's. */
  append(offset: number, position: number): void {
    if (this.count * 2 === this.entries.length) {
      const grown = new Int32Array(this.entries.length * 2);
      grown.set(this.entries);
      this.entries = grown;
    }
    this.entries[this.count * 2] = offset - this.baseOffset;
    this.entries[this.count * 2 + 1] = position;
    this.count++;
  }

  offsetAt(i: number): number {
    return this.baseOffset + (this.entries[i * 2] ?? 0);
  }

  positionAt(i: number): number {
    return this.entries[i * 2 + 1] ?? 0;
  }

  /** Position of the last indexed batch whose base offset is <= target, or 0 when none is. */
  lookup(target: number): { offset: number; position: number } {
    const rel = target - this.baseOffset;
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.entries[mid * 2] ?? 0) <= rel) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (found < 0) return { offset: this.baseOffset, position: 0 };
    return { offset: this.offsetAt(found), position: this.positionAt(found) };
  }

  /** Drops entries at or beyond `position` (used when the log is truncated). */
  truncateToPosition(position: number): void {
    while (this.count > 0 && this.positionAt(this.count - 1) >= position) this.count--;
  }

  clear(): void {
    this.count = 0;
  }

  serialize(): Buffer {
    const buf = Buffer.allocUnsafe(this.count * OFFSET_INDEX_ENTRY_SIZE);
    for (let i = 0; i < this.count; i++) {
      buf.writeInt32BE(this.entries[i * 2] ?? 0, i * 8);
      buf.writeInt32BE(this.entries[i * 2 + 1] ?? 0, i * 8 + 4);
    }
    return buf;
  }

  /**
   * Loads an index file's bytes, or returns undefined when they can't be right for a log of `logSize` bytes:
   * a partial entry, offsets or positions not strictly increasing, or a position beyond the log.
   */
  static deserialize(baseOffset: number, buf: Buffer, logSize: number): OffsetIndex | undefined {
    if (buf.length % OFFSET_INDEX_ENTRY_SIZE !== 0) return undefined;
    const n = buf.length / OFFSET_INDEX_ENTRY_SIZE;
    const index = new OffsetIndex(baseOffset, n);
    let lastRel = -1;
    let lastPos = -1;
    for (let i = 0; i < n; i++) {
      const rel = buf.readInt32BE(i * 8);
      const pos = buf.readInt32BE(i * 8 + 4);
      if (rel <= lastRel || pos <= lastPos || pos >= logSize) return undefined;
      index.append(baseOffset + rel, pos);
      lastRel = rel;
      lastPos = pos;
    }
    return index;
  }
}
