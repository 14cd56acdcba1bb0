// Backfill throughput, in MB/s of log bytes per core of the broker process, against the bare conversion of
// the same records in this process (convertSegment on one thread, no upload, no commit) in the same run:
// a topic is filled with tables off, then `iceberg.enabled=true` is set through the admin API and the
// backlog endpoint is polled until the table holds every closed segment. The broker's CPU time (every
// thread: the conversion workers included) over that span gives MB per CPU second; wall time is printed
// too. The broker must end with the whole backlog committed (segments 0), or the run fails.
// With --upsert, each run also backfills the same records into a topic with `iceberg.upsert.enabled=true`
// (5,000 keys per partition), waiting until its `_latest` table has applied everything too: the CPU time
// per MB of the two gives the cost of keeping the upsert table on top of the topic table, in the same run.
// Run: npx tsx bench/tiering/backfill.bench.ts [--mb=256] [--runs=3] [--partitions=4] [--codec=zstd|none] [--values=text|json] [--build=src|dist] [--upsert] [--profile]
import { execSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeRequest, decodeResponse } from '../../protocol/index.js';
import { iterateBatches } from '../../protocol/record-batch/batches.js';
import type { CompressionType } from '../../protocol/record-batch/compression.js';
import { convertSegment } from '../../tiering/convert/segment-to-parquet.js';
import { BenchArgs } from '../lib/args.js';
import { createTopic } from '../lib/admin.js';
import { LoadClient } from '../lib/load-client.js';
import { adminUrl, restCatalogUrl, spawnFloe, type Build } from '../lib/processes.js';
import { cpuSeconds } from '../lib/proc-stats.js';
import { printProfiles } from '../lib/cpu-profile.js';
import { median, MiB } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { buildSegment, type ValueShape } from './segment.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: backfill.bench.ts [--mb=256] [--runs=3] [--partitions=4] [--codec=zstd|none] [--values=text|json] [--build=src|dist]');
const MB = args.number('mb', 256);
const RUNS = args.number('runs', 3);
const PARTITIONS = args.number('partitions', 4);
const CODEC = args.string('codec', 'zstd') as CompressionType;
const VALUES = args.string('values', 'text') as ValueShape;
const BUILD = args.string('build', 'src') as Build;
const UPSERT = args.flag('upsert');
/** Profile the broker (main thread) during each backfill and print where its time went (with --upsert, the upsert run's). */
const PROFILE = args.flag('profile');

interface ProduceResponse {
  responses: { partitionResponses: { errorCode: number }[] }[];
}

/** Bare conversion of `segment` on this thread: MB of log bytes per CPU second. */
async function bareConversion(segment: Buffer): Promise<{ perCore: number; wall: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for await (const f of convertSegment(segment, { partition: 0, targetFileBytes: 1 << 30 })) f.parquet?.release();
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const mb = segment.length / MiB;
  return { perCore: mb / ((c.user + c.system) / 1e6), wall: mb / wall };
}

/** Whether `<topic>_latest` has applied every offset the topic table committed (REST catalog summaries). */
async function upsertCaughtUp(restUrl: string, topic: string, partitions: number): Promise<boolean> {
  const summaryProperty = async (table: string, key: string): Promise<string | undefined> => {
    const res = await fetch(`${restUrl}/v1/namespaces/kafka/tables/${table}`);
    if (!res.ok) return undefined;
    const md = ((await res.json()) as { metadata: { 'current-snapshot-id'?: number; snapshots?: { 'snapshot-id': number; 'parent-snapshot-id'?: number; summary: Record<string, string> }[] } }).metadata;
    const byId = new Map((md.snapshots ?? []).map((s) => [s['snapshot-id'], s]));
    for (let id = md['current-snapshot-id']; id !== undefined && id !== null; id = byId.get(id)?.['parent-snapshot-id']) {
      const v = byId.get(id)?.summary[key];
      if (v !== undefined) return v;
    }
    return undefined;
  };
  for (let p = 0; p < partitions; p++) {
    const committed = await summaryProperty(topic, `floe.kafka.committed-offset.${p}`);
    const applied = (await summaryProperty(`${topic}_latest`, `floe.latest.applied.${p}`))?.split(':')[0];
    if (committed === undefined || applied !== committed) return false;
  }
  return true;
}

async function backfillRun(segments: readonly Buffer[], run: number, upsert = false): Promise<{ mb: number; perCore: number; wall: number }> {
  const work = await mkdtemp(join(tmpdir(), 'floe-backfill-bench-'));
  const profileDir = PROFILE && (upsert || !UPSERT) ? join(work, 'profile') : undefined;
  const floe = await spawnFloe({ dataDir: join(work, 'log'), build: BUILD, ...(profileDir ? { cpuProfDir: profileDir } : {}), flags: [`--iceberg.warehouse=${join(work, 'wh')}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--schema.registry.port=-1', '--iceberg.commit.interval.ms=1000'] });
  try {
    const url = adminUrl(floe);
    if (url === undefined) throw new Error('no admin URL in the broker output');
    const restUrl = restCatalogUrl(floe) ?? '';
    if (upsert && restUrl === '') throw new Error('no REST catalog URL in the broker output');
    const client = await LoadClient.connect(floe.port, 1);
    const topic = `backfill-${run}${upsert ? '-upsert' : ''}`;
    try {
      await createTopic(client, topic, PARTITIONS, { 'iceberg.enabled': 'false', 'segment.bytes': String(8 * MiB), ...(upsert ? { 'iceberg.upsert.enabled': 'true' } : {}) });
      let correlation = 1;
      // Each partition gets its own copy of the batches (their producer sequences are per partition).
      for (const [p, segment] of segments.entries()) {
        for (const b of iterateBatches(segment)) {
          const correlationId = correlation++;
          const frame = encodeRequest({ apiKey: 0, apiVersion: 9, correlationId, clientId: 'backfill-bench' }, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: [{ index: p, records: segment.subarray(b.start, b.end) }] }] });
          const { body } = decodeResponse(0, 9, await client.request(frame, correlationId));
          for (const t of (body as unknown as ProduceResponse).responses) for (const r of t.partitionResponses) if (r.errorCode !== 0) throw new Error(`produce to partition ${p} failed: error ${r.errorCode}`);
        }
      }
    } finally {
      await client.close();
    }
    const backlog = async () => (await (await fetch(`${url}/api/tables/${topic}/backlog`)).json()) as { segments?: number; bytes?: number; error?: string };
    const cpu0 = cpuSeconds(floe.child.pid!);
    const t0 = performance.now();
    const set = await fetch(`${url}/api/configs/topics/${topic}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ set: { 'iceberg.enabled': 'true' } }) });
    if (!set.ok) throw new Error(`enabling the table failed: ${set.status} ${await set.text()}`);
    let first: { segments: number; bytes: number } | undefined;
    for (;;) {
      const b = await backlog();
      if (b.segments !== undefined && b.bytes !== undefined) {
        if (first === undefined && b.segments > 0) first = { segments: b.segments, bytes: b.bytes };
        if (first !== undefined && b.segments === 0 && (!upsert || (await upsertCaughtUp(restUrl, topic, PARTITIONS)))) break;
      }
      if (performance.now() - t0 > 600_000) throw new Error(`the backfill did not finish in 10 minutes: ${JSON.stringify(b)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(floe.child.pid!) - cpu0;
    const mb = first.bytes / MiB;
    return { mb, perCore: mb / cpu, wall: mb / wall };
  } finally {
    await floe.stop();
    if (profileDir !== undefined) await printProfiles(profileDir).catch((err: unknown) => progress(`no profile: ${String(err)}`));
    await rm(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  progress(`building ${MB / PARTITIONS} MiB of ${VALUES} records in ${CODEC} batches for each of ${PARTITIONS} partitions`);
  const segment = buildSegment(MB / PARTITIONS, CODEC, VALUES);
  const segments = Array.from({ length: PARTITIONS }, () => segment);
  const bare: { perCore: number; wall: number }[] = [];
  const backfill: { mb: number; perCore: number; wall: number }[] = [];
  const upserted: { mb: number; perCore: number; wall: number }[] = [];
  for (let run = 0; run < RUNS; run++) {
    bare.push(await bareConversion(segment));
    backfill.push(await backfillRun(segments, run));
    progress(`run ${run + 1}/${RUNS}: backfill ${backfill.at(-1)?.perCore.toFixed(1)} MB/s per core (${backfill.at(-1)?.wall.toFixed(1)} MB/s wall), bare conversion ${bare.at(-1)?.perCore.toFixed(1)} MB/s per core`);
    if (UPSERT) {
      upserted.push(await backfillRun(segments, run, true));
      progress(`run ${run + 1}/${RUNS}: backfill with the upsert table ${upserted.at(-1)?.perCore.toFixed(1)} MB/s per core (${upserted.at(-1)?.wall.toFixed(1)} MB/s wall)`);
    }
  }
  const bf = median(backfill.map((b) => b.perCore));
  const bc = median(bare.map((b) => b.perCore));
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  } catch {
    // not a checkout
  }
  const setup = `commit ${commit}, ${cpus().length} cores, load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${RUNS} runs (median); ${MB} MiB of ${VALUES} records in ${CODEC} producer batches over ${PARTITIONS} partitions, 8 MiB segments; Floe ${BUILD} with its defaults (conversion on worker threads)`;
  const headers = ['what', 'MB/s per core', 'MB/s wall', 'vs bare conversion per core'];
  const rows: Cell[][] = [
    ['backfill (broker: convert, upload, commit)', bf, median(backfill.map((b) => b.wall)), `${((100 * bf) / bc).toFixed(0)}%`],
    ['bare conversion (this process, one thread)', bc, median(bare.map((b) => b.wall)), '100%'],
  ];
  if (UPSERT) {
    const up = median(upserted.map((b) => b.perCore));
    rows.splice(1, 0, [`backfill with iceberg.upsert.enabled (the _latest table too; ${(bf / up).toFixed(2)}x the CPU per MB)`, up, median(upserted.map((b) => b.wall)), `${((100 * up) / bc).toFixed(0)}%`]);
  }
  console.log(`\nBackfill: ${setup}\n\n${formatTable(headers, rows)}\n`);
  console.log(`Markdown:\n\n${setup}\n\n${formatMarkdownTable(headers, rows)}\n`);
}

await main();
