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
import { encodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import type { RecordInput } from '../../protocol/record-batch/records.js';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { readParquetTable } from '../../iceberg/parquet/reader.js';
import { convertSegment, type ConvertedFile } from '../../tiering/convert/segment-to-parquet.js';
import { createFooterCache, fetchFromParquet } from '../../tiering/convert/parquet-to-batches.js';
import { resolveLocation } from '../../tiering/offset-index/location.js';
import { median } from '../lib/stats.js';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

const MB = arg('mb', 32);
const RUNS = arg('runs', 3);

/** Pseudo-random text, so values compress about as much as real JSON events (not 20x like repeated bytes). */
function pad(i: number): string {
  let x = (i * 2654435761) >>> 0;
  let out = '';
  while (out.length < 400) {
    x = (x * 1103515245 + 12345) >>> 0;
    out += x.toString(36);
  }
  return out.slice(0, 400);
}

/** ~540-byte JSON events with a key and two headers, in 64 KiB zstd batches, as a producer sends them. */
function buildSegment(): Buffer {
  const out: Buffer[] = [];
  let total = 0;
  let offset = 0n;
  let i = 0;
  while (total < MB * 1024 * 1024) {
    const records: RecordInput[] = [];
    let size = 0;
    while (size < 64 * 1024) {
      const value = Buffer.from(JSON.stringify({ id: i, user: `user-${i % 1000}`, ts: 1_700_000_000_000 + i, pad: pad(i), n: Math.sin(i) }));
      records.push({ key: Buffer.from(`key-${i % 5000}`), value, timestampDelta: records.length, headers: [{ key: 'trace-id', value: Buffer.from(`t-${i}`) }, { key: 'source', value: Buffer.from('bench') }] });
      size += value.length + 40;
      i++;
    }
    const b = encodeRecordBatch({ baseOffset: offset, baseTimestamp: 1_700_000_000_000n + BigInt(i), compression: 'zstd', compressionLevel: 1, producerId: 1n, producerEpoch: 0, baseSequence: Number(offset), records });
    offset += BigInt(records.length);
    total += b.length;
    out.push(b);
  }
  return Buffer.concat(out);
}

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
  const segment = buildSegment();
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
