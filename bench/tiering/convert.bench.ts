// Tiering conversion throughput, in MB/s of log bytes, each next to baselines measured in the same run:
//   segment -> Parquet (convertSegment: decode, fidelity check, Arrow columns, Floe's Parquet writer, zstd)
//     vs parquet-wasm writing the same Arrow table (already built, in IPC form) with zstd — the baseline the
//        issue names — and vs Floe's writer alone on that table (what the converter adds on top);
//   Parquet -> batches (fetchFromParquet over the whole file, 1 MiB fetches, from a local folder)
//     vs parquet-wasm + arrow-js-ffi reading the whole file into Arrow (readParquetTable).
// "per core": MB divided by the process's CPU time (user + system) for the operation, which on a shared
// machine is steadier than wall time; conversion runs on one thread (zstd-napi is synchronous), so on a
// quiet machine the two agree. Wall-time figures are printed too.
// Also: the longest event-loop stall during a conversion, against the writer writing the same table in one call.
// Run: npx tsx bench/tiering/convert.bench.ts [--mb=32] [--runs=5] [--codec=zstd|none|snappy|lz4|gzip] [--values=text|json]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { readParquetTable } from '../../iceberg/parquet/reader.js';
import { writeParquet } from '../../iceberg/parquet/writer.js';
import type { CompressionType } from '../../protocol/record-batch/compression.js';
import { convertSegment, type ConvertedFile } from '../../tiering/convert/segment-to-parquet.js';
import { fetchFromParquet } from '../../tiering/convert/parquet-to-batches.js';
import { createFooterCache } from '../../tiering/convert/footer-cache.js';
import { TOPIC_SCHEMA } from '../../tiering/convert/schema.js';
import { resolveLocation } from '../../tiering/offset-index/location.js';
import { BenchArgs } from '../lib/args.js';
import { median } from '../lib/stats.js';
import { buildSegment, type ValueShape } from './segment.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: convert.bench.ts [--mb=32] [--runs=5] [--codec=zstd|none|snappy|lz4|gzip] [--values=text|json]');
const MB = args.number('mb', 32);
const RUNS = args.number('runs', 5);
const CODEC = args.string('codec', 'zstd') as CompressionType;
const VALUES = args.string('values', 'text') as ValueShape;

/**
 * Converts the segment; with `release`, each file's memory goes back to the writer as the plugin does once
 * the file is uploaded (ConvertCodec), so the timed runs measure what the broker does.
 */
async function convert(segment: Buffer, release = true): Promise<ConvertedFile> {
  let file: ConvertedFile | undefined;
  for await (const f of convertSegment(segment, { partition: 0, targetFileBytes: 1 << 30 })) {
    if (release) file?.parquet?.release();
    file = f;
  }
  if (release) file?.parquet?.release();
  return file!;
}

interface Timing {
  readonly wall: number;
  readonly cpu: number;
}

async function time(fn: () => Promise<unknown> | unknown): Promise<Timing> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1e6 };
}

/** The longest gap (ms) between turns of the event loop while `fn` runs, seen by a setImmediate ticker. */
async function longestStall(fn: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  let running = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await fn();
  running = false;
  tick();
  return longest;
}

class Series {
  readonly wall: number[] = [];
  readonly cpu: number[] = [];
  constructor(
    readonly name: string,
    private readonly mb: number,
  ) {}
  add(t: Timing): void {
    this.wall.push(this.mb / t.wall);
    this.cpu.push(this.mb / t.cpu);
  }
  get perCore(): number {
    return median(this.cpu);
  }
  get wallRate(): number {
    return median(this.wall);
  }
}

async function main(): Promise<void> {
  const segment = buildSegment(MB, CODEC, VALUES);
  const logMB = segment.length / 1e6;
  const warm = await convert(segment, false); // kept: its bytes are the baselines' input
  const bytes = warm.parquet!.bytes;
  const rows = warm.index.rowCount;
  const recordMB = warm.index.batches.reduce((n, b) => n + b.recordsBytes, 0) / 1e6;
  console.log(`segment: ${logMB.toFixed(1)} MB of log bytes (${CODEC} producer batches, ${VALUES} values; ${recordMB.toFixed(1)} MB of records uncompressed), ${rows} rows, runs: ${RUNS}`);
  console.log(`parquet: ${(bytes.length / 1e6).toFixed(1)} MB, ${warm.index.rowGroups.length} row groups, index ${(warm.indexBytes.length / 1024).toFixed(0)} KiB`);

  // Baseline input: the same Arrow table, decoded from our own file, handed to each writer.
  const table: arrow.Table = readParquetTable(bytes);
  const ipc = arrow.tableToIPC(table, 'stream');
  const rowGroupRows = warm.index.rowGroups[0]!.numRows;
  const props = () =>
    new pq.WriterPropertiesBuilder().setCompression(pq.Compression.ZSTD).setMaxRowGroupSize(rowGroupRows).setColumnDictionaryEnabled('value', false).setColumnDictionaryEnabled('kafka.key', false).build();

  const conv = new Series('segment -> parquet (convertSegment)', logMB);
  const native = new Series("Floe's writer alone, same Arrow table", logMB);
  const wasm = new Series('parquet-wasm alone, same Arrow table', logMB);
  for (let r = 0; r < RUNS; r++) {
    conv.add(await time(() => convert(segment)));
    native.add(await time(async () => (await writeParquet(TOPIC_SCHEMA, table, { rowGroupRows, sizeHint: bytes.length })).release()));
    wasm.add(await time(() => pq.writeParquet(pq.Table.fromIPCStream(ipc), props())));
    process.stderr.write(`run ${r + 1}/${RUNS}: convert ${conv.cpu.at(-1)!.toFixed(0)} MB/s per core\n`);
  }

  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-'));
  const io = new LocalFileIO({ root: dir, fsync: false });
  const tableLoc = `file://${dir}/t`;
  await io.put(resolveLocation(tableLoc, warm.dataPath!), Buffer.from(bytes));
  const fetchAll = async (): Promise<number> => {
    const footers = createFooterCache(64 * 1024 * 1024); // the plugin's default (ConvertCodec)
    let offset = 0n;
    let n = 0;
    while (offset <= warm.index.lastOffset) {
      const res = await fetchFromParquet({ io, tableLocation: tableLoc, index: warm.index, fetchOffset: offset, maxBytes: 1 << 20, footers });
      n += res.records.length;
      offset = res.nextOffset;
    }
    return n;
  };
  let rebuiltBytes = 0;
  const fetch = new Series('parquet -> batches (fetchFromParquet)', logMB);
  const read = new Series('parquet-wasm + arrow-js-ffi read', logMB);
  for (let r = 0; r < RUNS; r++) {
    fetch.add(await time(async () => (rebuiltBytes = await fetchAll())));
    read.add(await time(async () => readParquetTable(await io.get(resolveLocation(tableLoc, warm.dataPath!)))));
  }
  await io.close();
  await rm(dir, { recursive: true, force: true });

  // How long conversion keeps the event loop (which produce and fetch share) to itself: the longest gap
  // between turns of a setImmediate ticker during one conversion, against the same writer writing the same
  // table in one call (how conversion ran before it yielded between chunks) and the ticker alone.
  const idle = await longestStall(() => new Promise((r) => setTimeout(r, 200)));
  const convStall = await longestStall(() => convert(segment));
  const writerStall = await longestStall(async () => (await writeParquet(TOPIC_SCHEMA, table, { rowGroupRows, sizeHint: bytes.length })).release());

  const f = (x: number) => x.toFixed(0).padStart(6);
  const line = (s: Series, base?: Series) =>
    console.log(`${s.name.padEnd(40)} ${f(s.perCore)} MB/s per core  ${f(s.wallRate)} MB/s wall${base ? `   ${(s.perCore / base.perCore).toFixed(2)}x ${base === wasm ? 'parquet-wasm' : 'its baseline'}` : ''}`);
  console.log(`rebuilt (uncompressed) batches: ${(rebuiltBytes / 1e6).toFixed(1)} MB`);
  console.log('MB/s of log bytes, medians:');
  line(conv, wasm);
  line(native, wasm);
  line(wasm);
  line(fetch, read);
  line(read);
  console.log(`conversion in MB/s of uncompressed records per core: ${(conv.perCore * (recordMB / logMB)).toFixed(0)}`);
  console.log(
    `longest event-loop stall: convertSegment ${convStall.toFixed(1)} ms; Floe's writer writing the same table in one call ${writerStall.toFixed(1)} ms (${(writerStall / convStall).toFixed(0)}x); idle ticker ${idle.toFixed(1)} ms`,
  );
}

await main();
