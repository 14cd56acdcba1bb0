/**
 * Records written in place from natively decoded rows: each batch's records section goes straight into the
 * batch's buffer (its size is known from the index), with varints computed from the column values; no
 * per-record objects, header keys copied as bytes.
 */
import { int64At } from '../../iceberg/parquet/column-reader.js';
import { ATTR_COMPRESSION_MASK, BATCH_HEADER_SIZE } from '../../protocol/record-batch/header.js';
import { sizeOfVarint, sizeOfVarlongNumber, writeVarint, writeVarlongNumber } from '../../protocol/varint.js';
import type { IndexedBatch } from '../offset-index/format.js';
import { assembleBatch, writeBatchHeader, type RebuildCompression } from './batch-assembly.js';
import { mismatch, type NativePart, type NativeRows } from './native-rows.js';

/** Copies src[s, e) to dst at d; a byte loop for short values, where the native copy's call costs more. */
function copyBytes(src: Buffer, s: number, e: number, dst: Buffer, d: number): void {
  if (e - s < 48) {
    for (let i = s; i < e; i++) dst[d++] = src[i]!;
  } else src.copy(dst, d, s, e);
}

function int64Safe(pairs: Int32Array, i: number, what: string): number {
  const hi = pairs[2 * i + 1]!;
  if (hi < -0x200000 || hi >= 0x200000) mismatch(`${what} ${hi} * 2^32 is beyond 2^53`);
  return int64At(pairs, i);
}

/**
 * Writes batch `b`'s records section into out[start, start + b.recordsBytes) from decoded row groups,
 * byte-identical to the original's: raw_record bytes when present, else the record encoded from the typed
 * columns. Throws INDEX_MISMATCH unless it is exactly that long.
 */
function writeRecordsSection(parts: readonly NativePart[], b: IndexedBatch, out: Buffer, start: number): void {
  const end = start + b.recordsBytes;
  let p = start;
  let row = b.firstRow;
  const stop = b.firstRow + b.recordsCount;
  // A batch may straddle row groups: write the rows of each part in turn.
  for (const part of parts) {
    if (row >= stop) break;
    const partEnd = part.firstRow + part.rows.rows;
    if (row >= partEnd) continue;
    if (row < part.firstRow) break;
    const to = Math.min(stop, partEnd);
    p = writeRows(part.rows, row - part.firstRow, to - row, b, out, p, end);
    row = to;
  }
  if (row !== stop) mismatch(`rows ${b.firstRow}..${stop - 1} are not all in the row groups read`);
  if (p !== end) mismatch(`batch at offset ${b.baseOffset} rebuilt to ${p - start} bytes of records, the index recorded ${b.recordsBytes}`);
}

/** Writes `count` records from row `first` of `n` at out[p...] (not past `end`); returns the position after them. */
function writeRows(n: NativeRows, first: number, count: number, b: IndexedBatch, out: Buffer, start: number, end: number): number {
  const baseOffset = Number(b.baseOffset);
  const baseTs = Number(b.baseTimestamp);
  const { offset, offsetAt, timestamp, timestampAt, key, keyAt, value, valueAt, raw, rawAt, attributes, attributesAt, timestampDelta, timestampDeltaAt, headerStart, hKey, hValue, hValueAt } = n;
  const over = (): never => mismatch(`batch at offset ${b.baseOffset} rebuilds to more than the ${b.recordsBytes} bytes of records its index recorded`);
  let p = start;
  for (let row = first, last = first + count; row < last; row++) {
    const ri = rawAt === null ? row : rawAt[row]!;
    if (ri >= 0) {
      const s = raw.starts[ri]!;
      const e = raw.ends[ri]!;
      if (p + (e - s) > end) over();
      copyBytes(raw.data, s, e, out, p);
      p += e - s;
      continue;
    }
    const oi = offsetAt === null ? row : offsetAt[row]!;
    const offsetDelta = int64Safe(offset, oi, 'offset') - baseOffset;
    const di = timestampDeltaAt === null ? row : timestampDeltaAt[row]!;
    let tsDelta: number;
    if (di >= 0) tsDelta = int64Safe(timestampDelta, di, 'timestamp_delta');
    else {
      const ti = timestampAt === null ? row : timestampAt[row]!;
      tsDelta = Math.round(int64Safe(timestamp, ti, 'timestamp') / 1000) - baseTs;
    }
    const ai = attributesAt === null ? row : attributesAt[row]!;
    const attrs = ai >= 0 ? attributes[ai]! & 0xff : 0;
    const ki = keyAt === null ? row : keyAt[row]!;
    const ks = ki >= 0 ? key.starts[ki]! : 0;
    const kl = ki >= 0 ? key.ends[ki]! - ks : -1;
    const vi = valueAt === null ? row : valueAt[row]!;
    const vs = vi >= 0 ? value.starts[vi]! : 0;
    const vl = vi >= 0 ? value.ends[vi]! - vs : -1;
    const h0 = headerStart[row]!;
    const h1 = headerStart[row + 1]!;
    let body = 1 + sizeOfVarlongNumber(tsDelta) + sizeOfVarint(offsetDelta) + sizeOfVarint(kl) + (kl > 0 ? kl : 0) + sizeOfVarint(vl) + (vl > 0 ? vl : 0) + sizeOfVarint(h1 - h0);
    for (let h = h0; h < h1; h++) {
      const hkl = hKey.ends[h]! - hKey.starts[h]!;
      const hvi = hValueAt[h]!;
      const hvl = hvi >= 0 ? hValue.ends[hvi]! - hValue.starts[hvi]! : -1;
      body += sizeOfVarint(hkl) + hkl + sizeOfVarint(hvl) + (hvl > 0 ? hvl : 0);
    }
    if (p + sizeOfVarint(body) + body > end) over();
    p = writeVarint(out, p, body);
    out[p++] = attrs;
    p = writeVarlongNumber(out, p, tsDelta);
    p = writeVarint(out, p, offsetDelta);
    p = writeVarint(out, p, kl);
    if (kl > 0) {
      copyBytes(key.data, ks, ks + kl, out, p);
      p += kl;
    }
    p = writeVarint(out, p, vl);
    if (vl > 0) {
      copyBytes(value.data, vs, vs + vl, out, p);
      p += vl;
    }
    p = writeVarint(out, p, h1 - h0);
    for (let h = h0; h < h1; h++) {
      const hs = hKey.starts[h]!;
      const hkl = hKey.ends[h]! - hs;
      p = writeVarint(out, p, hkl);
      copyBytes(hKey.data, hs, hs + hkl, out, p);
      p += hkl;
      const hvi = hValueAt[h]!;
      if (hvi < 0) p = writeVarint(out, p, -1);
      else {
        const vs2 = hValue.starts[hvi]!;
        const hvl = hValue.ends[hvi]! - vs2;
        p = writeVarint(out, p, hvl);
        copyBytes(hValue.data, vs2, vs2 + hvl, out, p);
        p += hvl;
      }
    }
  }
  return p;
}

/** Whether batch `b` is rebuilt uncompressed (so exactly 61 + recordsBytes long). */
export function rebuiltUncompressed(b: IndexedBatch, compression: RebuildCompression): boolean {
  return compression === 'none' || (b.attributes & ATTR_COMPRESSION_MASK) === 0;
}

/** A batch rebuilt from natively decoded rows: the records written in place behind the header. */
export function nativeBatch(parts: readonly NativePart[], b: IndexedBatch, compression: RebuildCompression): Buffer {
  if (!rebuiltUncompressed(b, compression)) {
    const section = Buffer.allocUnsafe(b.recordsBytes);
    writeRecordsSection(parts, b, section, 0);
    return assembleBatch(b, section, compression);
  }
  const buf = Buffer.allocUnsafe(BATCH_HEADER_SIZE + b.recordsBytes);
  writeNativeBatchAt(parts, b, buf, 0);
  return buf;
}

/** Writes uncompressed batch `b` (61 + recordsBytes bytes) at buf[at...]: records, then header and CRC. */
export function writeNativeBatchAt(parts: readonly NativePart[], b: IndexedBatch, buf: Buffer, at: number): void {
  writeRecordsSection(parts, b, buf, at + BATCH_HEADER_SIZE);
  writeBatchHeader(buf, at, BATCH_HEADER_SIZE + b.recordsBytes, b, b.attributes & ~ATTR_COMPRESSION_MASK);
}
