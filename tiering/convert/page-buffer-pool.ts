/**
 * Buffer reuse for the fetch path: a pool of buffers of our own, handed back once no longer in use, so
 * decoded pages and cached responses do not write into fresh (page-faulting) memory.
 */

/**
 * Reused buffers: for the decompressed pages that decoded row groups keep (byte-array values stay in their
 * pages), and for the batch cache's copies of responses. Writing into fresh memory page-faults, and on this
 * kind of machine that costs more than zstd itself (about 2.5x slower per page), so buffers no longer in use
 * come back here. Only buffers of our own (allocUnsafeSlow, never Node's shared pool slab) are kept, up to
 * `maxFree` bytes.
 */
export class PageBufferPool {
  private readonly free: Buffer[] = [];
  private freeBytes = 0;
  constructor(private readonly maxFree: number) {}
  /** A buffer of at least n bytes: the smallest free one no more than twice as large, else a new one. */
  take(n: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const len = this.free[i]!.length;
      if (len >= n && len <= 2 * n + 65536 && (best < 0 || len < this.free[best]!.length)) best = i;
    }
    if (best >= 0) {
      const buf = this.free[best]!;
      this.free[best] = this.free[this.free.length - 1]!;
      this.free.pop();
      this.freeBytes -= buf.length;
      return buf;
    }
    // Rounded up so pages of slightly different sizes can use each other's buffers.
    return Buffer.allocUnsafeSlow(n <= 65536 ? n : Math.ceil((n * 1.0625) / 65536) * 65536);
  }
  give(buf: Buffer): void {
    if (buf.length > this.maxFree) return;
    while (this.free.length > 0 && this.freeBytes + buf.length > this.maxFree) this.freeBytes -= this.free.shift()!.length;
    this.free.push(buf);
    this.freeBytes += buf.length;
  }
}
