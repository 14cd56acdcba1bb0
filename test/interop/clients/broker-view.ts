/**
 * What the broker stored, read back over the wire through our own protocol layer: the header of every batch of
 * a partition. The interop tests use it to record which codec a client really compressed with and whether it
 * really produced idempotently (a producer id and sequence numbers on its batches).
 */
import { WireClient, fetchBody, fetchPartitions } from '../../broker/handlers/wire-client.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { readBatchHeader } from '../../../protocol/record-batch/header.js';
import { compressionOf } from '../../../protocol/record-batch/compression.js';
import type { Codec } from './types.js';

export interface StoredBatch {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly codec: Codec;
  readonly producerId: bigint;
  readonly baseSequence: number;
}

const FETCH_VERSION = 12; // topic names (v13+ uses ids); sessionless

export async function storedBatches(port: number, topic: string, partition: number): Promise<StoredBatch[]> {
  const client = await WireClient.connect(port);
  try {
    const out: StoredBatch[] = [];
    let next = 0n;
    for (;;) {
      const res = await client.request(1, FETCH_VERSION, fetchBody(topic, [{ partition, fetchOffset: next, partitionMaxBytes: 8 << 20 }], { maxBytes: 8 << 20 }));
      const p = fetchPartitions(res)[0];
      if (p === undefined || p.errorCode !== 0) throw new Error(`fetch ${topic}[${partition}] at ${next} failed: error ${p?.errorCode}`);
      const records = p.records ?? Buffer.alloc(0);
      let progressed = false;
      for (const b of iterateBatches(records)) {
        const h = readBatchHeader(records, b.start);
        if (h.baseOffset < next) continue;
        out.push({ baseOffset: Number(h.baseOffset), lastOffset: Number(h.baseOffset) + h.lastOffsetDelta, codec: compressionOf(h.attributes), producerId: h.producerId, baseSequence: h.baseSequence });
        next = h.baseOffset + BigInt(h.lastOffsetDelta) + 1n;
        progressed = true;
      }
      if (!progressed || next >= p.highWatermark) return out;
    }
  } finally {
    client.close();
  }
}
