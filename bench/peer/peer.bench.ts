// Floe against Apache Kafka 4.x on the same machine, in the same run, driven with the same load: Kafka's own
// ProducerPerformance and ConsumerPerformance, and Floe's load client (bench/lib/load-client.ts), so that
// neither broker is measured only with its own tool. Both brokers run side by side with their defaults
// (Kafka: config/server.properties, one KRaft node; Floe: tables on, a local warehouse), and each figure is
// measured on one broker at a time, alternating which goes first, each produce run starting with the page
// cache written back (`sync`). Every figure is a Floe/Kafka ratio.
//
// Run from nothing: bash bench/peer/run.sh [--quick]   (installs Kafka's jars from Maven Central)
// Options: --runs=3 --mb=256 (MiB per produce run) --partitions=1,8,64 --batch=16k,1m --acks=1,all
//          --compression=none,lz4 --record-size=1024 --latency-seconds=20 --build=src|dist
//          --floe-flags="--iceberg.enabled.default=false ..." (extra Floe settings)
// --quick: 2 runs of 48 MiB, 1 and 8 partitions, 16 KiB batches, 8 s latency runs (under 5 minutes idle).
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, execSync } from 'node:child_process';
import { BenchArgs } from '../lib/args.js';
import { LoadClient } from '../lib/load-client.js';
import type { Build } from '../lib/processes.js';
import { formatSize, mbPerSec, median, MiB } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { PRODUCE_VERSION, produceWorkload, type LoadRequest } from '../lib/workload.js';
import { decodeResponse } from '../../protocol/index.js';
import { peakRssBytes } from '../lib/proc-stats.js';
import { consumerPerf, producerPerf, type ProducerPerfOptions } from './java-perf.js';
import { ratio, startPeers, stat, withTopic, type Name, type Peer, type Peers } from './peers.js';

interface ProduceResponse {
  responses: { partitionResponses: { errorCode: number }[] }[];
}

const args = new BenchArgs(
  process.argv.slice(2),
  'usage: peer.bench.ts [--quick] [--runs=n] [--mb=n] [--partitions=1,8,64] [--batch=16k,1m] [--acks=1,all] [--compression=none,lz4] [--record-size=1024] [--latency-seconds=n] [--build=src|dist] [--floe-flags="..."]',
);
const quick = args.flag('quick');
const runs = args.number('runs', quick ? 2 : 3);
const mb = args.number('mb', quick ? 48 : 256);
const partitionsList = args.numbers('partitions', quick ? [1, 8] : [1, 8, 64]);
const batchList = args.numbers('batch', quick ? [16 * 1024] : [16 * 1024, MiB]);
const acksList = args.string('acks', '1,all').split(',') as ('1' | 'all')[];
const compressionList = args.string('compression', 'none,lz4').split(',') as ProducerPerfOptions['compression'][];
const recordSize = args.number('record-size', 1024);
const latencySeconds = args.number('latency-seconds', quick ? 8 : 20);
const build = args.string('build', 'src') as Build;
const floeFlags = args.string('floe-flags', '').split(' ').filter((f) => f !== '');
const loadClientMs = quick ? 1000 : 3000;

interface Config {
  readonly partitions: number;
  readonly batch: number;
  readonly acks: '1' | 'all';
  readonly compression: ProducerPerfOptions['compression'];
}

/**
 * Writes the page cache back before a measured run, so that no run starts with the other broker's dirty
 * pages: once they pass the kernel's background threshold (10 % of memory), every log write slows down
 * (bench/RESULTS.md), and a run would measure the disk and whichever broker wrote before it.
 */
function writeBack(): void {
  execFileSync('sync');
}

const label = (c: Config) => `${c.partitions}p ${formatSize(c.batch)} acks=${c.acks} ${c.compression}`;

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'floe-peer-bench-'));
  let started: Peers | undefined;
  try {
    started = await startPeers(work, build, floeFlags);
    const { peers, order } = started;

    // 1. Produce throughput with ProducerPerformance, every configuration, `runs` times.
    const configs: Config[] = [];
    for (const partitions of partitionsList) for (const batch of batchList) for (const acks of acksList) for (const compression of compressionList) configs.push({ partitions, batch, acks, compression });
    const records = Math.max(1000, Math.floor((mb * MiB) / recordSize));
    const perf = new Map<string, Record<Name, { mbps: number[]; rps: number[] }>>();
    for (let run = 0; run < runs; run++) {
      for (const [k, c] of configs.entries()) {
        const cell = perf.get(label(c)) ?? { floe: { mbps: [], rps: [] }, kafka: { mbps: [], rps: [] } };
        perf.set(label(c), cell);
        for (const peer of order(run + k)) {
          writeBack();
          const r = await withTopic(peer, c.partitions, (topic) => producerPerf({ port: peer.port, topic, records, recordSize, throughput: -1, acks: c.acks, batchSize: c.batch, compression: c.compression }), (x) => x.records);
          peer.produced += records * recordSize;
          cell[peer.name].mbps.push(r.mbPerSec);
          cell[peer.name].rps.push(r.recordsPerSec);
        }
        progress(`produce ${label(c)}, run ${run + 1}/${runs}: Floe ${cell.floe.mbps.at(-1)} MB/s, Kafka ${cell.kafka.mbps.at(-1)} MB/s`);
      }
    }

    // 2. Produce throughput with Floe's load client (uncompressed batches of the same sizes, closed loop).
    const loadRows: Cell[][] = [];
    for (const partitions of partitionsList) {
      for (const batch of batchList) {
        for (const acks of acksList) {
          const samples: Record<Name, number[]> = { floe: [], kafka: [] };
          for (let run = 0; run < runs; run++) {
            for (const peer of order(run)) {
              writeBack();
              await withTopic(
                peer,
                partitions,
                async (topic) => {
                  const w = produceWorkload({ topic, partitions, batchBytes: batch, acks: acks === 'all' ? -1 : 1 });
                  const client = await LoadClient.connect(peer.port, 4);
                  try {
                    // Only what a response acknowledged counts: a partition answered with an error (a
                    // leader not elected yet on a new topic, say) takes its batch's records and bytes off.
                    let failedBatches = 0;
                    const r = await client.closedLoop(w.requests, {
                      window: 8,
                      durationMs: loadClientMs,
                      onResponse: (frame) => {
                        const { body } = decodeResponse(0, PRODUCE_VERSION, frame);
                        for (const t of (body as unknown as ProduceResponse).responses) for (const p of t.partitionResponses) if (p.errorCode !== 0) failedBatches++;
                      },
                    });
                    let bytes = 0;
                    let count = 0;
                    r.perRequest.forEach((n, i) => {
                      bytes += n * (w.requests[i] as LoadRequest).payloadBytes;
                      count += n * (w.requests[i] as LoadRequest).records;
                    });
                    bytes -= failedBatches * w.batchBytes;
                    count -= failedBatches * w.recordsPerBatch;
                    peer.produced += bytes;
                    samples[peer.name].push(mbPerSec(bytes, r.ns));
                    return count;
                  } finally {
                    await client.close();
                  }
                },
                (count) => count,
              );
            }
          }
          const f = stat(samples.floe);
          const kf = stat(samples.kafka);
          loadRows.push([partitions, formatSize(batch), acks, f.median, f.spread, kf.median, kf.spread, ratio(f.median, kf.median)]);
          const runsOf = (xs: readonly number[]) => xs.map((x) => x.toFixed(0)).join(', ');
          progress(`load client ${partitions}p ${formatSize(batch)} acks=${acks}: Floe ${f.median.toFixed(0)} MB/s (runs ${runsOf(samples.floe)}), Kafka ${kf.median.toFixed(0)} MB/s (runs ${runsOf(samples.kafka)})`);
        }
      }
    }

    // 3. Latency at fixed rates: 25 % and 50 % of the slower broker's records/s for the first uncompressed config.
    const latencyConfig = configs.find((c) => c.compression === 'none') ?? configs[0]!;
    const cell = perf.get(label(latencyConfig))!;
    const slower = Math.min(median(cell.floe.rps), median(cell.kafka.rps));
    const latencyRows: Cell[][] = [];
    for (const share of [0.25, 0.5]) {
      const rate = Math.max(100, Math.floor(slower * share));
      const n = Math.max(1000, Math.floor(rate * latencySeconds));
      const got: Partial<Record<Name, Awaited<ReturnType<typeof producerPerf>>>> = {};
      for (const peer of order(share === 0.25 ? 0 : 1)) {
        writeBack();
        got[peer.name] = await withTopic(peer, latencyConfig.partitions, (topic) => producerPerf({ port: peer.port, topic, records: n, recordSize, throughput: rate, acks: latencyConfig.acks, batchSize: latencyConfig.batch, compression: 'none', warmupRecords: Math.floor(n / 3) }), (x) => x.records);
        peer.produced += n * recordSize;
      }
      const f = got.floe!;
      const kf = got.kafka!;
      latencyRows.push([`${share * 100} %, whole run`, rate, f.p50Ms, f.p99Ms, f.p999Ms, kf.p50Ms, kf.p99Ms, kf.p999Ms, ratio(f.p99Ms, kf.p99Ms)]);
      const fs = f.steady!;
      const ks = kf.steady!;
      latencyRows.push([`${share * 100} %, after warm-up`, rate, fs.p50Ms, fs.p99Ms, fs.p999Ms, ks.p50Ms, ks.p99Ms, ks.p999Ms, ratio(fs.p99Ms, ks.p99Ms)]);
      progress(`latency at ${rate} records/s: Floe p99 ${f.p99Ms} ms (${fs.p99Ms} after warm-up), Kafka p99 ${kf.p99Ms} ms (${ks.p99Ms} after warm-up)`);
    }

    // 4. Consumers from the hot log: one, then four reading at once (each in its own group, the whole topic).
    const consumeRecords = records;
    const consumed: Record<Name, { one: number[]; four: number[] }> = { floe: { one: [], four: [] }, kafka: { one: [], four: [] } };
    const consumeTopics = new Map<Name, string>();
    for (const peer of peers) {
      const topic = await withTopic(peer, 8, async (t) => {
        await producerPerf({ port: peer.port, topic: t, records: consumeRecords, recordSize, throughput: -1, acks: '1', batchSize: 16 * 1024, compression: 'none' });
        return t;
      }, () => consumeRecords, true);
      peer.produced += consumeRecords * recordSize;
      consumeTopics.set(peer.name, topic);
    }
    for (let run = 0; run < runs; run++) {
      for (const peer of order(run)) {
        const topic = consumeTopics.get(peer.name)!;
        const one = await consumerPerf(peer.port, topic, consumeRecords, `one-${run}`);
        consumed[peer.name].one.push(one.fetchMbPerSec);
        const four = await Promise.all([0, 1, 2, 3].map((i) => consumerPerf(peer.port, topic, consumeRecords, `four-${run}-${i}`)));
        // Aggregate: every consumer's bytes over the longest fetch time among them.
        const longest = Math.max(...four.map((r) => r.fetchMs));
        consumed[peer.name].four.push(four.reduce((a, r) => a + r.mb, 0) / (longest / 1000));
      }
      progress(`consume, run ${run + 1}/${runs}: one consumer Floe ${consumed.floe.one.at(-1)?.toFixed(0)} MB/s, Kafka ${consumed.kafka.one.at(-1)?.toFixed(0)} MB/s`);
    }

    // Report.
    const load = loadavg();
    let commit = 'unknown';
    try {
      commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    } catch {
      // not a checkout
    }
    const produceHeaders = ['config', 'Floe MB/s', 'spread', 'Kafka MB/s', 'spread', 'Floe/Kafka MB/s', 'Floe rec/s', 'Kafka rec/s'];
    const produceRows: Cell[][] = configs.map((c) => {
      const p = perf.get(label(c))!;
      const f = stat(p.floe.mbps);
      const kf = stat(p.kafka.mbps);
      return [label(c), f.median, f.spread, kf.median, kf.spread, ratio(f.median, kf.median), Math.round(median(p.floe.rps)), Math.round(median(p.kafka.rps))];
    });
    const loadHeaders = ['partitions', 'batch', 'acks', 'Floe MB/s', 'spread', 'Kafka MB/s', 'spread', 'Floe/Kafka'];
    const latencyHeaders = ['rate (of slower max)', 'records/s', 'Floe p50 ms', 'Floe p99', 'Floe p99.9', 'Kafka p50 ms', 'Kafka p99', 'Kafka p99.9', 'Floe/Kafka p99'];
    const consumerHeaders = ['consumers', 'Floe MB/s', 'spread', 'Kafka MB/s', 'spread', 'Floe/Kafka'];
    const consumerRows: Cell[][] = (['one', 'four'] as const).map((k) => {
      const f = stat(consumed.floe[k]);
      const kf = stat(consumed.kafka[k]);
      return [k === 'one' ? 1 : 4, f.median, f.spread, kf.median, kf.spread, ratio(f.median, kf.median)];
    });
    const gb = (p: Peer) => p.produced / 1024 ** 3;
    const [pf, pk] = [peers[0]!, peers[1]!];
    const costHeaders = ['broker', 'CPU s per GB produced', 'peak RSS MB'];
    const rssF = peakRssBytes(pf.pid) / MiB;
    const rssK = peakRssBytes(pk.pid) / MiB;
    const costRows: Cell[][] = [
      ['Floe', pf.cpu / gb(pf), rssF],
      ['Kafka', pk.cpu / gb(pk), rssK],
      ['Floe/Kafka', ratio(pf.cpu / gb(pf), pk.cpu / gb(pk)), ratio(rssF, rssK)],
    ];
    const setup = `commit ${commit}, ${cpus().length} cores, load average at the end ${load.map((l) => l.toFixed(2)).join(' ')}; ${runs} runs per figure (median; spread = half the range, as a share of the median); ${mb} MiB of ${recordSize}-byte records per produce run; Floe ${build} with ${floeFlags.length > 0 ? floeFlags.join(' ') : 'its defaults (tables on)'}; Apache Kafka 4.4.0 (KRaft, config/server.properties)`;
    const sections: [string, string[], Cell[][]][] = [
      ['Produce throughput, ProducerPerformance (linger.ms=5)', produceHeaders, produceRows],
      [`Produce throughput, Floe's load client (4 connections x 8 in flight, ${loadClientMs} ms, uncompressed)`, loadHeaders, loadRows],
      [
        `Produce latency at fixed rates, ProducerPerformance, ${label(latencyConfig)} (whole ms, as the tool reports; "after warm-up": the last two thirds of the run's records, --warmup-records, without the fresh client JVM's start-up)`,
        latencyHeaders,
        latencyRows,
      ],
      ['Consumers from the hot log, ConsumerPerformance (fetch MB/s, 8 partitions)', consumerHeaders, consumerRows],
      ['Cost (CPU of the broker process during produce runs)', costHeaders, costRows],
    ];
    console.log(`\nFloe vs Apache Kafka: ${setup}\n`);
    for (const [title, h, r] of sections) console.log(`${title}\n\n${formatTable(h, r)}\n`);
    console.log('Markdown:\n');
    console.log(`${setup}\n`);
    for (const [title, h, r] of sections) console.log(`**${title}**\n\n${formatMarkdownTable(h, r)}\n`);
  } finally {
    await started?.stop();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
