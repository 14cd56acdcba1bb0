/**
 * The RLE / bit-packing hybrid encoding of Parquet repetition and definition levels (Parquet
 * `Encodings.md`): runs of at least eight equal levels become RLE runs, everything else is bit-packed in
 * groups of eight (the last group padded with zeros, which a reader ignores because the page states its
 * value count).
 */

/** Bits needed to store levels up to `maxLevel`. */
export function levelBitWidth(maxLevel: number): number {
  return maxLevel === 0 ? 0 : 32 - Math.clz32(maxLevel);
}

/** A growable byte sink the encoder writes into; reused between pages. */
export class ByteSink {
  buf: Buffer;
  pos = 0;
  constructor(initial = 1024) {
    this.buf = Buffer.allocUnsafe(initial);
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }
  uvarint(v: number): void {
    this.ensure(5);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }
  u32le(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v, this.pos);
    this.pos += 4;
  }
  bytes(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.ensure(n);
    if (n <= 16) {
      const b = this.buf;
      let p = this.pos;
      for (let i = start; i < end; i++) b[p++] = src[i]!;
    } else {
      this.buf.set(src.subarray(start, end), this.pos);
    }
    this.pos += n;
  }
  reset(): void {
    this.pos = 0;
  }
  view(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/**
 * Appends `levels[0, n)` to `out` in the hybrid encoding with `bitWidth` bits per level (1-8; Parquet levels
 * above 255 do not occur in Iceberg schemas of realistic depth).
 */
export function encodeLevels(levels: Uint8Array, n: number, bitWidth: number, out: ByteSink): void {
  const byteWidth = (bitWidth + 7) >> 3;
  let i = 0;
  // Bit-packed groups waiting for their run header: [start of first group, number of groups].
  let packedStart = -1;
  let packedGroups = 0;
  const flushPacked = (): void => {
    if (packedGroups === 0) return;
    out.uvarint((packedGroups << 1) | 1);
    out.ensure(packedGroups * bitWidth);
    const b = out.buf;
    let p = out.pos;
    let acc = 0;
    let bits = 0;
    const end = packedStart + packedGroups * 8;
    for (let k = packedStart; k < end; k++) {
      acc |= (k < n ? levels[k]! : 0) << bits;
      bits += bitWidth;
      while (bits >= 8) {
        b[p++] = acc & 0xff;
        acc >>>= 8;
        bits -= 8;
      }
    }
    out.pos = p;
    packedGroups = 0;
    packedStart = -1;
  };
  while (i < n) {
    const v = levels[i]!;
    let j = i + 1;
    while (j < n && levels[j] === v) j++;
    if (j - i >= 8) {
      flushPacked();
      out.uvarint((j - i) << 1);
      out.ensure(byteWidth);
      out.buf[out.pos++] = v;
      if (byteWidth > 1) out.buf[out.pos++] = 0;
      i = j;
      continue;
    }
    // Bit-pack the next eight levels; a long run that starts inside them is packed too (still correct).
    if (packedStart < 0) packedStart = i;
    packedGroups++;
    i += 8;
    if (packedGroups === 1 << 20) flushPacked();
  }
  flushPacked();
}
