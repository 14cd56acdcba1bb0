/**
 * LZ4 for record batches: the LZ4 *frame* format (magic 04 22 4D 18), which Kafka uses for magic 2.
 * (Kafka's old, broken framing with a bad header checksum only exists for magic 0 and 1, which Floe
 * rejects before decompressing.)
 *
 * `@platformatic/wasm-utils` produces and consumes frames (checked: its output starts with the frame magic,
 * FLG 0x60 = version 1, independent blocks, BD 256 KiB). It is used to compress, and to decompress when
 * the output is known to fit the caller's limit. It offers no output limit of its own, and fails with a
 * bare wasm trap, so this module parses the frame itself first:
 *
 * - it walks the frame descriptor and block headers (cheap: no decoding) to bound the output size
 *   (content size if declared, otherwise the sum of the blocks' maximum sizes);
 * - if that bound fits the limit, the wasm decoder runs on the whole input;
 * - otherwise (or if the wasm decoder refuses the input) a bounded decoder written here from the LZ4 block
 *   and frame specifications decodes into a buffer that never grows past the limit, verifying the header,
 *   block and content checksums, linked or independent blocks, and skippable frames.
 */
import { lz4Compress as wasmLz4Compress, lz4Decompress as wasmLz4Decompress } from '@platformatic/wasm-utils';
import { RecordBatchError } from './errors.js';
import { xxh32 } from './xxhash32.js';

const FRAME_MAGIC = 0x184d2204;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;

const BLOCK_MAX_SIZES: Readonly<Record<number, number>> = { 4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20 };

function corrupt(message: string, offset?: number): RecordBatchError {
  return new RecordBatchError('DECOMPRESSION_FAILED', `lz4: ${message}`, offset === undefined ? {} : { offset });
}

function tooLarge(limit: number): RecordBatchError {
  return new RecordBatchError(
    'DECOMPRESSED_TOO_LARGE',
    `lz4: decompressed records exceed the limit of ${limit} bytes; the batch is a decompression bomb or the limit is too low`,
  );
}

interface FrameDescriptor {
  readonly blockIndependent: boolean;
  readonly blockChecksum: boolean;
  readonly contentChecksum: boolean;
  readonly contentSize: number | null;
  readonly blockMaxSize: number;
  /** Position of the first block header. */
  readonly dataStart: number;
}

function readDescriptor(src: Buffer, pos: number): FrameDescriptor {
  if (pos + 7 > src.length) throw corrupt('frame header is truncated', pos);
  const flg = src[pos + 4]!;
  const bd = src[pos + 5]!;
  if (flg >>> 6 !== 1) throw corrupt(`unsupported frame version ${flg >>> 6}`, pos);
  if ((flg & 0x02) !== 0 || (bd & 0x8f) !== 0) throw corrupt('reserved bits set in the frame descriptor', pos);
  if ((flg & 0x01) !== 0) throw corrupt('frames with a dictionary ID are not supported (Kafka clients never send them)', pos);
  const blockMaxSize = BLOCK_MAX_SIZES[(bd >>> 4) & 0x07];
  if (blockMaxSize === undefined) throw corrupt(`invalid block maximum size code ${(bd >>> 4) & 0x07}`, pos);
  const hasContentSize = (flg & 0x08) !== 0;
  const descEnd = pos + 6 + (hasContentSize ? 8 : 0);
  if (descEnd + 1 > src.length) throw corrupt('frame header is truncated', pos);
  const hc = (xxh32(src, pos + 4, descEnd) >>> 8) & 0xff;
  if (hc !== src[descEnd]) throw corrupt('frame header checksum mismatch', pos);
  let contentSize: number | null = null;
  if (hasContentSize) {
    const big = src.readBigUInt64LE(pos + 6);
    contentSize = big > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(big);
  }
  return {
    blockIndependent: (flg & 0x20) !== 0,
    blockChecksum: (flg & 0x10) !== 0,
    contentChecksum: (flg & 0x04) !== 0,
    contentSize,
    blockMaxSize,
    dataStart: descEnd + 1,
  };
}

interface FrameWalk {
  /** Upper bound of the decoded size of all frames. */
  readonly bound: number;
  /** True if the input is exactly one frame (no skippable frames), the shape the wasm decoder expects. */
  readonly singleFrame: boolean;
}

/** Walks every frame and block header without decoding, checking structure and bounding the output. */
function walkFrames(src: Buffer): FrameWalk {
  let pos = 0;
  let bound = 0;
  let frames = 0;
  let skippable = false;
  if (src.length === 0) throw corrupt('empty input');
  while (pos < src.length) {
    if (pos + 4 > src.length) throw corrupt('trailing bytes after the last frame', pos);
    const magic = src.readUInt32LE(pos);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      if (pos + 8 > src.length) throw corrupt('skippable frame header is truncated', pos);
      pos += 8 + src.readUInt32LE(pos + 4);
      if (pos > src.length) throw corrupt('skippable frame is truncated', pos);
      skippable = true;
      continue;
    }
    if (magic !== FRAME_MAGIC) throw corrupt(`bad frame magic 0x${magic.toString(16)} (expected 0x184d2204)`, pos);
    const d = readDescriptor(src, pos);
    frames++;
    pos = d.dataStart;
    let frameBound = 0;
    for (;;) {
      if (pos + 4 > src.length) throw corrupt('block header is truncated', pos);
      const word = src.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      if (size > d.blockMaxSize) throw corrupt(`block of ${size} bytes exceeds the frame's maximum block size ${d.blockMaxSize}`, pos);
      pos += size + (d.blockChecksum ? 4 : 0);
      if (pos > src.length) throw corrupt('block is truncated', pos);
      frameBound += (word & 0x80000000) !== 0 ? size : d.blockMaxSize;
    }
    if (d.contentChecksum) pos += 4;
    if (pos > src.length) throw corrupt('content checksum is truncated', pos);
    bound += d.contentSize === null ? frameBound : Math.min(d.contentSize, frameBound);
  }
  return { bound, singleFrame: frames === 1 && !skippable };
}

/**
 * Decodes one LZ4 block `src[sp, send)` into `out` at `op`, never writing at or past `oend`; matches may
 * reach back to `windowStart`. Returns the new output position, or -1 if the output would pass `oend`.
 */
function decodeBlock(src: Buffer, sp: number, send: number, out: Buffer, op: number, oend: number, windowStart: number): number {
  for (;;) {
    if (sp >= send) throw corrupt('block ends inside a sequence', sp);
    const token = src[sp++]!;
    let litLen = token >>> 4;
    if (litLen === 15) {
      let b: number;
      do {
        if (sp >= send) throw corrupt('block ends inside a literal length', sp);
        b = src[sp++]!;
        litLen += b;
      } while (b === 255);
    }
    if (sp + litLen > send) throw corrupt('literals run past the end of the block', sp);
    if (op + litLen > oend) return -1;
    if (litLen < 32) {
      for (let i = 0; i < litLen; i++) out[op + i] = src[sp + i]!;
    } else {
      src.copy(out, op, sp, sp + litLen);
    }
    op += litLen;
    sp += litLen;
    if (sp === send) return op; // the last sequence carries literals only
    if (sp + 2 > send) throw corrupt('block ends inside a match offset', sp);
    const offset = src[sp]! | (src[sp + 1]! << 8);
    sp += 2;
    if (offset === 0 || op - offset < windowStart) throw corrupt(`match offset ${offset} points before the start of the window`, sp);
    let matchLen = (token & 15) + 4;
    if ((token & 15) === 15) {
      let b: number;
      do {
        if (sp >= send) throw corrupt('block ends inside a match length', sp);
        b = src[sp++]!;
        matchLen += b;
      } while (b === 255);
    }
    if (op + matchLen > oend) return -1;
    let m = op - offset;
    if (offset >= matchLen && matchLen >= 32) {
      out.copyWithin(op, m, m + matchLen);
      op += matchLen;
    } else {
      // Overlapping (or short) match: byte by byte repeats the pattern, as the format intends.
      const end = op + matchLen;
      while (op < end) out[op++] = out[m++]!;
    }
  }
}

/**
 * Decodes LZ4 frames with the bounded decoder of this module (no wasm). Exposed for tests and for callers
 * that want the strict checks; `lz4Decompress` is the entry point.
 */
export function decodeLz4Frames(src: Buffer, maxOutputBytes: number): Buffer {
  const { bound } = walkFrames(src);
  const capacity = Math.min(bound, maxOutputBytes);
  const out = Buffer.allocUnsafe(capacity);
  let op = 0;
  let pos = 0;
  while (pos < src.length) {
    const magic = src.readUInt32LE(pos);
    if (magic !== FRAME_MAGIC) {
      pos += 8 + src.readUInt32LE(pos + 4); // skippable frame, checked by walkFrames
      continue;
    }
    const d = readDescriptor(src, pos);
    const frameStart = op;
    pos = d.dataStart;
    for (;;) {
      const word = src.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      const blockStart = pos;
      pos += size;
      if (d.blockChecksum) {
        if (xxh32(src, blockStart, pos) !== src.readUInt32LE(pos)) throw corrupt('block checksum mismatch', blockStart);
        pos += 4;
      }
      const blockEnd = op + d.blockMaxSize;
      const oend = Math.min(blockEnd, capacity);
      if ((word & 0x80000000) !== 0) {
        if (op + size > capacity) throw tooLarge(maxOutputBytes);
        src.copy(out, op, blockStart, blockStart + size);
        op += size;
      } else {
        const next = decodeBlock(src, blockStart, blockStart + size, out, op, oend, d.blockIndependent ? op : frameStart);
        if (next < 0) {
          if (oend < blockEnd) throw tooLarge(maxOutputBytes);
          throw corrupt(`block decodes to more than the frame's maximum block size ${d.blockMaxSize}`, blockStart);
        }
        op = next;
      }
    }
    if (d.contentSize !== null && op - frameStart !== d.contentSize) {
      throw corrupt(`frame declares ${d.contentSize} content bytes but decodes to ${op - frameStart}`, pos);
    }
    if (d.contentChecksum) {
      if (xxh32(out, frameStart, op) !== src.readUInt32LE(pos)) throw corrupt('content checksum mismatch', pos);
      pos += 4;
    }
  }
  return out.subarray(0, op);
}

/**
 * Decompresses LZ4 frames, never producing more than `maxOutputBytes` (throws DECOMPRESSED_TOO_LARGE) and
 * throwing DECOMPRESSION_FAILED on any malformed input.
 */
export function lz4Decompress(src: Buffer, maxOutputBytes: number): Buffer {
  const walk = walkFrames(src);
  if (walk.singleFrame && walk.bound <= maxOutputBytes) {
    let out: Buffer | undefined;
    try {
      out = wasmLz4Decompress(src);
    } catch {
      // The wasm decoder only reports a trap; the bounded decoder below says what is wrong, or accepts a
      // valid frame the wasm decoder does not handle.
    }
    if (out !== undefined && out.length <= walk.bound) return out;
  }
  return decodeLz4Frames(src, maxOutputBytes);
}

/** An LZ4 frame with no blocks: FLG 0x60, BD 0x40, header checksum, EndMark. */
function emptyFrame(): Buffer {
  const f = Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00]);
  f[6] = (xxh32(f, 4, 6) >>> 8) & 0xff;
  return f;
}

/** Compresses into one LZ4 frame (independent 256 KiB blocks, as produced by the wasm encoder). */
export function lz4Compress(data: Buffer): Buffer {
  // wasm-utils 0.2.1 throws on empty input once its memory has grown (it copies into a detached view).
  if (data.length === 0) return emptyFrame();
  return wasmLz4Compress(data);
}
