// What metrics cost the produce path: produce throughput of a Floe broker with its admin port on and
// /metrics scraped every second (as Prometheus would, by default every 15 s: this is 15 times harsher),
// against a second broker with the admin port off (admin.port=-1: no metrics are counted at all), in the
// same run, with the same client and request bytes. Runs alternate on/off (only one broker is loaded at a
// time) and the result is the ratio of the medians, next to the spread of the off runs (the noise).
// Run:   npx tsx bench/broker/metrics-overhead.bench.ts [--quick] [--build=src|dist]
// Options: --partitions=8 --batch=64k --acks=1 --connections=4 --window=8 --duration=3000 --runs=6
//          --scrape-ms=1000 --tiering (both brokers with tiered topics, so scrapes also read table metadata)
// Compiled: npm run build && node dist/bench/broker/metrics-overhead.bench.js --build=dist
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerMetrics } from '../../broker/admin/broker-metrics.js';
import { BenchArgs } from '../lib/args.js';
import { createTopic, logEndOffsets } from '../lib/admin.js';
import { LoadClient } from '../lib/load-client.js';
import { adminUrl, spawnFloe, type Build, type ChildServer } from '../lib/processes.js';
import { formatSize, mbPerSec, median, KiB, perSec } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { produceWorkload, type LoadRequest } from '../lib/workload.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: metrics-overhead.bench.ts [--quick] [--build=src|dist] [--partitions=8] [--batch=64k] [--acks=1] [--connections=4] [--window=8] [--duration=ms] [--runs=n] [--scrape-ms=1000] [--tiering]');
const quick = args.flag('quick');
const build = args.string('build', 'src') as Build;
const partitions = args.number('partitions', 8);
const batchBytes = args.number('batch', 64 * KiB);
const acks = args.number('acks', 1) as 1 | -1;
const connections = args.number('connections', 4);
const window = args.number('window', 8);
const durationMs = args.number('duration', quick ? 1000 : 3000);
const runs = args.number('runs', quick ? 2 : 6);
const scrapeMs = args.number('scrape-ms', 1000);
const tiering = args.flag('tiering');

interface Scrapes {
  count: number;
  bytes: number;
  ms: number[];
}

/** Scrapes `url` every `every` ms until stopped; a failed scrape fails the bench. */
function startScraper(url: string, every: number, into: Scrapes): () => Promise<void> {
  let stopped = false;
  let failure: unknown;
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      try {
        const res = await fetch(`${url}/metrics`);
        const text = await res.text();
        if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
        into.count++;
        into.bytes = text.length;
        into.ms.push(performance.now() - t0);
      } catch (err) {
        failure = err;
        return;
      }
      await new Promise((r) => setTimeout(r, every));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    if (failure !== undefined) throw failure;
  };
}

/**
 * What the request path pays per request with metrics on (one counter increment and one histogram
 * observation through BrokerMetrics.answered, plus the router's two clock reads), in ns, measured in this
 * process: a number the machine's load moves far less than a throughput.
 */
function perRequestCostNs(): number {
  const m = new BrokerMetrics();
  const n = 2_000_000;
  const samples: number[] = [];
  for (let round = 0; round < 5; round++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      m.answered(i & 1 ? 0 : 1, (performance.now() - started) / 1000);
    }
    samples.push(Number(process.hrtime.bigint() - t0) / n);
  }
  return median(samples);
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'floe-metrics-bench-'));
  const servers: ChildServer[] = [];
  const clients: LoadClient[] = [];
  try {
    const common = ['--message.max.bytes=8388608', '--auto.create.topics.enable=false', '--schema.registry.port=-1', ...(tiering ? ['--iceberg.rest.port=-1'] : ['--remote.log.storage.system.enable=false'])];
    const dirs = { on: join(work, 'on'), off: join(work, 'off') };
    await Promise.all(Object.values(dirs).map((d) => mkdir(d)));
    progress(`starting two Floe brokers (${build}): admin port on and off, in ${work}`);
    const on = await spawnFloe({ dataDir: join(dirs.on, 'log'), build, flags: [...common, ...(tiering ? [`--iceberg.warehouse=${join(dirs.on, 'wh')}`] : [])] });
    servers.push(on);
    const off = await spawnFloe({ dataDir: join(dirs.off, 'log'), build, flags: [...common, '--admin.port=-1', ...(tiering ? [`--iceberg.warehouse=${join(dirs.off, 'wh')}`] : [])] });
    servers.push(off);
    const url = adminUrl(on);
    if (url === undefined) throw new Error(`the 'on' broker logged no admin URL:\n${on.output()}`);
    if (adminUrl(off) !== undefined) throw new Error('the \'off\' broker runs an admin port');

    const topic = 'metrics-bench';
    const w = produceWorkload({ topic, partitions, batchBytes, acks });
    const cases = { on: { server: on, samples: [] as number[], records: 0 }, off: { server: off, samples: [] as number[], records: 0 } };
    const load: Record<'on' | 'off', LoadClient> = {} as Record<'on' | 'off', LoadClient>;
    for (const [name, c] of Object.entries(cases) as ['on' | 'off', (typeof cases)['on']][]) {
      const admin = await LoadClient.connect(c.server.port, 1);
      clients.push(admin);
      await createTopic(admin, topic, partitions, { 'max.message.bytes': String(8 * 1024 * 1024), ...(tiering ? { 'remote.storage.enable': 'true' } : {}) });
      load[name] = await LoadClient.connect(c.server.port, connections);
      clients.push(load[name]);
    }
    const scrapes: Scrapes = { count: 0, bytes: 0, ms: [] };
    // Run 0 warms both up and is discarded; then on/off alternate, starting with each in turn.
    for (let run = 0; run <= runs; run++) {
      const order: ('on' | 'off')[] = run % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
      const ms = run === 0 ? Math.max(300, durationMs / 2) : durationMs;
      for (const name of order) {
        const stopScraping = name === 'on' ? startScraper(url, scrapeMs, scrapes) : async () => undefined;
        const r = await load[name].closedLoop(w.requests, { window, durationMs: ms });
        await stopScraping();
        let bytes = 0;
        let records = 0;
        r.perRequest.forEach((n, i) => {
          const req = w.requests[i] as LoadRequest;
          bytes += n * req.payloadBytes;
          records += n * req.records;
        });
        cases[name].records += records;
        if (run > 0) cases[name].samples.push(mbPerSec(bytes, r.ns));
        progress(`run ${run}${run === 0 ? ' (warm-up)' : ''} ${name}: ${mbPerSec(bytes, r.ns).toFixed(0)} MB/s, ${Math.round(perSec(records, r.ns))} records/s`);
      }
    }
    // Everything acknowledged is in each log, exactly once.
    for (const [name, c] of Object.entries(cases)) {
      const admin = await LoadClient.connect(c.server.port, 1);
      clients.push(admin);
      const stored = (await logEndOffsets(admin, topic, partitions)).reduce((a, b) => a + Number(b), 0);
      if (stored !== c.records) throw new Error(`${name}: acknowledged ${c.records} records but the log holds ${stored}`);
    }
    const costNs = perRequestCostNs();
    const requestsPerSec = (median(cases.on.samples) * 1e6) / w.requests.reduce((a, r) => a + r.payloadBytes, 0) * w.requests.length;
    const onMed = median(cases.on.samples);
    const offMed = median(cases.off.samples);
    const spread = (xs: number[]) => (Math.max(...xs) - Math.min(...xs)) / median(xs);
    const headers = ['admin port', 'median MB/s', 'min MB/s', 'max MB/s', 'spread (max-min)/median', 'on/off'];
    const row = (name: 'on' | 'off'): Cell[] => {
      const xs = cases[name].samples;
      return [name === 'on' ? `on, scraped every ${scrapeMs} ms` : 'off (admin.port=-1)', median(xs), Math.min(...xs), Math.max(...xs), `${(spread(xs) * 100).toFixed(1)}%`, name === 'on' ? (onMed / offMed).toFixed(3) : '1.000'];
    };
    const table = [row('on'), row('off')];
    const setup = `${partitions} partitions, ${formatSize(batchBytes)} batches, acks=${acks}, ${connections} connections x ${window} in flight, ${runs} runs of ${durationMs} ms each side (alternating, after a warm-up), tiering ${tiering ? 'on' : 'off'}, broker build: ${build}`;
    console.log(`\nProduce throughput with metrics scraped vs admin port off, ${setup}\n`);
    console.log(formatTable(headers, table));
    console.log(`\nscrapes: ${scrapes.count}, ${scrapes.bytes} bytes each, median ${median(scrapes.ms).toFixed(1)} ms, max ${Math.max(...scrapes.ms).toFixed(1)} ms`);
    console.log(`on/off throughput ratio: ${(onMed / offMed).toFixed(3)} (noise: the off runs spread ${(spread(cases.off.samples) * 100).toFixed(1)}%)`);
    console.log(`metrics cost per request: ${costNs.toFixed(0)} ns; at ${Math.round(requestsPerSec)} requests/s that is ${((costNs * requestsPerSec) / 1e7).toFixed(3)}% of one core`);
    console.log(`\nMarkdown:\n\n${formatMarkdownTable(headers, table)}`);
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await Promise.allSettled(servers.map((s) => s.stop()));
    await rm(work, { recursive: true, force: true });
  }
}

await main();
