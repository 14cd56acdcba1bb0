/**
 * Reusable memory for request frames, and (a second pool) for the record sets Fetch reads from the log.
 *
 * Every Buffer of 4 KiB or more that Node allocates is a new ArrayBuffer outside V8's heap. V8 runs a full
 * mark-compact each time such external memory grows by 64 MiB since the last one, whatever the size of the
 * heap. A broker taking 500 MB/s of 1 MiB produce requests then ran about 20 of them a second: about 200
 * in 9 s, with the heap at 22 MB. They cost a third of the main thread and kept four GC helper threads busy
 * (bench/RESULTS.md). Buffers lent from a pool and given back once done with allocate nothing.
 *
 * Sizes are rounded up to a quarter of a power of two (at most 25 % spare), so frames of similar sizes
 * share buffers. Buffers given back wait in free lists up to `maxIdleBytes` in all; beyond that they are
 * left to the garbage collector. A buffer that is never given back is simply collected: giving back is an
 * optimisation, never an obligation.
 */

/** Frames smaller than this come from Node's own 8 KiB slabs (Buffer.allocUnsafe), which allocate nothing per frame. */
export const POOLED_MIN_BYTES = 4096;

export class FramePool {
  /** Idle ArrayBuffers by byte length. */
  private readonly free = new Map<number, ArrayBuffer[]>();
  /** ArrayBuffers lent and not given back: only these are accepted back, each once. */
  private readonly lent = new WeakSet<ArrayBuffer>();
  private idle = 0;
  /** Buffers allocated, and lends served from a free list, since start. */
  allocated = 0;
  reused = 0;

  constructor(private readonly maxIdleBytes: number) {}

  /**
   * A buffer of exactly `size` bytes (its contents are whatever was there before). Below POOLED_MIN_BYTES it
   * is an ordinary Buffer.allocUnsafe.
   */
  lend(size: number): Buffer {
    if (size < POOLED_MIN_BYTES) return Buffer.allocUnsafe(size);
    const bytes = sizeClass(size);
    let ab = this.free.get(bytes)?.pop();
    if (ab === undefined) {
      ab = new ArrayBuffer(bytes);
      this.allocated++;
    } else {
      this.idle -= bytes;
      this.reused++;
    }
    this.lent.add(ab);
    return Buffer.from(ab, 0, size);
  }

  /**
   * Gives back the buffer under `view` (any view of a lent buffer). The caller must hold no other view of it:
   * the next lend may hand the same memory out. Views of memory this pool did not lend, or gave back already,
   * are ignored.
   */
  giveBack(view: Uint8Array): void {
    const ab = view.buffer;
    if (!(ab instanceof ArrayBuffer) || !this.lent.delete(ab)) return;
    if (this.idle + ab.byteLength > this.maxIdleBytes) return;
    const list = this.free.get(ab.byteLength);
    if (list === undefined) this.free.set(ab.byteLength, [ab]);
    else list.push(ab);
    this.idle += ab.byteLength;
  }

  /** Bytes waiting in the free lists. */
  get idleBytes(): number {
    return this.idle;
  }
}

/** `size` rounded up to a multiple of a quarter of the power of two at or below it. */
export function sizeClass(size: number): number {
  const top = 2 ** Math.floor(Math.log2(size));
  const step = Math.max(1, top / 4);
  return Math.ceil(size / step) * step;
}
