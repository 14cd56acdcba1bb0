// Tiering conversion throughput, in MB/s of log bytes, each next to a baseline measured in the same run:
//   segment -> Parquet (convertSegment: decode, fidelity check, Arrow, parquet-wasm zstd)
//     vs parquet-wasm writing the same Arrow table (already built and in IPC form) with the same settings;
//   Parquet -> batches (fetchFromParquet over the whole file, 1 MiB fetches, from a local folder)
//     vs parquet-wasm + arrow-js-ffi reading the whole file into Arrow (readParquetTable).
// Run: npx tsx bench/tiering/convert.bench.ts [--mb 32] [--runs 3]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { readParquetTable } from '../../iceberg/parquet/reader.js';
import { convertSegment, type ConvertedFile } from '../../tiering/convert/segment-to-parquet.js';
import { createFooterCache, fetchFromParquet } from '../../tiering/convert/parquet-to-batches.js';
import { resolveLocation } from '../../tiering/offset-index/location.js';
import { median } from '../lib/stats.js';
import { buildSegment } from './segment.js';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

const MB = arg('mb', 32);
const RUNS = arg('runs', 3);

async function convert(segment: Buffer): Promise<ConvertedFile> {
  let file: ConvertedFile | undefined;
  for await (const f of convertSegment(segment, { partition: 0, targetFileBytes: 1 << 30 })) file = f;
  return file!;
}

async function time(fn: () => Promise<unknown> | unknown): Promise<number> {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  const segment = buildSegment(MB);
  const logMB = segment.length / 1e6;
  console.log(`segment: ${logMB.toFixed(1)} MB of log bytes (zstd batches), runs: ${RUNS}`);
  const warm = await convert(segment);
  const bytes = warm.parquet!.bytes;
  const rows = warm.index.rowCount;
  console.log(`parquet: ${(bytes.length / 1e6).toFixed(1)} MB, ${rows} rows, ${warm.index.rowGroups.length} row groups, index ${(warm.indexBytes.length / 1024).toFixed(0)} KiB`);

  // Baseline input: the same Arrow table, decoded from our own file, handed to parquet-wasm in IPC form.
  const table: arrow.Table = readParquetTable(bytes);
  const ipc = arrow.tableToIPC(table, 'stream');
  const props = () =>
    new pq.WriterPropertiesBuilder().setCompression(pq.Compression.ZSTD).setMaxRowGroupSize(warm.index.rowGroups[0]!.numRows).setColumnDictionaryEnabled('value', false).setColumnDictionaryEnabled('kafka.key', false).build();

  const conv: number[] = [];
  const base: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    conv.push(logMB / (await time(() => convert(segment))));
    base.push(logMB / (await time(() => pq.writeParquet(pq.Table.fromIPCStream(ipc), props()))));
  }

  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-'));
  const io = new LocalFileIO({ root: dir, fsync: false });
  const tableLoc = `file://${dir}/t`;
  await io.put(resolveLocation(tableLoc, warm.dataPath!), Buffer.from(bytes));
  const fetchAll = async (): Promise<number> => {
    const footers = createFooterCache(1 << 20);
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
  const fetch: number[] = [];
  const read: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    fetch.push(logMB / (await time(async () => (rebuiltBytes = await fetchAll()))));
    read.push(logMB / (await time(async () => readParquetTable(await io.get(resolveLocation(tableLoc, warm.dataPath!))))));
  }
  await io.close();
  await rm(dir, { recursive: true, force: true });

  const f = (x: number) => x.toFixed(0).padStart(6);
  console.log(`rebuilt (uncompressed) batches: ${(rebuiltBytes / 1e6).toFixed(1)} MB`);
  console.log(`segment -> parquet     ${f(median(conv))} MB/s   parquet-wasm write baseline ${f(median(base))} MB/s   ratio ${(median(conv) / median(base)).toFixed(2)}`);
  console.log(`parquet -> batches     ${f(median(fetch))} MB/s   parquet-wasm read baseline  ${f(median(read))} MB/s   ratio ${(median(fetch) / median(read)).toFixed(2)}`);
}

await main();
