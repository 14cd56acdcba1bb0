/**
 * Walking a buffer of concatenated batches (a Produce `records` field, a Fetch response's records, a log
 * segment) by their length fields only: no CRC check, no decoding. A partial batch at the end is tolerated
 * and reported, because Fetch responses may be cut at `max.bytes` in the middle of a batch.
 */
import { BATCH_LOG_OVERHEAD, BATCH_OFFSETS } from './header.js';
import { RecordBatchError } from './errors.js';

export interface BatchBounds {
  /** Byte position of the batch's first byte (its baseOffset). */
  readonly start: number;
  /** Byte position just past the batch. */
  readonly end: number;
  readonly baseOffset: bigint;
  /** baseOffset + lastOffsetDelta for magic 2; baseOffset for the legacy formats. */
  readonly lastOffset: bigint;
  readonly magic: number;
}

/** Smallest possible batchLength: a legacy v0 message (crc, magic, attributes, key and value lengths). */
const MIN_LEGACY_LENGTH = 14;
/** batchLength of a v2 batch with no records. */
const MIN_V2_LENGTH = 49;

/**
 * Yields the bounds of each complete batch in `buf`, stopping before a partial trailing batch. Throws
 * RecordBatchError INVALID_LENGTH if a length field is impossible (the rest cannot be located).
 */
export function* iterateBatches(buf: Buffer, start = 0): Generator<BatchBounds, void, void> {
  let pos = start;
  for (;;) {
    const b = nextBatch(buf, pos);
    if (b === null) return;
    yield b;
    pos = b.end;
  }
}

/** The batch at `pos`, or null if fewer than its declared bytes (or its header) remain. */
export function nextBatch(buf: Buffer, pos: number): BatchBounds | null {
  if (buf.length - pos < BATCH_OFFSETS.magic + 1) return null;
  const length = buf.readInt32BE(pos + BATCH_OFFSETS.batchLength);
  const magic = buf.readInt8(pos + BATCH_OFFSETS.magic);
  if (length < (magic === 2 ? MIN_V2_LENGTH : MIN_LEGACY_LENGTH)) {
    throw new RecordBatchError('INVALID_LENGTH', `batch at byte ${pos} declares an impossible batchLength ${length}; the data is corrupt`, { offset: pos });
  }
  const end = pos + BATCH_LOG_OVERHEAD + length;
  if (end > buf.length) return null;
  const baseOffset = buf.readBigInt64BE(pos + BATCH_OFFSETS.baseOffset);
  const lastOffset = magic === 2 ? baseOffset + BigInt(buf.readInt32BE(pos + BATCH_OFFSETS.lastOffsetDelta)) : baseOffset;
  return { start: pos, end, baseOffset, lastOffset, magic };
}

export interface BatchScan {
  readonly batches: BatchBounds[];
  /** Bytes covered by complete batches, from `start`. */
  readonly completeBytes: number;
  /** Bytes of the partial batch at the end (0 if the buffer ends on a batch boundary). */
  readonly partialBytes: number;
}

/** All complete batches of `buf` plus the size of a partial trailing one. */
export function scanBatches(buf: Buffer, start = 0): BatchScan {
  const batches: BatchBounds[] = [];
  let pos = start;
  for (const b of iterateBatches(buf, start)) {
    batches.push(b);
    pos = b.end;
  }
  return { batches, completeBytes: pos - start, partialBytes: buf.length - pos };
}
