/**
 * Splits a byte stream into Kafka frames (int32 size + payload). Accepts chunks split at arbitrary points and
 * yields each frame's payload without the size prefix. Frames contained in one chunk are returned as
 * zero-copy views of that chunk; a frame spanning chunks is assembled once into its own buffer.
 * Pure: no sockets, so it is tested by feeding bytes.
 */
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

export class FrameSplitter {
  private pending: Buffer | undefined;
  /** Bytes of the frame being assembled (including the 4-byte prefix), or 0 when none. */
  private partial: Buffer | undefined;
  private partialFilled = 0;

  constructor(private readonly maxFrameBytes: number) {}

  /** Feeds a chunk; returns the frames it completed, in order. Throws on an invalid or oversized size. */
  push(chunk: Buffer): Buffer[] {
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
        frames.push(buf.subarray(pos + 4, pos + 4 + size));
        pos += 4 + size;
        continue;
      }
      // The frame continues in later chunks: assemble it in a buffer of its own.
      this.partial = Buffer.allocUnsafe(4 + size);
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
