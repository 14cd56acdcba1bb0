/**
 * CRC32C of record batches. The CRC covers everything from `attributes` to the end of the batch.
 *
 * `crc32c` from `@node-rs/crc32` is native and is called on the Buffer itself: wrapping it in a new
 * Uint8Array first costs two thirds of the speed (shared/measurements.md). `buf.subarray` returns a Buffer
 * view, not a copy, so it keeps the fast path.
 */
import { crc32c } from '@node-rs/crc32';
import { BATCH_HEADER_SIZE, BATCH_LOG_OVERHEAD, BATCH_OFFSETS } from './header.js';
import { RecordBatchError } from './errors.js';

// Fail loudly at import if the native module did not load or computes the wrong polynomial: a silent
// fallback (or a CRC32 instead of CRC32C) would reject or accept every batch wrongly.
const CHECK_VECTOR = Buffer.from('123456789', 'ascii');
const CHECK_VALUE = 0xe3069283; // CRC-32C (Castagnoli) check value from the CRC catalogue
{
  let got: number;
  try {
    got = crc32c(CHECK_VECTOR) >>> 0;
  } catch (cause) {
    throw new Error('@node-rs/crc32 failed to load its native module; reinstall it for this platform (npm rebuild @node-rs/crc32)', { cause });
  }
  if (got !== CHECK_VALUE) {
    throw new Error(`@node-rs/crc32 crc32c("123456789") returned 0x${got.toString(16)}, expected 0x${CHECK_VALUE.toString(16)}; the installed build is broken`);
  }
}

/** CRC32C of arbitrary bytes (unsigned 32-bit), optionally continuing from a previous value. */
export function crc32cOf(bytes: Buffer, initial?: number): number {
  return crc32c(bytes, initial) >>> 0;
}

function batchEnd(buf: Buffer, pos: number): number {
  if (buf.length - pos < BATCH_HEADER_SIZE) {
    throw new RecordBatchError('TRUNCATED', `batch at byte ${pos} has ${buf.length - pos} bytes, fewer than the ${BATCH_HEADER_SIZE}-byte header`, { offset: pos });
  }
  const end = pos + BATCH_LOG_OVERHEAD + buf.readInt32BE(pos + BATCH_OFFSETS.batchLength);
  if (end < pos + BATCH_HEADER_SIZE) {
    throw new RecordBatchError('INVALID_LENGTH', `batch at byte ${pos} declares a batchLength shorter than its header`, { offset: pos });
  }
  if (end > buf.length) {
    throw new RecordBatchError('TRUNCATED', `batch at byte ${pos} declares ${end - pos} bytes but only ${buf.length - pos} are present`, { offset: pos });
  }
  return end;
}

/** Computes the CRC32C the batch starting at `pos` should carry (from its attributes to its end). */
export function computeBatchCrc(buf: Buffer, pos = 0): number {
  const end = batchEnd(buf, pos);
  return crc32c(buf.subarray(pos + BATCH_OFFSETS.attributes, end)) >>> 0;
}

/** True if the CRC stored in the batch at `pos` matches its bytes. */
export function isBatchCrcValid(buf: Buffer, pos = 0): boolean {
  return computeBatchCrc(buf, pos) === buf.readUInt32BE(pos + BATCH_OFFSETS.crc);
}

/** Validates the CRC of the batch at `pos` in place; throws RecordBatchError CRC_MISMATCH otherwise. */
export function assertBatchCrc(buf: Buffer, pos = 0): void {
  const computed = computeBatchCrc(buf, pos);
  const stored = buf.readUInt32BE(pos + BATCH_OFFSETS.crc);
  if (computed !== stored) {
    throw new RecordBatchError(
      'CRC_MISMATCH',
      `batch at byte ${pos} has CRC 0x${stored.toString(16)} but its bytes give 0x${computed.toString(16)}; the batch was corrupted in transit or by the client, resend it`,
      { offset: pos },
    );
  }
}

/** Recomputes and stores the CRC of the batch at `pos` (after changing attributes or maxTimestamp). */
export function writeBatchCrc(buf: Buffer, pos = 0): number {
  const crc = computeBatchCrc(buf, pos);
  buf.writeUInt32BE(crc, pos + BATCH_OFFSETS.crc);
  return crc;
}
