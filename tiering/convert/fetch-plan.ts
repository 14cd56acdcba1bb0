/** Fetch planning: which batches of an index a fetch returns, from their sizes known before any data is read. */
import { ATTR_COMPRESSION_MASK, BATCH_HEADER_SIZE } from '../../protocol/record-batch/header.js';
import type { IndexedBatch, SegmentIndex } from '../offset-index/format.js';
import { findBatch } from '../offset-index/lookup.js';
import type { RebuildCompression } from './batch-assembly.js';

/** Size of a rebuilt batch before reading it (exact for 'none'; the original size for 'original'). */
export function plannedSize(b: IndexedBatch, compression: RebuildCompression): number {
  if (b.stored !== null) return b.stored.length;
  return compression === 'none' || (b.attributes & ATTR_COMPRESSION_MASK) === 0 ? BATCH_HEADER_SIZE + b.recordsBytes : b.originalSize;
}

/** The batches [first, end) of the index a fetch at `fetchOffset` returns within `maxBytes`. */
export function planFetch(index: SegmentIndex, fetchOffset: bigint, maxBytes: number, compression: RebuildCompression = 'none'): { first: number; end: number } {
  const first = findBatch(index, fetchOffset);
  if (first < 0) return { first: 0, end: 0 };
  let end = first;
  let total = 0;
  while (end < index.batches.length) {
    const size = plannedSize(index.batches[end]!, compression);
    if (end > first && total + size > maxBytes) break;
    total += size;
    end++;
  }
  return { first, end };
}

