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

const utf8 = new TextDecoder('utf-8');
const utf8Encoder = new TextEncoder();

function corrupt(why: string): TypedValueError {
  return new TypedValueError('CORRUPT_PAYLOAD', `the payload is not Protobuf binary of the schema: ${why}`);
}

export class WireReader {
  pos: number;
  /** The low and high 32 bits of the last varint read by `varint()`. */
  lo = 0;
  hi = 0;
  private readonly view: DataView;

  constructor(
    readonly buf: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
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
    return this.hi === 0 ? BigInt(this.lo) : (BigInt(this.hi) << 32n) | BigInt(this.lo);
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

  string(): string {
    const [s, e] = this.delimited();
    return utf8.decode(this.buf.subarray(s, e));
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

export class WireWriter {
  private buf = new Uint8Array(64);
  private view = new DataView(this.buf.buffer);
  len = 0;

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
    this.view = new DataView(next.buffer);
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
    else this.u64(BigInt.asUintN(64, BigInt(v)));
  }

  /** A varint of an unsigned 64-bit value. */
  u64(v: bigint): void {
    if (v >= 0n && v < 0x80000000n) {
      this.uint32(Number(v));
      return;
    }
    this.ensure(10);
    let n = BigInt.asUintN(64, v);
    while (n >= 0x80n) {
      this.buf[this.len++] = Number(n & 0x7fn) | 0x80;
      n >>= 7n;
    }
    this.buf[this.len++] = Number(n);
  }

  fixed32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.len, v >>> 0, true);
    this.len += 4;
  }

  fixed64(v: bigint): void {
    this.ensure(8);
    this.view.setBigUint64(this.len, BigInt.asUintN(64, v), true);
    this.len += 8;
  }

  float(v: number): void {
    this.ensure(4);
    this.view.setFloat32(this.len, v, true);
    this.len += 4;
  }

  double(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.len, v, true);
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
    this.bytes(utf8Encoder.encode(s));
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}
