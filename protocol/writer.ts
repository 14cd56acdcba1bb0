/**
 * Writes every Kafka primitive into a growing Buffer. Fluent: `w.int16(x).string(s)`. A Writer can be
 * `reset()` and reused, keeping its buffer, so a hot path allocates only when a message is larger than any
 * before it. `view()` returns the written bytes without copying (valid until the next write or reset);
 * `toBuffer()` returns a copy the caller owns.
 */
import { ProtocolError } from './protocol-error.js';
import { writeUnsignedVarint, writeVarint, writeVarlong } from './varint.js';

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

export class Writer {
  private buf: Buffer;
  private pos = 0;
  /**
   * Spliced record sets (see `spliceRecords`): external buffers that belong on the wire at the given
   * position of the written bytes, referenced rather than copied.
   */
  private spliced: { at: number; buf: Uint8Array }[] = [];
  private splicedBytes = 0;
  private spliceMin = Infinity;

  constructor(initialCapacity = 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(16, initialCapacity));
  }

  /** Bytes written so far. */
  get length(): number {
    return this.pos;
  }

  /** Forget what was written (and any splicing); keep the buffer for the next message. */
  reset(): this {
    this.pos = 0;
    this.spliced = [];
    this.splicedBytes = 0;
    this.spliceMin = Infinity;
    return this;
  }

  /**
   * From now until `reset()`, record sets (`records`) of at least `minBytes` are not copied: the writer
   * keeps a reference and `toChunks()` hands them out between copies of the bytes around them, so a
   * fetched segment's bytes reach the socket without passing through this buffer. The caller must not
   * change a spliced buffer until the chunks are written.
   */
  spliceRecords(minBytes: number): this {
    this.spliceMin = minBytes;
    return this;
  }

  /** Bytes of the message: those written here plus those spliced in. */
  get totalLength(): number {
    return this.pos + this.splicedBytes;
  }

  /**
   * The message as buffers to write in order: copies of the bytes written here (which the caller owns),
   * with the spliced record sets in between, by reference. One buffer when nothing was spliced.
   */
  toChunks(): Buffer[] {
    if (this.spliced.length === 0) return [this.toBuffer()];
    const out: Buffer[] = [];
    let from = 0;
    for (const { at, buf } of this.spliced) {
      if (at > from) out.push(Buffer.from(this.buf.subarray(from, at)));
      out.push(Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength));
      from = at;
    }
    if (this.pos > from) out.push(Buffer.from(this.buf.subarray(from, this.pos)));
    return out;
  }

  /** The written bytes as a view of the internal buffer (no copy). Invalid after the next write or reset. */
  view(): Buffer {
    if (this.spliced.length > 0) throw new ProtocolError('INVALID_VALUE', 'view() of a writer holding spliced record sets; use toChunks()');
    return this.buf.subarray(0, this.pos);
  }

  /** A copy of the written bytes (spliced record sets included) that the caller owns. */
  toBuffer(): Buffer {
    if (this.spliced.length > 0) return Buffer.concat(this.toChunks(), this.totalLength);
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }

  private ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  private static checkInt(v: number, min: number, max: number, what: string): void {
    if (!Number.isInteger(v) || v < min || v > max) {
      throw new ProtocolError('INVALID_VALUE', `${what} value ${String(v)} is not an integer in [${min}, ${max}]`);
    }
  }

  // ---- fixed-width -----------------------------------------------------------------------------------

  int8(v: number): this {
    Writer.checkInt(v, -0x80, 0x7f, 'int8');
    this.ensure(1);
    this.buf.writeInt8(v, this.pos);
    this.pos += 1;
    return this;
  }

  bool(v: boolean): this {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
    return this;
  }

  int16(v: number): this {
    Writer.checkInt(v, -0x8000, 0x7fff, 'int16');
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
    return this;
  }

  uint16(v: number): this {
    Writer.checkInt(v, 0, 0xffff, 'uint16');
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.pos);
    this.pos += 2;
    return this;
  }

  int32(v: number): this {
    Writer.checkInt(v, -0x80000000, 0x7fffffff, 'int32');
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
    return this;
  }

  uint32(v: number): this {
    Writer.checkInt(v, 0, 0xffffffff, 'uint32');
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
    return this;
  }

  int64(v: bigint): this {
    if (typeof v !== 'bigint' || v < INT64_MIN || v > INT64_MAX) {
      throw new ProtocolError('INVALID_VALUE', `int64 value ${String(v)} is not a bigint in the int64 range`);
    }
    this.ensure(8);
    this.buf.writeBigInt64BE(v, this.pos);
    this.pos += 8;
    return this;
  }

  float64(v: number): this {
    if (typeof v !== 'number') throw new ProtocolError('INVALID_VALUE', `float64 value ${String(v)} is not a number`);
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
    return this;
  }

  uuid(v: Uint8Array): this {
    if (!(v instanceof Uint8Array) || v.length !== 16) {
      throw new ProtocolError('INVALID_VALUE', 'a UUID must be a 16-byte Buffer');
    }
    return this.raw(v);
  }

  /** Append bytes verbatim. */
  raw(v: Uint8Array): this {
    this.ensure(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
    return this;
  }

  /** Overwrite an int32 already written at `offset` (for size prefixes). */
  int32At(offset: number, v: number): this {
    Writer.checkInt(v, -0x80000000, 0x7fffffff, 'int32');
    if (offset < 0 || offset + 4 > this.pos) throw new ProtocolError('INVALID_LENGTH', `int32At(${offset}) is outside the ${this.pos} bytes written`);
    this.buf.writeInt32BE(v, offset);
    return this;
  }

  // ---- variable-length integers --------------------------------------------------------------------

  uvarint(v: number): this {
    Writer.checkInt(v, 0, 0xffffffff, 'unsigned varint');
    this.ensure(5);
    this.pos = writeUnsignedVarint(this.buf, this.pos, v);
    return this;
  }

  varint(v: number): this {
    Writer.checkInt(v, -0x80000000, 0x7fffffff, 'varint');
    this.ensure(5);
    this.pos = writeVarint(this.buf, this.pos, v);
    return this;
  }

  varlong(v: bigint): this {
    if (typeof v !== 'bigint' || v < INT64_MIN || v > INT64_MAX) {
      throw new ProtocolError('INVALID_VALUE', `varlong value ${String(v)} is not a bigint in the int64 range`);
    }
    this.ensure(10);
    this.pos = writeVarlong(this.buf, this.pos, v);
    return this;
  }

  // ---- strings ---------------------------------------------------------------------------------------

  nullableString(v: string | null, compact = false): this {
    if (v === null) return compact ? this.uvarint(0) : this.int16(-1);
    if (typeof v !== 'string') throw new ProtocolError('INVALID_VALUE', `expected a string, got ${typeof v}`);
    const n = Buffer.byteLength(v, 'utf8');
    if (n > 0x7fff) throw new ProtocolError('INVALID_VALUE', `string of ${n} bytes is longer than Kafka's 32767-byte limit`);
    if (compact) this.uvarint(n + 1);
    else this.int16(n);
    this.ensure(n);
    this.pos += this.buf.write(v, this.pos, n, 'utf8');
    return this;
  }

  string(v: string, compact = false): this {
    if (v === null) throw new ProtocolError('INVALID_VALUE', 'null string where the field is not nullable');
    return this.nullableString(v, compact);
  }

  compactString(v: string): this {
    return this.string(v, true);
  }

  compactNullableString(v: string | null): this {
    return this.nullableString(v, true);
  }

  // ---- bytes -----------------------------------------------------------------------------------------

  nullableBytes(v: Uint8Array | null, compact = false): this {
    if (v === null) return compact ? this.uvarint(0) : this.int32(-1);
    if (!(v instanceof Uint8Array)) throw new ProtocolError('INVALID_VALUE', `expected a Buffer, got ${typeof v}`);
    if (compact) this.uvarint(v.length + 1);
    else this.int32(v.length);
    return this.raw(v);
  }

  bytes(v: Uint8Array, compact = false): this {
    if (v === null) throw new ProtocolError('INVALID_VALUE', 'null bytes where the field is not nullable');
    return this.nullableBytes(v, compact);
  }

  /**
   * A record set (the `records` type): written as nullable bytes, or spliced in by reference when
   * `spliceRecords` is on and it is large enough.
   */
  records(v: Uint8Array | null, compact = false): this {
    if (v === null || v.length < this.spliceMin) return this.nullableBytes(v, compact);
    if (!(v instanceof Uint8Array)) throw new ProtocolError('INVALID_VALUE', `expected a Buffer, got ${typeof v}`);
    if (compact) this.uvarint(v.length + 1);
    else this.int32(v.length);
    this.spliced.push({ at: this.pos, buf: v });
    this.splicedBytes += v.length;
    return this;
  }

  compactBytes(v: Uint8Array): this {
    return this.bytes(v, true);
  }

  compactNullableBytes(v: Uint8Array | null): this {
    return this.nullableBytes(v, true);
  }

  // ---- arrays ----------------------------------------------------------------------------------------

  /** Array length prefix: int32, or uvarint+1 when compact; -1 / 0 for null. */
  arrayLength(n: number, compact = false): this {
    if (n < 0) return compact ? this.uvarint(0) : this.int32(-1);
    return compact ? this.uvarint(n + 1) : this.int32(n);
  }

  nullableArray<T>(items: readonly T[] | null, item: (w: Writer, v: T) => void, compact = false): this {
    if (items === null) return this.arrayLength(-1, compact);
    if (!Array.isArray(items)) throw new ProtocolError('INVALID_VALUE', `expected an array, got ${typeof items}`);
    this.arrayLength(items.length, compact);
    for (const v of items) item(this, v);
    return this;
  }

  array<T>(items: readonly T[], item: (w: Writer, v: T) => void, compact = false): this {
    if (items === null) throw new ProtocolError('INVALID_VALUE', 'null array where the field is not nullable');
    return this.nullableArray(items, item, compact);
  }

  compactArray<T>(items: readonly T[], item: (w: Writer, v: T) => void): this {
    return this.array(items, item, true);
  }

  compactNullableArray<T>(items: readonly T[] | null, item: (w: Writer, v: T) => void): this {
    return this.nullableArray(items, item, true);
  }

  // ---- tagged fields ---------------------------------------------------------------------------------

  /**
   * A tagged-field section. Each field is `[tag, bytes]` with its already-encoded value; tags must be
   * given in ascending order. With no argument, writes the empty section (a single 0 byte).
   */
  taggedFields(fields: readonly (readonly [number, Uint8Array])[] = []): this {
    this.uvarint(fields.length);
    let last = -1;
    for (const [tag, value] of fields) {
      if (tag <= last) throw new ProtocolError('INVALID_VALUE', `tagged fields must be in strictly ascending tag order (${tag} after ${last})`);
      last = tag;
      this.uvarint(tag).uvarint(value.length).raw(value);
    }
    return this;
  }
}
