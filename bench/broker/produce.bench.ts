// Produce throughput of a Floe broker process vs baselines measured in the same run, with the same client
// and the same request bytes:
//   sink   - a TCP server that reads and discards the requests (socket ceiling)
//   ingest - a hand-written server: socket -> frame -> CRC32C -> positional fs append (raw ingest path)
//   file   - fs writes of the same batches from this process, no socket (disk ceiling)
// Also the CPU seconds per GB acknowledged of Floe's process and of its main thread, and of the ingest server.
// Run:   npx tsx bench/broker/produce.bench.ts [--quick] [--build=src|dist] [--profile]
// Options: --partitions=1,8,64 --batch=16k,1m --acks=1,-1 --connections=4 --window=8 --duration=3000
//          --runs=5 (medians; one warm-up run is discarded) --value-bytes=512
//          --floe-flags="--iceberg.enabled.default=false ..." (extra Floe settings)
//          --gc (Floe runs with --trace-gc: full mark-compacts per GB acknowledged, a column)
// Compiled: npm run build && node dist/bench/broker/produce.bench.js --build=dist
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeResponse } from '../../protocol/index.js';
import { BenchArgs } from '../lib/args.js';
import { createTopic, deleteTopic, logEndOffsets } from '../lib/admin.js';
import { printProfiles } from '../lib/cpu-profile.js';
import { LoadClient, type ClosedLoopResult } from '../lib/load-client.js';
import { spawnBaseline, spawnFloe, type Build, type ChildServer } from '../lib/processes.js';
import { cpuSeconds, threadCpuSeconds } from '../lib/proc-stats.js';
import { formatSize, mbPerSec, median, MiB, pct, perSec } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { PRODUCE_VERSION, produceWorkload, type LoadRequest, type ProduceWorkload } from '../lib/workload.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: produce.bench.ts [--quick] [--build=src|dist] [--profile] [--partitions=1,8,64] [--batch=16k,1m] [--acks=1,-1] [--connections=4] [--window=8] [--duration=ms] [--runs=n] [--value-bytes=512] [--floe-flags="..."]');
const quick = args.flag('quick');
const build = args.string('build', 'src') as Build;
const partitionsList = args.numbers('partitions', [1, 8, 64]);
const batchList = args.numbers('batch', [16 * 1024, MiB]);
const acksList = args.numbers('acks', [1, -1]) as (1 | -1)[];
const connections = args.number('connections', 4);
const window = args.number('window', 8);
const durationMs = args.number('duration', quick ? 1000 : 3000);
const runs = args.number('runs', quick ? 3 : 5);
const valueBytes = args.number('value-bytes', 512);
const profile = args.flag('profile');
const floeFlags = args.string('floe-flags', '').split(' ').filter((f) => f !== '');
const traceGc = args.flag('gc');

interface Row {
  partitions: number;
  batchBytes: number;
  acks: number;
  floe: number;
  recordsPerSec: number;
  sink: number;
  ingest: number;
  file: number;
  /** CPU seconds per GB acknowledged: Floe's whole process, its main thread, and the ingest baseline's process. */
  floeCpu: number;
  floeMainCpu: number;
  ingestCpu: number;
  /** Full (mark-compact) garbage collections of Floe per GB acknowledged, with --gc. */
  floeFullGcs: number;
}

/** MB/s of record batch bytes answered in one closed-loop run. */
function throughput(w: ProduceWorkload, r: ClosedLoopResult): { mbps: number; bytes: number; records: number } {
  let bytes = 0;
  let records = 0;
  r.perRequest.forEach((n, i) => {
    const req = w.requests[i] as LoadRequest;
    bytes += n * req.payloadBytes;
    records += n * req.records;
  });
  return { mbps: mbPerSec(bytes, r.ns), bytes, records };
}

/** Positional writes of the workload's batches to one file per partition, `inFlight` requests at a time. */
async function fileAppend(dir: string, w: ProduceWorkload, partitions: number, inFlight: number, ms: number): Promise<number> {
  const handles = await Promise.all(Array.from({ length: partitions }, (_, p) => open(join(dir, `file-${p}.log`), 'w')));
  const pos = new Array<number>(partitions).fill(0);
  let written = 0;
  let next = 0;
  const t0 = process.hrtime.bigint();
  const stopAt = t0 + BigInt(Math.round(ms * 1e6));
  const lane = async () => {
    while (process.hrtime.bigint() < stopAt) {
      const r = w.requests[next] as LoadRequest;
      next = (next + 1) % w.requests.length;
      await Promise.all(
        r.batches.map(({ partition, batch }) => {
          const at = pos[partition] as number;
          pos[partition] = at + batch.length;
          written += batch.length;
          return handles[partition]?.write(batch, 0, batch.length, at);
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const ns = Number(process.hrtime.bigint() - t0);
  await Promise.all(handles.map((h) => h.close()));
  return mbPerSec(written, ns);
}

interface ProduceResponse {
  responses: { name: string; partitionResponses: { index: number; errorCode: number; errorMessage: string | null }[] }[];
}

/** Every 64th Floe response is decoded and must report success for every partition. */
function responseChecker(): { onResponse: (frame: Buffer) => void; checked: () => number } {
  let seen = 0;
  let checked = 0;
  return {
    onResponse(frame) {
      if (seen++ % 64 !== 0) return;
      checked++;
      const { body } = decodeResponse(0, PRODUCE_VERSION, frame);
      for (const t of (body as unknown as ProduceResponse).responses) {
        for (const p of t.partitionResponses) {
          if (p.errorCode !== 0) throw new Error(`Floe answered ${t.name}-${p.index} with error ${p.errorCode}: ${p.errorMessage ?? ''}`);
        }
      }
    },
    checked: () => checked,
  };
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'floe-produce-bench-'));
  const servers: ChildServer[] = [];
  const clients: LoadClient[] = [];
  const rows: Row[] = [];
  try {
    const floeData = join(work, 'floe');
    const ingestDir = join(work, 'ingest');
    const fileDir = join(work, 'file');
    await Promise.all([floeData, ingestDir, fileDir].map((d) => mkdir(d)));
    progress(`starting Floe (${build}) and the baseline servers in ${work}`);
    const floe = await spawnFloe({
      dataDir: floeData,
      build,
      flags: ['--message.max.bytes=8388608', '--auto.create.topics.enable=false', ...floeFlags],
      ...(profile ? { cpuProfDir: join(work, 'profile') } : {}),
      ...(traceGc ? { nodeFlags: ['--trace-gc'] } : {}),
    });
    // With --trace-gc, V8 prints a line per collection on stdout.
    let fullGcs = 0;
    if (traceGc) floe.child.stdout?.on('data', (chunk: Buffer) => (fullGcs += chunk.toString().split('Mark-Compact').length - 1));
    servers.push(floe);
    const sink = await spawnBaseline('sink');
    servers.push(sink);
    const ingest = await spawnBaseline('ingest', ingestDir);
    servers.push(ingest);
    const floeAdmin = await LoadClient.connect(floe.port, 1);
    clients.push(floeAdmin);

    for (const partitions of partitionsList) {
      for (const batchBytes of batchList) {
        for (const acks of acksList) {
          const topic = `bench-p${partitions}-b${batchBytes}-a${acks === -1 ? 'all' : acks}`;
          const label = `${partitions} partitions, ${formatSize(batchBytes)} batches, acks=${acks === -1 ? 'all' : acks}`;
          await createTopic(floeAdmin, topic, partitions, { 'max.message.bytes': String(8 * MiB) });
          const w = produceWorkload({ topic, partitions, batchBytes, acks, valueBytes });
          const [cFloe, cSink, cIngest] = await Promise.all([floe, sink, ingest].map((s) => LoadClient.connect(s.port, connections)));
          if (!cFloe || !cSink || !cIngest) throw new Error('could not connect');
          clients.push(cFloe, cSink, cIngest);
          const check = responseChecker();
          let floeRecords = 0;
          const samples = { floe: [] as number[], records: [] as number[], sink: [] as number[], ingest: [] as number[], file: [] as number[], floeCpu: [] as number[], floeMainCpu: [] as number[], ingestCpu: [] as number[], floeFullGcs: [] as number[] };
          const floePid = floe.child.pid!;
          const ingestPid = ingest.child.pid!;
          // Run 0 warms everything up and is discarded; later runs rotate the order so none always goes first.
          for (let run = 0; run <= runs; run++) {
            const ms = run === 0 ? Math.max(300, durationMs / 2) : durationMs;
            const steps: [keyof typeof samples, () => Promise<number>][] = [
              ['floe', async () => {
                const cpu0 = cpuSeconds(floePid);
                const main0 = threadCpuSeconds(floePid);
                const gcs0 = fullGcs;
                const r = await cFloe.closedLoop(w.requests, { window, durationMs: ms, onResponse: check.onResponse });
                const t = throughput(w, r);
                floeRecords += t.records;
                if (run > 0) {
                  samples.records.push(perSec(t.records, r.ns));
                  samples.floeCpu.push((cpuSeconds(floePid) - cpu0) / (t.bytes / 1e9));
                  samples.floeMainCpu.push((threadCpuSeconds(floePid) - main0) / (t.bytes / 1e9));
                  samples.floeFullGcs.push((fullGcs - gcs0) / (t.bytes / 1e9));
                }
                return t.mbps;
              }],
              ['sink', async () => throughput(w, await cSink.closedLoop(w.requests, { window, durationMs: ms })).mbps],
              ['ingest', async () => {
                const cpu0 = cpuSeconds(ingestPid);
                const t = throughput(w, await cIngest.closedLoop(w.requests, { window, durationMs: ms }));
                if (run > 0) samples.ingestCpu.push((cpuSeconds(ingestPid) - cpu0) / (t.bytes / 1e9));
                return t.mbps;
              }],
              ['file', async () => {
                const mbps = await fileAppend(fileDir, w, partitions, connections * window, ms);
                return mbps;
              }],
            ];
            for (let k = 0; k < steps.length; k++) {
              const [name, step] = steps[(k + run) % steps.length] as (typeof steps)[number];
              // Each step starts with the page cache written back: past the kernel's writeback threshold
              // every write slows down, and a step would pay for the bytes the one before it wrote.
              execFileSync('sync');
              const mbps = await step();
              if (run > 0) samples[name].push(mbps);
            }
            progress(`${label}: run ${run}${run === 0 ? ' (warm-up)' : ''}: Floe ${samples.floe.at(-1)?.toFixed(0) ?? '-'} MB/s, sink ${samples.sink.at(-1)?.toFixed(0) ?? '-'}, ingest ${samples.ingest.at(-1)?.toFixed(0) ?? '-'}, file ${samples.file.at(-1)?.toFixed(0) ?? '-'}`);
          }
          // Everything Floe acknowledged must be in its log, exactly once.
          const ends = await logEndOffsets(floeAdmin, topic, partitions);
          const stored = ends.reduce((a, b) => a + Number(b), 0);
          if (stored !== floeRecords) throw new Error(`${topic}: Floe acknowledged ${floeRecords} records but its log holds ${stored}`);
          progress(`${label}: verified ${stored} records in Floe's log, ${check.checked()} responses decoded without errors`);
          await Promise.all([cFloe, cSink, cIngest].map((c) => c.close()));
          await deleteTopic(floeAdmin, topic);
          rows.push({
            partitions,
            batchBytes,
            acks,
            floe: median(samples.floe),
            recordsPerSec: median(samples.records),
            sink: median(samples.sink),
            ingest: median(samples.ingest),
            file: median(samples.file),
            floeCpu: median(samples.floeCpu),
            floeMainCpu: median(samples.floeMainCpu),
            ingestCpu: median(samples.ingestCpu),
            floeFullGcs: median(samples.floeFullGcs),
          });
        }
      }
    }
    await floeAdmin.close();
    await Promise.all(servers.map((s) => s.stop()));

    const headers = ['partitions', 'batch', 'acks', 'Floe MB/s', 'Floe records/s', 'sink MB/s', 'ingest MB/s', 'file MB/s', 'Floe/sink', 'Floe/ingest', 'Floe/file', 'Floe CPU s/GB', 'main thread', 'ingest CPU s/GB', ...(traceGc ? ['Floe full GCs/GB'] : [])];
    const table: Cell[][] = rows.map((r) => [
      r.partitions,
      formatSize(r.batchBytes),
      r.acks === -1 ? 'all' : '1',
      r.floe,
      Math.round(r.recordsPerSec),
      r.sink,
      r.ingest,
      r.file,
      pct(r.floe, r.sink),
      pct(r.floe, r.ingest),
      pct(r.floe, r.file),
      r.floeCpu.toFixed(2),
      r.floeMainCpu.toFixed(2),
      r.ingestCpu.toFixed(2),
      ...(traceGc ? [r.floeFullGcs.toFixed(0)] : []),
    ]);
    const setup = `${connections} connections x ${window} requests in flight, ${runs} runs of ${durationMs} ms (medians, after a warm-up run), ${valueBytes}-byte values, broker build: ${build}${floeFlags.length > 0 ? `, Floe flags: ${floeFlags.join(" ")}` : ""}`;
    console.log(`\nProduce throughput (MB/s of record batches), ${setup}\n`);
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
