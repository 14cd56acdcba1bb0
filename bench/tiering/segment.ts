/** The benchmark segment shared by the tiering benches: Kafka-like JSON events in producer-sized batches. */
import { encodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import type { RecordInput } from '../../protocol/record-batch/records.js';
import type { CompressionType } from '../../protocol/record-batch/compression.js';

/** Pseudo-random text, so values compress about as much as real JSON events (not 20x like repeated bytes). */
function pad(i: number): string {
  let x = (i * 2654435761) >>> 0;
  let out = '';
  while (out.length < 400) {
    x = (x * 1103515245 + 12345) >>> 0;
    out += x.toString(36);
  }
  return out.slice(0, 400);
}

/** ~540-byte JSON events with a key and two headers, in 64 KiB batches (offsets from 0), as a producer sends them. */
export function buildSegment(mb: number, compression: CompressionType = 'zstd'): Buffer {
  const out: Buffer[] = [];
  let total = 0;
  let offset = 0n;
  let i = 0;
  while (total < mb * 1024 * 1024) {
    const records: RecordInput[] = [];
    let size = 0;
    while (size < 64 * 1024) {
      const value = Buffer.from(JSON.stringify({ id: i, user: `user-${i % 1000}`, ts: 1_700_000_000_000 + i, pad: pad(i), n: Math.sin(i) }));
      records.push({ key: Buffer.from(`key-${i % 5000}`), value, timestampDelta: records.length, headers: [{ key: 'trace-id', value: Buffer.from(`t-${i}`) }, { key: 'source', value: Buffer.from('bench') }] });
      size += value.length + 40;
      i++;
    }
    const b = encodeRecordBatch({ baseOffset: offset, baseTimestamp: 1_700_000_000_000n + BigInt(i), compression, compressionLevel: 1, producerId: 1n, producerEpoch: 0, baseSequence: Number(offset), records });
    offset += BigInt(records.length);
    total += b.length;
    out.push(b);
  }
  return Buffer.concat(out);
}
