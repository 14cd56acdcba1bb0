import type { FileHandle } from 'node:fs/promises';
import { crc32c } from '@node-rs/crc32';
import { BATCH_HEADER_SIZE, BATCH_LOG_OVERHEAD, BATCH_OFFSETS } from '../../protocol/record-batch/header.js';

/** Smallest legal value of the batchLength field: a header with no records. */
export const MIN_BATCH_LENGTH = BATCH_HEADER_SIZE - BATCH_LOG_OVERHEAD;
/** Chunk size for sequential scans during recovery and index rebuilds. */
const SCAN_CHUNK = 1024 * 1024;

/** Everything the log needs from a batch header, read in place. */
export interface BatchSummary {
  baseOffset: number;
  lastOffset: number;
  sizeInBytes: number;
  maxTimestamp: number;
}

/** The batch's total size (log overhead included), or -1 if the length field is impossible. */
export function batchSizeAt(buf: Buffer, pos: number): number {
  const length = buf.readInt32BE(pos + BATCH_OFFSETS.batchLength);
  return length < MIN_BATCH_LENGTH ? -1 : length + BATCH_LOG_OVERHEAD;
}

/**
 * Checks that the whole batch at `pos` is present in `buf[pos, end)`, has magic 2 and a matching CRC32C.
 * Returns its size, or -1 if it is torn or corrupt.
 */
export function validBatchSizeAt(buf: Buffer, pos: number, end: number): number {
  if (end - pos < BATCH_HEADER_SIZE) return -1;
  const size = batchSizeAt(buf, pos);
  if (size < 0 || pos + size > end) return -1;
  if (buf[pos + BATCH_OFFSETS.magic] !== 2) return -1;
  if (buf.readInt32BE(pos + BATCH_OFFSETS.lastOffsetDelta) < 0) return -1;
  const stored = buf.readUInt32BE(pos + BATCH_OFFSETS.crc);
  return crc32c(buf.subarray(pos + BATCH_OFFSETS.attributes, pos + size)) === stored ? size : -1;
}

export function summarize(buf: Buffer, pos: number, size: number, out: BatchSummary): BatchSummary {
  out.baseOffset = Number(buf.readBigInt64BE(pos + BATCH_OFFSETS.baseOffset));
  out.lastOffset = out.baseOffset + buf.readInt32BE(pos + BATCH_OFFSETS.lastOffsetDelta);
  out.sizeInBytes = size;
  out.maxTimestamp = Number(buf.readBigInt64BE(pos + BATCH_OFFSETS.maxTimestamp));
  return out;
}

export async function readFully(handle: FileHandle, buf: Buffer, length: number, position: number): Promise<number> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buf, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}

/**
 * Walks the batches of a file from `start` to `end`, validating length, magic and CRC of each, and calls
 * `visit` with the position and a summary. Stops at the first invalid batch or when `visit` returns false.
 * Returns the position just after the last batch that was valid and accepted: the length to truncate to.
 */
export async function scanFile(
  handle: FileHandle,
  start: number,
  end: number,
  visit: (position: number, batch: Readonly<BatchSummary>) => boolean,
): Promise<number> {
  const summary: BatchSummary = { baseOffset: 0, lastOffset: 0, sizeInBytes: 0, maxTimestamp: 0 };
  let chunk = Buffer.allocUnsafe(Math.min(SCAN_CHUNK, Math.max(BATCH_HEADER_SIZE, end - start)));
  let chunkStart = start;
  let chunkLen = await readFully(handle, chunk, Math.min(chunk.length, end - start), start);
  let pos = start;
  while (pos < end) {
    if (end - pos < BATCH_HEADER_SIZE) return pos;
    let off = pos - chunkStart;
    if (off + BATCH_HEADER_SIZE > chunkLen) {
      chunkStart = pos;
      chunkLen = await readFully(handle, chunk, Math.min(chunk.length, end - pos), pos);
      off = 0;
      if (chunkLen < BATCH_HEADER_SIZE) return pos;
    }
    const size = batchSizeAt(chunk, off);
    if (size < 0 || pos + size > end) return pos;
    if (off + size > chunkLen) {
      // The batch straddles the chunk: refill from its start, growing the buffer if the batch is bigger.
      if (size > chunk.length) chunk = Buffer.allocUnsafe(size);
      chunkStart = pos;
      chunkLen = await readFully(handle, chunk, Math.min(chunk.length, end - pos), pos);
      off = 0;
    }
    if (validBatchSizeAt(chunk, off, chunkLen) < 0) return pos;
    if (!visit(pos, summarize(chunk, off, size, summary))) return pos;
    pos += size;
  }
  return pos;
}
