// Test helper: a minimal Kafka client speaking our protocol layer over a socket, for requests that real
// clients would never send (corrupt CRCs, control batches, stale sequences) and for exact field checks.
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { decodeResponse, encodeRequest } from '../../../protocol/index.js';
import assert from 'node:assert/strict';
import { decodeRecordBatch, encodeRecordBatch, type EncodeRecordBatchInput } from '../../../protocol/record-batch/record-batch.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';

export type Body = Record<string, unknown>;

export class WireClient {
  private buf = Buffer.alloc(0);
  private correlation = 0;
  private readonly pending = new Map<number, { apiKey: number; version: number; resolve: (b: Body) => void; reject: (e: Error) => void }>();
  readonly closed: Promise<void>;

  private constructor(
    private readonly sock: Socket,
    private readonly clientId: string,
  ) {
    sock.on('data', (c: Buffer) => this.onData(c));
    // A reset (the broker was killed) is reported through `closed` and the rejected pending requests.
    sock.on('error', () => undefined);
    this.closed = new Promise((res) => sock.once('close', () => res()));
    void this.closed.then(() => {
      for (const p of this.pending.values()) p.reject(new Error('connection closed'));
      this.pending.clear();
    });
  }

  /** Connects to 127.0.0.1:port; requests carry `clientId` in their header. */
  static async connect(port: number, clientId = 'wire-test'): Promise<WireClient> {
    const sock = connect(port, '127.0.0.1');
    await once(sock, 'connect');
    return new WireClient(sock, clientId);
  }

  /** Sends a request and resolves with the decoded response body. */
  request(apiKey: number, version: number, body: Body): Promise<Body> {
    const correlationId = ++this.correlation;
    const frame = encodeRequest({ apiKey, apiVersion: version, correlationId, clientId: this.clientId }, body);
    return new Promise<Body>((resolve, reject) => {
      this.pending.set(correlationId, { apiKey, version, resolve, reject });
      this.sock.write(frame);
    });
  }

  /** Sends a request that gets no response (Produce acks=0). */
  send(apiKey: number, version: number, body: Body): void {
    const correlationId = ++this.correlation;
    this.sock.write(encodeRequest({ apiKey, apiVersion: version, correlationId, clientId: this.clientId }, body));
  }

  close(): void {
    this.sock.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    while (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readInt32BE(0)) {
      const n = this.buf.readInt32BE(0);
      const frame = this.buf.subarray(4, 4 + n);
      this.buf = this.buf.subarray(4 + n);
      const correlationId = frame.readInt32BE(0);
      const p = this.pending.get(correlationId);
      if (p === undefined) continue;
      this.pending.delete(correlationId);
      p.resolve(decodeResponse(p.apiKey, p.version, Buffer.from(frame)).body as Body);
    }
  }
}

/** A batch of string records with keys k<i>, timestamps base + i. */
export function batchOf(values: string[], extra: Partial<EncodeRecordBatchInput> = {}): Buffer {
  return encodeRecordBatch({
    baseTimestamp: 1_700_000_000_000n,
    records: values.map((v, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(v), timestampDelta: i })),
    ...extra,
  });
}

export function produceBody(topic: string, partition: number, records: Buffer | null, acks = -1): Body {
  return { transactionalId: null, acks, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] };
}

export interface PartitionProduceResponse {
  index: number;
  errorCode: number;
  baseOffset: bigint;
  logAppendTimeMs: bigint;
  logStartOffset: bigint;
  errorMessage: string | null;
}

export function firstPartition(res: Body): PartitionProduceResponse {
  const topics = res.responses as { partitionResponses: PartitionProduceResponse[] }[];
  const p = topics[0]?.partitionResponses[0];
  if (p === undefined) throw new Error(`no partition in ${JSON.stringify(res, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
  return p;
}

export function fetchBody(topic: string, partitions: { partition: number; fetchOffset: bigint; partitionMaxBytes?: number }[], opts: { maxWaitMs?: number; minBytes?: number; maxBytes?: number; isolationLevel?: number; sessionId?: number; sessionEpoch?: number } = {}): Body {
  return {
    replicaId: -1,
    maxWaitMs: opts.maxWaitMs ?? 0,
    minBytes: opts.minBytes ?? 0,
    maxBytes: opts.maxBytes ?? 0x7fffffff,
    isolationLevel: opts.isolationLevel ?? 0,
    sessionId: opts.sessionId ?? 0,
    sessionEpoch: opts.sessionEpoch ?? -1,
    topics: [
      {
        topic,
        partitions: partitions.map((p) => ({
          partition: p.partition,
          currentLeaderEpoch: -1,
          fetchOffset: p.fetchOffset,
          lastFetchedEpoch: -1,
          logStartOffset: -1n,
          partitionMaxBytes: p.partitionMaxBytes ?? 1 << 20,
        })),
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  };
}

export interface FetchPartition {
  partitionIndex: number;
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  abortedTransactions: unknown[] | null;
  records: Buffer | null;
}

export function fetchPartitions(res: Body): FetchPartition[] {
  return (res.responses as { partitions: FetchPartition[] }[]).flatMap((t) => t.partitions);
}

/** Every record of a partition as [offset, value], read with Fetch from the log start to the end. */
export async function readAll(client: WireClient, topic: string, partition: number): Promise<[number, string][]> {
  const out: [number, string][] = [];
  for (let offset = 0n; ; ) {
    const [p] = fetchPartitions(await client.request(1, 11, fetchBody(topic, [{ partition, fetchOffset: offset, partitionMaxBytes: 1 << 20 }])));
    assert.equal(p?.errorCode, 0);
    const records = p?.records ?? Buffer.alloc(0);
    if (records.length === 0) return out;
    for (const b of iterateBatches(records)) {
      const batch = decodeRecordBatch(records, b.start);
      for (const r of batch.records) out.push([Number(batch.baseOffset) + r.offsetDelta, r.value?.toString() ?? '']);
      offset = b.lastOffset + 1n;
    }
  }
}
