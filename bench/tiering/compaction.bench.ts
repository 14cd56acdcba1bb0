// Compaction of a table made from many small segments (one commit per segment, as a 1-second commit interval
// makes), and what it buys, in one run:
//   compaction: IcebergTopic.compact (via the plugin) merging the partition's small files into target-sized
//               ones: MB/s of log bytes rewritten, wall clock and per core (log bytes over the process's CPU
//               seconds, user + system, during the compaction), with the wall clock split into the rewrite
//               (rebuild + convert + upload) and the commit (whose cost grows with the manifests listing the
//               inputs: one per tiering commit until manifests are merged);
//   cold Kafka fetch: a fresh plugin (nothing cached, batch cache off) reads the partition from offset 0 to
//               the end in 1 MiB fetches, before and after compaction;
//   full table scan: pyiceberg (the peers venv) StaticTable scan().to_arrow() of the current snapshot, timed
//               inside Python (interpreter start excluded), before and after; DuckDB read_parquet of the
//               live files as a second reader.
// Ratios are after / before in the same run. The warehouse is a local folder.
// Run: npx tsx bench/tiering/compaction.bench.ts [--mb 32] [--segments 400] [--runs 3] [--codec zstd|none|lz4|snappy|gzip]
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { WarehouseCatalog } from '../../iceberg/catalog/warehouse.js';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { Table } from '../../iceberg/table.js';
import type { TopicTieringConfig } from '../../tiering/plugin/api.js';
import { ConvertCodec } from '../../tiering/plugin/convert-codec.js';
import { IcebergTieringPlugin } from '../../tiering/plugin/iceberg-tiering.js';
import { venvPython } from '../../test/helpers/peers.js';
import { median } from '../lib/stats.js';
import { formatTable } from '../lib/table.js';
import { buildSegment } from './segment.js';
import type { CompressionType } from '../../protocol/record-batch/compression.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
}
if (process.argv.includes('--help')) {
  console.log('npx tsx bench/tiering/compaction.bench.ts [--mb 32] [--segments 400] [--runs 3] [--codec zstd|none|lz4|snappy|gzip]');
  process.exit(0);
}
const MB = Number(arg('mb', '32'));
const SEGMENTS = Number(arg('segments', '400'));
const RUNS = Number(arg('runs', '3'));
const CODEC = arg('codec', 'zstd') as CompressionType;
const TOPIC = 'small';
const CONFIG: TopicTieringConfig = { enabled: true, namespace: ['kafka'], commitIntervalMs: 1000, retentionMs: Infinity, retentionBytes: Infinity };
const tp = { topic: TOPIC, partition: 0 };

async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** Splits a segment's batches into `n` files of about equal size; returns their paths and ranges. */
async function splitSegment(dir: string, segment: Buffer, n: number): Promise<{ path: string; baseOffset: number; lastOffset: number; size: number }[]> {
  const per = Math.ceil(segment.length / n);
  const out = [];
  let start = 0;
  let pos = 0;
  while (pos < segment.length) {
    const base = Number(segment.readBigInt64BE(start));
    let last = base;
    while (pos < segment.length && pos - start < per) {
      last = Number(segment.readBigInt64BE(pos)) + segment.readInt32BE(pos + 23);
      pos += segment.readInt32BE(pos + 8) + 12;
    }
    const path = join(dir, `${String(base).padStart(20, '0')}.log`);
    await writeFile(path, segment.subarray(start, pos));
    out.push({ path, baseOffset: base, lastOffset: last, size: pos - start });
    start = pos;
  }
  return out;
}

function open(warehouse: string, batchCacheBytes = 0): { plugin: IcebergTieringPlugin; catalog: WarehouseCatalog; io: LocalFileIO } {
  const io = new LocalFileIO({ root: warehouse, fsync: false });
  const catalog = new WarehouseCatalog({ io, warehouse });
  const plugin = new IcebergTieringPlugin({ catalog, io, codec: new ConvertCodec({ batchCacheBytes }), compaction: { bytesPerSecond: Infinity } });
  return { plugin, catalog, io };
}

/** Cold Kafka read of the whole partition (a fresh plugin: no index, footer or batch cached). */
async function coldFetch(warehouse: string): Promise<{ s: number; bytes: number }> {
  const { plugin, io } = open(warehouse);
  await plugin.configureTopic(TOPIC, CONFIG);
  const end = plugin.metadata.highestCommittedOffset(tp);
  let bytes = 0;
  const s = await seconds(async () => {
    for (let offset = 0; offset <= end; ) {
      const r = await plugin.read(tp, offset, 1 << 20, true);
      if (r.nextOffset <= offset) throw new Error(`no progress at ${offset}`);
      bytes += r.records.length;
      offset = r.nextOffset;
    }
  });
  await plugin.close();
  await io.close();
  return { s, bytes };
}

const PYICEBERG_SCAN = `
import sys, time
from pyiceberg.table import StaticTable
t = StaticTable.from_metadata(sys.argv[1])
t0 = time.perf_counter()
a = t.scan().to_arrow()
print(time.perf_counter() - t0, a.num_rows)
`;

function pyicebergScan(metadataLocation: string): { s: number; rows: number } {
  const r = spawnSync(venvPython(), ['-c', PYICEBERG_SCAN, metadataLocation], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pyiceberg scan failed: ${r.stderr}`);
  const [s, rows] = r.stdout.trim().split(/\s+/).map(Number);
  return { s: s ?? NaN, rows: rows ?? NaN };
}

async function duckScan(files: string[]): Promise<{ s: number; rows: number }> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  let rows = 0;
  const list = files.map((f) => `'${fileURLToPath(f)}'`).join(', ');
  const s = await seconds(async () => {
    const r = await conn.runAndReadAll(`select count(*) as n, sum(octet_length(value)) as b, max(kafka."offset") as o from read_parquet([${list}])`);
    rows = Number(r.getRows()[0]?.[0]);
  });
  conn.closeSync();
  db.closeSync();
  return { s, rows };
}

async function measure(warehouse: string): Promise<{ fetch: number[]; py: number[]; duck: number[]; files: number; rows: number; logBytes: number }> {
  const { catalog, io } = open(warehouse);
  const table = await Table.load(catalog, { namespace: ['kafka'], name: TOPIC }, io);
  const files = (await table.files()).dataFiles.map((e) => e.data_file.file_path);
  const out = { fetch: [] as number[], py: [] as number[], duck: [] as number[], files: files.length, rows: 0, logBytes: 0 };
  for (let r = 0; r < RUNS; r++) {
    const f = await coldFetch(warehouse);
    out.fetch.push(f.s);
    out.logBytes = f.bytes;
    const p = pyicebergScan(table.metadataLocation);
    out.py.push(p.s);
    out.rows = p.rows;
    out.duck.push((await duckScan(files)).s);
  }
  await io.close();
  return out;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-compaction-bench-'));
  const warehouse = pathToFileURL(join(dir, 'wh')).href;
  try {
    const segment = buildSegment(MB, CODEC);
    const parts = await splitSegment(dir, segment, SEGMENTS);
    const { plugin } = open(warehouse, 128 << 20);
    await plugin.configureTopic(TOPIC, CONFIG);
    const tBuild = await seconds(async () => {
      for (const p of parts) {
        plugin.segmentClosed({ topic: TOPIC, partition: 0, baseOffset: p.baseOffset, lastOffset: p.lastOffset, path: p.path, sizeInBytes: p.size, maxTimestamp: -1 });
        await plugin.drain(); // one commit per segment
      }
    });
    console.log(`table: ${(segment.length / 1e6).toFixed(1)} MB of log (${CODEC} batches) in ${parts.length} segments, one commit each (built in ${tBuild.toFixed(1)} s); runs ${RUNS}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);

    const before = await measure(warehouse);

    // Compaction: as many rounds as the plan needs (each round is one commit of up to 8 merged segments).
    let rounds = 0;
    let rewritten = 0;
    let rewriteMs = 0;
    let commitMs = 0;
    const cpu0 = process.cpuUsage();
    const wall = await seconds(async () => {
      for (;;) {
        const o = await plugin.compact(tp, { targetFileSizeBytes: 512 * 1024 * 1024 });
        if (o.status !== 'compacted') break;
        rounds++;
        rewritten += o.bytesRead;
        rewriteMs += o.rewriteMs;
        commitMs += o.commitMs;
      }
    });
    const cpu = process.cpuUsage(cpu0);
    const cpuS = (cpu.user + cpu.system) / 1e6;
    await plugin.close();
    const after = await measure(warehouse);
    if (after.rows !== before.rows || after.logBytes !== before.logBytes) throw new Error(`compaction changed the data: rows ${before.rows} -> ${after.rows}, fetched bytes ${before.logBytes} -> ${after.logBytes}`);

    const logMB = segment.length / 1e6;
    console.log(`compaction: ${rounds} commit(s), ${(rewritten / 1e6).toFixed(1)} MB rebuilt, ${wall.toFixed(2)} s wall, ${cpuS.toFixed(2)} s CPU -> ${(logMB / wall).toFixed(1)} MB/s wall, ${(logMB / cpuS).toFixed(1)} MB/s per core (log bytes); of the wall clock ${(rewriteMs / 1000).toFixed(2)} s rebuilding and converting (${(logMB / (rewriteMs / 1000)).toFixed(1)} MB/s), ${(commitMs / 1000).toFixed(2)} s committing (rewriting the manifests that list the inputs)`);
    const row = (name: string, b: number[], a: number[], unit: (s: number) => string) => {
      const mb = median(b);
      const ma = median(a);
      return [name, unit(mb), unit(ma), `${(mb / ma).toFixed(2)}×`];
    };
    const mbps = (s: number) => `${(logMB / s).toFixed(1)} MB/s`;
    const ms = (s: number) => `${(s * 1000).toFixed(0)} ms`;
    console.log(
      formatTable(
        ['measure (median)', `before (${before.files} files)`, `after (${after.files} files)`, 'speed-up'],
        [
          row('cold Kafka fetch, offset 0 to end', before.fetch, after.fetch, mbps),
          row('pyiceberg full scan', before.py, after.py, ms),
          row('DuckDB full scan', before.duck, after.duck, ms),
        ],
      ),
    );
    console.log(`rows ${before.rows} before and after; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
