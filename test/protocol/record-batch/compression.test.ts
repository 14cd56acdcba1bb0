import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { compress, decompress, compressionOf, type CompressionType } from '../../../protocol/record-batch/compression.js';
import { decodeLz4Frames, lz4Compress } from '../../../protocol/record-batch/lz4-frame.js';
import { snappyCompress } from '../../../protocol/record-batch/snappy.js';
import { xxh32 } from '../../../protocol/record-batch/xxhash32.js';
import { RecordBatchError } from '../../../protocol/record-batch/errors.js';
import zstdBinding from 'zstd-napi/binding.js';

/** A zstd frame written by the streaming API without a pledged size: its header declares no content size. */
function compressStreamed(data: Buffer): Buffer {
  const ctx = new zstdBinding.CCtx();
  const out = Buffer.alloc(zstdBinding.compressBound(data.length) + 64);
  let produced = 0;
  // Feed the data first and end the frame afterwards, so the size is not known when the header is written.
  let src = data;
  while (src.length > 0) {
    const [, wrote, consumed] = ctx.compressStream2(out.subarray(produced), src, zstdBinding.EndDirective.continue);
    produced += wrote;
    src = src.subarray(consumed);
  }
  for (;;) {
    const [remaining, wrote] = ctx.compressStream2(out.subarray(produced), Buffer.alloc(0), zstdBinding.EndDirective.end);
    produced += wrote;
    if (remaining === 0) break;
  }
  const frame = out.subarray(0, produced);
  assert.equal(zstdBinding.getFrameContentSize(frame), null, 'the frame declares no size');
  return frame;
}

const DATA = Buffer.from(Array.from({ length: 4000 }, (_, i) => JSON.stringify({ id: i, user: `u${i % 50}`, v: i * 7 })).join('\n'));
const CODECS: CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

function isCode(code: string) {
  return (e: unknown) => e instanceof RecordBatchError && e.code === code;
}

test('every codec round-trips, including empty input, and respects an exact limit', () => {
  for (const type of CODECS) {
    for (const input of [DATA, Buffer.alloc(0), Buffer.from('x')]) {
      const c = compress(type, input);
      assert.deepEqual(decompress(type, c, input.length), input, type);
    }
    assert.throws(() => decompress(type, compress(type, DATA), DATA.length - 1), isCode('DECOMPRESSED_TOO_LARGE'), type);
  }
});

test('decompression bombs stop at the limit', () => {
  const zeros = Buffer.alloc(32 << 20);
  for (const type of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
    const bomb = compress(type, zeros);
    assert.ok(bomb.length < zeros.length / 20, `${type} bomb is small`);
    assert.throws(() => decompress(type, bomb, 1 << 20), isCode('DECOMPRESSED_TOO_LARGE'), type);
  }
  assert.throws(() => decodeLz4Frames(lz4Compress(zeros), 1 << 20), isCode('DECOMPRESSED_TOO_LARGE'));
});

test('zstd with a lent scratch buffer: same bytes, the buffer reused and grown, limits still enforced', () => {
  const scratch = { buf: Buffer.alloc(16) };
  const small = Buffer.from('hello zstd scratch');
  assert.deepEqual(decompress('zstd', compress('zstd', small), 1 << 20, scratch), small);
  const grown = scratch.buf;
  assert.ok(grown.length >= small.length, 'grown to fit the frame');
  const a = decompress('zstd', compress('zstd', DATA), 1 << 20, scratch);
  assert.deepEqual(a, DATA);
  assert.equal(a.buffer, scratch.buf.buffer, 'the result is a view of the scratch');
  const before = scratch.buf;
  assert.deepEqual(decompress('zstd', compress('zstd', small), 1 << 20, scratch), small);
  assert.equal(scratch.buf, before, 'a smaller frame reuses the buffer');
  // A scratch larger than the limit does not raise the limit.
  const big = { buf: Buffer.alloc(DATA.length * 2) };
  assert.throws(() => decompress('zstd', compress('zstd', DATA), DATA.length - 1, big), isCode('DECOMPRESSED_TOO_LARGE'));
  // A frame without a declared size (streamed) still decodes.
  const streamed = compressStreamed(DATA);
  assert.deepEqual(decompress('zstd', streamed, 1 << 20, { buf: Buffer.alloc(8) }), DATA);
});

test('garbage is DECOMPRESSION_FAILED for every codec', () => {
  const junk = Buffer.from('this is not compressed data at all, really');
  for (const type of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
    assert.throws(() => decompress(type, junk, 1 << 20), isCode('DECOMPRESSION_FAILED'), type);
  }
  // The wasm decoders keep working after rejecting input.
  assert.deepEqual(decompress('snappy', compress('snappy', DATA), 1 << 20), DATA);
  assert.deepEqual(decompress('lz4', compress('lz4', DATA), 1 << 20), DATA);
});

test('gzip accepts concatenated members', () => {
  const two = Buffer.concat([zlib.gzipSync(DATA.subarray(0, 100)), zlib.gzipSync(DATA.subarray(100))]);
  assert.deepEqual(decompress('gzip', two, 1 << 20), DATA);
});

test('snappy: xerial framing (Java client, kafka-python) decodes, with several blocks', () => {
  const parts = [DATA.subarray(0, 30000), DATA.subarray(30000, 30001), DATA.subarray(30001)];
  const header = Buffer.alloc(16);
  Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]).copy(header);
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  const chunks: Buffer[] = [header];
  for (const p of parts) {
    const block = snappyCompress(p);
    const len = Buffer.alloc(4);
    len.writeInt32BE(block.length);
    chunks.push(len, block);
  }
  const framed = Buffer.concat(chunks);
  assert.deepEqual(decompress('snappy', framed, DATA.length), DATA);
  assert.throws(() => decompress('snappy', framed, DATA.length - 1), isCode('DECOMPRESSED_TOO_LARGE'));
  assert.throws(() => decompress('snappy', framed.subarray(0, framed.length - 5), 1 << 20), isCode('DECOMPRESSION_FAILED'));
});

test('snappy: a raw block declaring a huge size is refused before decoding', () => {
  const lie = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]); // preamble says 4 GiB
  assert.throws(() => decompress('snappy', lie, 1 << 20), isCode('DECOMPRESSED_TOO_LARGE'));
});

/** Builds an LZ4 frame from given block payloads (stored uncompressed when `raw`), per the frame spec. */
function lz4Frame(blocks: { data: Buffer; raw: boolean }[], opts: { blockChecksum: boolean; contentChecksum: boolean; contentSize?: number; linked?: boolean }, content: Buffer): Buffer {
  const flg = 0x40 | (opts.linked ? 0 : 0x20) | (opts.blockChecksum ? 0x10 : 0) | (opts.contentSize !== undefined ? 0x08 : 0) | (opts.contentChecksum ? 0x04 : 0);
  const desc = Buffer.alloc(opts.contentSize !== undefined ? 10 : 2);
  desc[0] = flg;
  desc[1] = 0x40; // 64 KiB blocks
  if (opts.contentSize !== undefined) desc.writeBigUInt64LE(BigInt(opts.contentSize), 2);
  const parts: Buffer[] = [Buffer.from([0x04, 0x22, 0x4d, 0x18]), desc, Buffer.from([(xxh32(desc) >>> 8) & 0xff])];
  for (const b of blocks) {
    const size = Buffer.alloc(4);
    size.writeUInt32LE((b.data.length | (b.raw ? 0x80000000 : 0)) >>> 0);
    parts.push(size, b.data);
    if (opts.blockChecksum) {
      const c = Buffer.alloc(4);
      c.writeUInt32LE(xxh32(b.data));
      parts.push(c);
    }
  }
  parts.push(Buffer.alloc(4));
  if (opts.contentChecksum) {
    const c = Buffer.alloc(4);
    c.writeUInt32LE(xxh32(content));
    parts.push(c);
  }
  return Buffer.concat(parts);
}

test('lz4: frames with block and content checksums, content size, raw blocks and an overlapping match', () => {
  // Hand-made LZ4 block: literals "abc", then a match of length 9 at offset 3 (overlapping), then literal "Z".
  const block = Buffer.from([0x35, 0x61, 0x62, 0x63, 0x03, 0x00, 0x10, 0x5a]);
  const expected = Buffer.from('abcabcabcabcZ');
  const tail = DATA.subarray(0, 1000);
  const content = Buffer.concat([expected, tail]);
  const frame = lz4Frame([{ data: block, raw: false }, { data: tail, raw: true }], { blockChecksum: true, contentChecksum: true, contentSize: content.length }, content);
  assert.deepEqual(decodeLz4Frames(frame, 1 << 20), content);
  assert.deepEqual(decompress('lz4', frame, 1 << 20), content);
  for (const at of [frame.length - 2, 30]) {
    const bad = Buffer.from(frame);
    bad[at]! ^= 1;
    assert.throws(() => decompress('lz4', bad, 1 << 20), isCode('DECOMPRESSION_FAILED'), `flip at ${at}`);
  }
  const badHeader = Buffer.from(frame);
  badHeader[5]! ^= 0x04; // flips the content-checksum flag: the header checksum no longer matches
  assert.throws(() => decompress('lz4', badHeader, 1 << 20), isCode('DECOMPRESSION_FAILED'));
});

test('lz4: linked blocks may reference the previous block; the wasm output re-framed with a checksum decodes', () => {
  const first = Buffer.from([0x40, 0x77, 0x78, 0x79, 0x7a]); // literals "wxyz"
  const second = Buffer.from([0x04, 0x04, 0x00]); // no literals, match length 8 at offset 4 (in block 1)... then must end with literals
  const secondFixed = Buffer.concat([second, Buffer.from([0x10, 0x21])]); // final sequence: literal "!"
  const content = Buffer.from('wxyzwxyzwxyz!');
  const frame = lz4Frame([{ data: first, raw: false }, { data: secondFixed, raw: false }], { blockChecksum: false, contentChecksum: true, linked: true }, content);
  assert.deepEqual(decodeLz4Frames(frame, 100), content);
  // The same blocks declared independent must be refused: block 2 reaches into block 1.
  const indep = lz4Frame([{ data: first, raw: false }, { data: secondFixed, raw: false }], { blockChecksum: false, contentChecksum: false }, content);
  assert.throws(() => decodeLz4Frames(indep, 100), isCode('DECOMPRESSION_FAILED'));

  const wasm = lz4Compress(DATA);
  assert.equal(wasm.readUInt32LE(0), 0x184d2204, 'the wasm encoder writes the LZ4 frame format');
  assert.deepEqual(decodeLz4Frames(wasm, DATA.length), DATA);
});

test('compressionOf reads attribute bits 0-2 and rejects 5-7', () => {
  assert.equal(compressionOf(0x14), 'zstd');
  assert.equal(compressionOf(0x0b), 'lz4');
  assert.throws(() => compressionOf(6), isCode('UNSUPPORTED_COMPRESSION'));
});

test('xxh32 matches published vectors', () => {
  assert.equal(xxh32(Buffer.alloc(0)), 0x02cc5d05);
  assert.equal(xxh32(Buffer.from('abc')), 0x32d153ff);
  assert.equal(xxh32(Buffer.from('Nobody inspects the spammish repetition')), 0xe2293b2f);
});
