/**
 * Parquet page compression codecs (parquet.thrift `CompressionCodec`), run natively or in a small wasm
 * module rather than inside parquet-wasm, whose built-in zstd compresses Kafka-like values at about a fifth
 * of the native library's speed here (`bench/tiering/convert.bench.ts`):
 *
 * - ZSTD: `zstd-napi` (reference libzstd through N-API), one reused context per direction;
 * - SNAPPY: raw snappy blocks via `@platformatic/wasm-utils` (Parquet pages carry no xerial framing);
 * - GZIP: `node:zlib`;
 * - UNCOMPRESSED.
 *
 * A page states its uncompressed size in its header, so decompression is told the exact output size and
 * fails if the data decodes to anything else: a corrupt or hostile page cannot allocate past its claim.
 */
import zlib from 'node:zlib';
import { snappyCompress, snappyDecompress } from '@platformatic/wasm-utils';
import zstdBinding from 'zstd-napi/binding.js';
import { ParquetError } from './errors.js';

/** parquet.thrift CompressionCodec values. */
export const CompressionCodec = {
  UNCOMPRESSED: 0,
  SNAPPY: 1,
  GZIP: 2,
  LZO: 3,
  BROTLI: 4,
  LZ4: 5,
  ZSTD: 6,
  LZ4_RAW: 7,
} as const;
export type CompressionCodec = (typeof CompressionCodec)[keyof typeof CompressionCodec];

const NAMES = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'];

/** Whether pages compressed with `codec` can be decoded here without parquet-wasm. */
export function codecSupported(codec: number): boolean {
  return codec === CompressionCodec.UNCOMPRESSED || codec === CompressionCodec.SNAPPY || codec === CompressionCodec.GZIP || codec === CompressionCodec.ZSTD;
}

/** zstd level used for pages: 1, as parquet-rs and Kafka producers default to for speed. */
export const ZSTD_PAGE_LEVEL = 1;

let cctx: zstdBinding.CCtx | undefined;
let dctx: zstdBinding.DCtx | undefined;

function zstdCtx(): zstdBinding.CCtx {
  if (cctx === undefined) {
    cctx = new zstdBinding.CCtx();
    cctx.setParameter(zstdBinding.CParameter.compressionLevel, ZSTD_PAGE_LEVEL);
  }
  return cctx;
}

/** Compresses one page body. UNCOMPRESSED returns `data` itself. */
export function compressPage(codec: CompressionCodec, data: Uint8Array): Uint8Array {
  switch (codec) {
    case CompressionCodec.UNCOMPRESSED:
      return data;
    case CompressionCodec.ZSTD: {
      const ctx = zstdCtx();
      const out = Buffer.allocUnsafe(zstdBinding.compressBound(data.length));
      const n = ctx.compress2(out, data);
      return out.subarray(0, n);
    }
    case CompressionCodec.SNAPPY:
      return snappyCompress(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    case CompressionCodec.GZIP:
      return zlib.gzipSync(data);
    default:
      throw new ParquetError('UNSUPPORTED_TYPE', `Parquet codec ${NAMES[codec] ?? codec} is not supported for writing; use ZSTD, SNAPPY, GZIP or UNCOMPRESSED`);
  }
}

/**
 * Compresses one page body and appends it to `out` (a growable buffer: `ensure(n)` makes room for n more
 * bytes at `out.pos`); returns the compressed length. The body is one buffer (levels and values together):
 * zstd then compresses it in a single pass straight from it, where a body streamed in parts is first
 * copied into zstd's window buffer, which measured ~5% slower.
 */
export function compressPageInto(codec: CompressionCodec, body: Uint8Array, out: { buf: Buffer; pos: number; ensure(n: number): void }): number {
  if (codec === CompressionCodec.ZSTD) {
    const bound = zstdBinding.compressBound(body.length);
    out.ensure(bound);
    const n = zstdCtx().compress2(out.buf.subarray(out.pos, out.pos + bound), body);
    out.pos += n;
    return n;
  }
  const c = compressPage(codec, body);
  out.ensure(c.length);
  out.buf.set(c, out.pos);
  out.pos += c.length;
  return c.length;
}

function corrupt(codec: number, detail: string, cause?: unknown): ParquetError {
  return new ParquetError('INVALID_PARQUET', `Corrupt ${NAMES[codec] ?? `codec ${codec}`} page: ${detail}; the data file is damaged, rewrite it`, cause === undefined ? {} : { cause });
}

/**
 * Where a decompressed page goes: a function returning a buffer of at least `n` bytes that the caller owns
 * (reused memory: writing into fresh memory costs page faults that take longer than zstd itself here).
 */
export type PageBufferSource = (n: number) => Buffer;

/**
 * Decompresses one page body whose header says it holds `size` bytes once decompressed. Throws
 * ParquetError INVALID_PARQUET when the data is malformed or decodes to another size, and UNSUPPORTED_TYPE
 * for codecs not handled here (LZO, BROTLI, LZ4, LZ4_RAW). With `into`, ZSTD pages are written into the
 * buffer it returns (asked for size + 1 bytes); other codecs allocate their own.
 */
export function decompressPage(codec: number, data: Uint8Array, size: number, into?: PageBufferSource): Buffer {
  if (!Number.isSafeInteger(size) || size < 0) throw corrupt(codec, `uncompressed size ${size} is not a valid length`);
  const input = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  switch (codec) {
    case CompressionCodec.UNCOMPRESSED:
      if (input.length !== size) throw corrupt(codec, `holds ${input.length} bytes where its header says ${size}`);
      return input;
    case CompressionCodec.ZSTD:
      return zstdDecompressExact(input, size, into);
    case CompressionCodec.SNAPPY: {
      let out: Buffer;
      try {
        out = snappyDecompress(input);
      } catch (cause) {
        throw corrupt(codec, cause instanceof Error ? cause.message : String(cause), cause);
      }
      if (out.length !== size) throw corrupt(codec, `decodes to ${out.length} bytes where its header says ${size}`);
      return out;
    }
    case CompressionCodec.GZIP: {
      let out: Buffer;
      try {
        out = zlib.gunzipSync(input, { maxOutputLength: Math.max(1, size) });
      } catch (cause) {
        throw corrupt(codec, cause instanceof Error ? cause.message : String(cause), cause);
      }
      if (out.length !== size) throw corrupt(codec, `decodes to ${out.length} bytes where its header says ${size}`);
      return out;
    }
    default:
      throw new ParquetError('UNSUPPORTED_TYPE', `Parquet codec ${NAMES[codec] ?? codec} is not supported by the native page reader`);
  }
}

function zstdDecompressExact(src: Buffer, size: number, into: PageBufferSource | undefined): Buffer {
  const ctx = (dctx ??= new zstdBinding.DCtx());
  ctx.reset(zstdBinding.ResetDirective.sessionOnly);
  // One spare byte: if the stream writes into it, the page is larger than its header says.
  let out: Buffer;
  if (into === undefined) out = Buffer.allocUnsafe(size + 1);
  else {
    const given = into(size + 1);
    if (given.length < size + 1) throw new RangeError(`page buffer of ${given.length} bytes given for a ${size + 1}-byte request`);
    out = given.length === size + 1 ? given : given.subarray(0, size + 1);
  }
  let produced = 0;
  let input = src;
  let remaining = 1;
  try {
    while (input.length > 0 || remaining !== 0) {
      const [hint, wrote, consumed] = ctx.decompressStream(out.subarray(produced), input);
      produced += wrote;
      input = input.subarray(consumed);
      remaining = hint;
      if (produced > size) throw corrupt(CompressionCodec.ZSTD, `decodes to more than the ${size} bytes its header says`);
      if (wrote === 0 && consumed === 0) throw corrupt(CompressionCodec.ZSTD, input.length === 0 ? 'data ends inside a frame' : 'decoder made no progress');
    }
  } catch (e) {
    if (e instanceof ParquetError) throw e;
    throw corrupt(CompressionCodec.ZSTD, e instanceof Error ? e.message : String(e), e);
  }
  if (produced !== size) throw corrupt(CompressionCodec.ZSTD, `decodes to ${produced} bytes where its header says ${size}`);
  return out.subarray(0, size);
}
