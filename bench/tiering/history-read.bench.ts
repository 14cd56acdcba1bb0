// Reading history from the table, end to end, against reading the hot log, and what it does to produce
// latency, in one run per reader setting: a fresh broker each for remote.log.reader.threads=0 (the default:
// the broker's own thread) and 2 (read workers, reading ahead), with the same records in two topics:
//   hot      tables off, so every fetch reads the local log;
//   history  tables on, 8 MiB segments and local.retention.bytes=1, so once its closed segments are tiered
//            the local copies go and fetches of them are served from the Parquet files (only the active
//            segment stays local).
// Phases, each timed alone:
//   1. a consumer (Floe's load client, one connection, one Fetch at a time, all partitions, 1 MiB per
//      partition as Kafka consumers ask by default) reads `hot` from offset 0 to its end: MB/s;
//   2. the same consumer reads `history`: MB/s, the bytes the broker served from Parquet in that read
//      (floe_remote_fetch_bytes_total) as a share of the bytes read, which must be most of them, and the
//      CPU seconds per GB read of the broker's main thread (where produce and fetch run) and of the process;
//   3. produce p99 on a third topic (open loop at half its closed-loop maximum), first alone, then while the
//      consumer reads `history` from the start again and again.
// Every fetch's offsets are checked to continue; the page cache is written back before each phase. The
// rebuilt-batch cache is off (remote.log.reader.cache.total.size.bytes=0), so every history read decodes,
// and one unmeasured read of the history comes first (workers started, indexes and footers loaded).
// Run:   npx tsx bench/tiering/history-read.bench.ts [--quick] [--build=src|dist]
// Options: --mb=256 (per topic) --partitions=4 --partition-max-bytes=1m --duration=8000 --threads=0,2 --runs=1
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchArgs } from '../lib/args.js';
import { createTopic, logEndOffsets, metricSum } from '../lib/admin.js';
import { fetchAll } from '../lib/fetch-all.js';
import { LoadClient } from '../lib/load-client.js';
import { adminUrl, spawnFloe, type Build } from '../lib/processes.js';
import { cpuSeconds, threadCpuSeconds, threadsCpuSeconds } from '../lib/proc-stats.js';
import { mbPerSec, median, MiB, perSec, summarizeLatencies } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { produceWorkload } from '../lib/workload.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: history-read.bench.ts [--quick] [--build=src|dist] [--mb=256] [--partitions=4] [--partition-max-bytes=1m] [--duration=8000] [--threads=0,2] [--runs=1]');
const quick = args.flag('quick');
const build = args.string('build', 'src') as Build;
const fillMb = args.number('mb', quick ? 96 : 256);
const partitions = args.number('partitions', 4);
const partitionMaxBytes = args.numbers('partition-max-bytes', [MiB])[0] ?? MiB;
const durationMs = args.number('duration', quick ? 4000 : 8000);
const threadSettings = args.numbers('threads', [0, 2]);
const runs = args.number('runs', 1);

interface Row {
  threads: number;
  hotMbps: number;
  coldMbps: number;
  remoteShare: number;
  /** CPU seconds per GB of history read: the broker's main thread (produce and fetch run there), and all its threads. */
  mainCpuPerGb: number;
  processCpuPerGb: number;
  idleP99: number;
  readingP99: number;
  readingP999: number;
  historyReadsDuringLatency: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function run(threads: number, work: string): Promise<Row> {
  const dir = join(work, `threads-${threads}`);
  const floe = await spawnFloe({
    dataDir: join(dir, 'log'),
    build,
    flags: [`--iceberg.warehouse=${join(dir, 'warehouse')}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--schema.registry.port=-1', '--auto.create.topics.enable=false', '--log.retention.check.interval.ms=500', '--iceberg.commit.interval.ms=1000', '--remote.log.reader.cache.total.size.bytes=0', `--remote.log.reader.threads=${threads}`],
  });
  const clients: LoadClient[] = [];
  try {
    const admin = await LoadClient.connect(floe.port, 1);
    clients.push(admin);
    const metrics = adminUrl(floe)!;
    await createTopic(admin, 'hot', partitions, { 'iceberg.enabled': 'false' });
    await createTopic(admin, 'history', partitions, { 'internal.segment.bytes': String(8 * MiB), 'local.retention.bytes': '1', 'iceberg.compaction.enabled': 'false' });
    await createTopic(admin, 'latency', partitions, { 'iceberg.enabled': 'false' });
    const filler = await LoadClient.connect(floe.port, 2);
    clients.push(filler);
    for (const topic of ['hot', 'history']) {
      const w = produceWorkload({ topic, partitions, batchBytes: 256 * 1024, acks: 1 });
      let bytes = 0;
      while (bytes < fillMb * MiB) {
        const r = await filler.closedLoop(w.requests, { window: 4, durationMs: 500 });
        r.perRequest.forEach((c, i) => (bytes += c * w.requests[i]!.payloadBytes));
      }
    }
    // Wait for the history's closed segments to be tiered and their local copies to go (all but the active
    // segment's, at most 8 MiB of each partition).
    const started = Date.now();
    const historyEnd = (await logEndOffsets(admin, 'history', partitions)).reduce((a, b) => a + Number(b), 0);
    while ((await metricSum(metrics, 'floe_tiering_backlog_segments')) > 0 || (await metricSum(metrics, 'floe_partition_local_log_start_offset', 'topic="history"')) < historyEnd * (1 - (partitions * 8) / fillMb)) {
      if (Date.now() - started > 300_000) throw new Error('the history topic was not tiered within 5 minutes');
      await sleep(500);
    }
    progress(`threads=${threads}: ${fillMb} MiB per topic, history tiered (${((Date.now() - started) / 1000).toFixed(0)} s after the fill)`);
    const hotEnds = await logEndOffsets(admin, 'hot', partitions);
    const historyEnds = await logEndOffsets(admin, 'history', partitions);
    const reader = await LoadClient.connect(floe.port, 1);
    clients.push(reader);
    const read = (topic: string, ends: bigint[]) => fetchAll(reader, { topic, ends, consumers: 1, partitionMaxBytes });

    execFileSync('sync');
    const hot = await read('hot', hotEnds);
    // A first read of the history starts the read workers and loads the indexes and footers, so the
    // measured read is a consumer's long read of history in its steady state (nothing is cached: the
    // rebuilt-batch cache is off).
    await read('history', historyEnds);
    execFileSync('sync');
    const remoteBefore = await metricSum(metrics, 'floe_remote_fetch_bytes_total');
    const pid = floe.child.pid!;
    const cpu0 = { main: threadCpuSeconds(pid), all: cpuSeconds(pid), threads: threadsCpuSeconds(pid) };
    const cold = await read('history', historyEnds);
    // Where the process's CPU went during the read, by thread (threads started during it count from zero).
    const spent = [...threadsCpuSeconds(pid)].map(([tid, t]) => ({ name: t.name, s: t.seconds - (cpu0.threads.get(tid)?.seconds ?? 0) })).filter((t) => t.s > 0.005);
    progress(`threads=${threads}: CPU seconds by broker thread during the history read: ${spent.sort((a, b) => b.s - a.s).map((t) => `${t.name} ${t.s.toFixed(2)}`).join(', ')}`);
    const gb = cold.bytes / 1e9;
    const mainCpuPerGb = (threadCpuSeconds(pid) - cpu0.main) / gb;
    const processCpuPerGb = (cpuSeconds(pid) - cpu0.all) / gb;
    const remoteShare = ((await metricSum(metrics, 'floe_remote_fetch_bytes_total')) - remoteBefore) / cold.bytes;
    if (remoteShare < 0.8) throw new Error(`only ${(remoteShare * 100).toFixed(0)} % of the history read came from Parquet: not a cold read`);
    progress(`threads=${threads}: hot ${mbPerSec(hot.bytes, hot.ns).toFixed(0)} MB/s, history ${mbPerSec(cold.bytes, cold.ns).toFixed(0)} MB/s (${(remoteShare * 100).toFixed(0)} % from Parquet), CPU s per GB: main thread ${mainCpuPerGb.toFixed(2)}, process ${processCpuPerGb.toFixed(2)}`);

    const w = produceWorkload({ topic: 'latency', partitions, batchBytes: 16 * 1024, acks: 1, batchesPerRequest: 1 });
    const c = await LoadClient.connect(floe.port, 4);
    clients.push(c);
    const maxima: number[] = [];
    for (let k = 0; k < 4; k++) {
      const r = await c.closedLoop(w.requests, { window: 8, durationMs: quick ? 700 : 1500 });
      if (k > 0) maxima.push(perSec(r.completed, r.ns));
    }
    const rate = median(maxima) / 2;
    const open = async () => {
      const r = await c.openLoop(w.requests, { ratePerSec: rate, durationMs });
      if (r.completed !== r.sent) throw new Error(`${r.sent - r.completed} of ${r.sent} produce requests unanswered`);
      return summarizeLatencies(r.fromScheduleMs);
    };
    execFileSync('sync');
    const idle = await open();
    execFileSync('sync');
    let reading = true;
    let historyReads = 0;
    const background = (async () => {
      while (reading) {
        await read('history', historyEnds);
        historyReads++;
      }
    })();
    const busy = await open();
    reading = false;
    await background;
    progress(`threads=${threads}: produce at ${rate.toFixed(0)} requests/s, p99 ${idle.p99.toFixed(2)} ms alone, ${busy.p99.toFixed(2)} ms while reading history (${historyReads} whole reads)`);
    return { threads, hotMbps: mbPerSec(hot.bytes, hot.ns), coldMbps: mbPerSec(cold.bytes, cold.ns), remoteShare, mainCpuPerGb, processCpuPerGb, idleP99: idle.p99, readingP99: busy.p99, readingP999: busy.p999, historyReadsDuringLatency: historyReads };
  } finally {
    await Promise.allSettled(clients.map((cl) => cl.close()));
    await floe.stop();
  }
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'floe-history-bench-'));
  try {
    progress(`load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    const rows: Row[] = [];
    for (let r = 0; r < runs; r++) for (const threads of threadSettings) rows.push(await run(threads, join(work, `run-${r}`)));
    const headers = ['remote.log.reader.threads', 'hot MB/s', 'history (Parquet) MB/s', 'history/hot', 'from Parquet', 'main thread CPU s/GB', 'process CPU s/GB', 'produce p99 ms alone', 'p99 while reading history', 'p99.9 while reading', 'reading/alone p99'];
    const table: Cell[][] = rows.map((r) => [
      r.threads === 0 ? "0 (the broker's thread)" : `${r.threads} (workers, read-ahead)`,
      r.hotMbps,
      r.coldMbps,
      `${(r.coldMbps / r.hotMbps).toFixed(2)}x`,
      `${(r.remoteShare * 100).toFixed(0)} %`,
      r.mainCpuPerGb,
      r.processCpuPerGb,
      r.idleP99,
      r.readingP99,
      r.readingP999,
      `${(r.readingP99 / r.idleP99).toFixed(2)}x`,
    ]);
    const setup = `${partitions} partitions, ${fillMb} MiB per topic in 256 KiB batches, one consumer connection fetching every partition (${partitionMaxBytes / MiB} MiB per partition), produce of 16 KiB batches for ${durationMs} ms per latency phase; broker build ${build}`;
    console.log(`\nReading history from Parquet against the hot log: ${setup}\n`);
    console.log(formatTable(headers, table));
    console.log(`\nMarkdown:\n\n${formatMarkdownTable(headers, table)}`);
    progress(`load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
