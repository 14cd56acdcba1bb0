/**
 * Reads every Kafka primitive from a Buffer. Each length and count is checked against the bytes remaining
 * (and against the limits) BEFORE anything is allocated, so a hostile frame can never make the decoder
 * allocate more than the frame's own size or loop for longer than the frame is long. The only error it
 * throws is ProtocolError.
 *
 * Bytes, records and UUIDs are returned as views into the frame (subarray, no copy), except UUIDs which
 * are copied because they are small and often kept long after the frame is gone.
 */
import { ProtocolError } from './protocol-error.js';
import { readUnsignedVarint, readVarint, readVarlong, VarintError } from './varint.js';

export interface DecodeLimits {
  /** Largest element count accepted for an array. */
  readonly maxArrayLength: number;
  /** Largest string accepted, in bytes. Kafka itself caps strings at 32767 bytes. */
  readonly maxStringLength: number;
  /** Largest bytes/records field accepted, in bytes. */
  readonly maxBytesLength: number;
  /** Deepest nesting of structs accepted. */
  readonly maxDepth: number;
}

export const DEFAULT_DECODE_LIMITS: DecodeLimits = Object.freeze({
  maxArrayLength: 1_000_000,
  maxStringLength: 0x7fff,
  maxBytesLength: 100 * 1024 * 1024,
  maxDepth: 32,
});

/** Merge caller-supplied limits with the defaults. */
export function resolveLimits(limits?: Partial<DecodeLimits>): DecodeLimits {
  if (limits === undefined) return DEFAULT_DECODE_LIMITS;
  return Object.freeze({ ...DEFAULT_DECODE_LIMITS, ...limits });
}

const EMPTY = Buffer.alloc(0);

function varintTruncated(start: number): ProtocolError {
  return new ProtocolError('TRUNCATED', `varint at offset ${start} runs past the end of the frame`, { offset: start });
}

/** The varint module throws VarintError; the protocol layer promises ProtocolError only. */
function fromVarintError(e: unknown, start: number): ProtocolError {
  if (e instanceof ProtocolError) return e;
  if (e instanceof VarintError) {
    return new ProtocolError(e.code === 'TRUNCATED' ? 'TRUNCATED' : 'INVALID_VALUE', e.message, { offset: start, cause: e });
  }
  return new ProtocolError('INVALID_VALUE', `cannot read varint at offset ${start}: ${String(e)}`, { offset: start, cause: e });
}

export class Reader {
  readonly buf: Buffer;
  /** Next byte to read. */
  pos: number;
  /** One past the last readable byte (narrowed temporarily while reading a tagged field). */
  end: number;
  readonly limits: DecodeLimits;
  /** Current struct nesting depth, maintained by the codec. */
  depth = 0;

  constructor(buf: Buffer, offset = 0, end = buf.length, limits: DecodeLimits = DEFAULT_DECODE_LIMITS) {
    if (offset < 0 || end > buf.length || offset > end) {
      throw new ProtocolError('INVALID_LENGTH', `reader window [${offset}, ${end}) lies outside a ${buf.length}-byte buffer`);
    }
    this.buf = buf;
    this.pos = offset;
    this.end = end;
    this.limits = limits;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  /** Throws TRUNCATED unless `n` more bytes are available. */
  need(n: number): void {
    if (n > this.end - this.pos) {
      throw new ProtocolError('TRUNCATED', `need ${n} bytes at offset ${this.pos} but only ${this.end - this.pos} remain; the frame is short or a length is wrong`, { offset: this.pos });
    }
  }

  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }

  // ---- fixed-width integers ------------------------------------------------------------------------

  int8(): number {
    this.need(1);
    return this.buf.readInt8(this.pos++);
  }

  bool(): boolean {
    this.need(1);
    return this.buf[this.pos++] !== 0;
  }

  int16(): number {
    this.need(2);
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  uint16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  int32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  uint32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  int64(): bigint {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  float64(): number {
    this.need(8);
    const v = this.buf.readDoubleBE(this.pos);
    this.pos += 8;
    return v;
  }

  uuid(): Buffer {
    this.need(16);
    const v = Buffer.from(this.buf.subarray(this.pos, this.pos + 16));
    this.pos += 16;
    return v;
  }

  // ---- variable-length integers --------------------------------------------------------------------

  /** Unsigned varint, at most 5 bytes, as a uint32. */
  uvarint(): number {
    const start = this.pos;
    try {
      const v = readUnsignedVarint(this.buf, this);
      if (this.pos > this.end) throw varintTruncated(start);
      return v;
    } catch (e) {
      throw fromVarintError(e, start);
    }
  }

  /** Zigzag-encoded signed varint (int32). */
  varint(): number {
    const start = this.pos;
    try {
      const v = readVarint(this.buf, this);
      if (this.pos > this.end) throw varintTruncated(start);
      return v;
    } catch (e) {
      throw fromVarintError(e, start);
    }
  }

  /** Zigzag-encoded signed varlong (int64). */
  varlong(): bigint {
    const start = this.pos;
    try {
      const v = readVarlong(this.buf, this);
      if (this.pos > this.end) throw varintTruncated(start);
      return v;
    } catch (e) {
      throw fromVarintError(e, start);
    }
  }

  // ---- lengths ---------------------------------------------------------------------------------------

  /** Length prefix of a string: int16, or uvarint+1 when compact. Returns -1 for null. */
  private stringLength(compact: boolean): number {
    const start = this.pos;
    const n = compact ? this.uvarint() - 1 : this.int16();
    if (n < -1) throw new ProtocolError('INVALID_LENGTH', `string length ${n} at offset ${start} is negative`, { offset: start });
    if (n > this.limits.maxStringLength) {
      throw new ProtocolError('LIMIT_EXCEEDED', `string of ${n} bytes at offset ${start} exceeds the limit of ${this.limits.maxStringLength}`, { offset: start });
    }
    if (n > this.end - this.pos) {
      throw new ProtocolError('TRUNCATED', `string of ${n} bytes at offset ${start} runs past the end of the frame (${this.end - this.pos} bytes left)`, { offset: start });
    }
    return n;
  }

  /** Length prefix of bytes/records: int32, or uvarint+1 when compact. Returns -1 for null. */
  private bytesLength(compact: boolean): number {
    const start = this.pos;
    const n = compact ? this.uvarint() - 1 : this.int32();
    if (n < -1) throw new ProtocolError('INVALID_LENGTH', `bytes length ${n} at offset ${start} is negative`, { offset: start });
    if (n > this.limits.maxBytesLength) {
      throw new ProtocolError('LIMIT_EXCEEDED', `bytes field of ${n} bytes at offset ${start} exceeds the limit of ${this.limits.maxBytesLength}`, { offset: start });
    }
    if (n > this.end - this.pos) {
      throw new ProtocolError('TRUNCATED', `bytes field of ${n} bytes at offset ${start} runs past the end of the frame (${this.end - this.pos} bytes left)`, { offset: start });
    }
    return n;
  }

  /**
   * Element count of an array: int32, or uvarint+1 when compact. Returns -1 for null. `minElementSize` is
   * the fewest bytes one element can take; the count is rejected if that many elements cannot fit in
   * what remains of the frame.
   */
  arrayLength(compact: boolean, minElementSize: number): number {
    const start = this.pos;
    const n = compact ? this.uvarint() - 1 : this.int32();
    if (n < -1) throw new ProtocolError('INVALID_LENGTH', `array length ${n} at offset ${start} is negative`, { offset: start });
    if (n > this.limits.maxArrayLength) {
      throw new ProtocolError('LIMIT_EXCEEDED', `array of ${n} elements at offset ${start} exceeds the limit of ${this.limits.maxArrayLength}`, { offset: start });
    }
    if (minElementSize > 0 && n > (this.end - this.pos) / minElementSize) {
      throw new ProtocolError('TRUNCATED', `array of ${n} elements at offset ${start} cannot fit in the ${this.end - this.pos} bytes left`, { offset: start });
    }
    return n;
  }

  // ---- strings ---------------------------------------------------------------------------------------

  nullableString(compact = false): string | null {
    const n = this.stringLength(compact);
    if (n < 0) return null;
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  string(compact = false): string {
    const start = this.pos;
    const s = this.nullableString(compact);
    if (s === null) throw new ProtocolError('INVALID_VALUE', `null string at offset ${start} where the field is not nullable`, { offset: start });
    return s;
  }

  compactString(): string {
    return this.string(true);
  }

  compactNullableString(): string | null {
    return this.nullableString(true);
  }

  // ---- bytes -----------------------------------------------------------------------------------------

  /** A view of the bytes (no copy), or null. */
  nullableBytes(compact = false): Buffer | null {
    const n = this.bytesLength(compact);
    if (n < 0) return null;
    const v = n === 0 ? EMPTY : this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  bytes(compact = false): Buffer {
    const start = this.pos;
    const b = this.nullableBytes(compact);
    if (b === null) throw new ProtocolError('INVALID_VALUE', `null bytes at offset ${start} where the field is not nullable`, { offset: start });
    return b;
  }

  compactBytes(): Buffer {
    return this.bytes(true);
  }

  compactNullableBytes(): Buffer | null {
    return this.nullableBytes(true);
  }

  // ---- arrays ----------------------------------------------------------------------------------------

  nullableArray<T>(item: (r: Reader) => T, compact = false, minElementSize = 1): T[] | null {
    const n = this.arrayLength(compact, minElementSize);
    if (n < 0) return null;
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(item(this));
    return out;
  }

  array<T>(item: (r: Reader) => T, compact = false, minElementSize = 1): T[] {
    const start = this.pos;
    const a = this.nullableArray(item, compact, minElementSize);
    if (a === null) throw new ProtocolError('INVALID_VALUE', `null array at offset ${start} where the field is not nullable`, { offset: start });
    return a;
  }

  compactArray<T>(item: (r: Reader) => T, minElementSize = 1): T[] {
    return this.array(item, true, minElementSize);
  }

  compactNullableArray<T>(item: (r: Reader) => T, minElementSize = 1): T[] | null {
    return this.nullableArray(item, true, minElementSize);
  }

  // ---- tagged fields ---------------------------------------------------------------------------------

  /**
   * Reads a tagged-field section. For each field, `onTag(tag, reader)` is called with this reader narrowed
   * to the field's bytes; it returns true if it consumed the field (it must then read it exactly), false
   * to skip it. Without `onTag`, every field is skipped.
   */
  taggedFields(onTag?: (tag: number, r: Reader) => boolean): void {
    const count = this.uvarint();
    // Each tagged field takes at least two bytes (tag and size).
    if (count > (this.end - this.pos) / 2) {
      throw new ProtocolError('TRUNCATED', `${count} tagged fields cannot fit in the ${this.end - this.pos} bytes left`, { offset: this.pos });
    }
    for (let i = 0; i < count; i++) {
      const tag = this.uvarint();
      const size = this.uvarint();
      this.need(size);
      const fieldEnd = this.pos + size;
      if (onTag === undefined) {
        this.pos = fieldEnd;
        continue;
      }
      const outerEnd = this.end;
      this.end = fieldEnd;
      let consumed: boolean;
      try {
        consumed = onTag(tag, this);
      } finally {
        this.end = outerEnd;
      }
      if (!consumed) {
        this.pos = fieldEnd;
      } else if (this.pos !== fieldEnd) {
        throw new ProtocolError('INVALID_LENGTH', `tagged field ${tag} declares ${size} bytes but its value took ${this.pos - (fieldEnd - size)}`, { offset: fieldEnd - size });
      }
    }
  }
}
