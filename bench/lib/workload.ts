/**
 * Pre-encoded Kafka requests for load generation, built with OUR protocol encoder and record batch encoder,
 * so the bytes on the wire are what a real producer sends (Produce v9, record batch v2, uncompressed).
 */
import { encodeRequest } from '../../protocol/index.js';
import { encodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import type { RecordInput } from '../../protocol/record-batch/records.js';
import { MiB } from './stats.js';

export const PRODUCE_VERSION = 9;
export const FETCH_VERSION = 12;
export const CLIENT_ID = 'floe-bench';

/** One pre-encoded request and what it carries. */
export interface LoadRequest {
  /** The whole frame with its size prefix; its correlation id is unique within the pool. */
  readonly frame: Buffer;
  readonly correlationId: number;
  /** Record batch bytes carried (the figure reported as produce throughput). */
  readonly payloadBytes: number;
  readonly records: number;
  /** The record batches carried, with their partitions (the same bytes as in the frame). */
  readonly batches: readonly { readonly partition: number; readonly batch: Buffer }[];
}

/**
 * A record batch of at most `targetBytes` (header included) holding records with a 16-byte key and a
 * `valueBytes` value, filled as far as whole records allow. Values differ per record and per `seed`.
 */
export function makeBatch(targetBytes: number, valueBytes: number, seed = 0): { batch: Buffer; records: number } {
  const encode = (count: number): Buffer => {
    const records: RecordInput[] = [];
    for (let i = 0; i < count; i++) {
      const key = Buffer.alloc(16);
      key.writeUInt32BE(seed, 0);
      key.writeUInt32BE(i, 4);
      const value = Buffer.alloc(valueBytes, 0x61 + ((seed + i) % 26));
      value.writeUInt32BE(i, 0);
      records.push({ key, value, headers: [], timestampDelta: i % 1000, offsetDelta: i });
    }
    return encodeRecordBatch({ baseTimestamp: now, records });
  };
  const now = BigInt(Date.now());
  // Size one record from a small batch, then step down one record at a time if varint widths push it over.
  const probe = encode(8);
  const perRecord = (probe.length - 61) / 8;
  let count = Math.max(1, Math.floor((targetBytes - 61) / perRecord));
  for (;;) {
    const batch = encode(count);
    if (batch.length <= targetBytes || count === 1) return { batch, records: count };
    count--;
  }
}

export interface ProduceWorkloadOptions {
  readonly topic: string;
  readonly partitions: number;
  readonly batchBytes: number;
  readonly acks: -1 | 1;
  readonly valueBytes?: number;
  /**
   * Batches (for distinct partitions) per request. Default: as many as fit in 1 MiB, at most one per
   * partition — what a Kafka producer with batch.size = batchBytes and max.request.size = 1 MiB sends.
   */
  readonly batchesPerRequest?: number;
  /** Requests in the pool (rounded up so every partition gets the same share). Default: at least 16. */
  readonly poolSize?: number;
}

export interface ProduceWorkload {
  readonly requests: readonly LoadRequest[];
  readonly batchesPerRequest: number;
  readonly recordsPerBatch: number;
  readonly batchBytes: number;
}

/** Builds a pool of Produce requests cycling over the partitions; pass it to LoadClient. */
export function produceWorkload(o: ProduceWorkloadOptions): ProduceWorkload {
  const valueBytes = o.valueBytes ?? 512;
  const perRequest = Math.max(1, Math.min(o.partitions, o.batchesPerRequest ?? Math.floor(MiB / o.batchBytes)));
  // Requests walk the partitions round robin; after `cycle` requests every partition had the same share.
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const cycle = o.partitions / gcd(o.partitions, perRequest);
  const poolSize = cycle * Math.max(1, Math.ceil((o.poolSize ?? 16) / cycle));
  const batches = [0, 1, 2, 3].map((seed) => makeBatch(o.batchBytes, valueBytes, seed));
  const requests: LoadRequest[] = [];
  let nextPartition = 0;
  for (let i = 0; i < poolSize; i++) {
    const partitionData: { index: number; records: Buffer }[] = [];
    let payloadBytes = 0;
    let records = 0;
    for (let j = 0; j < perRequest; j++) {
      const b = batches[(i + j) % batches.length]!;
      partitionData.push({ index: nextPartition, records: b.batch });
      nextPartition = (nextPartition + 1) % o.partitions;
      payloadBytes += b.batch.length;
      records += b.records;
    }
    const correlationId = i + 1;
    const frame = encodeRequest(
      { apiKey: 0, apiVersion: PRODUCE_VERSION, correlationId, clientId: CLIENT_ID },
      { transactionalId: null, acks: o.acks, timeoutMs: 30_000, topicData: [{ name: o.topic, partitionData }] },
    );
    requests.push({ frame, correlationId, payloadBytes, records, batches: partitionData.map((p) => ({ partition: p.index, batch: p.records })) });
  }
  const first = batches[0]!;
  return { requests, batchesPerRequest: perRequest, recordsPerBatch: first.records, batchBytes: first.batch.length };
}

/** A Fetch v12 request for the given partitions and offsets (read_uncommitted, no wait). */
export function fetchRequest(
  correlationId: number,
  topic: string,
  partitions: readonly { partition: number; offset: bigint }[],
  partitionMaxBytes: number,
  maxBytes = 0x7fffffff,
): Buffer {
  return encodeRequest(
    { apiKey: 1, apiVersion: FETCH_VERSION, correlationId, clientId: CLIENT_ID },
    {
      clusterId: null,
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic,
          partitions: partitions.map((p) => ({ partition: p.partition, currentLeaderEpoch: -1, fetchOffset: p.offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes })),
        },
      ],
      forgottenTopicsData: [],
      rackId: '',
    },
  );
}
