// Fetch from Parquet against hot-log fetch of the same data, in one run:
//   hot:    PartitionLog.read of the segment on local disk (page cache), 1 MiB fetches from offset 0 to the end;
//   cold:   ConvertCodec.readSegment (the plugin's read path) with the batch cache off: every fetch range-reads
//           the row groups it needs, decodes Parquet and rebuilds batches (index and footer caches warm after
//           the first fetch, as for any partition being consumed; the footer cache keeps the last decoded row
//           groups, so the row group a fetch ends in is not read and decoded again by the next);
//   first pass with the batch cache on: a fresh codec (index and footer loaded by one fetch at the end), so
//           no batch is cached yet (the default configuration's first read of a range: the cache only
//           remembers which batches were asked for);
//   second pass with the batch cache on: the same range asked again, so each response is kept (a copy);
//   cached: the same with the rebuilt-batch cache holding the range (a third pass over it);
//   cold, native / cold, parquet-wasm: fetchFromParquet on the same index without a batch cache, forcing one
//           row-group decoder: the native column reader (what 'auto' uses for Floe's files) or the
//           parquet-wasm fallback (files of other writers); 'no reuse' also turns off the decoded row groups
//           the footer cache keeps, so every fetch range-reads and decodes all the row groups it touches;
//   cold, read workers: the cold plugin path with 2 read workers (remote.log.reader.threads=2, the broker's
//           default), one reading ahead of the walk;
//   N partitions at once (--partitions, default 4): N walks over the same data at the same time, as N
//           partitions of a consumer reading history (routed to the workers by partition), for the hot log,
//           the cold path on this thread and the cold path on the read workers; MB/s of all N together;
//   cold, read handles off: the cold plugin path over a LocalFileIO that opens, stats and closes the data
//           file on every range read (readHandles: 0) instead of keeping read handles open.
// Throughput is MB/s of log bytes (the segment's size over the time to walk all its offsets), so both paths
// are charged for the same records although rebuilt batches are sent uncompressed. First-byte latency: one
// 1 MiB fetch at each of N spread offsets, against a fresh codec (nothing cached: index, footer, data), then
// the same offsets again (index, footer and decoded row group cached; the batch cache keeps the response
// now), a third time (served by the batch cache), and from the hot log. The warehouse is a local folder (no S3 round trips).
// Run: npx tsx bench/tiering/remote-fetch.bench.ts [--mb 64] [--runs 5] [--codec zstd|none|snappy|lz4]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { PartitionLog } from '../../broker/log/partition-log.js';
import { ConvertCodec } from '../../tiering/plugin/convert-codec.js';
import { fetchFromParquet, type RowDecoder } from '../../tiering/convert/parquet-to-batches.js';
import { createFooterCache } from '../../tiering/convert/footer-cache.js';
import { decodeSegmentIndex } from '../../tiering/offset-index/format.js';
import type { CompressionType } from '../../protocol/record-batch/compression.js';
import { median } from '../lib/stats.js';
import { formatTable } from '../lib/table.js';
import { buildSegment } from './segment.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
}
if (process.argv.includes('--help')) {
  console.log('npx tsx bench/tiering/remote-fetch.bench.ts [--mb 64] [--runs 5] [--codec zstd|none|snappy|lz4] [--probes 20] [--partitions 4]');
  process.exit(0);
}
const MB = Number(arg('mb', '64'));
const RUNS = Number(arg('runs', '5'));
const PROBES = Number(arg('probes', '20'));
const CODEC = arg('codec', 'zstd') as CompressionType;
const FETCH = 1 << 20;
const PARTITIONS = Number(arg('partitions', '4'));

type Reader = (offset: number) => Promise<{ records: Buffer; nextOffset: number }>;

async function walk(read: Reader, end: number): Promise<number> {
  let offset = 0;
  let bytes = 0;
  while (offset < end) {
    const r = await read(offset);
    if (r.nextOffset <= offset) throw new Error(`fetch at ${offset} did not advance`);
    bytes += r.records.length;
    offset = r.nextOffset;
  }
  return bytes;
}

async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-remote-fetch-'));
  const segment = buildSegment(MB, CODEC);
  const logMB = segment.length / 1e6;
  const log = await PartitionLog.open({ dir: join(dir, 'log', 't-0'), config: { 'segment.bytes': 1 << 30 } });
  for (let p = 0; p < segment.length; ) {
    const n = segment.readInt32BE(p + 8) + 12;
    await log.append(segment.subarray(p, p + n));
    p += n;
  }
  const closed = await log.roll();
  if (!closed) throw new Error('the log did not roll');
  const end = closed.lastOffset + 1;
  const io = new LocalFileIO({ root: join(dir, 'wh'), fsync: false });
  const tableLocation = `file://${dir}/wh/kafka/t`;
  const converter = new ConvertCodec();
  const converted = await converter.convertSegment({ io, tableLocation, schema: converter.tableSchema(), specId: 0, partition: 0, baseOffset: 0, lastOffset: closed.lastOffset, segmentPath: closed.path });
  const input = { io, partition: 0, baseOffset: 0, lastOffset: closed.lastOffset, dataFiles: converted.dataFiles.map((f) => f.file_path), indexFiles: converted.indexFiles, maxBytes: FETCH, minOneBatch: true };
  const plugin = (codec: ConvertCodec): Reader => (fetchOffset) => codec.readSegment({ ...input, fetchOffset });
  // The same segment tiered as partitions 1..N, each its own data file (as N partitions of a topic are).
  const inputs: (typeof input)[] = [];
  for (let p = 1; p <= PARTITIONS; p++) {
    const c = await converter.convertSegment({ io, tableLocation, schema: converter.tableSchema(), specId: 0, partition: p, baseOffset: 0, lastOffset: closed.lastOffset, segmentPath: closed.path });
    inputs.push({ ...input, partition: p, dataFiles: c.dataFiles.map((f) => f.file_path), indexFiles: c.indexFiles });
  }
  const partition = (codec: ConvertCodec, p: number): Reader => (fetchOffset) => codec.readSegment({ ...inputs[p]!, fetchOffset });
  /** N walks at once, one per partition; MB/s of log bytes over all of them. */
  const together = async (reader: (p: number) => Reader): Promise<number> => (PARTITIONS * logMB) / (await seconds(() => Promise.all(Array.from({ length: PARTITIONS }, (_, p) => walk(reader(p), end)))));
  const ioNoHandles = new LocalFileIO({ root: join(dir, 'wh'), fsync: false, readHandles: 0 });
  const pluginNoHandles = (codec: ConvertCodec): Reader => (fetchOffset) => codec.readSegment({ ...input, io: ioNoHandles, fetchOffset });
  const hot: Reader = (offset) => log.read(offset, FETCH, { maxOffset: end });
  if (converted.indexFiles.length !== 1) throw new Error(`expected one data file, got ${converted.indexFiles.length}; raise the target file size`);
  const index = decodeSegmentIndex(await io.get(converted.indexFiles[0]!));
  const direct = (decoder: RowDecoder, reuseDecodedRowGroups = true): Reader => {
    const footers = createFooterCache(1 << 20);
    return async (offset) => {
      const r = await fetchFromParquet({ io, tableLocation, index, fetchOffset: BigInt(offset), maxBytes: FETCH, footers, decoder, reuseDecodedRowGroups });
      return { records: r.records, nextOffset: Number(r.nextOffset) };
    };
  };
  console.log(`segment: ${logMB.toFixed(1)} MB of log bytes (${CODEC} batches), ${end} records, ${converted.dataFiles.length} data file(s); runs ${RUNS}; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);

  const coldCodec = new ConvertCodec({ batchCacheBytes: 0 });
  const coldCodecNoHandles = new ConvertCodec({ batchCacheBytes: 0 });
  const cachedCodec = new ConvertCodec({ batchCacheBytes: 4 * segment.length + (256 << 20) });
  const workerCodec = new ConvertCodec({ batchCacheBytes: 0, readers: 2 });
  // Warm-up: JIT, page cache, index and footer caches; the cached codec's pass fills its batch cache.
  const hotBytes = await walk(hot, end);
  const rebuiltBytes = await walk(plugin(coldCodec), end);
  await walk(pluginNoHandles(coldCodecNoHandles), end);
  const workerBytes = await walk(plugin(workerCodec), end);
  if (workerBytes !== rebuiltBytes) throw new Error(`read workers disagree: ${workerBytes} bytes, ${rebuiltBytes} on this thread`);
  await together((p) => partition(workerCodec, p));
  await walk(plugin(cachedCodec), end);
  await walk(plugin(cachedCodec), end); // kept on the second request
  const nativeBytes = await walk(direct('native'), end);
  const wasmBytes = await walk(direct('parquet-wasm'), end);
  if (nativeBytes !== rebuiltBytes || wasmBytes !== rebuiltBytes) throw new Error(`decoders disagree: ${nativeBytes} native, ${wasmBytes} parquet-wasm, ${rebuiltBytes} plugin bytes`);
  const t = { hot: [] as number[], cold: [] as number[], workers: [] as number[], hotN: [] as number[], coldN: [] as number[], workersN: [] as number[], coldNoHandles: [] as number[], ahead: [] as number[], admit: [] as number[], cached: [] as number[], native: [] as number[], noReuse: [] as number[], wasm: [] as number[] };
  for (let r = 0; r < RUNS; r++) {
    t.hot.push(logMB / (await seconds(() => walk(hot, end))));
    t.cold.push(logMB / (await seconds(() => walk(plugin(coldCodec), end))));
    t.workers.push(logMB / (await seconds(() => walk(plugin(workerCodec), end))));
    t.hotN.push(await together(() => hot));
    t.coldN.push(await together((p) => partition(coldCodec, p)));
    t.workersN.push(await together((p) => partition(workerCodec, p)));
    t.coldNoHandles.push(logMB / (await seconds(() => walk(pluginNoHandles(coldCodecNoHandles), end))));
    const fresh = new ConvertCodec({ batchCacheBytes: 4 * segment.length + (256 << 20) });
    // Its index and footer loaded (as the cold codec's are), so the pass measures the batch cache alone.
    await plugin(fresh)(end - 1);
    t.ahead.push(logMB / (await seconds(() => walk(plugin(fresh), end))));
    t.admit.push(logMB / (await seconds(() => walk(plugin(fresh), end))));
    t.cached.push(logMB / (await seconds(() => walk(plugin(cachedCodec), end))));
    t.native.push(logMB / (await seconds(() => walk(direct('native'), end))));
    t.noReuse.push(logMB / (await seconds(() => walk(direct('native', false), end))));
    t.wasm.push(logMB / (await seconds(() => walk(direct('parquet-wasm'), end))));
  }
  const h = median(t.hot);
  console.log(`fetched bytes per pass: hot ${(hotBytes / 1e6).toFixed(1)} MB, rebuilt ${(rebuiltBytes / 1e6).toFixed(1)} MB; cached codec: ${cachedCodec.batches.size} batches, ${(cachedCodec.batches.bytes / 1e6).toFixed(1)} MB, ${cachedCodec.batches.hits} hits`);
  console.log(
    formatTable(
      ['path', 'MB/s of log bytes (median)', 'runs', 'vs hot'],
      [
        ['hot log (PartitionLog.read)', h.toFixed(0), t.hot.map((x) => x.toFixed(0)).join(' '), '1.00'],
        ['remote, cold (no batch cache)', median(t.cold).toFixed(0), t.cold.map((x) => x.toFixed(0)).join(' '), (median(t.cold) / h).toFixed(2)],
        ['remote, cold, read workers (2, reading ahead)', median(t.workers).toFixed(0), t.workers.map((x) => x.toFixed(0)).join(' '), (median(t.workers) / h).toFixed(2)],
        [`hot log, ${PARTITIONS} partitions at once`, median(t.hotN).toFixed(0), t.hotN.map((x) => x.toFixed(0)).join(' '), (median(t.hotN) / h).toFixed(2)],
        [`remote, cold, ${PARTITIONS} partitions at once, this thread`, median(t.coldN).toFixed(0), t.coldN.map((x) => x.toFixed(0)).join(' '), (median(t.coldN) / h).toFixed(2)],
        [`remote, cold, ${PARTITIONS} partitions at once, read workers`, median(t.workersN).toFixed(0), t.workersN.map((x) => x.toFixed(0)).join(' '), (median(t.workersN) / h).toFixed(2)],
        ['remote, cold, read handles off (open per read)', median(t.coldNoHandles).toFixed(0), t.coldNoHandles.map((x) => x.toFixed(0)).join(' '), (median(t.coldNoHandles) / h).toFixed(2)],
        ['remote, first pass, batch cache on (default)', median(t.ahead).toFixed(0), t.ahead.map((x) => x.toFixed(0)).join(' '), (median(t.ahead) / h).toFixed(2)],
        ['remote, second pass, kept in the batch cache', median(t.admit).toFixed(0), t.admit.map((x) => x.toFixed(0)).join(' '), (median(t.admit) / h).toFixed(2)],
        ['remote, cached', median(t.cached).toFixed(0), t.cached.map((x) => x.toFixed(0)).join(' '), (median(t.cached) / h).toFixed(2)],
        ['remote, cold, native decoder (fetchFromParquet)', median(t.native).toFixed(0), t.native.map((x) => x.toFixed(0)).join(' '), (median(t.native) / h).toFixed(2)],
        ['remote, cold, native decoder, no row group reuse', median(t.noReuse).toFixed(0), t.noReuse.map((x) => x.toFixed(0)).join(' '), (median(t.noReuse) / h).toFixed(2)],
        ['remote, cold, parquet-wasm fallback', median(t.wasm).toFixed(0), t.wasm.map((x) => x.toFixed(0)).join(' '), (median(t.wasm) / h).toFixed(2)],
      ],
    ),
  );

  // First-byte latency: one fetch at spread offsets.
  const probes = Array.from({ length: PROBES }, (_, i) => Math.floor(((i + 0.5) * end) / PROBES));
  const lat = { cold: [] as number[], second: [] as number[], cached: [] as number[], hot: [] as number[] };
  for (const offset of probes) {
    const fresh = new ConvertCodec();
    lat.cold.push((await seconds(() => plugin(fresh)(offset))) * 1000);
    lat.second.push((await seconds(() => plugin(fresh)(offset))) * 1000);
    lat.cached.push((await seconds(() => plugin(fresh)(offset))) * 1000);
    lat.hot.push((await seconds(() => hot(offset))) * 1000);
  }
  const ms = (xs: number[]) => `${median(xs).toFixed(2)} (max ${Math.max(...xs).toFixed(2)})`;
  console.log(
    formatTable(
      ['first fetch of 1 MiB', 'ms median (max)', 'vs hot'],
      [
        ['hot log', ms(lat.hot), '1.00'],
        ['remote, cold (fresh codec: index, footer, data)', ms(lat.cold), (median(lat.cold) / median(lat.hot)).toFixed(1)],
        ['remote, same offset again (caches warm; the response is kept now)', ms(lat.second), (median(lat.second) / median(lat.hot)).toFixed(1)],
        ['remote, cached (same offset a third time)', ms(lat.cached), (median(lat.cached) / median(lat.hot)).toFixed(1)],
      ],
    ),
  );
  console.log(`read workers: ${workerCodec.readAheadHits} fetches served from read-ahead`);
  console.log(`load average after: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  await workerCodec.close();
  await log.close();
  await io.close();
  await ioNoHandles.close();
  await rm(dir, { recursive: true, force: true });
}

await main();
