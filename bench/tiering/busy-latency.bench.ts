// Produce latency with tiering busy against tiering idle, in the same run: one Floe broker, a latency topic
// produced to open loop at a fixed rate (half of its closed-loop maximum by default), warmed up for one
// phase's length at that rate, then measured in three phases: tiering idle; tiering busy converting a
// backlog (a second topic filled with tables off, then switched on with iceberg.enabled=true at the start of
// the phase); and "after", once the backlog is converted, while table compaction merges the small files it
// made (unless --compaction=false: then tiering is idle again). The idle and busy phases repeat --rounds
// times on the same broker, each busy phase with a backlog topic of its own: a 4-s phase holds zero to a few
// of the random 20-60 ms stalls this machine shows at any time (bench/RESULTS.md), so one pair of phases
// cannot tell a difference from noise. The summary gives the median of each kind's p99s and their range.
// Only the last round's backlog table compacts, in the "after" phase. Run for conversion on worker threads
// (iceberg.convert.workers.enable=true, the default) and on the broker's thread
// (false), each on a fresh broker. Every latency is timed from the scheduled send (no coordinated omission);
// each topic's acknowledged records are checked against its log.
//
// The page cache is written back (`sync`) before every phase, and each phase reports its peak of dirty pages
// against the kernel's background writeback threshold: once a run has written that much (10 % of memory by
// default), the kernel writes back while it runs and every log write slows down (about 10x per 16 KiB write
// on the machine of bench/RESULTS.md), whatever tiering does. A phase whose peak passes 1.0 measures the disk
// as much as the broker. Each phase also reports, from the broker's own metrics, its longest event-loop delay
// and the bucket under which it answered 99 % of the Produce requests (decoded request to encoded response,
// the log write included): a client-side p99 far above both was spent outside the broker's request handling.
// The same bound for the partition logs' appends splits the broker's side: the wait for the append's write
// to start (behind its partition's earlier writes) and the write itself (thread pool and event loop included).
// Run:   npx tsx bench/tiering/busy-latency.bench.ts [--quick] [--build=src|dist]
// Options: --backlog-mb=384 --segment-mb=8 --rate-share=0.5 (or --rate=5000 requests/s, the same in every run)
//          --duration=10000 --partitions=8 --batch=16k --modes=workers,thread
//          --rounds=3 (idle and busy phases, each busy one converting a fresh backlog)
//          --compaction=true|false: table compaction of the backlog topic (iceberg.compaction.enabled; on, as
//          by default, it merges the converted files once the backlog is converted, in the "after" phase)
//          --floe-flags="--iceberg.convert.workers.nice=0 ..." (extra Floe settings)
//          --node-flags="--single-threaded-gc ..." (extra flags for node itself, for experiments)
//          --profile: print where each broker's thread spent its time (a CPU profile of the whole run)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { BenchArgs } from '../lib/args.js';
import { createTopic, histogramBucketsIn, logEndOffsets, metricSumIn, metricSum as metric, scrapeMetrics } from '../lib/admin.js';
import { LoadClient, type OpenLoopResult } from '../lib/load-client.js';
import { adminUrl, spawnFloe, type Build } from '../lib/processes.js';
import { median, MiB, perSec, summarizeLatencies, type LatencySummary } from '../lib/stats.js';
import { execFileSync } from 'node:child_process';
import { threadCpuSeconds, watchDirtyPages } from '../lib/proc-stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { busiestProfile, longestBusyStretches, printProfile, topSelfTime, type CpuProfile } from '../lib/cpu-profile.js';
import { produceWorkload, type ProduceWorkload } from '../lib/workload.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: busy-latency.bench.ts [--quick] [--build=src|dist] [--backlog-mb=384] [--segment-mb=8] [--rate-share=0.5 | --rate=requests/s] [--duration=ms] [--partitions=8] [--batch=16k] [--modes=workers,thread] [--rounds=3] [--compaction=true|false] [--floe-flags="..."] [--node-flags="..."] [--profile]');
const quick = args.flag('quick');
const build = args.string('build', 'src') as Build;
const backlogMb = args.number('backlog-mb', quick ? 128 : 384);
const segmentMb = args.number('segment-mb', 8);
const rateShare = args.number('rate-share', 0.5);
/** A fixed produce rate in requests/s instead of a share of the measured maximum (0: use --rate-share). */
const fixedRate = args.number('rate', 0);
const rounds = args.number('rounds', 3);
const durationMs = args.number('duration', quick ? 4000 : 10000);
const partitions = args.number('partitions', 8);
const batchBytes = args.numbers('batch', [16 * 1024])[0] ?? 16 * 1024;
const modes = args.string('modes', 'workers,thread').split(',') as ('workers' | 'thread')[];
const profile = args.flag('profile');
const compaction = args.string('compaction', 'true');
const floeFlags = args.string('floe-flags', '').split(' ').filter((f) => f !== '');
/** Node and V8 flags for Floe's process (space-separated), for experiments: --node-flags='--single-threaded-gc'. */
const nodeFlags = args.string('node-flags', '').split(' ').filter((f) => f !== '');

const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

function recordsOf(w: ProduceWorkload, perRequest: Uint32Array): number {
  let n = 0;
  perRequest.forEach((c, i) => (n += c * (w.requests[i]?.records ?? 0)));
  return n;
}

const LOOP_MAX = 'nodejs_eventloop_lag_max_seconds';

interface Phase {
  latency: LatencySummary;
  /** CPU time of the broker's thread per request answered in the phase, µs (all of its work, tiering's included). */
  mainUsPerRequest: number;
  /** Peak dirty pages during the phase, as a share of the background writeback threshold. */
  dirtyPeak: number;
  /** Start and end, in microseconds of CLOCK_MONOTONIC (the clock of the broker's CPU profile). */
  window: [number, number];
  /**
   * The broker's longest event-loop delay in the phase, ms (its nodejs_eventloop_lag_max_seconds, which
   * prom-client resets on every scrape; 10 ms resolution). A p99 well above it comes from waits off the
   * broker's thread: log writes on the thread pool, the network, the client.
   */
  loopMaxMs: number;
  /**
   * The bucket bound (ms) under which the broker answered 99 % of the phase's Produce requests, from its
   * floe_request_duration_seconds (decoded request to encoded response, the log write included; not the
   * time a request waited to be read or its response to be sent).
   */
  brokerP99Ms: number;
  /**
   * The same bound for the partition logs' appends: how long they waited for their write to start
   * (floe_log_append_wait_seconds: behind their partition's earlier writes and rolls) and how long each write
   * took, from the call until the broker's thread saw it done (floe_log_write_duration_seconds: the thread
   * pool's queue, the system call and the event loop's delay). Where the broker-side p99 is long, these say
   * whether the time went queueing in the partition or into the write.
   */
  appendWaitP99Ms: number;
  writeP99Ms: number;
}

const DURATION = 'floe_request_duration_seconds';
const PRODUCE = 'api="Produce"';

/** The smallest bucket bound holding `share` of the observations made between two bucket readings. */
function bucketQuantile(before: readonly [number, number][], after: readonly [number, number][], share: number): number {
  const was = new Map(before);
  const counts = after.map(([le, n]) => [le, n - (was.get(le) ?? 0)] as const);
  const total = counts.at(-1)?.[1] ?? 0;
  return counts.find(([, n]) => n >= share * total)?.[0] ?? Infinity;
}

/** One round of one mode: an idle phase and a busy one; the last round adds the "after" phase. */
interface Row {
  mode: string;
  round: number;
  rate: number;
  idle: Phase;
  busy: Phase;
  after: Phase | undefined;
  segmentsDuringBusy: number;
  segmentsBacklog: number;
  /** Live data files fewer at the end of the "after" phase than at its start (compaction's merges). */
  filesMerged: number | undefined;
}

async function run(mode: 'workers' | 'thread', work: string): Promise<Row[]> {
  const profileDir = profile ? join(work, mode, 'profile') : undefined;
  const floe = await spawnFloe({
    dataDir: join(work, mode, 'log'),
    build,
    ...(profileDir !== undefined ? { cpuProfDir: profileDir } : {}),
    nodeFlags,
    flags: [`--iceberg.warehouse=${join(work, mode, 'warehouse')}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--schema.registry.port=-1', `--iceberg.convert.workers.enable=${mode === 'workers'}`, '--auto.create.topics.enable=false', ...floeFlags],
  });
  const clients: LoadClient[] = [];
  const phases: [string, Phase][] = [];
  try {
    const admin = await LoadClient.connect(floe.port, 1);
    clients.push(admin);
    const metrics = adminUrl(floe)!;
    // The latency topic never tiers; the backlog topic is filled with tables off.
    await createTopic(admin, 'latency', partitions, { 'iceberg.enabled': 'false' });
    const bc = await LoadClient.connect(floe.port, 2);
    clients.push(bc);
    /** Records acknowledged per backlog topic, checked against its log at the end. */
    const backlogs = new Map<string, number>();
    const fillBacklog = async (topic: string): Promise<number> => {
      await createTopic(admin, topic, 4, { 'iceberg.enabled': 'false', 'internal.segment.bytes': String(segmentMb * MiB), 'retention.ms': '-1' });
      const back = produceWorkload({ topic, partitions: 4, batchBytes: 256 * 1024, acks: 1 });
      let records = 0;
      let bytes = 0;
      while (bytes < backlogMb * MiB) {
        const r = await bc.closedLoop(back.requests, { window: 4, durationMs: 500 });
        records += recordsOf(back, r.perRequest);
        r.perRequest.forEach((c, i) => (bytes += c * back.requests[i]!.payloadBytes));
      }
      backlogs.set(topic, records);
      progress(`${mode}: backlog ${topic} of ${(bytes / MiB).toFixed(0)} MiB in ${segmentMb} MiB segments, tables off`);
      return bytes;
    };
    let backlogBytes = await fillBacklog('backlog-1');

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
    const rate = fixedRate > 0 ? fixedRate : median(maxima) * rateShare;
    const open = async (ms: number): Promise<OpenLoopResult> => {
      const r = await c.openLoop(w.requests, { ratePerSec: rate, durationMs: ms });
      if (r.completed !== r.sent) throw new Error(`${r.sent - r.completed} of ${r.sent} requests unanswered`);
      acknowledged += recordsOf(w, r.perRequest);
      return r;
    };
    // Warm up for one phase's length at the phase's rate (it was one second). In one run with one second,
    // the first phase's p99 was 18 ms against 4.5-5.8 in three identical idle phases after it. A longer
    // warm-up did not make idle phases reliably fast, though: stalls of 20-60 ms land at random points of
    // any phase (bench/RESULTS.md), so an idle p99 is partly the luck of whether one fell in it.
    await open(durationMs);
    // Each phase starts with the page cache written back, and says how close it came to the next writeback.
    const phase = async (): Promise<Phase> => {
      // One scrape at each end: it also resets the event-loop maximum, so the second reading covers the phase.
      const start = await scrapeMetrics(metrics);
      const dirty = watchDirtyPages();
      const from = nowUs();
      const cpu = threadCpuSeconds(floe.child.pid!);
      const result = await open(durationMs);
      const mainUsPerRequest = ((threadCpuSeconds(floe.child.pid!) - cpu) * 1e6) / result.completed;
      const latency = summarizeLatencies(result.fromScheduleMs);
      const window: [number, number] = [from, nowUs()];
      const end = await scrapeMetrics(metrics);
      const p99Ms = (name: string, labels: string): number => bucketQuantile(histogramBucketsIn(start, name, labels), histogramBucketsIn(end, name, labels), 0.99) * 1000;
      return {
        latency,
        mainUsPerRequest,
        dirtyPeak: dirty.stop(),
        window,
        loopMaxMs: metricSumIn(end, LOOP_MAX) * 1000,
        brokerP99Ms: p99Ms(DURATION, PRODUCE),
        appendWaitP99Ms: p99Ms('floe_log_append_wait_seconds', ''),
        writeP99Ms: p99Ms('floe_log_write_duration_seconds', ''),
      };
    };
    const out: Row[] = [];
    for (let round = 1; round <= rounds; round++) {
      const topic = `backlog-${round}`;
      // Only the last backlog's table compacts (in the "after" phase): an earlier one's merges would run in
      // the next round's idle phase.
      const merges = round === rounds ? compaction : 'false';
      const tableOn = (extra: { name: string; value: string }[]) => ({
        validateOnly: false,
        resources: [{ type: 2, name: topic, configEntries: [{ name: 'iceberg.enabled', value: 'true' }, { name: 'iceberg.compaction.enabled', value: merges }, { name: 'internal.segment.bytes', value: String(segmentMb * MiB) }, { name: 'retention.ms', value: '-1' }, ...extra] }],
      });
      if (round > 1) backlogBytes = await fillBacklog(topic);
      execFileSync('sync');
      const idle = await phase();
      phases.push([`idle ${round}`, idle]);
      progress(`${mode}, round ${round}: tiering idle, ${rate.toFixed(0)} requests/s: p99 ${idle.latency.p99.toFixed(2)} ms, dirty pages peaked at ${idle.dirtyPeak.toFixed(2)} of the writeback threshold`);

      execFileSync('sync');
      const before = await metric(metrics, 'floe_tiering_copied_segments_total');
      const kafka = new Kafka({ brokers: [`127.0.0.1:${floe.port}`], clientId: 'busy-bench', logLevel: logLevel.NOTHING });
      const ka = kafka.admin();
      await ka.connect();
      await ka.alterConfigs(tableOn([]));
      await ka.disconnect();
      // Let the first conversions start before timing.
      for (let waited = 0; waited < 10_000 && (await metric(metrics, 'floe_tiering_copied_segments_total')) === before; waited += 100) await new Promise((r) => setTimeout(r, 100));
      const busy = await phase();
      phases.push([`busy ${round}`, busy]);
      const during = (await metric(metrics, 'floe_tiering_copied_segments_total')) - before;
      progress(`${mode}, round ${round}: tiering busy (${during} segments converted during the phase): p99 ${busy.latency.p99.toFixed(2)} ms, dirty pages peaked at ${busy.dirtyPeak.toFixed(2)} of the writeback threshold`);
      out.push({ mode, round, rate, idle, busy, after: undefined, segmentsDuringBusy: during, segmentsBacklog: Math.floor(backlogBytes / (segmentMb * MiB)), filesMerged: undefined });
      // Idle again: the backlog converted and committed (or two minutes passed). The topic's last segments
      // roll and commit on its iceberg.commit.interval.ms, so that goes down to a second now that the phase
      // is over, rather than landing in the next round's idle phase. Table compaction may still run (it
      // starts once nothing waits to be tiered): that is the broker's own work.
      await ka.connect();
      await ka.alterConfigs(tableOn([{ name: 'iceberg.commit.interval.ms', value: '1000' }]));
      await ka.disconnect();
      for (let waited = 0; waited < 120_000 && (await metric(metrics, 'floe_tiering_backlog_segments')) > 0; waited += 250) await new Promise((r) => setTimeout(r, 250));
    }
    execFileSync('sync');
    const filesBefore = await metric(metrics, 'floe_table_data_files');
    const after = await phase();
    phases.push(['after', after]);
    const filesMerged = filesBefore - (await metric(metrics, 'floe_table_data_files'));
    const last = out.at(-1)!;
    out[out.length - 1] = { ...last, after, filesMerged };
    progress(`${mode}: after (${filesMerged} data files fewer by compaction during the phase): p99 ${after.latency.p99.toFixed(2)} ms, dirty pages peaked at ${after.dirtyPeak.toFixed(2)} of the writeback threshold`);

    for (const [topic, n, expected] of [['latency', partitions, acknowledged] as const, ...[...backlogs].map(([t, records]) => [t, 4, records] as const)]) {
      const stored = (await logEndOffsets(admin, topic, n)).reduce((a, b) => a + Number(b), 0);
      if (stored !== expected) throw new Error(`${topic}: ${expected} records acknowledged, ${stored} in the log`);
    }
    return out;
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await floe.stop();
    if (profileDir !== undefined) {
      progress(`${mode}: the broker's busiest thread over the whole run (idle and busy phases, backlog fill included):`);
      await busiestProfile(profileDir)
        .then((busiest) => {
          if (busiest === undefined) return progress(`no CPU profile was written to ${profileDir}`);
          printProfile(busiest);
          printStretches(busiest, phases);
        })
        .catch((err: unknown) => progress(`no profile: ${String(err)}`));
    }
  }
}

/**
 * For each phase, the broker's thread's longest stretches away from its event loop: every request that arrived
 * during one waited at least that long, so these are where the phase's tail latency comes from.
 */
function printStretches(profile: CpuProfile, phases: readonly [string, Phase][]): void {
  for (const [name, p] of phases) {
    const self = topSelfTime(profile, 6, p.window);
    console.log(`\n${name} phase: the broker's thread was busy ${((self.busyMs / self.totalMs) * 100).toFixed(0)} % of ${(self.totalMs / 1000).toFixed(1)} s; top self time: ${self.frames.map((f) => `${f.frame} ${f.selfMs.toFixed(0)} ms`).join(', ')}`);
    const stretches = longestBusyStretches(profile, p.window[0], p.window[1], 5);
    console.log(`\n${name} phase: the broker's thread's longest stretches away from its event loop (the longest gap between samples says it waited for a core):`);
    for (const s of stretches) {
      console.log(`  ${s.ms.toFixed(1)} ms at +${((s.startUs - p.window[0]) / 1000).toFixed(0)} ms (longest gap ${s.longestGapMs.toFixed(1)} ms); self: ${s.frames.map(([f, ms]) => `${f} ${ms.toFixed(1)}`).join(', ')}`);
      console.log(`      in: ${s.ours.map(([f, ms]) => `${f} ${ms.toFixed(1)}`).join(', ')}`);
    }
  }
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'floe-busy-bench-'));
  try {
    const rows: Row[] = [];
    for (const mode of modes) rows.push(...(await run(mode, work)));
    const headers = ['conversion on', 'round', 'requests/s', 'idle p50 ms', 'idle p99', 'idle p99.9', 'busy p50 ms', 'busy p99', 'busy p99.9', 'after p50 ms', 'after p99', 'after p99.9', 'busy/idle p99', 'busy/after p99', 'dirty peak idle/busy/after', 'broker thread CPU µs per request idle/busy/after', 'event-loop max delay ms idle/busy/after', 'broker-side p99 ≤ ms idle/busy/after', 'append wait p99 ≤ ms idle/busy/after', 'log write p99 ≤ ms idle/busy/after', 'segments converted while busy', 'data files merged after'];
    const modeName = (mode: string) => (mode === 'workers' ? 'worker threads' : "the broker's thread");
    const table: Cell[][] = rows.map((r) => {
      const phases = r.after === undefined ? [r.idle, r.busy] : [r.idle, r.busy, r.after];
      const each = (f: (x: Phase) => string) => phases.map(f).join(' / ');
      return [
        modeName(r.mode),
        r.round,
        Math.round(r.rate),
        r.idle.latency.p50,
        r.idle.latency.p99,
        r.idle.latency.p999,
        r.busy.latency.p50,
        r.busy.latency.p99,
        r.busy.latency.p999,
        r.after?.latency.p50 ?? '-',
        r.after?.latency.p99 ?? '-',
        r.after?.latency.p999 ?? '-',
        `${(r.busy.latency.p99 / r.idle.latency.p99).toFixed(2)}x`,
        r.after === undefined ? '-' : `${(r.busy.latency.p99 / r.after.latency.p99).toFixed(2)}x`,
        each((x) => x.dirtyPeak.toFixed(2)),
        each((x) => x.mainUsPerRequest.toFixed(0)),
        each((x) => x.loopMaxMs.toFixed(0)),
        each((x) => String(x.brokerP99Ms)),
        each((x) => String(x.appendWaitP99Ms)),
        each((x) => String(x.writeP99Ms)),
        `${r.segmentsDuringBusy} of ~${r.segmentsBacklog}`,
        r.filesMerged ?? '-',
      ];
    });
    // The figure to read: each kind of phase's median p99 over the rounds, with the range beside it.
    const summaryHeaders = ['conversion on', 'rounds', 'idle p99 ms, median (range)', 'busy p99 ms, median (range)', 'busy/idle p99 (medians)', 'busy p99 above every idle p99'];
    const summary: Cell[][] = modes.map((mode) => {
      const rs = rows.filter((r) => r.mode === mode);
      const idle = rs.map((r) => r.idle.latency.p99);
      const busy = rs.map((r) => r.busy.latency.p99);
      const range = (xs: number[]) => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)})`;
      return [modeName(mode), rs.length, range(idle), range(busy), `${(median(busy) / median(idle)).toFixed(2)}x`, `${busy.filter((b) => b > Math.max(...idle)).length} of ${busy.length}`];
    });
    const setup = `${partitions} partitions, ${batchBytes / 1024} KiB batches, acks=1, open loop at ${fixedRate > 0 ? `${fixedRate} requests/s` : `${rateShare * 100} % of the closed-loop maximum`} for ${durationMs} ms per phase (page cache written back before each), ${rounds} rounds of idle and busy phases; backlog ${backlogMb} MiB in ${segmentMb} MiB segments, table compaction ${compaction === 'true' ? 'on' : 'off'}; broker build ${build}${floeFlags.length > 0 ? `; ${floeFlags.join(' ')}` : ''}${nodeFlags.length > 0 ? `; node ${nodeFlags.join(' ')}` : ''}`;
    console.log(`\nProduce latency, tiering idle vs busy: ${setup}\n`);
    console.log(formatTable(summaryHeaders, summary));
    console.log(`\nEach round:\n\n${formatTable(headers, table)}`);
    console.log(`\nMarkdown:\n\n${formatMarkdownTable(summaryHeaders, summary)}\n\n${formatMarkdownTable(headers, table)}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
