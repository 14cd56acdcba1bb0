/**
 * Sparse time index of one segment. Entry i says: up to and including the batch at `offset`, the largest
 * timestamp seen in the segment is `timestamp`, and `offset` is the base offset of the first batch that
 * reached it. So every batch before `offset` has a max timestamp below `timestamp`. Timestamps strictly
 * increase from entry to entry. On disk: 12 bytes per entry, int64 timestamp + int32 relative offset (Kafka's
 * layout). The last entry of a closed segment always holds the segment's max timestamp.
 */
export const TIME_INDEX_ENTRY_SIZE = 12;

export class TimeIndex {
  private timestamps: Float64Array;
  private offsets: Int32Array;
  private count = 0;

  constructor(readonly baseOffset: number, capacity = 32) {
    this.timestamps = new Float64Array(Math.max(1, capacity));
    this.offsets = new Int32Array(Math.max(1, capacity));
  }

  get length(): number {
    return this.count;
  }

  get lastTimestamp(): number {
    return this.count === 0 ? -1 : (this.timestamps[this.count - 1] ?? -1);
  }

  get lastOffset(): number {
    return this.count === 0 ? this.baseOffset : this.baseOffset + (this.offsets[this.count - 1] ?? 0);
  }

  /**
   * Appends (timestamp, offset) if the timestamp is larger than the last entry's; otherwise does nothing.
   * Negative timestamps (Kafka's NO_TIMESTAMP is -1) are never indexed.
   */
  maybeAppend(timestamp: number, offset: number): void {
    if (timestamp <= this.lastTimestamp) return;
    if (this.count === this.timestamps.length) {
      const ts = new Float64Array(this.count * 2);
      ts.set(this.timestamps);
      const off = new Int32Array(this.count * 2);
      off.set(this.offsets);
      this.timestamps = ts;
      this.offsets = off;
    }
    this.timestamps[this.count] = timestamp;
    this.offsets[this.count] = offset - this.baseOffset;
    this.count++;
  }

  /**
   * The offset from which to scan for the first batch with max timestamp >= target: the offset of the last
   * entry whose timestamp is below target (everything before it is below target too), or the segment's base.
   */
  lookup(target: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.timestamps[mid] ?? 0) < target) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? this.baseOffset : this.baseOffset + (this.offsets[found] ?? 0);
  }

  /** Drops entries whose offset is >= `offset` (used when the log is truncated). */
  truncateToOffset(offset: number): void {
    while (this.count > 0 && this.baseOffset + (this.offsets[this.count - 1] ?? 0) >= offset) this.count--;
  }

  clear(): void {
    this.count = 0;
  }

  serialize(): Buffer {
    const buf = Buffer.allocUnsafe(this.count * TIME_INDEX_ENTRY_SIZE);
    for (let i = 0; i < this.count; i++) {
      buf.writeBigInt64BE(BigInt(this.timestamps[i] ?? 0), i * 12);
      buf.writeInt32BE(this.offsets[i] ?? 0, i * 12 + 8);
    }
    return buf;
  }

  /**
   * Loads a time index file's bytes, or returns undefined when they can't be right for a segment whose last
   * offset is `lastOffset`: a partial entry, timestamps not strictly increasing, offsets going backwards or
   * beyond the segment.
   */
  static deserialize(baseOffset: number, buf: Buffer, lastOffset: number): TimeIndex | undefined {
    if (buf.length % TIME_INDEX_ENTRY_SIZE !== 0) return undefined;
    const n = buf.length / TIME_INDEX_ENTRY_SIZE;
    const index = new TimeIndex(baseOffset, n);
    let lastTs = -Infinity;
    let lastRel = -1;
    for (let i = 0; i < n; i++) {
      const ts = Number(buf.readBigInt64BE(i * 12));
      const rel = buf.readInt32BE(i * 12 + 8);
      if (ts < 0 || ts <= lastTs || rel < lastRel || rel < 0 || baseOffset + rel > lastOffset) return undefined;
      index.maybeAppend(ts, baseOffset + rel);
      lastTs = ts;
      lastRel = rel;
    }
    return index;
  }
}
