/**
 * What the partition log does to the batches of an append before writing them: check their framing, then
 * assign their offsets (and LogAppendTime timestamps) in the caller's buffer.
 */
import { BATCH_HEADER_SIZE, BATCH_OFFSETS, setBaseOffset } from '../../protocol/record-batch/header.js';
import { batchSizeAt } from './batch-scan.js';
import { LogError } from './errors.js';
import type { AppendResult, LogAppendTimeRewriter } from './partition-log.js';

/** An append waiting for its group's turn. */
export interface PendingAppend {
  readonly buf: Buffer;
  /** performance.now() when append() was called. */
  readonly calledAt: number;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (err: unknown) => void;
}

/** An append with its offsets assigned, waiting for its group's write. */
export interface StagedAppend {
  readonly member: PendingAppend;
  readonly baseOffset: number;
  readonly offsets: number;
  /** The LogAppendTime written into its batches, -1 for CreateTime. */
  readonly logAppendTime: number;
}

/**
 * Checks that `buf` is whole v2 batches, none larger than `segmentBytes`, before anything is touched;
 * returns how many offsets they take. Throws LogError CORRUPT_MESSAGE or RECORD_LIST_TOO_LARGE.
 */
export function countOffsets(buf: Buffer, segmentBytes: number): number {
  if (buf.length === 0) throw new LogError('CORRUPT_MESSAGE', 'append called with no record batches');
  let offsets = 0;
  for (let p = 0; p < buf.length; ) {
    if (buf.length - p < BATCH_HEADER_SIZE) throw new LogError('CORRUPT_MESSAGE', `truncated batch header at byte ${p} of ${buf.length}`);
    const size = batchSizeAt(buf, p);
    if (size < 0 || p + size > buf.length) throw new LogError('CORRUPT_MESSAGE', `batch at byte ${p} has length ${buf.readInt32BE(p + 8)}, which does not fit the ${buf.length} bytes given`);
    if (buf[p + BATCH_OFFSETS.magic] !== 2) throw new LogError('CORRUPT_MESSAGE', `batch at byte ${p} has magic ${buf[p + BATCH_OFFSETS.magic]}; only v2 batches are stored`);
    const delta = buf.readInt32BE(p + BATCH_OFFSETS.lastOffsetDelta);
    if (delta < 0) throw new LogError('CORRUPT_MESSAGE', `batch at byte ${p} has negative lastOffsetDelta ${delta}`);
    if (size > segmentBytes) {
      throw new LogError('RECORD_LIST_TOO_LARGE', `batch of ${size} bytes exceeds segment.bytes (${segmentBytes}); send smaller batches or raise segment.bytes`);
    }
    offsets += delta + 1;
    p += size;
  }
  return offsets;
}

/** Rewrites each batch's base offset, from `baseOffset` on, and with `rewrite` its LogAppendTime. */
export function assignOffsets(buf: Buffer, baseOffset: number, now: number, rewrite: LogAppendTimeRewriter | undefined): void {
  let next = baseOffset;
  for (let p = 0; p < buf.length; ) {
    const size = batchSizeAt(buf, p);
    setBaseOffset(buf, BigInt(next), p);
    rewrite?.(buf, p, now);
    next += buf.readInt32BE(p + BATCH_OFFSETS.lastOffsetDelta) + 1;
    p += size;
  }
}
