/**
 * Protobuf wire format, reading and writing (sans IO): varints as two uint32 halves (no bigint unless a value
 * needs it), fixed32/fixed64, length-delimited fields, and skipping unknown fields (groups included). The
 * writer produces the canonical forms protoc and protobufjs write: minimal varints, negative int32 and enum
 * values as 10-byte varints (sign-extended to 64 bits).
 */
import { TypedValueError } from './api.js';

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;


function corrupt(why: string): TypedValueError {
  return new TypedValueError('CORRUPT_PAYLOAD', `the payload is not Protobuf binary of the schema: ${why}`);
}

export class WireReader {
  pos: number;
  /** The low and high 32 bits of the last varint read by `varint()`. */
  lo = 0;
  hi = 0;
  private dataView: DataView | undefined;

  constructor(
    readonly buf: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  /** Made on first use: most nested readers read no fixed-width values. */
  private get view(): DataView {
    return (this.dataView ??= new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength));
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** Reads a varint of up to 10 bytes into `lo`/`hi` (unsigned 32-bit halves). */
  varint(): void {
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw corrupt('it ends inside a varint');
      const b = this.buf[this.pos++] as number;
      if (i < 4) lo |= (b & 0x7f) << (7 * i);
      else if (i === 4) {
        lo |= (b & 0x0f) << 28;
        hi |= (b & 0x7f) >> 4;
      } else hi |= (b & 0x7f) << (7 * i - 32);
      if ((b & 0x80) === 0) {
        this.lo = lo >>> 0;
        this.hi = hi >>> 0;
        return;
      }
    }
    throw corrupt('a varint is longer than 10 bytes');
  }

  /** A varint as a JS number (the low 32 bits, unsigned): tags, lengths. */
  uint32(): number {
    this.varint();
    return this.lo;
  }

  /** The last varint as an unsigned 64-bit bigint. */
  u64(): bigint {
    if (this.hi < 0x200000) return BigInt(this.hi * 0x100000000 + this.lo); // below 2^53: exact as a number
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }

  /** The last varint as a signed 64-bit bigint (int64). */
  s64(): bigint {
    if (this.hi < 0x200000) return BigInt(this.hi * 0x100000000 + this.lo);
    if (this.hi >= 0xffe00000) return BigInt((this.hi - 0x100000000) * 0x100000000 + this.lo); // above -2^53
    return BigInt.asIntN(64, (BigInt(this.hi) << 32n) | BigInt(this.lo));
  }

  fixed32(): number {
    if (this.pos + 4 > this.end) throw corrupt('it ends inside a fixed32');
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  fixed64(): bigint {
    if (this.pos + 8 > this.end) throw corrupt('it ends inside a fixed64');
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }

  float(): number {
    if (this.pos + 4 > this.end) throw corrupt('it ends inside a float');
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  double(): number {
    if (this.pos + 8 > this.end) throw corrupt('it ends inside a double');
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** A length-delimited field's bounds: [start, end) in `buf`; moves past it. */
  delimited(): [number, number] {
    const len = this.uint32();
    if (this.hi !== 0 || len > this.end - this.pos) throw corrupt(`a length-delimited field of ${len} bytes runs past the end`);
    const start = this.pos;
    this.pos += len;
    return [start, this.pos];
  }

  /** A copy, as a plain Uint8Array (not a Buffer, even when reading one). */
  bytes(): Uint8Array {
    const [s, e] = this.delimited();
    return new Uint8Array(this.buf.subarray(s, e));
  }

  /** UTF-8 (invalid sequences read as U+FFFD, so such a payload does not re-encode to itself). */
  string(): string {
    const [s, e] = this.delimited();
    const b = this.buf;
    return (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)).toString('utf8', s, e);
  }

  /** Skips a field of wire type `wt` whose tag was just read (`field` for matching a group's end). */
  skip(wt: number, field: number): void {
    switch (wt) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        if (this.pos + 8 > this.end) throw corrupt('it ends inside a fixed64');
        this.pos += 8;
        return;
      case WIRE_LEN:
        this.delimited();
        return;
      case WIRE_FIXED32:
        if (this.pos + 4 > this.end) throw corrupt('it ends inside a fixed32');
        this.pos += 4;
        return;
      case WIRE_START_GROUP:
        for (;;) {
          if (this.done) throw corrupt(`group ${field} is not closed`);
          const tag = this.uint32();
          if ((tag & 7) === WIRE_END_GROUP) {
            if (tag >>> 3 !== field) throw corrupt(`group ${field} is closed as ${tag >>> 3}`);
            return;
          }
          this.skip(tag & 7, tag >>> 3);
        }
      default:
        throw corrupt(`wire type ${wt} (field ${field}) is not valid here`);
    }
  }
}

/**
 * Writes into one growing Buffer; a length-delimited field (`delimited`) is written in place and its length
 * prefix inserted afterwards, so nested messages need no buffers of their own.
 */
export class WireWriter {
  private buf: Buffer = Buffer.allocUnsafe(256);
  len = 0;

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  tag(field: number, wt: number): void {
    this.uint32(((field << 3) | wt) >>> 0);
  }

  /** An unsigned varint of a uint32 value. */
  uint32(v: number): void {
    this.ensure(5);
    let n = v >>> 0;
    while (n >= 0x80) {
      this.buf[this.len++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.len++] = n;
  }

  /** An int32 (or enum) varint: negative values sign-extend to 10 bytes, as protoc writes them. */
  int32(v: number): void {
    if (v >= 0) this.uint32(v);
    else this.varint64(v >>> 0, 0xffffffff);
  }

  /** A varint of a 64-bit value (signed or unsigned: its low 64 bits). */
  u64(v: bigint): void {
    if (v >= 0n && v <= 0xffffffffn) {
      this.uint32(Number(v));
      return;
    }
    const u = BigInt.asUintN(64, v);
    this.varint64(Number(u & 0xffffffffn), Number(u >> 32n));
  }

  /** A varint from the low and high uint32 halves of a 64-bit value. */
  private varint64(lo: number, hi: number): void {
    this.ensure(10);
    let l = lo >>> 0;
    let h = hi >>> 0;
    while (h > 0 || l >= 0x80) {
      this.buf[this.len++] = (l & 0x7f) | 0x80;
      l = ((l >>> 7) | (h << 25)) >>> 0;
      h >>>= 7;
    }
    this.buf[this.len++] = l;
  }

  fixed32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v >>> 0, this.len);
    this.len += 4;
  }

  fixed64(v: bigint): void {
    this.ensure(8);
    this.buf.writeBigUInt64LE(BigInt.asUintN(64, v), this.len);
    this.len += 8;
  }

  float(v: number): void {
    this.ensure(4);
    this.buf.writeFloatLE(v, this.len);
    this.len += 4;
  }

  double(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.len);
    this.len += 8;
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
  }

  /** Length-prefixed bytes. */
  bytes(bytes: Uint8Array): void {
    this.uint32(bytes.length);
    this.raw(bytes);
  }

  string(s: string): void {
    // Every UTF-16 unit is at most 3 UTF-8 bytes: reserve the worst case, write in place.
    const max = s.length * 3;
    this.ensure(max + 5);
    if (s.length < 0x80 / 3 || Buffer.byteLength(s) < 0x80) {
      const at = this.len + 1;
      const n = this.buf.write(s, at, 'utf8');
      this.buf[this.len] = n;
      this.len = at + n;
      return;
    }
    this.uint32(Buffer.byteLength(s));
    this.len += this.buf.write(s, this.len, 'utf8');
  }

  /** A length-delimited field whose content `fill` writes (a nested message). */
  delimited(fill: (w: WireWriter) => void): void {
    this.ensure(1);
    const start = ++this.len;
    fill(this);
    const size = this.len - start;
    if (size < 0x80) {
      this.buf[start - 1] = size;
      return;
    }
    let prefix = 1;
    while (size >= 2 ** (7 * prefix)) prefix++;
    this.ensure(prefix - 1);
    this.buf.copyWithin(start + prefix - 1, start, this.len);
    this.len += prefix - 1;
    let n = size;
    for (let i = start - 1; i < start - 1 + prefix; i++) {
      this.buf[i] = n >= 0x80 ? (n & 0x7f) | 0x80 : n;
      n = Math.floor(n / 0x80);
    }
  }

  /** The bytes written, as a plain Uint8Array of their own. */
  finish(): Uint8Array {
    return new Uint8Array(this.buf.subarray(0, this.len));
  }
}
