/**
 * XXH32, the checksum of the LZ4 frame format (header checksum, block checksums, content checksum).
 * Written from the xxHash specification (doc/xxhash_spec.md); 32-bit arithmetic with Math.imul.
 */

const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const P5 = 0x165667b1;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function u32le(b: Buffer, p: number): number {
  return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
}

function round(acc: number, input: number): number {
  return Math.imul(rotl((acc + Math.imul(input, P2)) | 0, 13), P1);
}

/** XXH32 of `buf[start, end)` with `seed` (LZ4 uses seed 0). Returns an unsigned 32-bit number. */
export function xxh32(buf: Buffer, start = 0, end = buf.length, seed = 0): number {
  const len = end - start;
  let p = start;
  let h: number;
  if (len >= 16) {
    let v1 = (seed + P1 + P2) | 0;
    let v2 = (seed + P2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - P1) | 0;
    const limit = end - 16;
    while (p <= limit) {
      v1 = round(v1, u32le(buf, p));
      v2 = round(v2, u32le(buf, p + 4));
      v3 = round(v3, u32le(buf, p + 8));
      v4 = round(v4, u32le(buf, p + 12));
      p += 16;
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = (seed + P5) | 0;
  }
  h = (h + len) | 0;
  while (p + 4 <= end) {
    h = Math.imul(rotl((h + Math.imul(u32le(buf, p), P3)) | 0, 17), P4);
    p += 4;
  }
  while (p < end) {
    h = Math.imul(rotl((h + Math.imul(buf[p]!, P5)) | 0, 11), P1);
    p++;
  }
  h ^= h >>> 15;
  h = Math.imul(h, P2);
  h ^= h >>> 13;
  h = Math.imul(h, P3);
  h ^= h >>> 16;
  return h >>> 0;
}
