/**
 * The few admin calls a benchmark needs (create a topic, read log end offsets), over a LoadClient
 * connection with our protocol encoder, so results can be checked against what the broker stored.
 */
import { decodeResponse, encodeRequest } from '../../protocol/index.js';
import { CLIENT_ID } from './workload.js';
import type { LoadClient } from './load-client.js';

let correlation = 1_000_000;

interface CreateTopicsResponse {
  topics: { name: string; errorCode: number; errorMessage: string | null }[];
}

interface ListOffsetsResponse {
  topics: { name: string; partitions: { partitionIndex: number; errorCode: number; offset: bigint }[] }[];
}

/** Creates `topic` with `partitions` partitions and the given topic configs; throws on any error. */
export async function createTopic(client: LoadClient, topic: string, partitions: number, configs: Record<string, string> = {}): Promise<void> {
  const correlationId = correlation++;
  const frame = encodeRequest(
    { apiKey: 19, apiVersion: 7, correlationId, clientId: CLIENT_ID },
    {
      topics: [{ name: topic, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: Object.entries(configs).map(([name, value]) => ({ name, value })) }],
      timeoutMs: 30_000,
      validateOnly: false,
    },
  );
  const { body } = decodeResponse(19, 7, await client.request(frame, correlationId));
  const t = (body as unknown as CreateTopicsResponse).topics[0];
  if (t === undefined || t.errorCode !== 0) throw new Error(`CreateTopics ${topic} failed: ${t?.errorCode} ${t?.errorMessage ?? ''}`);
}

/** Log end offset of each partition of `topic` (ListOffsets v7, timestamp -1 = latest). */
export async function logEndOffsets(client: LoadClient, topic: string, partitions: number): Promise<bigint[]> {
  const correlationId = correlation++;
  const frame = encodeRequest(
    { apiKey: 2, apiVersion: 7, correlationId, clientId: CLIENT_ID },
    {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: topic, partitions: Array.from({ length: partitions }, (_, p) => ({ partitionIndex: p, currentLeaderEpoch: -1, timestamp: -1n })) }],
    },
  );
  const { body } = decodeResponse(2, 7, await client.request(frame, correlationId));
  const out = new Array<bigint>(partitions).fill(-1n);
  for (const t of (body as unknown as ListOffsetsResponse).topics) {
    for (const p of t.partitions) {
      if (p.errorCode !== 0) throw new Error(`ListOffsets ${topic}-${p.partitionIndex} failed with error ${p.errorCode}`);
      out[p.partitionIndex] = p.offset;
    }
  }
  return out;
}

interface DeleteTopicsResponse {
  responses: { name: string | null; errorCode: number }[];
}

/** Deletes `topic` (DeleteTopics v4), so a long benchmark does not fill the disk. */
export async function deleteTopic(client: LoadClient, topic: string): Promise<void> {
  const correlationId = correlation++;
  const frame = encodeRequest({ apiKey: 20, apiVersion: 4, correlationId, clientId: CLIENT_ID }, { topicNames: [topic], timeoutMs: 30_000 });
  const { body } = decodeResponse(20, 4, await client.request(frame, correlationId));
  const r = (body as unknown as DeleteTopicsResponse).responses[0];
  if (r === undefined || r.errorCode !== 0) throw new Error(`DeleteTopics ${topic} failed with error ${r?.errorCode}`);
}

/** The admin port's Prometheus text at `url` (one scrape: counters that reset on a scrape reset now). */
export async function scrapeMetrics(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

/** A metric's value in a scrape's `text`, summed over the series whose labels contain `labels`, when given. */
export function metricSumIn(text: string, name: string, labels?: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!(line.startsWith(`${name}{`) || line.startsWith(`${name} `))) continue;
    if (labels !== undefined && !line.slice(0, line.lastIndexOf(' ')).includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/**
 * A metric's value summed over its series (those whose labels contain `labels`, e.g. `topic="t"`, when
 * given), from the admin port's Prometheus text at `url`.
 */
export async function metricSum(url: string, name: string, labels?: string): Promise<number> {
  return metricSumIn(await scrapeMetrics(url), name, labels);
}

/**
 * A histogram's cumulative bucket counts in a scrape's `text` (upper bound in the metric's unit, `+Inf` as
 * Infinity, ascending), summed over the series whose labels contain `labels` (e.g. `api="Produce"`).
 */
export function histogramBucketsIn(text: string, name: string, labels: string): [number, number][] {
  const counts = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`)) continue;
    const series = line.slice(0, line.lastIndexOf(' '));
    if (!series.includes(labels)) continue;
    const le = /le="([^"]+)"/.exec(series)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    counts.set(bound, (counts.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return [...counts].sort((a, b) => a[0] - b[0]);
}
