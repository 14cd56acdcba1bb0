/**
 * The records of a segment's batches, read in place: a batch opened (CRC checked, records section
 * decompressed), and each record's byte ranges and fields read with the structural checks of decodeRecords
 * and the fidelity verdict (`readRecord`: whether re-encoding its decoded fields gives back its bytes).
 * segment-to-parquet.ts walks them into rows; the typed pre-scan walks them for their values.
 */
import { isUtf8 } from 'node:buffer';
import { ATTR_CONTROL, readBatchHeader, type BatchHeader } from '../../protocol/record-batch/header.js';
import type { BatchBounds } from '../../protocol/record-batch/batches.js';
import { recordsSection } from '../../protocol/record-batch/record-batch.js';
import { compressionOf, DEFAULT_MAX_DECOMPRESSED_BYTES, type DecompressScratch } from '../../protocol/record-batch/compression.js';
import { assertBatchCrc } from '../../protocol/record-batch/crc.js';
import { decodeRecords, type KafkaRecord } from '../../protocol/record-batch/records.js';
import { readVarint, readVarlongNumber, sizeOfVarint, sizeOfVarlongNumber, type Cursor } from '../../protocol/varint.js';
import type { RecordRanges } from './columns.js';
import { TieringConvertError } from './errors.js';

export interface DecodedBatch {
  readonly header: BatchHeader;
  readonly data: Buffer;
  readonly records: KafkaRecord[];
}

export function decodeBatch(segment: Buffer, b: BatchBounds, verifyCrc: boolean, base: number): DecodedBatch {
  try {
    if (verifyCrc) assertBatchCrc(segment, b.start);
    const header = readBatchHeader(segment, b.start);
    const data = recordsSection(segment, b.start, b.end, compressionOf(header.attributes), DEFAULT_MAX_DECOMPRESSED_BYTES);
    return { header, data, records: decodeRecords(data, header.recordsCount) };
  } catch (cause) {
    throw new TieringConvertError('INVALID_SEGMENT', `batch at byte ${base + b.start} (offset ${b.baseOffset}) cannot be decoded: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * A batch's header and decompressed records section (checked CRC), without decoding the records. The
 * section may live in `scratch` (reused batch after batch): it is valid until the next batch is opened.
 */
export function openBatch(segment: Buffer, b: BatchBounds, verifyCrc: boolean, scratch: DecompressScratch, base: number): { header: BatchHeader; data: Buffer } {
  try {
    if (verifyCrc) assertBatchCrc(segment, b.start);
    const header = readBatchHeader(segment, b.start);
    return { header, data: recordsSection(segment, b.start, b.end, compressionOf(header.attributes), DEFAULT_MAX_DECOMPRESSED_BYTES, scratch) };
  } catch (cause) {
    throw new TieringConvertError('INVALID_SEGMENT', `batch at byte ${base + b.start} (offset ${b.baseOffset}) cannot be decoded: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** The fields of one record the walk reads besides its byte ranges. */
export interface RecordFields {
  attributes: number;
  timestampDelta: number;
  offsetDelta: number;
}

function badRecord(i: number, at: number, what: string): TieringConvertError {
  return new TieringConvertError('INVALID_SEGMENT', `record ${i} at byte ${at} of its batch's records is malformed: ${what}`);
}

/** True when data[start, start+n) is valid UTF-8 (ASCII checked in line, the rest by node:buffer). */
function utf8(data: Buffer, start: number, n: number): boolean {
  for (let i = start, e = start + n; i < e; i++) if (data[i]! >= 0x80) return isUtf8(data.subarray(start, e));
  return true;
}

/**
 * Reads record `i` at `cur.pos` into `rec` and `f`, with the structural checks of decodeRecords (lengths,
 * nullability, bounds, header count, the record ending where its length says). Returns whether the record
 * is canonical: every varint minimal and every header key valid UTF-8, which is exactly when re-encoding
 * the decoded fields (as fetch from Parquet does) gives back the same bytes. A record that is not keeps its
 * raw bytes (`rec.rawStart/rawLen` are set by the caller).
 */
export function readRecord(data: Buffer, cur: Cursor, i: number, rec: RecordRanges, f: RecordFields): boolean {
  const start = cur.pos;
  if (start >= data.length) throw badRecord(i, start, 'the batch declares more records than its data holds');
  let p = cur.pos;
  const length = readVarint(data, cur);
  let canonical = cur.pos - p === sizeOfVarint(length);
  const end = cur.pos + length;
  if (length < 6 || end > data.length) throw badRecord(i, start, `impossible length ${length}`);
  f.attributes = data[cur.pos++]!;
  p = cur.pos;
  f.timestampDelta = readVarlongNumber(data, cur);
  canonical &&= cur.pos - p === sizeOfVarlongNumber(f.timestampDelta);
  p = cur.pos;
  f.offsetDelta = readVarint(data, cur);
  canonical &&= cur.pos - p === sizeOfVarint(f.offsetDelta);
  // key, value
  for (let k = 0; k < 2; k++) {
    p = cur.pos;
    const len = readVarint(data, cur);
    canonical &&= cur.pos - p === sizeOfVarint(len);
    if (len < -1 || cur.pos + len > end) throw badRecord(i, start, `${k === 0 ? 'key' : 'value'} length ${len} is invalid or runs past the record`);
    if (k === 0) {
      rec.keyStart = cur.pos;
      rec.keyLen = len;
    } else {
      rec.valueStart = cur.pos;
      rec.valueLen = len;
    }
    if (len > 0) cur.pos += len;
  }
  p = cur.pos;
  const count = readVarint(data, cur);
  canonical &&= cur.pos - p === sizeOfVarint(count);
  if (count < 0 || count > end - cur.pos) throw badRecord(i, start, `it declares ${count} headers`);
  if (rec.badKeys.length !== 0) rec.badKeys.length = 0; // setting length is a runtime call, even to 0
  if (rec.headers.length < count * 4) rec.headers = new Int32Array(Math.max(count * 4, rec.headers.length * 2));
  const hs = rec.headers;
  for (let h = 0; h < count; h++) {
    p = cur.pos;
    const kLen = readVarint(data, cur);
    canonical &&= cur.pos - p === sizeOfVarint(kLen);
    if (kLen < 0 || cur.pos + kLen > end) throw badRecord(i, start, `header key length ${kLen} is invalid or runs past the record`);
    hs[4 * h] = cur.pos;
    hs[4 * h + 1] = kLen;
    if (!utf8(data, cur.pos, kLen)) {
      canonical = false;
      rec.badKeys.push(h);
    }
    cur.pos += kLen;
    p = cur.pos;
    const vLen = readVarint(data, cur);
    canonical &&= cur.pos - p === sizeOfVarint(vLen);
    if (vLen < -1 || cur.pos + vLen > end) throw badRecord(i, start, `header value length ${vLen} is invalid or runs past the record`);
    hs[4 * h + 2] = cur.pos;
    hs[4 * h + 3] = vLen;
    if (vLen > 0) cur.pos += vLen;
  }
  rec.headerCount = count;
  if (cur.pos !== end) throw badRecord(i, start, `its fields end at byte ${cur.pos}, not at ${end} as its length says`);
  rec.rawStart = start;
  rec.rawLen = canonical ? -1 : end - start;
  return canonical;
}

export function hasRows(segment: Buffer, b: BatchBounds): boolean {
  const h = readBatchHeader(segment, b.start);
  return (h.attributes & ATTR_CONTROL) === 0 && h.recordsCount > 0;
}


/** The values (or keys) of a file's data records (views valid until the next one), for the typed pre-scan. */
export function* fileValues(segment: Buffer, group: readonly BatchBounds[], base: number, part: 'value' | 'key' = 'value'): Generator<Uint8Array, void, void> {
  const scratch: DecompressScratch = { buf: Buffer.allocUnsafe(64 * 1024) };
  const rec: RecordRanges = { keyStart: 0, keyLen: -1, valueStart: 0, valueLen: -1, headerCount: 0, headers: new Int32Array(64), rawStart: 0, rawLen: -1, badKeys: [] };
  const f: RecordFields = { attributes: 0, timestampDelta: 0, offsetDelta: 0 };
  const cur: Cursor = { pos: 0 };
  for (const b of group) {
    if (!hasRows(segment, b)) continue;
    const d = openBatch(segment, b, false, scratch, base);
    const count = readBatchHeader(segment, b.start).recordsCount;
    cur.pos = 0;
    // Malformed records are reported by the conversion itself.
    try {
      for (let r = 0; r < count; r++) {
        readRecord(d.data, cur, r, rec, f);
        if (part === 'value') {
          if (rec.valueLen >= 0) yield d.data.subarray(rec.valueStart, rec.valueStart + rec.valueLen);
        } else if (rec.keyLen >= 0) yield d.data.subarray(rec.keyStart, rec.keyStart + rec.keyLen);
      }
    } catch {
      continue;
    }
  }
}
