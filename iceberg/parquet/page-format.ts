/**
 * The page layer of Parquet column chunks, for the native column reader (column-reader.ts): page headers
 * (parquet.thrift PageHeader, checked against the bytes they describe), the RLE/bit-packed hybrid encoding
 * of levels and dictionary indexes, and the constants of parquet.thrift's PageType and Encoding. Corrupt
 * input throws ParquetError INVALID_PARQUET saying what is wrong, never reads out of range or loops.
 */
import { ParquetError } from './errors.js';
import { decodeThriftStructPrefix, type ThriftStruct, type ThriftValue } from './thrift.js';

// parquet.thrift PageType and Encoding.
export const DATA_PAGE = 0;
export const DICTIONARY_PAGE = 2;
export const DATA_PAGE_V2 = 3;
export const PLAIN = 0;
export const PLAIN_DICTIONARY = 2;
export const RLE = 3;
export const RLE_DICTIONARY = 8;
/** Largest page (compressed or not) accepted: a header claiming more is treated as corrupt. */
export const MAX_PAGE_BYTES = 1 << 30;

/** Throws INVALID_PARQUET: `where` in the file holds `what`. */
export function invalid(where: string, what: string): never {
  throw new ParquetError('INVALID_PARQUET', `Corrupt Parquet data in ${where}: ${what}; the data file is damaged, rewrite it`);
}

export function bitWidthOf(max: number): number {
  return max === 0 ? 0 : 32 - Math.clz32(max);
}

/** Reads an unsigned LEB128 varint of at most 32 bits at cur.pos (< end). */
export function uleb(buf: Uint8Array, cur: { pos: number }, end: number, where: string): number {
  let result = 0;
  let shift = 0;
  for (;;) {
    if (cur.pos >= end) invalid(where, 'RLE run header cut off');
    const b = buf[cur.pos++]!;
    if (shift === 28) {
      if (b > 0x0f) invalid(where, 'RLE run header longer than 32 bits');
      return (result | (b << 28)) >>> 0;
    }
    result |= (b & 0x7f) << shift;
    if (b < 0x80) return result >>> 0;
    shift += 7;
  }
}

/**
 * Decodes `count` values of the RLE/bit-packed hybrid encoding in buf[pos, end) into out[outPos...],
 * checking each is at most `max`. Returns the position after the runs read.
 */
export function decodeHybrid(buf: Uint8Array, pos: number, end: number, bitWidth: number, out: Uint8Array | Int32Array, outPos: number, count: number, max: number, where: string): number {
  if (bitWidth === 0) {
    out.fill(0, outPos, outPos + count);
    return pos;
  }
  const cur = { pos };
  const byteWidth = (bitWidth + 7) >> 3;
  const mask = bitWidth === 32 ? -1 : (1 << bitWidth) - 1;
  let n = 0;
  while (n < count) {
    const header = uleb(buf, cur, end, where);
    if ((header & 1) === 1) {
      // Bit-packed: (header >> 1) groups of 8 values, bitWidth bytes per group.
      const values = (header >>> 1) * 8;
      const take = Math.min(values, count - n);
      const p = cur.pos;
      const need = Math.ceil((take * bitWidth) / 8);
      if (need > end - p) invalid(where, `bit-packed run of ${take} values needs ${need} bytes, ${end - p} left`);
      let bitPos = 0;
      for (let j = 0; j < take; j++) {
        let v = 0;
        let got = 0;
        while (got < bitWidth) {
          const byte = buf[p + (bitPos >> 3)]!;
          const shift = bitPos & 7;
          const bits = Math.min(8 - shift, bitWidth - got);
          v |= ((byte >> shift) & ((1 << bits) - 1)) << got;
          got += bits;
          bitPos += bits;
        }
        v &= mask;
        if (v > max || v < 0) invalid(where, `value ${v >>> 0} above the maximum ${max}`);
        out[outPos + n + j] = v;
      }
      n += take;
      cur.pos = p + Math.min((header >>> 1) * bitWidth, end - p);
    } else {
      const run = header >>> 1;
      if (byteWidth > end - cur.pos) invalid(where, 'RLE run value cut off');
      let v = 0;
      for (let b = 0; b < byteWidth; b++) v |= buf[cur.pos + b]! << (8 * b);
      cur.pos += byteWidth;
      v &= mask;
      if (v > max || v < 0) invalid(where, `value ${v >>> 0} above the maximum ${max}`);
      const take = Math.min(run, count - n);
      out.fill(v, outPos + n, outPos + n + take);
      n += take;
    }
  }
  return cur.pos;
}

export function u32le(buf: Uint8Array, p: number): number {
  return (buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16)) + buf[p + 3]! * 0x1000000;
}

export interface PageHeader {
  readonly type: number;
  readonly uncompressedSize: number;
  readonly compressedSize: number;
  readonly headerLength: number;
  readonly numValues: number;
  readonly encoding: number;
  readonly defEncoding: number;
  readonly repEncoding: number;
  /** v2 only. */
  readonly defLength: number;
  readonly repLength: number;
  readonly isCompressed: boolean;
}

export function int(s: ThriftStruct | undefined, id: number, dflt: number): number {
  const v: ThriftValue | undefined = s?.get(id);
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : dflt;
}

export function pageHeader(buf: Uint8Array, pos: number, end: number, where: string): PageHeader {
  let struct: ThriftStruct;
  let headerLength: number;
  try {
    ({ struct, length: headerLength } = decodeThriftStructPrefix(buf, pos, end));
  } catch (e) {
    if (e instanceof ParquetError) invalid(where, `unreadable page header (${e.message})`);
    throw e;
  }
  const type = int(struct, 1, -1);
  const uncompressedSize = int(struct, 2, -1);
  const compressedSize = int(struct, 3, -1);
  if (type < 0) invalid(where, 'page header without a page type');
  if (!(uncompressedSize >= 0 && uncompressedSize <= MAX_PAGE_BYTES)) invalid(where, `page uncompressed size ${uncompressedSize} out of range`);
  if (!(compressedSize >= 0 && compressedSize <= MAX_PAGE_BYTES)) invalid(where, `page compressed size ${compressedSize} out of range`);
  const sub = (id: number): ThriftStruct | undefined => {
    const v = struct.get(id);
    return v instanceof Map ? v : undefined;
  };
  let numValues = 0;
  let encoding = PLAIN;
  let defEncoding = RLE;
  let repEncoding = RLE;
  let defLength = 0;
  let repLength = 0;
  let isCompressed = true;
  if (type === DATA_PAGE) {
    const h = sub(5);
    if (!h) invalid(where, 'data page without its data_page_header');
    numValues = int(h, 1, -1);
    encoding = int(h, 2, -1);
    defEncoding = int(h, 3, -1);
    repEncoding = int(h, 4, -1);
  } else if (type === DATA_PAGE_V2) {
    const h = sub(8);
    if (!h) invalid(where, 'data page v2 without its data_page_header_v2');
    numValues = int(h, 1, -1);
    encoding = int(h, 4, -1);
    defLength = int(h, 5, -1);
    repLength = int(h, 6, -1);
    const c = h.get(7);
    isCompressed = typeof c === 'boolean' ? c : true;
    if (defLength < 0 || repLength < 0 || defLength + repLength > compressedSize || defLength + repLength > uncompressedSize) {
      invalid(where, `level lengths ${repLength} + ${defLength} do not fit a page of ${compressedSize} bytes`);
    }
  } else if (type === DICTIONARY_PAGE) {
    const h = sub(7);
    if (!h) invalid(where, 'dictionary page without its dictionary_page_header');
    numValues = int(h, 1, -1);
    encoding = int(h, 2, -1);
  }
  if (numValues < 0) invalid(where, 'page header without a valid num_values');
  return { type, uncompressedSize, compressedSize, headerLength, numValues, encoding, defEncoding, repEncoding, defLength, repLength, isCompressed };
}
