/**
 * The two brokers of a peer benchmark, side by side on this machine: Apache Kafka 4.4 (one KRaft node with
 * config/server.properties) and Floe (tables on, a local warehouse), each with an admin connection, the CPU
 * it spent on measured runs and the bytes produced to it. Figures are medians over alternating runs, and
 * every topic's log is checked against what the load tool says was acknowledged.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createTopic, deleteTopic, logEndOffsets } from '../lib/admin.js';
import { LoadClient } from '../lib/load-client.js';
import { spawnFloe, type Build, type ChildServer } from '../lib/processes.js';
import { cpuSeconds } from '../lib/proc-stats.js';
import { median } from '../lib/stats.js';
import { progress } from '../lib/table.js';
import { startKafka, type KafkaPeer } from './kafka-broker.js';

export type Name = 'floe' | 'kafka';

export interface Peer {
  readonly name: Name;
  readonly port: number;
  readonly pid: number;
  admin: LoadClient;
  /** CPU seconds the broker spent inside withTopic runs. */
  cpu: number;
  /** Bytes produced to it (the benchmark adds them). */
  produced: number;
}

export interface Peers {
  /** Floe first, then Kafka. */
  readonly peers: readonly [Peer, Peer];
  /** Both, with the first one alternating with k (so neither always runs on a fresh or a warm machine). */
  order(k: number): Peer[];
  stop(): Promise<void>;
}

/** Starts Kafka in `work`/kafka and Floe in `work`/floe. */
export async function startPeers(work: string, build: Build, floeFlags: readonly string[]): Promise<Peers> {
  let kafka: KafkaPeer | undefined;
  let floe: ChildServer | undefined;
  const admins: LoadClient[] = [];
  const stop = async (): Promise<void> => {
    await Promise.allSettled(admins.map((a) => a.close()));
    await Promise.allSettled([kafka?.stop(), floe?.stop()]);
  };
  try {
    await mkdir(join(work, 'kafka'), { recursive: true });
    progress(`starting Apache Kafka (KRaft, one node) in ${work}/kafka`);
    kafka = await startKafka(join(work, 'kafka'));
    progress(`starting Floe (${build}) in ${work}/floe`);
    floe = await spawnFloe({
      dataDir: join(work, 'floe', 'log'),
      build,
      flags: [`--iceberg.warehouse=${join(work, 'floe', 'warehouse')}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--schema.registry.port=0', '--schema.registry.host=127.0.0.1', ...floeFlags],
    });
    const floeAdmin = await LoadClient.connect(floe.port, 1);
    admins.push(floeAdmin);
    const kafkaAdmin = await LoadClient.connect(kafka.port, 1);
    admins.push(kafkaAdmin);
    const peers: [Peer, Peer] = [
      { name: 'floe', port: floe.port, pid: floe.child.pid!, admin: floeAdmin, cpu: 0, produced: 0 },
      { name: 'kafka', port: kafka.port, pid: kafka.pid, admin: kafkaAdmin, cpu: 0, produced: 0 },
    ];
    return { peers, order: (k) => (k % 2 === 0 ? [...peers] : [...peers].reverse()), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

let topicSeq = 0;

/**
 * Creates a topic, runs the load on it (counting the broker's CPU), then reads the total of its log end
 * offsets: `stored` counts every offset, transaction markers included. The topic is deleted unless `keep`.
 */
export async function withTopicStored<T>(peer: Peer, partitions: number, run: (topic: string) => Promise<T>, keep = false): Promise<{ result: T; stored: number; topic: string }> {
  const topic = `peer-${peer.name}-${topicSeq++}`;
  await createTopic(peer.admin, topic, partitions);
  const before = cpuSeconds(peer.pid);
  const result = await run(topic);
  peer.cpu += cpuSeconds(peer.pid) - before;
  const ends = await logEndOffsets(peer.admin, topic, partitions);
  const stored = ends.reduce((a, b) => a + Number(b), 0);
  if (!keep) await deleteTopic(peer.admin, topic);
  return { result, stored, topic };
}

/** withTopicStored, checking that the log holds exactly the `expected(result)` acknowledged records. */
export async function withTopic<T>(peer: Peer, partitions: number, run: (topic: string) => Promise<T>, expected: (r: T) => number, keep = false): Promise<T> {
  const { result, stored, topic } = await withTopicStored(peer, partitions, run, keep);
  if (stored !== expected(result)) throw new Error(`${peer.name} ${topic}: ${expected(result)} records acknowledged, ${stored} in the log`);
  return result;
}

/** Median and spread ((max - min) / median, halved) of samples. */
export function stat(xs: readonly number[]): { median: number; spread: string } {
  const m = median(xs);
  return { median: m, spread: xs.length < 2 || m === 0 ? '-' : `±${((50 * (Math.max(...xs) - Math.min(...xs))) / m).toFixed(0)}%` };
}

export const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}x` : '-');
