/**
 * The records inside a v2 batch (after decompression):
 *
 *   length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
 *   keyLength varint | key | valueLength varint | value |
 *   headerCount varint | (headerKeyLength varint | headerKey utf8 | headerValueLength varint | value)*
 *
 * Decoded keys, values and header values are subarrays of the input buffer (no copies). Header order and
 * duplicate header keys are preserved. Header keys are strings (UTF-8), as in the Java client.
 * timestampDelta is a number: deltas outside the safe-integer range (over 285,000 years) are rejected.
 */
import { RecordBatchError } from './errors.js';
import {
  VarintError,
  readVarint,
  readVarlongNumber,
  sizeOfVarint,
  sizeOfVarlongNumber,
  writeVarint,
  writeVarlongNumber,
  type Cursor,
} from '../varint.js';

export interface RecordHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

export interface KafkaRecord {
  readonly attributes: number;
  readonly timestampDelta: number;
  readonly offsetDelta: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: readonly RecordHeader[];
}

/** A record to encode; omitted fields take Kafka's defaults (attributes 0, null key/value, no headers). */
export interface RecordInput {
  readonly attributes?: number;
  readonly timestampDelta?: number;
  /** Defaults to the record's index in the batch. */
  readonly offsetDelta?: number;
  readonly key?: Buffer | null;
  readonly value?: Buffer | null;
  readonly headers?: readonly RecordHeader[];
}

const EMPTY_HEADERS: readonly RecordHeader[] = Object.freeze([]);

function invalid(message: string, offset: number, cause?: unknown): RecordBatchError {
  return new RecordBatchError('INVALID_RECORD', message, cause === undefined ? { offset } : { offset, cause });
}

function readLength(buf: Buffer, cur: Cursor, end: number, what: string, nullable: boolean): number {
  const at = cur.pos;
  const len = readVarint(buf, cur);
  if (len < -1 || (len === -1 && !nullable)) throw invalid(`${what} length ${len} at byte ${at} is invalid`, at);
  if (cur.pos + len > end) throw invalid(`${what} at byte ${at} runs past the end of its record`, at);
  return len;
}

/**
 * Decodes `count` records from `data` (the whole buffer must be records: trailing bytes are an error).
 */
export function decodeRecords(data: Buffer, count: number): KafkaRecord[] {
  const records: KafkaRecord[] = new Array<KafkaRecord>(count);
  const cur: Cursor = { pos: 0 };
  let i = 0;
  try {
    for (; i < count; i++) {
      if (cur.pos >= data.length) {
        throw new RecordBatchError('RECORD_COUNT_MISMATCH', `batch declares ${count} records but its data ends after ${i}`, { offset: cur.pos });
      }
      const start = cur.pos;
      const length = readVarint(data, cur);
      const end = cur.pos + length;
      if (length < 6 || end > data.length) throw invalid(`record ${i} at byte ${start} has an impossible length ${length}`, start);
      const attributes = data[cur.pos++]!;
      const timestampDelta = readVarlongNumber(data, cur);
      const offsetDelta = readVarint(data, cur);
      const keyLen = readLength(data, cur, end, 'key', true);
      let key: Buffer | null = null;
      if (keyLen >= 0) {
        key = data.subarray(cur.pos, cur.pos + keyLen);
        cur.pos += keyLen;
      }
      const valueLen = readLength(data, cur, end, 'value', true);
      let value: Buffer | null = null;
      if (valueLen >= 0) {
        value = data.subarray(cur.pos, cur.pos + valueLen);
        cur.pos += valueLen;
      }
      const headerCount = readVarint(data, cur);
      let headers = EMPTY_HEADERS;
      if (headerCount !== 0) {
        if (headerCount < 0 || headerCount > end - cur.pos) throw invalid(`record ${i} declares ${headerCount} headers`, start);
        const hs: RecordHeader[] = new Array<RecordHeader>(headerCount);
        for (let h = 0; h < headerCount; h++) {
          const hkLen = readLength(data, cur, end, 'header key', false);
          const hk = data.toString('utf8', cur.pos, cur.pos + hkLen);
          cur.pos += hkLen;
          const hvLen = readLength(data, cur, end, 'header value', true);
          let hv: Buffer | null = null;
          if (hvLen >= 0) {
            hv = data.subarray(cur.pos, cur.pos + hvLen);
            cur.pos += hvLen;
          }
          hs[h] = { key: hk, value: hv };
        }
        headers = hs;
      }
      if (cur.pos !== end) throw invalid(`record ${i} at byte ${start} should end at byte ${end} but its fields end at ${cur.pos}`, start);
      records[i] = { attributes, timestampDelta, offsetDelta, key, value, headers };
    }
  } catch (e) {
    if (e instanceof VarintError) throw invalid(`record ${i}: ${e.message}`, e.offset, e);
    throw e;
  }
  if (cur.pos !== data.length) {
    throw new RecordBatchError('RECORD_COUNT_MISMATCH', `batch declares ${count} records but ${data.length - cur.pos} bytes follow the last one`, { offset: cur.pos });
  }
  return records;
}

/** Precomputed sizes of one record, so encoding measures each field once. */
interface Sized {
  bodySize: number;
  headerKeyLengths: number[] | null;
}

function measure(r: RecordInput, offsetDelta: number): Sized {
  let size = 1 + sizeOfVarlongNumber(r.timestampDelta ?? 0) + sizeOfVarint(offsetDelta);
  const key = r.key ?? null;
  const value = r.value ?? null;
  size += key === null ? 1 : sizeOfVarint(key.length) + key.length;
  size += value === null ? 1 : sizeOfVarint(value.length) + value.length;
  const headers = r.headers ?? EMPTY_HEADERS;
  size += sizeOfVarint(headers.length);
  let headerKeyLengths: number[] | null = null;
  if (headers.length > 0) {
    headerKeyLengths = new Array<number>(headers.length);
    for (let h = 0; h < headers.length; h++) {
      const hdr = headers[h]!;
      const kl = Buffer.byteLength(hdr.key, 'utf8');
      headerKeyLengths[h] = kl;
      size += sizeOfVarint(kl) + kl;
      size += hdr.value === null ? 1 : sizeOfVarint(hdr.value.length) + hdr.value.length;
    }
  }
  return { bodySize: size, headerKeyLengths };
}

/** Encodes records back to back into one new buffer. */
export function encodeRecords(records: readonly RecordInput[]): Buffer {
  const sized: Sized[] = new Array<Sized>(records.length);
  let total = 0;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const s = measure(r, r.offsetDelta ?? i);
    sized[i] = s;
    total += sizeOfVarint(s.bodySize) + s.bodySize;
  }
  const buf = Buffer.allocUnsafe(total);
  let p = 0;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const s = sized[i]!;
    p = writeVarint(buf, p, s.bodySize);
    buf[p++] = (r.attributes ?? 0) & 0xff;
    p = writeVarlongNumber(buf, p, r.timestampDelta ?? 0);
    p = writeVarint(buf, p, r.offsetDelta ?? i);
    const key = r.key ?? null;
    if (key === null) p = writeVarint(buf, p, -1);
    else {
      p = writeVarint(buf, p, key.length);
      p += key.copy(buf, p);
    }
    const value = r.value ?? null;
    if (value === null) p = writeVarint(buf, p, -1);
    else {
      p = writeVarint(buf, p, value.length);
      p += value.copy(buf, p);
    }
    const headers = r.headers ?? EMPTY_HEADERS;
    p = writeVarint(buf, p, headers.length);
    for (let h = 0; h < headers.length; h++) {
      const hdr = headers[h]!;
      const kl = s.headerKeyLengths![h]!;
      p = writeVarint(buf, p, kl);
      p += buf.write(hdr.key, p, kl, 'utf8');
      if (hdr.value === null) p = writeVarint(buf, p, -1);
      else {
        p = writeVarint(buf, p, hdr.value.length);
        p += hdr.value.copy(buf, p);
      }
    }
  }
  return buf;
}
