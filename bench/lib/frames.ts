/**
 * A minimal Kafka frame reader (int32 size + payload) shared by the load client and the baseline servers,
 * so Floe and its baselines pay the same framing cost on the bench side. Frames inside one chunk are
 * zero-copy views; a frame spanning chunks is assembled once. Calls `onFrame` with the payload (no prefix).
 *
 * With `reuse`, frames spanning chunks are assembled in one scratch buffer kept across frames, because
 * touching fresh memory costs about 4x here (measurements.md): a frame is then valid only until the next
 * one is delivered, which suits a client that consumes each response before the next arrives.
 */
export class FrameReader {
  private partial: Buffer | undefined;
  private filled = 0;
  /** Up to 3 bytes of a size prefix split across chunks. */
  private head: Buffer | undefined;

  private scratch: Buffer | undefined;

  constructor(
    private readonly onFrame: (frame: Buffer) => void,
    private readonly options: { readonly maxFrameBytes?: number; readonly reuse?: boolean } = {},
  ) {}

  private frameBuffer(size: number): Buffer {
    if (this.options.reuse !== true) return Buffer.allocUnsafe(size);
    if (this.scratch === undefined || this.scratch.length < size) this.scratch = Buffer.allocUnsafe(Math.max(size, 2 * (this.scratch?.length ?? 0)));
    return this.scratch.subarray(0, size);
  }

  push(chunk: Buffer): void {
    let buf = chunk;
    if (this.head !== undefined) {
      buf = Buffer.concat([this.head, buf]);
      this.head = undefined;
    }
    let pos = 0;
    if (this.partial !== undefined) {
      const take = Math.min(this.partial.length - this.filled, buf.length);
      buf.copy(this.partial, this.filled, 0, take);
      this.filled += take;
      pos = take;
      if (this.filled < this.partial.length) return;
      const frame = this.partial;
      this.partial = undefined;
      this.onFrame(frame);
    }
    while (buf.length - pos >= 4) {
      const size = buf.readInt32BE(pos);
      if (size < 0 || size > (this.options.maxFrameBytes ?? 256 * 1024 * 1024)) throw new Error(`bad frame size ${size}: the peer is not speaking Kafka framing`);
      const end = pos + 4 + size;
      if (end <= buf.length) {
        this.onFrame(buf.subarray(pos + 4, end));
        pos = end;
        continue;
      }
      this.partial = this.frameBuffer(size);
      this.filled = buf.length - pos - 4;
      buf.copy(this.partial, 0, pos + 4);
      return;
    }
    if (pos < buf.length) this.head = Buffer.from(buf.subarray(pos));
  }
}
