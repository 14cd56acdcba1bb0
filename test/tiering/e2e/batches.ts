/**
 * Comparing what the broker served from its hot log with what it serves from the table after tiering, batch by
 * batch, and turning served batches into the records a consumer sees.
 *
 * Batches rebuilt from Parquet are sent uncompressed by default (see tiering/convert/parquet-to-batches.ts), so
 * for a compressed original the comparison is on its decompressed records section, byte for byte, plus every
 * header field except the codec bits and the CRC (which `decodeRecordBatch` has already verified). An
 * uncompressed original must come back as exactly the same bytes.
 */
import assert from 'node:assert/strict';
import { ATTR_COMPRESSION_MASK } from '../../../protocol/record-batch/header.js';
import { recordsSection } from '../../../protocol/record-batch/record-batch.js';
import type { InRecord } from '../../interop/clients/types.js';
import type { ServedBatch } from './wire.js';

/** The records of served batches as a consumer sees them (control batches skipped). */
export function recordsOf(partition: number, batches: readonly ServedBatch[]): (InRecord & { timestampType: 'create' | 'log-append' })[] {
  const out: (InRecord & { timestampType: 'create' | 'log-append' })[] = [];
  for (const { batch } of batches) {
    if (batch.isControl) continue;
    for (const r of batch.records) {
      out.push({
        partition,
        offset: Number(batch.baseOffset) + r.offsetDelta,
        key: r.key,
        value: r.value,
        headers: r.headers.map((h) => [h.key, h.value] as const),
        timestamp: Number(batch.timestampType === 'log-append' ? batch.maxTimestamp : batch.baseTimestamp + BigInt(r.timestampDelta)),
        timestampType: batch.timestampType,
      });
    }
  }
  return out;
}

const section = (b: ServedBatch): Buffer => recordsSection(b.bytes, 0, b.bytes.length, b.batch.compression, 64 << 20);

/** Asserts that `remote` holds the same batches as `hot`: same boundaries, header fields and records bytes. */
export function assertSameBatches(hot: readonly ServedBatch[], remote: readonly ServedBatch[], label: string): void {
  assert.deepEqual(
    remote.map((b) => [Number(b.batch.baseOffset), b.batch.lastOffsetDelta]),
    hot.map((b) => [Number(b.batch.baseOffset), b.batch.lastOffsetDelta]),
    `${label}: batch boundaries`,
  );
  hot.forEach((h, i) => {
    const r = remote[i];
    assert.ok(r);
    const at = `${label}: batch at ${h.batch.baseOffset}`;
    const fields = (b: ServedBatch) => ({
      partitionLeaderEpoch: b.batch.partitionLeaderEpoch,
      attributesButCodec: b.batch.attributes & ~ATTR_COMPRESSION_MASK,
      baseTimestamp: b.batch.baseTimestamp,
      maxTimestamp: b.batch.maxTimestamp,
      producerId: b.batch.producerId,
      producerEpoch: b.batch.producerEpoch,
      baseSequence: b.batch.baseSequence,
      recordsCount: b.batch.recordsCount,
    });
    assert.deepEqual(fields(r), fields(h), `${at}: header fields`);
    assert.ok(r.batch.compression === 'none' || r.batch.compression === h.batch.compression, `${at}: served with ${r.batch.compression}, stored with ${h.batch.compression}`);
    assert.ok(section(r).equals(section(h)), `${at}: records section differs`);
    if (h.batch.compression === 'none' && r.batch.compression === 'none') {
      assert.ok(r.bytes.equals(h.bytes), `${at}: an uncompressed batch comes back as the same bytes`);
    }
  });
}
