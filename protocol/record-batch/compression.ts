/**
 * The four record-batch codecs behind one interface, selected by attribute bits 0-2. Every decompression
 * takes an output limit and fails with DECOMPRESSED_TOO_LARGE rather than allocating past it, so a small
 * batch cannot expand into gigabytes on the produce path.
 *
 * - gzip: node:zlib (`maxOutputLength` bounds it natively; concatenated members are accepted).
 * - snappy: ./snappy.ts (raw and xerial-framed).
 * - lz4: ./lz4-frame.ts (LZ4 frame format).
 * - zstd: `zstd-napi`. Chosen because Node 20's zlib has no zstd; it is a native N-API binding to the
 *   reference libzstd (1.5.7), actively maintained, and the fastest zstd measured on these machines
 *   (860 MB/s compress, 2,100 MB/s decompress; shared/measurements.md). `@mongodb-js/zstd` does not install
 *   here. Its low-level streaming binding is used so the output can be bounded.
 */
import zlib from 'node:zlib';
import { compress as zstdCompressNative } from 'zstd-napi';
import zstdBinding from 'zstd-napi/binding.js';
import { ATTR_COMPRESSION_MASK } from './header.js';
import { RecordBatchError } from './errors.js';
import { lz4Compress, lz4Decompress } from './lz4-frame.js';
import { snappyCompress, snappyDecompress } from './snappy.js';

export type CompressionType = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

/** Attribute bits 0-2 of each codec. */
export const COMPRESSION_CODES: Readonly<Record<CompressionType, number>> = Object.freeze({ none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 });

const BY_CODE: readonly CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/** Default output limit for decompressing one batch's records. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 128 * 1024 * 1024;

/** The codec named by a batch's attributes; throws UNSUPPORTED_COMPRESSION for codes 5-7. */
export function compressionOf(attributes: number): CompressionType {
  const code = attributes & ATTR_COMPRESSION_MASK;
  const type = BY_CODE[code];
  if (type === undefined) {
    throw new RecordBatchError('UNSUPPORTED_COMPRESSION', `compression code ${code} is not a Kafka codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)`);
  }
  return type;
}

export interface CompressOptions {
  /** Codec level: gzip 1-9 (default 6), zstd 1-22 (default 3). Ignored by snappy and lz4. */
  readonly level?: number;
}

export function compress(type: CompressionType, data: Buffer, options: CompressOptions = {}): Buffer {
  switch (type) {
    case 'none':
      return data;
    case 'gzip':
      return zlib.gzipSync(data, options.level === undefined ? {} : { level: options.level });
    case 'snappy':
      return snappyCompress(data);
    case 'lz4':
      return lz4Compress(data);
    case 'zstd':
      return zstdCompressNative(data, { compressionLevel: options.level ?? 3 });
  }
}

/**
 * A buffer a caller lends to decompression so that batch after batch reuses the same memory: the result is
 * then a view of `buf`, valid until the next call with this scratch. Used for zstd, whose frames state their
 * size; `buf` is replaced by a larger one when a frame needs more.
 */
export interface DecompressScratch {
  buf: Buffer;
}

/**
 * Decompresses `data` with `type`, producing at most `maxOutputBytes` bytes. Throws RecordBatchError
 * DECOMPRESSED_TOO_LARGE past the limit and DECOMPRESSION_FAILED for malformed input. With `scratch`, the
 * result may be a view of the scratch buffer (see DecompressScratch).
 */
export function decompress(type: CompressionType, data: Buffer, maxOutputBytes = DEFAULT_MAX_DECOMPRESSED_BYTES, scratch?: DecompressScratch): Buffer {
  switch (type) {
    case 'none':
      if (data.length > maxOutputBytes) throw tooLarge('none', maxOutputBytes);
      return data;
    case 'gzip':
      return gunzip(data, maxOutputBytes);
    case 'snappy':
      return snappyDecompress(data, maxOutputBytes);
    case 'lz4':
      return lz4Decompress(data, maxOutputBytes);
    case 'zstd':
      return zstdDecompress(data, maxOutputBytes, scratch);
  }
}

function tooLarge(codec: string, limit: number): RecordBatchError {
  return new RecordBatchError(
    'DECOMPRESSED_TOO_LARGE',
    `${codec}: decompressed records exceed the limit of ${limit} bytes; the batch is a decompression bomb or the limit is too low`,
  );
}

function gunzip(data: Buffer, maxOutputBytes: number): Buffer {
  try {
    return zlib.gunzipSync(data, { maxOutputLength: Math.max(1, maxOutputBytes) });
  } catch (e) {
    if (e instanceof RangeError && (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge('gzip', maxOutputBytes);
    throw new RecordBatchError('DECOMPRESSION_FAILED', `gzip: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

// One decompression context, reused: the protocol layer runs on one thread and each call resets it.
let dctx: zstdBinding.DCtx | undefined;
const ZSTD_MIN_CHUNK = 64 * 1024;

function zstdDecompress(src: Buffer, maxOutputBytes: number, scratch?: DecompressScratch): Buffer {
  const ctx = (dctx ??= new zstdBinding.DCtx());
  ctx.reset(zstdBinding.ResetDirective.sessionOnly);
  let declared: number | null = null;
  try {
    declared = zstdBinding.getFrameContentSize(src);
  } catch {
    declared = null; // unknown or not yet parseable; the stream decoder reports real errors below
  }
  if (declared !== null && declared > maxOutputBytes) throw tooLarge('zstd', maxOutputBytes);
  const want = Math.min(maxOutputBytes, declared ?? Math.max(ZSTD_MIN_CHUNK, src.length * 4));
  if (scratch !== undefined && scratch.buf.length < want && declared !== null) scratch.buf = Buffer.allocUnsafe(Math.max(want, scratch.buf.length * 2));
  // Never more room than the limit: the probe below must see any byte past it.
  let out = scratch !== undefined && scratch.buf.length >= want ? scratch.buf.subarray(0, Math.min(scratch.buf.length, maxOutputBytes)) : Buffer.allocUnsafe(want);
  let produced = 0;
  let input = src;
  let remaining = 1; // zstd's hint of bytes left to flush in the current frame; 0 at a frame boundary
  const probe = Buffer.allocUnsafe(1);
  try {
    while (input.length > 0 || remaining !== 0) {
      let dst: Buffer;
      if (produced < out.length) {
        dst = out.subarray(produced);
      } else if (out.length < maxOutputBytes) {
        const grown = Buffer.allocUnsafe(Math.min(maxOutputBytes, out.length * 2));
        out.copy(grown, 0, 0, produced);
        out = grown;
        dst = out.subarray(produced);
      } else {
        dst = probe; // at the limit: any further byte means the limit is exceeded
      }
      const [hint, wrote, consumed] = ctx.decompressStream(dst, input);
      if (dst === probe && wrote > 0) throw tooLarge('zstd', maxOutputBytes);
      produced += wrote;
      input = input.subarray(consumed);
      remaining = hint;
      if (wrote === 0 && consumed === 0) {
        throw new RecordBatchError('DECOMPRESSION_FAILED', input.length === 0 ? 'zstd: compressed data ends inside a frame' : 'zstd: decoder made no progress');
      }
    }
  } catch (e) {
    if (e instanceof RecordBatchError) throw e;
    throw new RecordBatchError('DECOMPRESSION_FAILED', `zstd: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  return out.subarray(0, produced);
}
