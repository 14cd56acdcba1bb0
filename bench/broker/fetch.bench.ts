// Hot-log fetch throughput: fill a topic, then read every partition from offset 0 to its end with
// sequential Fetch requests (large max bytes), several partitions at once. Baselines in the same run:
//   memory - a server writing responses of the same sizes from memory to the socket (same client, framing)
//   fs     - reading the topic's segment files with positional fs reads of the same size (no socket)
// Run:   npx tsx bench/broker/fetch.bench.ts [--quick] [--build=src|dist] [--profile]
// Options: --partitions=4 --consumers=1,4 (connections, one row each; partitions are spread over them)
//          --fill=256m (per partition) --fetch-bytes=4m (partitionMaxBytes) --batch=1m --runs=5
//          --gc (Floe runs with --trace-gc: full mark-compacts per GB read, a column)
import { mkdir, mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchArgs } from '../lib/args.js';
import { createTopic, logEndOffsets } from '../lib/admin.js';
import { printProfiles } from '../lib/cpu-profile.js';
import { LoadClient } from '../lib/load-client.js';
import { spawnBaseline, spawnFloe, type Build, type ChildServer } from '../lib/processes.js';
import { cpuSeconds } from '../lib/proc-stats.js';
import { formatSize, mbPerSec, median, MiB, pct } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { FETCH_VERSION, produceWorkload } from '../lib/workload.js';
import { fetchAll } from '../lib/fetch-all.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: fetch.bench.ts [--quick] [--build=src|dist] [--profile] [--partitions=4] [--consumers=1,4] [--fill=256m] [--fetch-bytes=4m] [--batch=1m] [--runs=5] [--gc]');
const quick = args.flag('quick');
const build = args.string('build', 'src') as Build;
const partitions = args.number('partitions', 4);
const consumerCounts = args.numbers('consumers', [1, 4]).map((n) => Math.max(1, Math.min(partitions, n)));
const fillBytes = args.numbers('fill', [quick ? 64 * MiB : 256 * MiB])[0] ?? 256 * MiB;
const fetchBytes = args.numbers('fetch-bytes', [4 * MiB])[0] ?? 4 * MiB;
const batchBytes = args.numbers('batch', [MiB])[0] ?? MiB;
const runs = args.number('runs', quick ? 3 : 5);
const profile = args.flag('profile');
const traceGc = args.flag('gc');
const topic = 'fetch-bench';

/** Produces into every partition until each holds about `fillBytes`; returns the log end offsets. */
async function fill(port: number, admin: LoadClient): Promise<bigint[]> {
  const w = produceWorkload({ topic, partitions, batchBytes, acks: 1 });
  const client = await LoadClient.connect(port, 4);
  let bytes = 0;
  while (bytes < fillBytes * partitions) {
    const r = await client.closedLoop(w.requests, { window: 8, durationMs: 500 });
    r.perRequest.forEach((n, i) => (bytes += n * (w.requests[i]?.payloadBytes ?? 0)));
  }
  await client.close();
  return logEndOffsets(admin, topic, partitions);
}

/** The memory server returns frames of the same sizes, one request at a time per consumer. */
async function replay(client: LoadClient, sizes: readonly number[][]): Promise<number> {
  let bytes = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    sizes.map(async (list, c) => {
      for (const [i, size] of list.entries()) {
        const req = Buffer.allocUnsafe(12);
        req.writeInt32BE(8, 0);
        req.writeInt32BE(i + 1, 4);
        req.writeInt32BE(size - 4, 8);
        bytes += (await client.request(req, i + 1, c)).length;
      }
    }),
  );
  return mbPerSec(bytes, Number(process.hrtime.bigint() - t0));
}

/** Reads every segment file of the topic with positional reads of `fetchBytes`, partitions in parallel. */
async function readSegments(dataDir: string): Promise<number> {
  let bytes = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: partitions }, async (_, p) => {
      const dir = join(dataDir, `${topic}-${p}`);
      const buf = Buffer.allocUnsafe(fetchBytes);
      for (const name of (await readdir(dir)).filter((n) => n.endsWith('.log')).sort()) {
        const h = await open(join(dir, name), 'r');
        try {
          for (let pos = 0; ; ) {
            const { bytesRead } = await h.read(buf, 0, buf.length, pos);
            if (bytesRead === 0) break;
            pos += bytesRead;
            bytes += bytesRead;
          }
        } finally {
          await h.close();
        }
      }
    }),
  );
  return mbPerSec(bytes, Number(process.hrtime.bigint() - t0));
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'floe-fetch-bench-'));
  const servers: ChildServer[] = [];
  const clients: LoadClient[] = [];
  try {
    const dataDir = join(work, 'floe');
    await mkdir(dataDir);
    progress(`starting Floe (${build}) and the memory baseline in ${work}`);
    const floe = await spawnFloe({
      dataDir,
      build,
      flags: ['--message.max.bytes=8388608', '--auto.create.topics.enable=false'],
      ...(profile ? { cpuProfDir: join(work, 'profile') } : {}),
      ...(traceGc ? { nodeFlags: ['--trace-gc'] } : {}),
    });
    servers.push(floe);
    // With --trace-gc, V8 prints a line per collection on stdout.
    let fullGcs = 0;
    if (traceGc) floe.child.stdout?.on('data', (chunk: Buffer) => (fullGcs += chunk.toString().split('Mark-Compact').length - 1));
    const floePid = floe.child.pid!;
    const memory = await spawnBaseline('memory');
    servers.push(memory);
    const admin = await LoadClient.connect(floe.port, 1);
    clients.push(admin);
    await createTopic(admin, topic, partitions, { 'max.message.bytes': String(8 * MiB) });
    progress(`filling ${partitions} partitions with ${formatSize(fillBytes)} each (${formatSize(batchBytes)} batches)`);
    const ends = await fill(floe.port, admin);
    progress(`filled: log end offsets ${ends.join(', ')}`);
    const headers = ['partitions', 'consumers', 'fetch bytes', 'data', 'Floe MB/s', 'memory->socket MB/s', 'fs read MB/s', 'Floe/memory', 'Floe/fs', 'Floe CPU s/GB', ...(traceGc ? ['Floe full GCs/GB'] : [])];
    const rows: Cell[][] = [];
    for (const consumers of consumerCounts) {
      const cFloe = await LoadClient.connect(floe.port, consumers);
      const cMemory = await LoadClient.connect(memory.port, consumers);
      clients.push(cFloe, cMemory);
      const samples = { floe: [] as number[], memory: [] as number[], fs: [] as number[], cpu: [] as number[], gcs: [] as number[] };
      for (let run = 0; run <= runs; run++) {
        const cpu0 = cpuSeconds(floePid);
        const gcs0 = fullGcs;
        const f = await fetchAll(cFloe, { topic, ends, consumers, partitionMaxBytes: fetchBytes });
        const cpu = (cpuSeconds(floePid) - cpu0) / (f.bytes / 1e9);
        const gcs = (fullGcs - gcs0) / (f.bytes / 1e9);
        const responses = f.sizes.reduce((a, s) => a + s.length, 0);
        const replayMbps = () => replay(cMemory, f.sizes);
        const fsMbps = () => readSegments(dataDir);
        // Alternate the order of the baselines so neither always runs right after Floe.
        const [m, d] = run % 2 === 0 ? [await replayMbps(), await fsMbps()] : await fsMbps().then(async (x) => [await replayMbps(), x]);
        if (run > 0) {
          samples.floe.push(mbPerSec(f.bytes, f.ns));
          samples.memory.push(m as number);
          samples.fs.push(d as number);
          samples.cpu.push(cpu);
          samples.gcs.push(gcs);
        }
        progress(`${consumers} consumer(s), run ${run}${run === 0 ? ' (warm-up)' : ''}: Floe ${mbPerSec(f.bytes, f.ns).toFixed(0)} MB/s (${responses} responses), memory ${(m as number).toFixed(0)}, fs ${(d as number).toFixed(0)}`);
      }
      await Promise.all([cFloe.close(), cMemory.close()]);
      rows.push([
        partitions,
        consumers,
        formatSize(fetchBytes),
        formatSize(fillBytes * partitions),
        median(samples.floe),
        median(samples.memory),
        median(samples.fs),
        pct(median(samples.floe), median(samples.memory)),
        pct(median(samples.floe), median(samples.fs)),
        median(samples.cpu).toFixed(2),
        ...(traceGc ? [median(samples.gcs).toFixed(0)] : []),
      ]);
    }
    await admin.close();
    await Promise.all(servers.map((s) => s.stop()));

    console.log(`\nHot-log fetch throughput (MB/s of record batches; ${runs} runs, medians after a warm-up; Fetch v${FETCH_VERSION}, one request in flight per consumer), broker build: ${build}\n`);
    console.log(formatTable(headers, rows));
    console.log(`\nMarkdown:\n\n${formatMarkdownTable(headers, rows)}`);
    if (profile) await printProfiles(join(work, 'profile'));
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await Promise.allSettled(servers.map((s) => s.stop()));
    await rm(work, { recursive: true, force: true });
  }
}

await main();
