/**
 * An encoder for the Thrift compact protocol, enough to write Parquet page headers and the footer
 * (FileMetaData). Structs are written field by field in increasing id order; the encoder tracks the last
 * field id of each open struct for the compact protocol's delta-encoded field headers.
 */
import { ParquetError } from './errors.js';
import { TType } from './thrift.js';

export { TType };

const encoder = new TextEncoder();

export class CompactWriter {
  private buf: Buffer;
  private pos = 0;
  private lastField: number[] = [];
  private last = 0;

  constructor(initial = 256) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  private byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  private uvarint(v: number): void {
    this.ensure(10);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }

  private uvarint64(v: bigint): void {
    this.ensure(10);
    while (v >= 0x80n) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  private fieldHeader(id: number, type: number): void {
    const delta = id - this.last;
    if (delta > 0 && delta <= 15) {
      this.byte((delta << 4) | type);
    } else {
      this.byte(type);
      this.uvarint(((id << 1) ^ (id >> 31)) >>> 0);
    }
    this.last = id;
  }

  /** Opens a nested struct value (after its field header, or as a list element). */
  beginStruct(): this {
    this.lastField.push(this.last);
    this.last = 0;
    return this;
  }

  endStruct(): this {
    this.byte(0); // STOP
    const prev = this.lastField.pop();
    if (prev === undefined) throw new ParquetError('WRITE_FAILED', 'thrift writer: endStruct without beginStruct');
    this.last = prev;
    return this;
  }

  i32(id: number, v: number): this {
    this.fieldHeader(id, TType.I32);
    this.uvarint(((v << 1) ^ (v >> 31)) >>> 0);
    return this;
  }

  i16(id: number, v: number): this {
    this.fieldHeader(id, TType.I16);
    this.uvarint(((v << 1) ^ (v >> 31)) >>> 0);
    return this;
  }

  i64(id: number, v: bigint | number): this {
    this.fieldHeader(id, TType.I64);
    const b = BigInt.asIntN(64, BigInt(v));
    this.uvarint64(BigInt.asUintN(64, (b << 1n) ^ (b >> 63n)));
    return this;
  }

  bool(id: number, v: boolean): this {
    this.fieldHeader(id, v ? TType.BOOL_TRUE : TType.BOOL_FALSE);
    return this;
  }

  binary(id: number, v: Uint8Array | string): this {
    this.fieldHeader(id, TType.BINARY);
    this.rawBinary(typeof v === 'string' ? encoder.encode(v) : v);
    return this;
  }

  /** A struct-typed field: writes its header and opens the struct; close with endStruct(). */
  struct(id: number): this {
    this.fieldHeader(id, TType.STRUCT);
    return this.beginStruct();
  }

  /** A list field header for `size` elements of `elemType`; the elements follow. */
  list(id: number, elemType: number, size: number): this {
    this.fieldHeader(id, TType.LIST);
    if (size < 15) this.byte((size << 4) | elemType);
    else {
      this.byte(0xf0 | elemType);
      this.uvarint(size);
    }
    return this;
  }

  /** A list element of type I32. */
  elemI32(v: number): this {
    this.uvarint(((v << 1) ^ (v >> 31)) >>> 0);
    return this;
  }

  /** A list element of type BINARY. */
  elemBinary(v: Uint8Array | string): this {
    this.rawBinary(typeof v === 'string' ? encoder.encode(v) : v);
    return this;
  }

  private rawBinary(v: Uint8Array): void {
    this.uvarint(v.length);
    this.ensure(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  get length(): number {
    return this.pos;
  }

  /** The bytes written so far (a view; copy it if the writer is reused). */
  finish(): Buffer {
    if (this.lastField.length !== 0) throw new ParquetError('WRITE_FAILED', 'thrift writer: a struct was left open');
    return this.buf.subarray(0, this.pos);
  }
}
