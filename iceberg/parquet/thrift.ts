/**
 * A schema-less decoder for the Thrift compact protocol, enough to read a Parquet footer (FileMetaData).
 * Every struct decodes to a Map from Thrift field id to value; `footer.ts` gives the ids their meaning.
 * parquet-wasm does not expose column statistics or page offsets, so we read the footer ourselves.
 */
import { ParquetError } from './errors.js';

export type ThriftValue = boolean | number | bigint | Uint8Array | ThriftStruct | ThriftValue[];
export type ThriftStruct = Map<number, ThriftValue>;

/** Thrift compact protocol type ids (shared by this reader, thrift-writer.ts and tiering's footer slicer). */
export const TType = {
  BOOL_TRUE: 1,
  BOOL_FALSE: 2,
  BYTE: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  DOUBLE: 7,
  BINARY: 8,
  LIST: 9,
  SET: 10,
  MAP: 11,
  STRUCT: 12,
} as const;
const { BOOL_TRUE, BOOL_FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT } = TType;

const MAX_DEPTH = 64;

/** Zigzag decoding of a non-negative integer below 2^53 (as (v >> 1) ^ -(v & 1) on BigInts). */
function unzigzag(n: number): number {
  return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
}

class CompactReader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  private fail(what: string): never {
    throw new ParquetError('INVALID_PARQUET', `Corrupt Parquet footer at byte ${this.pos}: ${what}; rewrite the file`);
  }

  byte(): number {
    if (this.pos >= this.buf.length) this.fail('unexpected end of footer');
    return this.buf[this.pos++] as number;
  }

  /**
   * The next varint as a number when it takes at most 7 bytes (below 2^49, so exact), which every footer
   * field but the odd huge i64 does; otherwise -1, consuming nothing. Spares a BigInt per field.
   */
  private shortVarint(): number {
    const start = this.pos;
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      const b = this.byte();
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 128;
    }
    this.pos = start;
    return -1;
  }

  private longVarint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) this.fail('varint longer than 10 bytes');
    }
  }

  private varintNumber(): number {
    const n = this.shortVarint();
    return n >= 0 ? n : Number(this.longVarint());
  }

  private longZigzag(): bigint {
    const v = this.longVarint();
    return (v >> 1n) ^ -(v & 1n);
  }

  zigzag(): bigint {
    const n = this.shortVarint();
    return n >= 0 ? BigInt(unzigzag(n)) : this.longZigzag();
  }

  smallInt(): number {
    const n = this.shortVarint();
    return n >= 0 ? unzigzag(n) : Number(this.longZigzag());
  }

  binary(): Uint8Array {
    const len = this.varintNumber();
    if (this.pos + len > this.buf.length) this.fail(`binary of ${len} bytes runs past the end`);
    // A copy: values outlive the file buffer and must not alias it (Buffer#slice would).
    const out = new Uint8Array(this.buf.subarray(this.pos, this.pos + len));
    this.pos += len;
    return out;
  }

  value(type: number, depth: number): ThriftValue {
    switch (type) {
      case BOOL_TRUE:
        return true;
      case BOOL_FALSE:
        return false;
      case BYTE: {
        const b = this.byte();
        return b > 127 ? b - 256 : b;
      }
      case I16:
      case I32:
        return this.smallInt();
      case I64:
        return this.zigzag();
      case DOUBLE: {
        if (this.pos + 8 > this.buf.length) this.fail('double runs past the end');
        const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
        this.pos += 8;
        return v;
      }
      case BINARY:
        return this.binary();
      case LIST:
      case SET:
        return this.list(depth);
      case MAP:
        return this.map(depth);
      case STRUCT:
        return this.struct(depth + 1);
      default:
        return this.fail(`unknown compact type ${type}`);
    }
  }

  list(depth: number): ThriftValue[] {
    const header = this.byte();
    let size = header >> 4;
    const elemType = header & 0x0f;
    if (size === 15) size = this.varintNumber();
    const out: ThriftValue[] = [];
    for (let i = 0; i < size; i++) {
      // Booleans inside lists are one byte each.
      if (elemType === BOOL_TRUE || elemType === BOOL_FALSE) out.push(this.byte() === BOOL_TRUE);
      else out.push(this.value(elemType, depth));
    }
    return out;
  }

  map(depth: number): ThriftValue[] {
    const size = this.varintNumber();
    if (size === 0) return [];
    const types = this.byte();
    const out: ThriftValue[] = [];
    for (let i = 0; i < size; i++) {
      const k = this.value(types >> 4, depth);
      const v = this.value(types & 0x0f, depth);
      out.push([k, v]);
    }
    return out;
  }

  struct(depth: number): ThriftStruct {
    if (depth > MAX_DEPTH) this.fail('structs nested too deeply');
    const out: ThriftStruct = new Map();
    let lastId = 0;
    for (;;) {
      const header = this.byte();
      if (header === 0) return out;
      const type = header & 0x0f;
      const delta = header >> 4;
      const id = delta === 0 ? this.smallInt() : lastId + delta;
      lastId = id;
      out.set(id, this.value(type, depth));
    }
  }
}

/** Decodes one compact-protocol struct starting at byte 0 of `buf`. */
export function decodeThriftStruct(buf: Uint8Array): ThriftStruct {
  return new CompactReader(buf).struct(0);
}

/**
 * Decodes one compact-protocol struct that starts at `offset` of `buf` and may not run past `end` (a page
 * header in front of its page), and returns it with the number of bytes it took. Errors are ParquetError
 * INVALID_PARQUET with the position relative to `offset`.
 */
export function decodeThriftStructPrefix(buf: Uint8Array, offset: number, end: number = buf.length): { struct: ThriftStruct; length: number } {
  if (!(offset >= 0 && offset <= end && end <= buf.length)) {
    throw new ParquetError('INVALID_PARQUET', `Thrift struct bounds ${offset}..${end} lie outside a buffer of ${buf.length} bytes`);
  }
  const reader = new CompactReader(buf.subarray(offset, end));
  const struct = reader.struct(0);
  return { struct, length: reader.pos };
}
