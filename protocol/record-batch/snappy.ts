/**
 * Snappy for record batches, through `@platformatic/wasm-utils`. Two shapes arrive on the wire:
 *
 * - raw snappy (librdkafka, franz-go, kafkajs' snappy plugin): a varint uncompressed length, then the
 *   compressed stream;
 * - the xerial framing (the Java client's snappy-java SnappyOutputStream, kafka-python): the 8-byte magic
 *   `82 53 4E 41 50 50 59 00`, two big-endian int32s (version, minimum compatible version), then blocks,
 *   each a big-endian int32 length followed by a raw snappy block.
 *
 * Both are decoded. Compression emits raw snappy, which every client accepts (snappy-java's
 * SnappyInputStream falls back to raw when the magic is absent). Every raw block states its decoded size
 * up front, so the output limit is checked before any decoding happens.
 */
import { snappyCompress as wasmSnappyCompress, snappyDecompress as wasmSnappyDecompress } from '@platformatic/wasm-utils';
import { RecordBatchError } from './errors.js';
import { VarintError, readUnsignedVarint } from '../varint.js';

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_SIZE = 16;

function corrupt(message: string, cause?: unknown): RecordBatchError {
  return new RecordBatchError('DECOMPRESSION_FAILED', `snappy: ${message}`, cause === undefined ? {} : { cause });
}

function tooLarge(size: number, limit: number): RecordBatchError {
  return new RecordBatchError(
    'DECOMPRESSED_TOO_LARGE',
    `snappy: records would decompress to ${size} bytes, over the limit of ${limit}; the batch is a decompression bomb or the limit is too low`,
  );
}

/** The decoded size a raw snappy block declares in its preamble. */
function declaredLength(block: Buffer): number {
  try {
    return readUnsignedVarint(block, { pos: 0 });
  } catch (e) {
    if (e instanceof VarintError) throw corrupt('block length preamble is malformed', e);
    throw e;
  }
}

function rawBlock(block: Buffer, expected: number): Buffer {
  if (expected === 0) {
    if (block.length !== 1) throw corrupt('empty block carries extra bytes');
    return Buffer.alloc(0);
  }
  let out: Buffer;
  try {
    out = wasmSnappyDecompress(block);
  } catch (e) {
    throw corrupt('compressed block is malformed', e);
  }
  if (out.length !== expected) throw corrupt(`block declares ${expected} bytes but decodes to ${out.length}`);
  return out;
}

export function isXerialFramed(src: Buffer): boolean {
  return src.length >= XERIAL_HEADER_SIZE && src.compare(XERIAL_MAGIC, 0, 8, 0, 8) === 0;
}

/** Decompresses raw or xerial-framed snappy, never beyond `maxOutputBytes`. */
export function snappyDecompress(src: Buffer, maxOutputBytes: number): Buffer {
  if (!isXerialFramed(src)) {
    const size = declaredLength(src);
    if (size > maxOutputBytes) throw tooLarge(size, maxOutputBytes);
    return rawBlock(src, size);
  }
  // First pass: check the block structure and sum the declared sizes, so nothing is decoded past the limit.
  const blocks: Buffer[] = [];
  const sizes: number[] = [];
  let total = 0;
  let pos = XERIAL_HEADER_SIZE;
  while (pos < src.length) {
    if (pos + 4 > src.length) throw corrupt(`xerial block header at byte ${pos} is truncated`);
    const len = src.readInt32BE(pos);
    pos += 4;
    if (len < 0 || pos + len > src.length) throw corrupt(`xerial block at byte ${pos} declares ${len} bytes, past the end of the data`);
    const block = src.subarray(pos, pos + len);
    pos += len;
    const size = declaredLength(block);
    total += size;
    if (total > maxOutputBytes) throw tooLarge(total, maxOutputBytes);
    blocks.push(block);
    sizes.push(size);
  }
  if (blocks.length === 1) return rawBlock(blocks[0]!, sizes[0]!);
  const out = Buffer.allocUnsafe(total);
  let op = 0;
  for (let i = 0; i < blocks.length; i++) {
    op += rawBlock(blocks[i]!, sizes[i]!).copy(out, op);
  }
  return out;
}

/** Compresses into raw snappy. */
export function snappyCompress(data: Buffer): Buffer {
  // wasm-utils 0.2.1 throws on empty input once its memory has grown (it copies into a detached view).
  if (data.length === 0) return Buffer.from([0]);
  return wasmSnappyCompress(data);
}
