/**
 * A log segment exercising every fidelity rule: every codec, null keys and values, empty values, duplicate
 * and null-valued headers, explicit timestamps (CreateTime and LogAppendTime), idempotent and
 * transactional producers with commit and abort markers, offset gaps between batches and inside a
 * compacted batch, an empty compacted batch, non-zero record attributes, and a header key that is not
 * UTF-8 (which only raw bytes can keep). Deterministic: a seeded generator.
 */
import { controlMarkerRecord, encodeRecordBatch, setLogAppendTime } from '../../../protocol/record-batch/record-batch.js';
import { writeBatchCrc } from '../../../protocol/record-batch/crc.js';
import type { CompressionType } from '../../../protocol/record-batch/compression.js';
import type { RecordInput } from '../../../protocol/record-batch/records.js';

export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const CODECS: readonly CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const T0 = 1_700_000_000_000n;

function bytes(rand: () => number, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

/** The special-case batches, then `bulk` random batches (mixed codecs, gaps) for multiple row groups. */
export function buildSegment(bulk = 120, seed = 7): Buffer {
  const rand = rng(seed);
  const out: Buffer[] = [];
  // 0..2: uncompressed, null key, empty value, null value, duplicate and null-valued headers.
  out.push(
    encodeRecordBatch({
      baseOffset: 0n,
      baseTimestamp: T0,
      records: [
        { key: null, value: Buffer.alloc(0), headers: [{ key: 'a', value: Buffer.from('1') }, { key: 'a', value: Buffer.from('2') }, { key: 'b', value: null }] },
        { key: Buffer.alloc(0), value: null, timestampDelta: 5 },
        { key: Buffer.from('k'), value: Buffer.from('v'), timestampDelta: -3, attributes: 0x7f, headers: [{ key: 'ünï', value: Buffer.alloc(0) }] },
      ],
    }),
  );
  // One batch per codec with explicit timestamps, an idempotent producer on snappy.
  let base = 3n;
  CODECS.forEach((codec, c) => {
    const records: RecordInput[] = Array.from({ length: 4 }, (_, i) => ({ key: Buffer.from(`key-${codec}-${i}`), value: bytes(rand, 40 + i), timestampDelta: i * 1000, headers: i % 2 ? [{ key: 'h', value: Buffer.from([i]) }] : [] }));
    out.push(
      encodeRecordBatch({
        baseOffset: base,
        baseTimestamp: T0 + BigInt(c * 10_000),
        compression: codec,
        partitionLeaderEpoch: 4,
        ...(codec === 'snappy' ? { producerId: 1000n, producerEpoch: 3, baseSequence: 17 } : {}),
        records,
      }),
    );
    base += 4n + 3n; // gap of 3 offsets after each (as DeleteRecords or compaction leaves)
  });
  // LogAppendTime batch (lz4): the broker stamped maxTimestamp; the records keep the client's deltas.
  const lat = encodeRecordBatch({ baseOffset: base, baseTimestamp: T0, compression: 'lz4', records: [{ value: Buffer.from('x'), timestampDelta: 7 }, { value: Buffer.from('y'), timestampDelta: 9 }] });
  setLogAppendTime(lat, T0 + 99_999n);
  out.push(lat);
  base += 2n;
  // Committed transaction (zstd) then its marker; aborted transaction then its marker.
  out.push(encodeRecordBatch({ baseOffset: base, baseTimestamp: T0, compression: 'zstd', isTransactional: true, producerId: 2000n, producerEpoch: 1, baseSequence: 0, records: [{ value: Buffer.from('t1') }, { value: Buffer.from('t2') }] }));
  base += 2n;
  out.push(encodeRecordBatch({ baseOffset: base, baseTimestamp: T0 + 5n, isTransactional: true, isControl: true, producerId: 2000n, producerEpoch: 1, records: [controlMarkerRecord('commit', 9)] }));
  base += 1n;
  out.push(encodeRecordBatch({ baseOffset: base, baseTimestamp: T0, isTransactional: true, producerId: 2001n, producerEpoch: 0, baseSequence: 0, records: [{ value: Buffer.from('a1') }, { value: Buffer.from('a2') }] }));
  base += 2n;
  out.push(encodeRecordBatch({ baseOffset: base, baseTimestamp: T0 + 6n, isTransactional: true, isControl: true, producerId: 2001n, producerEpoch: 0, records: [controlMarkerRecord('abort', 9)] }));
  base += 1n;
  // Compacted batch: offset deltas 0, 2, 5 within lastOffsetDelta 7; then a batch compacted to nothing.
  out.push(
    encodeRecordBatch({
      baseOffset: base,
      baseTimestamp: T0,
      compression: 'gzip',
      lastOffsetDelta: 7,
      records: [
        { offsetDelta: 0, key: Buffer.from('c0'), value: Buffer.from('v0') },
        { offsetDelta: 2, key: Buffer.from('c2'), value: null },
        { offsetDelta: 5, key: Buffer.from('c5'), value: Buffer.from('v5') },
      ],
    }),
  );
  base += 8n;
  out.push(encodeRecordBatch({ baseOffset: base, baseTimestamp: T0, lastOffsetDelta: 3, producerId: 3000n, producerEpoch: 2, baseSequence: 40, records: [] }));
  base += 4n;
  // A header key that is not UTF-8: patch 'ZQZ' to 'Z\xffZ' and fix the CRC.
  const bad = encodeRecordBatch({ baseOffset: base, baseTimestamp: T0, records: [{ key: Buffer.from('raw'), value: Buffer.from('bytes'), headers: [{ key: 'ZQZ', value: Buffer.from('v') }] }, { value: Buffer.from('ok') }] });
  bad[bad.indexOf('ZQZ') + 1] = 0xff;
  writeBatchCrc(bad, 0);
  out.push(bad);
  base += 2n;
  // Bulk: random sizes and codecs, some batches after gaps.
  for (let b = 0; b < bulk; b++) {
    const n = 1 + Math.floor(rand() * 12);
    const records: RecordInput[] = Array.from({ length: n }, (_, i) => ({
      key: rand() < 0.2 ? null : Buffer.from(`k${b}-${i}`),
      value: rand() < 0.05 ? null : bytes(rand, Math.floor(rand() * 600)),
      timestampDelta: Math.floor(rand() * 50),
      headers: rand() < 0.3 ? [{ key: 'trace', value: bytes(rand, 8) }, { key: 'trace', value: null }] : [],
    }));
    if (rand() < 0.1) base += BigInt(1 + Math.floor(rand() * 100));
    out.push(encodeRecordBatch({ baseOffset: base, baseTimestamp: T0 + BigInt(b * 100), compression: CODECS[b % CODECS.length]!, records, producerId: 5000n, producerEpoch: 0, baseSequence: b * 20 }));
    base += BigInt(n);
  }
  return Buffer.concat(out);
}
