// Conversion peer: Apache Iceberg's Kafka Connect sink (Iceberg 1.12.0, Kafka Connect 4.3.2, standalone worker)
// reading a topic from Apache Kafka 4.4 into an Iceberg table, against Floe tiering the same records into
// its table, in the same run. Both are backfills of a topic that is already full: the same records (the
// tiering benches' text events in zstd producer batches, bench/tiering/segment.ts) go to both brokers first,
// then the conversion starts (Connect: the connector is created on a worker that is already up; Floe:
// `iceberg.enabled` is switched on through the admin API) and runs until the table's current snapshot holds
// every record. Each run starts a fresh Connect worker and a fresh Floe, and each converts an 8 MiB warm-up
// topic first (JIT, class loading, catalog), not measured. The figure is MB of uncompressed records (the batches' records sections) per CPU second of
// the converting process over that span (Connect's JVM, every thread; Floe's process, its conversion
// workers included), and per second of wall time. The JVM's start-up CPU is reported apart, not counted.
// Kafka's broker serving the sink's fetches is reported apart too, not counted. Both tables must end with
// exactly the records produced, in zstd Parquet pages, or the run fails. Floe's topics have table compaction
// off (iceberg.compaction.enabled=false): the sink only converts, and with compaction on Floe starts merging
// the small files of the first segments while the rest are still being converted and measured.
//
// Run from nothing: bash bench/peer/run.sh connect [--quick]   (installs Kafka and Connect from Maven Central)
// Options: --runs=3 --mb=256 (MiB of log bytes, over all partitions) --partitions=4 --tasks=1 (the sink's
//          tasks.max) --commit-ms=2000 (both sides' commit interval) --warm-mb=8 (MiB of the unmeasured
//          warm-up conversion on each side) --build=src|dist --keep (keep the files) --floe-only (no Kafka,
//          no Connect: Floe's row alone, to measure a change to the conversion quickly)
// --quick: 1 run of 64 MiB (under 2 minutes).
import { execSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeResponse, encodeRequest } from '../../protocol/index.js';
import { iterateBatches } from '../../protocol/record-batch/batches.js';
import { recordsSection } from '../../protocol/record-batch/record-batch.js';
import { createTopic } from '../lib/admin.js';
import { BenchArgs } from '../lib/args.js';
import { LoadClient } from '../lib/load-client.js';
import { cpuSeconds, threadsCpuSeconds } from '../lib/proc-stats.js';
import { adminUrl, spawnFloe, type Build } from '../lib/processes.js';
import { MiB } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { buildSegment } from '../tiering/segment.js';
import { connectorFailure, createConnector, deleteConnector, floeTableState, hadoopTableState, icebergSinkConfig, parquetCodecs, startConnectWorker, type TableState } from './connect-worker.js';
import { startKafka, type KafkaPeer } from './kafka-broker.js';
import { ratio, stat } from './peers.js';

const args = new BenchArgs(
  process.argv.slice(2),
  'usage: connect.bench.ts [--quick] [--runs=3] [--mb=256] [--partitions=4] [--tasks=1] [--commit-ms=2000] [--warm-mb=8] [--build=src|dist] [--keep] [--floe-only]\n' +
    "Iceberg's Kafka Connect sink (fed by Apache Kafka) against Floe's tiering, converting the same records: MB/s of uncompressed records per core.",
);
const quick = args.flag('quick');
const runs = args.number('runs', quick ? 1 : 3);
const mb = args.number('mb', quick ? 64 : 256);
const partitions = args.number('partitions', 4);
const tasks = args.number('tasks', 1);
const commitMs = args.number('commit-ms', 2000);
const build = args.string('build', 'src') as Build;
const keep = args.flag('keep');
const floeOnly = args.flag('floe-only');
/** Node and V8 flags for Floe's process (space-separated), for experiments: --node-flags='--max-semi-space-size=64'. */
const nodeFlags = args.string('node-flags', '').split(' ').filter((f) => f !== '');
/** MiB converted first on each side in each run, not measured: the JIT and the code paths warm up. */
const WARM_MB = args.number('warm-mb', 8);
/** How long a conversion may take before the run fails. */
const TIMEOUT_MS = 900_000;

/** The records of one partition: its log bytes, record count and uncompressed records bytes. */
interface Workload {
  readonly segment: Buffer;
  readonly records: number;
  readonly recordBytes: number;
}

function workload(totalMiB: number): Workload {
  const segment = buildSegment(totalMiB / partitions, 'zstd', 'text');
  let records = 0;
  let recordBytes = 0;
  for (const b of iterateBatches(segment)) {
    records += segment.readInt32BE(b.start + 57); // the v2 header's record count
    recordBytes += recordsSection(segment, b.start, b.end, 'zstd', 64 * MiB).length;
  }
  return { segment, records, recordBytes };
}

interface ProduceResponse {
  responses: { partitionResponses: { index: number; errorCode: number; errorMessage?: string | null; recordErrors?: { batchIndexErrorMessage: string | null }[] }[] }[];
}

/** Sends the workload's batches to every partition of `topic` (one Produce, acks=all, per batch and partition). */
async function produce(port: number, topic: string, w: Workload): Promise<void> {
  const client = await LoadClient.connect(port, 1);
  try {
    let correlationId = 1;
    for (const b of iterateBatches(w.segment)) {
      // As a producer sends it: base offset 0 (Kafka refuses others; the CRC does not cover the field).
      const records = Buffer.from(w.segment.subarray(b.start, b.end));
      records.writeBigInt64BE(0n, 0);
      // A topic just created may not be known yet (UNKNOWN_TOPIC_OR_PARTITION, 3) or have no leader yet
      // (NOT_LEADER_OR_FOLLOWER, 6): those partitions try again, for 10 s at most.
      let pending = Array.from({ length: partitions }, (_, index) => index);
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, 100));
        const id = correlationId++;
        const frame = encodeRequest(
          { apiKey: 0, apiVersion: 9, correlationId: id, clientId: 'connect-bench' },
          { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: pending.map((index) => ({ index, records })) }] },
        );
        const { body } = decodeResponse(0, 9, await client.request(frame, id));
        const failed = (body as unknown as ProduceResponse).responses.flatMap((t) => t.partitionResponses).filter((r) => r.errorCode !== 0);
        const e = failed.find((r) => (r.errorCode !== 3 && r.errorCode !== 6) || attempt >= 100);
        if (e !== undefined) throw new Error(`produce to ${topic} failed: error ${e.errorCode} ${e.errorMessage ?? ''} ${e.recordErrors?.[0]?.batchIndexErrorMessage ?? ''}`);
        pending = failed.map((r) => r.index);
      }
    }
  } finally {
    await client.close();
  }
}

interface Conversion {
  readonly wall: number;
  readonly cpu: number;
  /** CPU seconds the process spent before the conversion started (the JVM's start-up; 0 for Floe, not measured). */
  readonly startupCpu: number;
  /** CPU seconds Kafka's broker spent meanwhile (serving the sink). */
  readonly brokerCpu: number;
  readonly table: TableState;
  /** Floe only: where its CPU seconds went (floeThreads). */
  readonly split?: ThreadSplit;
}

interface ThreadSplit {
  readonly main: number;
  readonly workers: number;
  readonly other: number;
}

/** Polls `state` until the table holds `expected` records; fails on more, on `failure`, or after TIMEOUT_MS. */
async function waitForRecords(what: string, expected: number, state: () => Promise<TableState | undefined>, failure: () => Promise<string | undefined>): Promise<TableState> {
  const t0 = performance.now();
  let last: TableState | undefined;
  for (let i = 0; ; i++) {
    last = await state();
    if (last !== undefined && last.totalRecords >= expected) {
      if (last.totalRecords > expected) throw new Error(`${what}: the table holds ${last.totalRecords} records, ${expected} were produced`);
      return last;
    }
    if (i % 20 === 0) {
      const f = await failure();
      if (f !== undefined) throw new Error(`${what} failed: ${f}`);
    }
    if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`${what}: ${last?.totalRecords ?? 0} of ${expected} records in the table after ${TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function checkZstd(what: string, dir: string, expectedFiles: number): Promise<void> {
  const { files, codecs } = await parquetCodecs(dir);
  if (files < expectedFiles || codecs.size !== 1 || !codecs.has('ZSTD')) throw new Error(`${what}: ${files} Parquet files (the table names ${expectedFiles}), pages in ${[...codecs].join(', ') || 'nothing'}; expected zstd`);
}

/** CPU seconds per thread name (numbers dropped, so pools add up: "C2 CompilerThre", "task-thread-iceberg-sink-"). */
function threadGroups(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of threadsCpuSeconds(pid).values()) {
    const name = t.name.replace(/[\d#]+/g, '').trim();
    out.set(name, (out.get(name) ?? 0) + t.seconds);
  }
  return out;
}

/** The threads that spent most CPU between two threadGroups readings, as "name 1.2 s" (threads that ended are missed). */
function topThreads(before: Map<string, number>, after: Map<string, number>, n = 6): string {
  return [...after]
    .map(([name, s]) => [name, s - (before.get(name) ?? 0)] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, s]) => `${name} ${s.toFixed(1)} s`)
    .join(', ');
}

/**
 * Where Floe's CPU went since `before` (a threadsCpuSeconds reading): its main thread (the event loop:
 * produce, fetch, commits, uploads), the conversion workers (the threads running at a nice value above the
 * main thread's, iceberg.convert.workers.nice), and the rest (libuv's pool: file reads and writes; V8's
 * garbage collection and compiler threads). Threads that ended meanwhile are missed.
 */
function floeThreads(pid: number, before: ReturnType<typeof threadsCpuSeconds>): ThreadSplit {
  const now = threadsCpuSeconds(pid);
  const mainNice = now.get(pid)?.nice ?? 0;
  const split = { main: 0, workers: 0, other: 0 };
  for (const [tid, t] of now) {
    const s = t.seconds - (before.get(tid)?.seconds ?? 0);
    if (tid === pid) split.main += s;
    else if (t.nice > mainNice) split.workers += s;
    else split.other += s;
  }
  return split;
}

/**
 * Each thread's CPU seconds since `before`, as "n:seconds" in the order the threads started (n = thread id
 * minus the process id; "w" marks a conversion worker, by its nice value). Node names every thread "node",
 * so the start order is what tells them apart: V8's platform threads (GC and compiler) come first, then
 * libuv's pool, then worker threads.
 */
function byThread(pid: number, before: ReturnType<typeof threadsCpuSeconds>): string {
  return [...threadsCpuSeconds(pid)].sort((a, b) => a[0] - b[0]).map(([tid, t]) => `${tid - pid}${t.nice > (before.get(pid)?.nice ?? 0) ? 'w' : ''}:${(t.seconds - (before.get(tid)?.seconds ?? 0)).toFixed(2)}`).join(' ');
}

/** Creates `topic` on Kafka with the settings the records need, and produces `w` to it. */
async function kafkaTopic(kafka: KafkaPeer, topic: string, w: Workload): Promise<void> {
  const admin = await LoadClient.connect(kafka.port, 1);
  try {
    // The records' timestamps are from 2023: Kafka would refuse them (message.timestamp.before.max.ms) or
    // delete them at its first retention check.
    await createTopic(admin, topic, partitions, { 'retention.ms': '-1', 'message.timestamp.before.max.ms': String(2n ** 63n - 1n) });
    await createTopic(admin, `${topic}-control`, 1);
  } finally {
    await admin.close();
  }
  await produce(kafka.port, topic, w);
}

/**
 * One Connect run: a fresh worker converts the small warm-up topic first (JIT, class loading, the catalog),
 * then the measured one with a second connector, each into its own table.
 */
async function connectRun(kafka: KafkaPeer, w: Workload, warm: Workload, work: string, run: number): Promise<Conversion> {
  const dir = join(work, `connect-${run}`);
  await mkdir(dir, { recursive: true });
  progress(`connect run ${run + 1}: producing ${mb} MiB to Apache Kafka`);
  await kafkaTopic(kafka, `warm-${run}`, warm);
  await kafkaTopic(kafka, `src-${run}`, w);
  progress(`connect run ${run + 1}: starting the Kafka Connect worker`);
  const worker = await startConnectWorker(dir, `127.0.0.1:${kafka.port}`);
  try {
    const warehouse = join(dir, 'warehouse');
    const convert = async (topic: string, records: number): Promise<TableState> => {
      const name = `sink-${topic}`;
      await createConnector(worker, name, icebergSinkConfig({ name, topic, table: `bench.${topic.replace('-', '_')}`, warehouse, controlTopic: `${topic}-control`, tasks, commitIntervalMs: commitMs }));
      const table = await waitForRecords(`Kafka Connect, ${topic}`, records, () => hadoopTableState(join(warehouse, 'bench', topic.replace('-', '_'))), async () => {
        const f = await connectorFailure(worker, name);
        return f === undefined ? undefined : `${f}\n${worker.tail()}`;
      });
      await deleteConnector(worker, name);
      return table;
    };
    const startupCpu = cpuSeconds(worker.pid);
    await convert(`warm-${run}`, warm.records * partitions);
    const broker0 = cpuSeconds(kafka.pid);
    const threads0 = threadGroups(worker.pid);
    const cpu0 = cpuSeconds(worker.pid);
    const t0 = performance.now();
    const table = await convert(`src-${run}`, w.records * partitions);
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(worker.pid) - cpu0;
    const brokerCpu = cpuSeconds(kafka.pid) - broker0;
    progress(`connect run ${run + 1}: ${cpu.toFixed(1)} CPU s in ${wall.toFixed(1)} s; busiest threads: ${topThreads(threads0, threadGroups(worker.pid))}`);
    await checkZstd(`Kafka Connect run ${run + 1}`, join(warehouse, 'bench', `src_${run}`), table.dataFiles);
    return { wall, cpu, startupCpu, brokerCpu, table };
  } finally {
    await worker.stop();
    if (!keep) await rm(dir, { recursive: true, force: true });
  }
}

/** One Floe run: a fresh broker tiers the warm-up topic first, then the measured one, each into its table. */
async function floeRun(w: Workload, warm: Workload, work: string, run: number): Promise<Conversion> {
  const dir = join(work, `floe-${run}`);
  const warehouse = join(dir, 'wh');
  const floe = await spawnFloe({
    dataDir: join(dir, 'log'),
    build,
    nodeFlags,
    flags: [`--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=-1', '--schema.registry.port=-1', `--iceberg.commit.interval.ms=${commitMs}`],
  });
  try {
    const url = adminUrl(floe);
    if (url === undefined) throw new Error('no admin URL in the broker output');
    progress(`floe run ${run + 1}: producing ${mb} MiB to Floe (tables off)`);
    for (const [topic, records] of [[`warm-${run}`, warm], [`src-${run}`, w]] as const) {
      const admin = await LoadClient.connect(floe.port, 1);
      try {
        // 8 MiB segments, as backfill.bench.ts: each closed segment becomes one Parquet file. Table compaction
        // off: it would start merging those files while the conversion is measured (the sink compacts nothing).
        await createTopic(admin, topic, partitions, { 'iceberg.enabled': 'false', 'segment.bytes': String(8 * MiB), 'retention.ms': '-1', 'iceberg.compaction.enabled': 'false' });
      } finally {
        await admin.close();
      }
      await produce(floe.port, topic, records);
    }
    const pid = floe.child.pid!;
    const convert = async (topic: string, records: number): Promise<TableState> => {
      const set = await fetch(`${url}/api/configs/topics/${topic}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ set: { 'iceberg.enabled': 'true' } }) });
      if (!set.ok) throw new Error(`enabling the table failed: ${set.status} ${await set.text()}`);
      const state = () => floeTableState(warehouse, 'kafka', topic);
      return waitForRecords(`Floe, ${topic}`, records, state, async () => (floe.child.exitCode !== null ? `Floe exited:\n${floe.output().slice(-4000)}` : undefined));
    };
    await convert(`warm-${run}`, warm.records * partitions);
    const threads0 = threadsCpuSeconds(pid);
    const cpu0 = cpuSeconds(pid);
    const t0 = performance.now();
    const table = await convert(`src-${run}`, w.records * partitions);
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(pid) - cpu0;
    const split = floeThreads(pid, threads0);
    progress(`floe run ${run + 1}: ${cpu.toFixed(1)} CPU s in ${wall.toFixed(1)} s; main thread ${split.main.toFixed(1)} s, conversion workers ${split.workers.toFixed(1)} s, other threads ${split.other.toFixed(1)} s; by thread id: ${byThread(pid, threads0)}`);
    await checkZstd(`Floe run ${run + 1}`, join(warehouse, 'kafka', `src-${run}`), table.dataFiles);
    return { wall, cpu, startupCpu: 0, brokerCpu: 0, table, split };
  } finally {
    await floe.stop();
    if (!keep) await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  progress(`building ${mb / partitions} MiB of text records in zstd batches for each of ${partitions} partitions`);
  const w = workload(mb);
  const warm = workload(WARM_MB);
  const recordMB = (w.recordBytes * partitions) / 1e6;
  const work = await mkdtemp(join(tmpdir(), 'floe-connect-bench-'));
  progress(`${w.records * partitions} records, ${recordMB.toFixed(1)} MB uncompressed, ${((w.segment.length * partitions) / 1e6).toFixed(1)} MB of log; work in ${work}`);
  let kafka: KafkaPeer | undefined;
  const connect: Conversion[] = [];
  const floe: Conversion[] = [];
  try {
    if (floeOnly) {
      for (let run = 0; run < runs; run++) {
        const f = await floeRun(w, warm, work, run);
        floe.push(f);
        progress(`run ${run + 1}/${runs}: Floe ${(recordMB / f.cpu).toFixed(1)} MB/s per core (${f.wall.toFixed(1)} s, ${f.cpu.toFixed(1)} CPU s)`);
      }
    } else {
      await mkdir(join(work, 'kafka'), { recursive: true });
      progress('starting Apache Kafka (KRaft, one node)');
      // Without the group coordinator's 3 s wait for more members, the sink's control-topic consumer (which
      // starts at the latest offset) joins before the coordinator's first START_COMMIT; with it, that first
      // commit is missed and waits out iceberg.control.commit.timeout-ms (30 s) for every connector.
      kafka = await startKafka(join(work, 'kafka'), { extraProps: ['group.initial.rebalance.delay.ms=0'] });
      for (let run = 0; run < runs; run++) {
        // Which side goes first alternates, so neither always runs on the fresher machine.
        const sides = [async () => connect.push(await connectRun(kafka!, w, warm, work, run)), async () => floe.push(await floeRun(w, warm, work, run))];
        for (const side of run % 2 === 0 ? sides : sides.reverse()) await side();
        const c = connect.at(-1)!;
        const f = floe.at(-1)!;
        progress(`run ${run + 1}/${runs}: Connect ${(recordMB / c.cpu).toFixed(1)} MB/s per core (${c.wall.toFixed(1)} s, ${c.cpu.toFixed(1)} CPU s), Floe ${(recordMB / f.cpu).toFixed(1)} MB/s per core (${f.wall.toFixed(1)} s, ${f.cpu.toFixed(1)} CPU s)`);
      }
    }
  } finally {
    await kafka?.stop();
    if (!keep) await rm(work, { recursive: true, force: true });
  }

  const records = w.records * partitions;
  const perCore = (xs: readonly Conversion[]) => stat(xs.map((x) => recordMB / x.cpu));
  const wallRate = (xs: readonly Conversion[]) => stat(xs.map((x) => recordMB / x.wall));
  const row = (what: string, xs: readonly Conversion[]): Cell[] => {
    const wall = stat(xs.map((x) => x.wall));
    const last = xs.at(-1)!.table;
    return [what, records, recordMB, wall.median, wall.spread, stat(xs.map((x) => x.cpu)).median, perCore(xs).median, perCore(xs).spread, wallRate(xs).median, last.dataFiles, last.totalFilesBytes / 1e6];
  };
  const splitMedian = (k: keyof ThreadSplit) => stat(floe.map((x) => x.split?.[k] ?? 0)).median.toFixed(1);
  const headers = ['converter', 'records', 'record MB', 'wall s', 'spread', 'CPU s', 'MB/s per core', 'spread', 'MB/s wall', 'data files', 'Parquet MB'];
  const rows: Cell[][] = floeOnly ? [row('Floe tiering (broker process)', floe)] : [
    row("Iceberg's Kafka Connect sink (JVM)", connect),
    row('Floe tiering (broker process)', floe),
    ['Floe/Connect', '', '', ratio(stat(floe.map((x) => x.wall)).median, stat(connect.map((x) => x.wall)).median), '', ratio(stat(floe.map((x) => x.cpu)).median, stat(connect.map((x) => x.cpu)).median), ratio(perCore(floe).median, perCore(connect).median), '', ratio(wallRate(floe).median, wallRate(connect).median), '', ''],
  ];
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  } catch {
    // not a checkout
  }
  const setup =
    `commit ${commit}, ${cpus().length} cores, load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${runs} runs (median; spread = half the range, as a share of the median); ` +
    `${records.toLocaleString('en-US')} records, ${recordMB.toFixed(1)} MB uncompressed (${mb} MiB of zstd producer batches) over ${partitions} partitions; commit interval ${commitMs} ms on both sides; ` +
    (floeOnly ? '' : `Connect: Kafka Connect 4.3.2 standalone, Iceberg sink 1.12.0, tasks.max=${tasks}, Hadoop catalog on local disk, fed by Apache Kafka 4.4.0; `) + `Floe ${build}, 8 MiB segments, local warehouse`;
  const connectExtra = floeOnly ? '' :
    `Not counted: the Connect JVM's start-up before the first connector was created (median ${stat(connect.map((c) => c.startupCpu)).median.toFixed(1)} CPU s), ` +
    `the ${WARM_MB} MiB warm-up conversion on each side, and Kafka's broker serving the sink (median ${stat(connect.map((c) => c.brokerCpu)).median.toFixed(1)} CPU s). `;
  const extra =
    connectExtra +
    `Floe's CPU s by thread (medians): main ${splitMedian('main')}, conversion workers ${splitMedian('workers')}, other threads (libuv's pool, V8's GC and compiler) ${splitMedian('other')}.`;
  console.log(`\nConversion into Iceberg, the same records: ${setup}\n\n${formatTable(headers, rows)}\n\n${extra}\n`);
  console.log(`Markdown:\n\n${setup}\n\n${formatMarkdownTable(headers, rows)}\n\n${extra}\n`);
}

await main();
