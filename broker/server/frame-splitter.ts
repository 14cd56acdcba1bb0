/**
 * Splits a byte stream into Kafka frames (int32 size + payload) and yields each frame's payload without the
 * size prefix. Chunks may be split at arbitrary points. Pure: no sockets, so it is tested by feeding bytes.
 *
 * Two ways in:
 * - `push(chunk)` for chunks the caller owns (a TLS socket's 'data'): a frame inside one chunk comes out as
 *   a zero-copy view of it, and a frame spanning chunks is assembled once in a buffer from the pool.
 * - `readTarget(scratch)` then `landed(n)` for a socket that reads into memory the caller reuses (a
 *   plaintext socket with `onread`): the rest of a large frame is read straight into the frame's own buffer;
 *   anything read into `scratch` is copied out before `landed` returns, so no frame shares its memory.
 */
import { FramePool } from './frame-pool.js';

export class FrameTooLargeError extends Error {
  readonly code = 'FRAME_TOO_LARGE';
  constructor(readonly size: number, readonly limit: number) {
    super(`request frame of ${size} bytes exceeds socket.request.max.bytes (${limit}); the connection is closed`);
    this.name = 'FrameTooLargeError';
  }
}

export class InvalidFrameSizeError extends Error {
  readonly code = 'INVALID_FRAME_SIZE';
  constructor(readonly size: number) {
    super(`request frame size ${size} is invalid (must be positive); the connection is closed`);
    this.name = 'InvalidFrameSizeError';
  }
}

/**
 * A frame with at least this much left to arrive is read straight into its buffer; a shorter rest goes
 * through the scratch buffer, so that one read also brings the frames after it.
 */
export const DIRECT_READ_MIN_BYTES = 64 * 1024;

/** A pool that keeps nothing: every frame is a fresh allocation. */
const NO_POOL = new FramePool(0);

export class FrameSplitter {
  /** The first bytes of a size prefix that a chunk ended in the middle of (fewer than 4). */
  private pending: Buffer | undefined;
  /** The frame being assembled, including its 4-byte size prefix. */
  private partial: Buffer | undefined;
  private partialFilled = 0;
  /** Whether the buffer readTarget handed out last is the rest of `partial`. */
  private direct = false;
  private target: Buffer | undefined;

  constructor(
    private readonly maxFrameBytes: number,
    private readonly pool: FramePool = NO_POOL,
  ) {}

  /** Feeds a chunk the caller will not reuse; returns the frames it completed, in order. Throws on an invalid or oversized size. */
  push(chunk: Buffer): Buffer[] {
    return this.take(chunk, false);
  }

  /** The buffer the next read should fill: the unfilled rest of a large frame, or `scratch`. */
  readTarget(scratch: Buffer): Buffer {
    const partial = this.partial;
    this.direct = partial !== undefined && partial.length - this.partialFilled >= DIRECT_READ_MIN_BYTES;
    this.target = this.direct && partial !== undefined ? partial.subarray(this.partialFilled) : scratch;
    return this.target;
  }

  /**
   * `n` bytes were read into `into` (the buffer readTarget returned last, or a scratch buffer); returns the
   * frames they completed, in order. Bytes read into a scratch buffer are copied out before this returns.
   * Throws on an invalid or oversized size.
   */
  landed(into: Buffer, n: number): Buffer[] {
    const direct = this.direct && into === this.target;
    this.direct = false;
    this.target = undefined;
    if (!direct) return this.take(into.subarray(0, n), true);
    this.partialFilled += n;
    const partial = this.partial;
    if (partial === undefined || this.partialFilled < partial.length) return [];
    this.partial = undefined;
    this.partialFilled = 0;
    return [partial.subarray(4)];
  }

  private take(chunk: Buffer, copy: boolean): Buffer[] {
    const frames: Buffer[] = [];
    let buf = chunk;
    if (this.partial) {
      const need = this.partial.length - this.partialFilled;
      const take = Math.min(need, buf.length);
      buf.copy(this.partial, this.partialFilled, 0, take);
      this.partialFilled += take;
      buf = buf.subarray(take);
      if (this.partialFilled < this.partial.length) return frames;
      frames.push(this.partial.subarray(4));
      this.partial = undefined;
      this.partialFilled = 0;
    }
    if (this.pending) {
      buf = Buffer.concat([this.pending, buf]);
      this.pending = undefined;
    }
    let pos = 0;
    while (buf.length - pos >= 4) {
      const size = buf.readInt32BE(pos);
      if (size <= 0) throw new InvalidFrameSizeError(size);
      if (size > this.maxFrameBytes) throw new FrameTooLargeError(size, this.maxFrameBytes);
      if (buf.length - pos - 4 >= size) {
        if (copy) {
          const frame = this.pool.lend(size);
          buf.copy(frame, 0, pos + 4, pos + 4 + size);
          frames.push(frame);
        } else {
          frames.push(buf.subarray(pos + 4, pos + 4 + size));
        }
        pos += 4 + size;
        continue;
      }
      // The frame continues in later chunks: assemble it in a buffer of its own.
      this.partial = this.pool.lend(4 + size);
      this.partialFilled = buf.copy(this.partial, 0, pos);
      return frames;
    }
    if (pos < buf.length) this.pending = Buffer.from(buf.subarray(pos));
    return frames;
  }

  /** Bytes buffered towards an incomplete frame. */
  get bufferedBytes(): number {
    return (this.pending?.length ?? 0) + this.partialFilled;
  }
}
