/**
 * Fuzzing decodeRequest with 100,000+ frames: valid requests of every declared API and version, mutated
 * by bit flips, truncation, corrupted length fields, inserted and deleted bytes, plus purely random
 * frames. Every decode must return or throw a ProtocolError; nothing it returns may be larger than the
 * frame, and no Buffer allocated while decoding may be larger than the frame either.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeRequest, encodeRequest, ProtocolError } from '../../protocol/index.js';
import { API_SPECS } from '../../protocol/messages/index.js';
import { listVersions } from '../../protocol/schema/versions.js';
import { prng, randBytes, randInt, randomBody, type Rand } from './helpers/random-values.js';

const FRAMES = 100_000;

function seedFrames(rand: Rand): Buffer[] {
  const out: Buffer[] = [];
  let correlationId = 0;
  for (const [apiKey, spec] of API_SPECS) {
    for (const apiVersion of listVersions(spec.request.validVersions)) {
      for (let i = 0; i < 3; i++) {
        const { input } = randomBody(spec.request, apiVersion, rand);
        const clientId = i === 0 ? null : 'fuzz';
        out.push(encodeRequest({ apiKey, apiVersion, correlationId: correlationId++, clientId }, input).subarray(4));
      }
    }
  }
  return out;
}

const INTERESTING_16 = [0x0000, 0x0001, 0x7fff, 0x8000, 0xffff, 0xfffe];
const INTERESTING_32 = [0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe, 0x00010000];

function mutate(rand: Rand, seed: Buffer): Buffer {
  const kind = randInt(rand, 0, 7);
  const frame = Buffer.from(seed);
  const at = frame.length === 0 ? 0 : randInt(rand, 0, frame.length - 1);
  switch (kind) {
    case 0: {
      // Bit flips.
      const flips = randInt(rand, 1, 4);
      for (let i = 0; i < flips && frame.length > 0; i++) {
        const p = randInt(rand, 0, frame.length - 1);
        frame[p] = (frame[p] as number) ^ (1 << randInt(rand, 0, 7));
      }
      return frame;
    }
    case 1:
      // Truncation.
      return frame.subarray(0, randInt(rand, 0, frame.length));
    case 2:
      // A 16-bit length field corrupted (string lengths, header fields).
      if (at + 2 <= frame.length) frame.writeUInt16BE(INTERESTING_16[randInt(rand, 0, INTERESTING_16.length - 1)] as number, at);
      return frame;
    case 3:
      // A 32-bit length field corrupted (array and bytes lengths).
      if (at + 4 <= frame.length) frame.writeUInt32BE(INTERESTING_32[randInt(rand, 0, INTERESTING_32.length - 1)] as number, at);
      return frame;
    case 4: {
      // A varint corrupted: long continuation runs or a huge compact length.
      const run = randInt(rand, 1, 6);
      for (let i = 0; i < run && at + i < frame.length; i++) frame[at + i] = i === run - 1 ? randInt(rand, 0, 0x7f) : 0xff;
      return frame;
    }
    case 5:
      // Random bytes inserted.
      return Buffer.concat([frame.subarray(0, at), randBytes(rand, randInt(rand, 1, 8)), frame.subarray(at)]);
    case 6:
      // Bytes deleted.
      return Buffer.concat([frame.subarray(0, at), frame.subarray(Math.min(frame.length, at + randInt(rand, 1, 8)))]);
    default: {
      // The tail replaced by random bytes after a valid header prefix.
      return Buffer.concat([frame.subarray(0, at), randBytes(rand, randInt(rand, 0, 64))]);
    }
  }
}

/** Random frames: a plausible header (known API, random version) or pure noise. */
function randomFrame(rand: Rand, apiKeys: readonly number[]): Buffer {
  const noise = randBytes(rand, randInt(rand, 0, 96));
  if (rand() < 0.3 || noise.length < 4) return noise;
  noise.writeInt16BE(apiKeys[randInt(rand, 0, apiKeys.length - 1)] as number, 0);
  noise.writeInt16BE(randInt(rand, 0, 16), 2);
  return noise;
}

/** Largest Buffer, string or array in a decoded value, in bytes, UTF-16 units or elements. */
function largest(value: unknown, frame: Buffer): number {
  if (Buffer.isBuffer(value)) {
    // UUIDs (16 bytes) are copied on purpose; every other Buffer is a view of the frame.
    if (value.length > 0 && value.length !== 16) assert.equal(value.buffer, frame.buffer, 'bytes must be views of the frame');
    return value.length;
  }
  if (value instanceof Uint8Array) return value.length;
  // Invalid UTF-8 decodes to U+FFFD, one UTF-16 unit per bad byte, so length never exceeds the bytes read.
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return Math.max(value.length, ...value.map((v) => largest(v, frame)));
  if (value !== null && typeof value === 'object') return Math.max(0, ...Object.values(value).map((v) => largest(v, frame)));
  return 0;
}

test('decodeRequest survives 100,000 random and mutated frames with ProtocolError only', (t) => {
  const rand = prng(0xf10e);
  const seeds = seedFrames(rand);
  assert.ok(seeds.length > 0);
  const apiKeys = [...API_SPECS.keys()];

  // Record the largest Buffer allocated while decoding.
  let maxAllocated = 0;
  const original = { alloc: Buffer.alloc, allocUnsafe: Buffer.allocUnsafe, allocUnsafeSlow: Buffer.allocUnsafeSlow };
  const track = <F extends (size: number, ...rest: never[]) => Buffer>(fn: F): F =>
    ((size: number, ...rest: never[]) => {
      if (size > maxAllocated) maxAllocated = size;
      return fn.call(Buffer, size, ...rest);
    }) as F;
  Buffer.alloc = track(original.alloc);
  Buffer.allocUnsafe = track(original.allocUnsafe);
  Buffer.allocUnsafeSlow = track(original.allocUnsafeSlow);
  t.after(() => Object.assign(Buffer, original));

  const codes = new Map<string, number>();
  let decoded = 0;
  for (let i = 0; i < FRAMES; i++) {
    const frame = i % 10 === 9 ? randomFrame(rand, apiKeys) : mutate(rand, seeds[randInt(rand, 0, seeds.length - 1)] as Buffer);
    maxAllocated = 0;
    let body: unknown;
    try {
      body = decodeRequest(frame).body;
      decoded++;
    } catch (e) {
      if (!(e instanceof ProtocolError)) {
        assert.fail(`frame ${i} (${frame.toString('hex')}) threw a non-ProtocolError: ${e instanceof Error ? e.stack : String(e)}`);
      }
      codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
    }
    assert.ok(maxAllocated <= Math.max(frame.length, 16), `frame ${i}: allocated ${maxAllocated} bytes for a ${frame.length}-byte frame`);
    // Defaults (a zero UUID) may be 16 bytes even in a tiny frame.
    if (body !== undefined) {
      assert.ok(largest(body, frame) <= Math.max(frame.length, 16), `frame ${i} (${frame.toString('hex')}): a decoded value is larger than the frame`);
    }
  }
  // The fuzzer reaches deep: many mutants still decode, and each kind of failure shows up.
  assert.ok(decoded > FRAMES / 20, `only ${decoded} frames decoded`);
  for (const code of ['TRUNCATED', 'INVALID_LENGTH', 'UNSUPPORTED_VERSION', 'UNKNOWN_API', 'INVALID_VALUE', 'LIMIT_EXCEEDED']) {
    assert.ok((codes.get(code) ?? 0) > 0, `no ${code} errors seen: ${JSON.stringify([...codes])}`);
  }
});
