// Test helper: builds valid record batches v2 (uncompressed, CRC32C set) without the protocol codec, so the
// log's tests don't depend on code being written concurrently.
import { crc32c } from '@node-rs/crc32';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InlineWrites } from '../../../broker/log/inline-writes.js';

function zigzagVarint(n: number, out: number[]): void {
  let v = n >= 0 ? n * 2 : -n * 2 - 1;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

export interface TestBatchOptions {
  /** Values of the records, one record each. */
  values: string[];
  /** Timestamp of the first record; record i gets baseTimestamp + timestampStep * i. */
  baseTimestamp?: number;
  timestampStep?: number;
  /** Written into the baseOffset field; the log overwrites it. */
  baseOffset?: number;
}

export function makeBatch(opts: TestBatchOptions): Buffer {
  const base = opts.baseTimestamp ?? 1_700_000_000_000;
  const step = opts.timestampStep ?? 0;
  const records: Buffer[] = [];
  opts.values.forEach((value, i) => {
    const v = Buffer.from(value);
    const body: number[] = [0];
    zigzagVarint(step * i, body);
    zigzagVarint(i, body);
    zigzagVarint(-1, body);
    zigzagVarint(v.length, body);
    const head = Buffer.from(body);
    const tail: number[] = [];
    zigzagVarint(0, tail);
    const len: number[] = [];
    zigzagVarint(head.length + v.length + tail.length, len);
    records.push(Buffer.from(len), head, v, Buffer.from(tail));
  });
  const recs = Buffer.concat(records);
  const buf = Buffer.alloc(61 + recs.length);
  buf.writeBigInt64BE(BigInt(opts.baseOffset ?? 0), 0);
  buf.writeInt32BE(buf.length - 12, 8);
  buf.writeInt32BE(0, 12);
  buf.writeInt8(2, 16);
  buf.writeInt16BE(0, 21);
  buf.writeInt32BE(opts.values.length - 1, 23);
  buf.writeBigInt64BE(BigInt(base), 27);
  buf.writeBigInt64BE(BigInt(base + step * (opts.values.length - 1)), 35);
  buf.writeBigInt64BE(-1n, 43);
  buf.writeInt16BE(-1, 51);
  buf.writeInt32BE(-1, 53);
  buf.writeInt32BE(opts.values.length, 57);
  recs.copy(buf, 61);
  buf.writeUInt32BE(crc32c(buf.subarray(21)), 17);
  return buf;
}

/** A batch with `count` records whose values are `${prefix}-${i}`, padded to about `valueBytes` each. */
export function batchOf(prefix: string, count: number, opts: { ts?: number; valueBytes?: number } = {}): Buffer {
  const pad = 'x'.repeat(Math.max(0, (opts.valueBytes ?? 0) - prefix.length - 4));
  return makeBatch({
    values: Array.from({ length: count }, (_, i) => `${prefix}-${i}${pad}`),
    ...(opts.ts === undefined ? {} : { baseTimestamp: opts.ts }),
  });
}

export interface ParsedBatch {
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
  size: number;
  /** The first record's value, as a string. */
  firstValue: string;
  crcOk: boolean;
}

/** Splits stored bytes into batches and reads what the tests check (only handles makeBatch's records). */
export function parseBatches(buf: Buffer): ParsedBatch[] {
  const out: ParsedBatch[] = [];
  for (let p = 0; p < buf.length; ) {
    const size = buf.readInt32BE(p + 8) + 12;
    const b = buf.subarray(p, p + size);
    // first record: length varint, attributes, tsDelta, offsetDelta, keyLen(-1 = 0x01), valueLen, value
    let q = 61;
    const readVarint = (): number => {
      let shift = 0;
      let v = 0;
      for (;;) {
        const byte = b[q++] ?? 0;
        v += (byte & 0x7f) * 2 ** shift;
        if ((byte & 0x80) === 0) break;
        shift += 7;
      }
      return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
    };
    readVarint();
    q++;
    readVarint();
    readVarint();
    readVarint();
    const vlen = readVarint();
    out.push({
      baseOffset: Number(b.readBigInt64BE(0)),
      lastOffset: Number(b.readBigInt64BE(0)) + b.readInt32BE(23),
      maxTimestamp: Number(b.readBigInt64BE(35)),
      size,
      firstValue: b.subarray(q, q + vlen).toString(),
      crcOk: crc32c(b.subarray(21)) === b.readUInt32BE(17),
    });
    p += size;
  }
  return out;
}

const closers = new Map<string, (() => Promise<void>)[]>();

/** A fresh temp dir, removed after the test once everything registered with closeBeforeRemoving is closed. */
export async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-log-'));
  const list: (() => Promise<void>)[] = [];
  closers.set(dir, list);
  t.after(async () => {
    for (const close of list.reverse()) await close();
    closers.delete(dir);
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

export function closeBeforeRemoving(dir: string, close: () => Promise<void>): void {
  closers.get(dir)?.push(close);
}

/** A clock the test moves by hand. */
/** Inline writes of up to 64 KiB whenever asked: a clock that never shows the broker's thread busy. */
export function alwaysInline(): InlineWrites {
  return new InlineWrites({ maxBytes: 64 * 1024, clock: { now: () => performance.now(), utilization: () => 0 } });
}

export function manualClock(start = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}
