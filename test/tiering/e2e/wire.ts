/**
 * What the e2e fidelity tests ask the broker directly, through our own protocol layer (no client library in
 * between): ListOffsets with the special timestamps real clients do not send (-4 earliest local, -5 latest
 * tiered), DeleteRecords, and a Fetch loop that returns every stored batch as raw bytes after decoding it with
 * `decodeRecordBatch` (which verifies the CRC32C), so a test can compare batches byte for byte.
 */
import { WireClient, fetchBody, fetchPartitions } from '../../broker/handlers/wire-client.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { decodeRecordBatch, type RecordBatch } from '../../../protocol/record-batch/record-batch.js';

/** Kafka's special ListOffsets timestamps. */
export const LATEST = -1n;
export const EARLIEST = -2n;
export const EARLIEST_LOCAL = -4n;
export const LATEST_TIERED = -5n;

const LIST_OFFSETS_VERSION = 9; // -4 needs v8+, -5 v9+
const FETCH_VERSION = 12; // topic names (v13+ uses ids)
const DELETE_RECORDS_VERSION = 2;

interface ListOffsetsPartition {
  partitionIndex: number;
  errorCode: number;
  offset: bigint;
}

/** One ListOffsets answer (isolation level 1: read_committed): the offset, or throws with the error code. */
export async function listOffset(port: number, topic: string, partition: number, timestamp: bigint, isolationLevel = 0): Promise<number> {
  const client = await WireClient.connect(port);
  try {
    const res = await client.request(2, LIST_OFFSETS_VERSION, {
      replicaId: -1,
      isolationLevel,
      topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp }] }],
    });
    const p = (res.topics as { partitions: ListOffsetsPartition[] }[])[0]?.partitions[0];
    if (p === undefined || p.errorCode !== 0) throw new Error(`ListOffsets ${topic}[${partition}] at ${timestamp}: error ${p?.errorCode}`);
    return Number(p.offset);
  } finally {
    client.close();
  }
}

/** DeleteRecords before `offset`; resolves with the broker's low watermark and error code. */
export async function deleteRecords(port: number, topic: string, partition: number, offset: number): Promise<{ errorCode: number; lowWatermark: number }> {
  const client = await WireClient.connect(port);
  try {
    const res = await client.request(21, DELETE_RECORDS_VERSION, { topics: [{ name: topic, partitions: [{ partitionIndex: partition, offset: BigInt(offset) }] }], timeoutMs: 15_000 });
    const p = (res.topics as { partitions: { errorCode: number; lowWatermark: bigint }[] }[])[0]?.partitions[0];
    if (p === undefined) throw new Error(`DeleteRecords ${topic}[${partition}] got no partition in its answer`);
    return { errorCode: p.errorCode, lowWatermark: Number(p.lowWatermark) };
  } finally {
    client.close();
  }
}

/** One Fetch of one partition: the error code, the log start offset the broker reports and the raw records. */
export async function fetchOnce(port: number, topic: string, partition: number, offset: number, maxBytes = 1 << 20): Promise<{ errorCode: number; logStartOffset: number; highWatermark: number; records: Buffer }> {
  const client = await WireClient.connect(port);
  try {
    const res = await client.request(1, FETCH_VERSION, fetchBody(topic, [{ partition, fetchOffset: BigInt(offset), partitionMaxBytes: maxBytes }], { maxBytes }));
    const p = fetchPartitions(res)[0];
    if (p === undefined) throw new Error(`Fetch ${topic}[${partition}] got no partition in its answer`);
    return { errorCode: p.errorCode, logStartOffset: Number(p.logStartOffset), highWatermark: Number(p.highWatermark), records: p.records ?? Buffer.alloc(0) };
  } finally {
    client.close();
  }
}

/** A batch as the broker served it: its exact bytes and its decoding (CRC verified). */
export interface ServedBatch {
  readonly bytes: Buffer;
  readonly batch: RecordBatch;
}

/**
 * Every batch of a partition from `from` to the high watermark, fetched in small steps (`maxBytes` per Fetch,
 * so the broker's byte limit and batch boundaries are exercised), each decoded with its CRC checked.
 */
export async function fetchAllBatches(port: number, topic: string, partition: number, from: number, maxBytes = 16 * 1024): Promise<ServedBatch[]> {
  const out: ServedBatch[] = [];
  let next = from;
  for (;;) {
    const r = await fetchOnce(port, topic, partition, next, maxBytes);
    if (r.errorCode !== 0) throw new Error(`Fetch ${topic}[${partition}] at ${next}: error ${r.errorCode}`);
    let progressed = false;
    for (const b of iterateBatches(r.records)) {
      const bytes = Buffer.from(r.records.subarray(b.start, b.end));
      const batch = decodeRecordBatch(bytes);
      const last = Number(batch.baseOffset) + batch.lastOffsetDelta;
      if (last < next) continue;
      out.push({ bytes, batch });
      next = last + 1;
      progressed = true;
    }
    if (next >= r.highWatermark) return out;
    if (!progressed) throw new Error(`Fetch ${topic}[${partition}] at ${next} returned no batch below the high watermark ${r.highWatermark}`);
  }
}
