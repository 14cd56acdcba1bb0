// Produce latency at a fixed moderate rate, open loop: requests leave on a schedule whatever the responses
// do, and each is timed from its SCHEDULED send time to its response (no coordinated omission). The rate is
// a fraction (default half) of Floe's closed-loop maximum for the same requests, measured first in the
// same run. The hand-written ingest server (socket -> frame -> CRC -> append) gets the same schedule.
// Run:   npx tsx bench/broker/produce-latency.bench.ts [--quick] [--build=src|dist] [--profile]
// Options: --partitions=8 --batch=16k --batches-per-request=1 --acks=1,-1 --load=0.5 --connections=4
//          --window=8 (for the maximum) --duration=10000 --rate-mbps=N (fixed rate instead of a fraction)
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchArgs } from '../lib/args.js';
import { createTopic, logEndOffsets } from '../lib/admin.js';
import { printProfiles } from '../lib/cpu-profile.js';
import { LoadClient, type OpenLoopResult } from '../lib/load-client.js';
import { spawnBaseline, spawnFloe, type Build, type ChildServer } from '../lib/processes.js';
import { formatSize, median, perSec, summarizeLatencies, type LatencySummary } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { produceWorkload, type ProduceWorkload } from '../lib/workload.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: produce-latency.bench.ts [--quick] [--build=src|dist] [--profile] [--partitions=8] [--batch=16k] [--batches-per-request=1] [--acks=1,-1] [--load=0.5] [--rate-mbps=N] [--connections=4] [--window=8] [--duration=ms]');
const quick = args.flag('quick');
const build = args.string('build', 'src') as Build;
const partitions = args.number('partitions', 8);
const batchBytes = args.numbers('batch', [16 * 1024])[0] ?? 16 * 1024;
const batchesPerRequest = args.number('batches-per-request', 1);
const acksList = args.numbers('acks', [1, -1]) as (1 | -1)[];
const load = args.number('load', 0.5);
const fixedRateMbps = args.number('rate-mbps', 0);
const connections = args.number('connections', 4);
const window = args.number('window', 8);
const durationMs = args.number('duration', quick ? 3000 : 10000);
const profile = args.flag('profile');

function bytesPerRequest(w: ProduceWorkload): number {
  return w.requests.reduce((a, r) => a + r.payloadBytes, 0) / w.requests.length;
}

function recordsOf(w: ProduceWorkload, perRequest: Uint32Array): number {
  let n = 0;
  perRequest.forEach((c, i) => (n += c * (w.requests[i]?.records ?? 0)));
  return n;
}

interface Row {
  acks: number;
  maxMbps: number;
  rateMbps: number;
  ratePerSec: number;
  floe: LatencySummary;
  floeService: LatencySummary;
  ingest: LatencySummary;
  maxSendLagMs: number;
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'floe-latency-bench-'));
  const servers: ChildServer[] = [];
  const clients: LoadClient[] = [];
  const rows: Row[] = [];
  try {
    await Promise.all(['floe', 'ingest'].map((d) => mkdir(join(work, d))));
    progress(`starting Floe (${build}) and the ingest baseline in ${work}`);
    const floe = await spawnFloe({
      dataDir: join(work, 'floe'),
      build,
      flags: ['--message.max.bytes=8388608', '--auto.create.topics.enable=false'],
      ...(profile ? { cpuProfDir: join(work, 'profile') } : {}),
    });
    servers.push(floe);
    const ingest = await spawnBaseline('ingest', join(work, 'ingest'));
    servers.push(ingest);
    const admin = await LoadClient.connect(floe.port, 1);
    clients.push(admin);

    for (const acks of acksList) {
      const acksLabel = acks === -1 ? 'all' : '1';
      const topic = `latency-a${acksLabel}`;
      await createTopic(admin, topic, partitions);
      const w = produceWorkload({ topic, partitions, batchBytes, acks, batchesPerRequest });
      const reqBytes = bytesPerRequest(w);
      const cFloe = await LoadClient.connect(floe.port, connections);
      const cIngest = await LoadClient.connect(ingest.port, connections);
      clients.push(cFloe, cIngest);
      let acknowledged = 0;

      // 1. Floe's maximum for these requests (closed loop), median of 3 after a warm-up.
      const maxima: number[] = [];
      for (let run = 0; run < 4; run++) {
        const r = await cFloe.closedLoop(w.requests, { window, durationMs: quick ? 700 : 1500 });
        acknowledged += recordsOf(w, r.perRequest);
        if (run > 0) maxima.push(perSec(r.completed, r.ns));
      }
      const maxPerSec = median(maxima);
      const ratePerSec = fixedRateMbps > 0 ? (fixedRateMbps * 1e6) / reqBytes : maxPerSec * load;
      const mbps = (perSec: number) => (perSec * reqBytes) / 1e6;
      progress(`acks=${acksLabel}: Floe max ${mbps(maxPerSec).toFixed(0)} MB/s (${maxPerSec.toFixed(0)} requests/s); open loop at ${mbps(ratePerSec).toFixed(0)} MB/s (${ratePerSec.toFixed(0)} requests/s) for ${durationMs} ms`);

      // 2. Open loop at the fixed rate: a short warm-up, then the measured run, on Floe and on the baseline.
      const open = async (c: LoadClient, ms: number): Promise<OpenLoopResult> => {
        const r = await c.openLoop(w.requests, { ratePerSec, durationMs: ms });
        if (r.completed !== r.sent) throw new Error(`${r.sent - r.completed} of ${r.sent} requests unanswered`);
        return r;
      };
      acknowledged += recordsOf(w, (await open(cFloe, 1000)).perRequest);
      const floeRun = await open(cFloe, durationMs);
      acknowledged += recordsOf(w, floeRun.perRequest);
      await open(cIngest, 1000);
      const ingestRun = await open(cIngest, durationMs);
      const floeLatency = summarizeLatencies(floeRun.fromScheduleMs);
      progress(`acks=${acksLabel}: Floe p50 ${floeLatency.p50.toFixed(2)} ms, p99 ${floeLatency.p99.toFixed(2)} ms; ingest baseline p99 ${summarizeLatencies(ingestRun.fromScheduleMs).p99.toFixed(2)} ms`);

      const ends = await logEndOffsets(admin, topic, partitions);
      const stored = ends.reduce((a, b) => a + Number(b), 0);
      if (stored !== acknowledged) throw new Error(`${topic}: Floe acknowledged ${acknowledged} records but its log holds ${stored}`);
      await Promise.all([cFloe.close(), cIngest.close()]);
      rows.push({
        acks,
        maxMbps: mbps(maxPerSec),
        rateMbps: mbps(ratePerSec),
        ratePerSec,
        floe: floeLatency,
        floeService: summarizeLatencies(floeRun.fromSendMs),
        ingest: summarizeLatencies(ingestRun.fromScheduleMs),
        maxSendLagMs: floeRun.maxSendLagMs,
      });
    }
    await admin.close();
    await Promise.all(servers.map((s) => s.stop()));

    const headers = ['acks', 'Floe max MB/s', 'rate MB/s', 'requests/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'p99 from send ms', 'ingest p50 ms', 'ingest p99 ms', 'p99 < 5 ms'];
    const table: Cell[][] = rows.map((r) => [
      r.acks === -1 ? 'all' : '1',
      r.maxMbps,
      r.rateMbps,
      Math.round(r.ratePerSec),
      r.floe.p50,
      r.floe.p99,
      r.floe.p999,
      r.floe.max,
      r.floeService.p99,
      r.ingest.p50,
      r.ingest.p99,
      r.floe.p99 < 5 ? 'yes' : 'NO',
    ]);
    const rate = fixedRateMbps > 0 ? `${fixedRateMbps} MB/s` : `${Math.round(load * 100)}% of Floe's closed-loop maximum`;
    console.log(
      `\nProduce latency, open loop at ${rate}: ${formatSize(batchBytes)} batches, ${batchesPerRequest} per request, ${partitions} partitions, ${connections} connections, ${durationMs} ms; latency from the scheduled send time (client send lag up to ${Math.max(...rows.map((r) => r.maxSendLagMs)).toFixed(1)} ms counted); broker build: ${build}\n`,
    );
    console.log(formatTable(headers, table));
    console.log(`\nMarkdown:\n\n${formatMarkdownTable(headers, table)}`);
    if (profile) await printProfiles(join(work, 'profile'));
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await Promise.allSettled(servers.map((s) => s.stop()));
    await rm(work, { recursive: true, force: true });
  }
}

await main();
