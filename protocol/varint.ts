/**
 * Kafka's variable-length integers (the protobuf encoding): unsigned varints, zigzag varints (int32) and
 * zigzag varlongs (int64). Used by record batch v2 records and by the compact/flexible encodings.
 *
 * Reading takes a small mutable cursor (`{ pos }`) that the caller allocates once and reuses, so a read
 * allocates nothing and returns only the value. Writing takes the position and returns the next one. All
 * functions are pure over (Buffer, position); nothing here does I/O.
 *
 * Over-long encodings (more continuation bytes than the type allows, or bits beyond its width) and
 * encodings cut off by the end of the buffer throw a {@link VarintError}.
 */

/** A reusable read position. `pos` is advanced past the value that was read. */
export interface Cursor {
  pos: number;
}

export type VarintErrorCode =
  /** The buffer ended inside a varint: the peer sent a short frame or a length is wrong. */
  | 'TRUNCATED'
  /** More bytes than the type allows (5 for int32, 10 for int64), or bits beyond its width. */
  | 'VARINT_TOO_LONG'
  /** A varlong read as a number does not fit in a safe integer; read it with readVarlong (bigint). */
  | 'VARLONG_UNSAFE';

export class VarintError extends Error {
  override readonly name = 'VarintError';
  readonly code: VarintErrorCode;
  /** Byte position where the varint started. */
  readonly offset: number;

  constructor(code: VarintErrorCode, message: string, offset: number) {
    super(message);
    this.code = code;
    this.offset = offset;
  }
}

function truncated(start: number): VarintError {
  return new VarintError('TRUNCATED', `varint at byte ${start} is cut off by the end of the buffer; the frame is short or a length field is wrong`, start);
}

function tooLong(start: number, what: string): VarintError {
  return new VarintError('VARINT_TOO_LONG', `${what} at byte ${start} is over-long or overflows its type; the peer's encoder is broken`, start);
}

/** Reads an unsigned varint of at most 32 bits (5 bytes) and returns it as a non-negative number. */
export function readUnsignedVarint(buf: Buffer, cur: Cursor): number {
  const start = cur.pos;
  const end = buf.length;
  let p = start;
  if (p >= end) throw truncated(start);
  let b = buf[p++]!;
  if (b < 0x80) {
    cur.pos = p;
    return b;
  }
  let result = b & 0x7f;
  let shift = 7;
  for (;;) {
    if (p >= end) throw truncated(start);
    b = buf[p++]!;
    if (shift === 28) {
      // Fifth byte: only 4 bits remain in an unsigned 32-bit value, and no continuation.
      if (b > 0x0f) throw tooLong(start, 'varint');
      cur.pos = p;
      return (result | (b << 28)) >>> 0;
    }
    result |= (b & 0x7f) << shift;
    if (b < 0x80) {
      cur.pos = p;
      return result >>> 0;
    }
    shift += 7;
  }
}

/** Reads a zigzag-encoded int32 varint. */
export function readVarint(buf: Buffer, cur: Cursor): number {
  const u = readUnsignedVarint(buf, cur);
  return (u >>> 1) ^ -(u & 1);
}

const TWO_POW_28 = 0x10000000;

/**
 * Reads a zigzag-encoded int64 varlong as a number. Fast path for the common case (timestamp deltas,
 * small lengths). Throws VARLONG_UNSAFE if the value is outside Number.MIN_SAFE_INTEGER..MAX_SAFE_INTEGER.
 */
export function readVarlongNumber(buf: Buffer, cur: Cursor): number {
  const start = cur.pos;
  const end = buf.length;
  let p = start;
  // Accumulate the low 28 bits with bit operations, the rest with multiplication.
  let lo = 0;
  let shift = 0;
  let b = 0;
  do {
    if (p >= end) throw truncated(start);
    b = buf[p++]!;
    lo |= (b & 0x7f) << shift;
    shift += 7;
  } while (b >= 0x80 && shift < 28);
  let u: number;
  if (b < 0x80) {
    u = lo >>> 0;
  } else {
    let hi = 0;
    let mul = 1;
    do {
      if (p >= end) throw truncated(start);
      if (p - start >= 10) throw tooLong(start, 'varlong');
      b = buf[p++]!;
      hi += (b & 0x7f) * mul;
      mul *= 128;
    } while (b >= 0x80);
    if (hi >= 2 ** 25) {
      // Beyond 2^53: exactness is lost in a double, take the bigint path (it also checks width).
      const big = readVarlong(buf, { pos: start });
      throw new VarintError('VARLONG_UNSAFE', `varlong ${big} at byte ${start} is not a safe integer; read it as a bigint`, start);
    }
    u = hi * TWO_POW_28 + (lo >>> 0);
  }
  cur.pos = p;
  // Zigzag decode without 32-bit operators (u may exceed 2^32).
  return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
}

/** Reads a zigzag-encoded int64 varlong as a bigint (any value in the int64 range). */
export function readVarlong(buf: Buffer, cur: Cursor): bigint {
  const start = cur.pos;
  const end = buf.length;
  let p = start;
  let lo = 0; // bits 0..27
  let mid = 0; // bits 28..55
  let hi = 0; // bits 56..63
  let b = 0;
  let i = 0;
  do {
    if (p >= end) throw truncated(start);
    b = buf[p++]!;
    const bits = b & 0x7f;
    if (i < 4) lo |= bits << (7 * i);
    else if (i < 8) mid |= bits << (7 * (i - 4));
    else if (i === 8) hi = bits;
    else {
      // Tenth byte carries only bit 63, and must be the last.
      if (b > 0x01) throw tooLong(start, 'varlong');
      hi |= bits << 7;
    }
    i++;
  } while (b >= 0x80);
  cur.pos = p;
  const u = (BigInt(hi) << 56n) | (BigInt(mid >>> 0) << 28n) | BigInt(lo >>> 0);
  return (u >> 1n) ^ -(u & 1n);
}

/** Bytes needed for an unsigned varint of `value` (0 <= value < 2^32). */
export function sizeOfUnsignedVarint(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  return 5;
}

/** Bytes needed for a zigzag int32 varint. */
export function sizeOfVarint(value: number): number {
  return sizeOfUnsignedVarint(((value << 1) ^ (value >> 31)) >>> 0);
}

/** Bytes needed for a zigzag varlong given as a safe-integer number. */
export function sizeOfVarlongNumber(value: number): number {
  let u = value >= 0 ? value * 2 : -value * 2 - 1;
  if (u < 0x10000000) return sizeOfUnsignedVarint(u);
  let n = 1;
  while (u >= 128) {
    u = Math.floor(u / 128);
    n++;
  }
  return n;
}

/** Bytes needed for a zigzag varlong given as a bigint. */
export function sizeOfVarlong(value: bigint): number {
  let u = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
  let n = 1;
  while (u >= 128n) {
    u >>= 7n;
    n++;
  }
  return n;
}

/** Writes an unsigned varint (0 <= value < 2^32) at `pos`; returns the position after it. */
export function writeUnsignedVarint(buf: Buffer, pos: number, value: number): number {
  let v = value >>> 0;
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

/** Writes a zigzag int32 varint at `pos`; returns the position after it. */
export function writeVarint(buf: Buffer, pos: number, value: number): number {
  return writeUnsignedVarint(buf, pos, ((value << 1) ^ (value >> 31)) >>> 0);
}

/** Writes a zigzag varlong given as a safe-integer number; returns the position after it. */
export function writeVarlongNumber(buf: Buffer, pos: number, value: number): number {
  if (value >= -0x40000000 && value < 0x40000000) return writeVarint(buf, pos, value);
  if (!Number.isSafeInteger(value)) throw new RangeError(`writeVarlongNumber: ${value} is not a safe integer; use writeVarlong with a bigint`);
  let u = value >= 0 ? value * 2 : -value * 2 - 1;
  while (u >= 128) {
    buf[pos++] = (u % 128) | 0x80;
    u = Math.floor(u / 128);
  }
  buf[pos++] = u;
  return pos;
}

/** Writes a zigzag varlong (int64 as bigint); returns the position after it. */
export function writeVarlong(buf: Buffer, pos: number, value: bigint): number {
  let u = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
  while (u >= 128n) {
    buf[pos++] = Number(u & 0x7fn) | 0x80;
    u >>= 7n;
  }
  buf[pos++] = Number(u);
  return pos;
}
