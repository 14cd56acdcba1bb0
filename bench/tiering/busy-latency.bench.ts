// Produce latency with tiering busy against tiering idle, in the same run: one Floe broker, a latency topic
// produced to open loop at a fixed rate (half of its closed-loop maximum by default), once while tiering has
// nothing to do and once while it converts a backlog: a second topic filled with tables off, then switched on
// (iceberg.enabled=true) at the start of the busy phase, so its closed segments are converted meanwhile. Run
// for conversion on worker threads (iceberg.convert.workers.enable=true, the default) and on the broker's
// thread (false), each on a fresh broker. Every latency is timed from the scheduled send (no coordinated
// omission); each topic's acknowledged records are checked against its log.
// Run:   npx tsx bench/tiering/busy-latency.bench.ts [--quick] [--build=src|dist]
// Options: --backlog-mb=384 --segment-mb=8 --rate-share=0.5 --duration=10000 --partitions=8 --batch=16k --modes=workers,thread
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { BenchArgs } from '../lib/args.js';
import { createTopic, logEndOffsets } from '../lib/admin.js';
import { LoadClient, type OpenLoopResult } from '../lib/load-client.js';
import { adminUrl, spawnFloe, type Build } from '../lib/processes.js';
import { median, MiB, perSec, summarizeLatencies, type LatencySummary } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { produceWorkload, type ProduceWorkload } from '../lib/workload.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: busy-latency.bench.ts [--quick] [--build=src|dist] [--backlog-mb=384] [--segment-mb=8] [--rate-share=0.5] [--duration=ms] [--partitions=8] [--batch=16k] [--modes=workers,thread]');
const quick = args.flag('quick');
const build = args.string('build', 'src') as Build;
const backlogMb = args.number('backlog-mb', quick ? 128 : 384);
const segmentMb = args.number('segment-mb', 8);
const rateShare = args.number('rate-share', 0.5);
const durationMs = args.number('duration', quick ? 4000 : 10000);
const partitions = args.number('partitions', 8);
const batchBytes = args.numbers('batch', [16 * 1024])[0] ?? 16 * 1024;
const modes = args.string('modes', 'workers,thread').split(',') as ('workers' | 'thread')[];

function recordsOf(w: ProduceWorkload, perRequest: Uint32Array): number {
  let n = 0;
  perRequest.forEach((c, i) => (n += c * (w.requests[i]?.records ?? 0)));
  return n;
}

/** A metric's value summed over its series, from the admin port's Prometheus text. */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

interface Row {
  mode: string;
  rate: number;
  idle: LatencySummary;
  busy: LatencySummary;
  segmentsDuringBusy: number;
  segmentsBacklog: number;
}

async function run(mode: 'workers' | 'thread', work: string): Promise<Row> {
  const floe = await spawnFloe({
    dataDir: join(work, mode, 'log'),
    build,
    flags: [`--iceberg.warehouse=${join(work, mode, 'warehouse')}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--schema.registry.port=-1', `--iceberg.convert.workers.enable=${mode === 'workers'}`, '--auto.create.topics.enable=false'],
  });
  const clients: LoadClient[] = [];
  try {
    const admin = await LoadClient.connect(floe.port, 1);
    clients.push(admin);
    const metrics = adminUrl(floe)!;
    // The latency topic never tiers; the backlog topic is filled with tables off.
    await createTopic(admin, 'latency', partitions, { 'iceberg.enabled': 'false' });
    await createTopic(admin, 'backlog', 4, { 'iceberg.enabled': 'false', 'internal.segment.bytes': String(segmentMb * MiB), 'retention.ms': '-1' });
    const back = produceWorkload({ topic: 'backlog', partitions: 4, batchBytes: 256 * 1024, acks: 1 });
    const bc = await LoadClient.connect(floe.port, 2);
    clients.push(bc);
    let backlogRecords = 0;
    let backlogBytes = 0;
    while (backlogBytes < backlogMb * MiB) {
      const r = await bc.closedLoop(back.requests, { window: 4, durationMs: 500 });
      backlogRecords += recordsOf(back, r.perRequest);
      r.perRequest.forEach((c, i) => (backlogBytes += c * back.requests[i]!.payloadBytes));
    }
    progress(`${mode}: backlog of ${(backlogBytes / MiB).toFixed(0)} MiB in ${segmentMb} MiB segments, tables off`);

    const w = produceWorkload({ topic: 'latency', partitions, batchBytes, acks: 1, batchesPerRequest: 1 });
    const c = await LoadClient.connect(floe.port, 4);
    clients.push(c);
    let acknowledged = 0;
    const maxima: number[] = [];
    for (let k = 0; k < 4; k++) {
      const r = await c.closedLoop(w.requests, { window: 8, durationMs: quick ? 700 : 1500 });
      acknowledged += recordsOf(w, r.perRequest);
      if (k > 0) maxima.push(perSec(r.completed, r.ns));
    }
    const rate = median(maxima) * rateShare;
    const open = async (ms: number): Promise<OpenLoopResult> => {
      const r = await c.openLoop(w.requests, { ratePerSec: rate, durationMs: ms });
      if (r.completed !== r.sent) throw new Error(`${r.sent - r.completed} of ${r.sent} requests unanswered`);
      acknowledged += recordsOf(w, r.perRequest);
      return r;
    };
    await open(1000);
    const idle = summarizeLatencies((await open(durationMs)).fromScheduleMs);
    progress(`${mode}: tiering idle, ${rate.toFixed(0)} requests/s: p99 ${idle.p99.toFixed(2)} ms`);

    const before = await metric(metrics, 'floe_tiering_copied_segments_total');
    const kafka = new Kafka({ brokers: [`127.0.0.1:${floe.port}`], clientId: 'busy-bench', logLevel: logLevel.NOTHING });
    const ka = kafka.admin();
    await ka.connect();
    await ka.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: 'backlog', configEntries: [{ name: 'iceberg.enabled', value: 'true' }, { name: 'internal.segment.bytes', value: String(segmentMb * MiB) }, { name: 'retention.ms', value: '-1' }] }] });
    await ka.disconnect();
    // Let the first conversions start before timing.
    for (let waited = 0; waited < 10_000 && (await metric(metrics, 'floe_tiering_copied_segments_total')) === before; waited += 100) await new Promise((r) => setTimeout(r, 100));
    const busy = summarizeLatencies((await open(durationMs)).fromScheduleMs);
    const during = (await metric(metrics, 'floe_tiering_copied_segments_total')) - before;
    progress(`${mode}: tiering busy (${during} segments converted during the phase): p99 ${busy.p99.toFixed(2)} ms`);

    for (const [topic, n, expected] of [['latency', partitions, acknowledged], ['backlog', 4, backlogRecords]] as const) {
      const stored = (await logEndOffsets(admin, topic, n)).reduce((a, b) => a + Number(b), 0);
      if (stored !== expected) throw new Error(`${topic}: ${expected} records acknowledged, ${stored} in the log`);
    }
    return { mode, rate, idle, busy, segmentsDuringBusy: during, segmentsBacklog: Math.floor(backlogBytes / (segmentMb * MiB)) };
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await floe.stop();
  }
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'floe-busy-bench-'));
  try {
    const rows: Row[] = [];
    for (const mode of modes) rows.push(await run(mode, work));
    const headers = ['conversion on', 'requests/s', 'idle p50 ms', 'idle p99', 'idle p99.9', 'busy p50 ms', 'busy p99', 'busy p99.9', 'busy/idle p99', 'segments converted while busy'];
    const table: Cell[][] = rows.map((r) => [
      r.mode === 'workers' ? 'worker threads' : "the broker's thread",
      Math.round(r.rate),
      r.idle.p50,
      r.idle.p99,
      r.idle.p999,
      r.busy.p50,
      r.busy.p99,
      r.busy.p999,
      `${(r.busy.p99 / r.idle.p99).toFixed(2)}x`,
      `${r.segmentsDuringBusy} of ~${r.segmentsBacklog}`,
    ]);
    const setup = `${partitions} partitions, ${batchBytes / 1024} KiB batches, acks=1, open loop at ${rateShare * 100} % of the closed-loop maximum for ${durationMs} ms per phase; backlog ${backlogMb} MiB in ${segmentMb} MiB segments; broker build ${build}`;
    console.log(`\nProduce latency, tiering idle vs busy: ${setup}\n`);
    console.log(formatTable(headers, table));
    console.log(`\nMarkdown:\n\n${formatMarkdownTable(headers, table)}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
