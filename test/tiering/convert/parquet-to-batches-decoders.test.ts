// The two ways fetchFromParquet decodes row groups, the native column reader and parquet-wasm (the fallback
// for files it does not support), must give byte-identical batches for every fidelity case.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import { ParquetError } from '../../../iceberg/parquet/errors.js';
import { parseParquetFooter, readParquetTable } from '../../../iceberg/parquet/reader.js';
import type { ParquetCompression } from '../../../iceberg/parquet/writer.js';
import { decodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { scanBatches } from '../../../protocol/record-batch/batches.js';
import { fetchFromParquet, type RowDecoder } from '../../../tiering/convert/parquet-to-batches.js';
import { createBatchCache, type BatchCache } from '../../../tiering/convert/batch-cache.js';
import { createFooterCache } from '../../../tiering/convert/footer-cache.js';
import type { RebuildCompression } from '../../../tiering/convert/batch-assembly.js';
import { resolveLocation } from '../../../tiering/offset-index/location.js';
import { findIndex } from '../../../tiering/offset-index/lookup.js';
import type { SegmentIndex } from '../../../tiering/offset-index/format.js';
import { tierFixture, type Tiered } from './tiered-fixture.js';

/** The fixture tiered into partition 1 with Parquet `compression` (see ./tiered-fixture.ts). */
const tier = (t: { after: (fn: () => Promise<void>) => void }, compression: ParquetCompression, targetFileBytes?: number): Promise<Tiered> =>
  tierFixture(t, { partition: 1, compression, ...(targetFileBytes ? { targetFileBytes } : {}) });

interface Walk {
  batches: Buffer[];
  decodedWith: Set<string>;
}

/** Fetches every offset of the tiered range with `decoder`, `maxBytes` per fetch. */
async function walk(x: Tiered, decoder: RowDecoder, compression: RebuildCompression, maxBytes: number, cache?: BatchCache, indexes = x.files.map((f) => f.index)): Promise<Walk> {
  const footers = createFooterCache(1 << 20);
  const batches: Buffer[] = [];
  const decodedWith = new Set<string>();
  let offset = 0n;
  for (;;) {
    const i = findIndex(indexes, offset);
    if (i < 0) break;
    const r = await fetchFromParquet({ io: x.io, tableLocation: x.table, index: indexes[i]!, fetchOffset: offset, maxBytes, footers, compression, decoder, ...(cache ? { batches: cache } : {}) });
    assert.ok(r.batchCount > 0);
    if (r.decodedWith !== null) decodedWith.add(r.decodedWith);
    for (const b of scanBatches(r.records).batches) batches.push(r.records.subarray(b.start, b.end));
    offset = r.nextOffset;
  }
  return { batches, decodedWith };
}

test('the fixture exercises what the native path must rebuild: raw_record rows, LogAppendTime, nulls, duplicate header keys, gaps', async (t) => {
  const x = await tier(t, 'zstd');
  const raw = x.files.flatMap((f) => {
    if (!f.parquet) return [];
    const kafka = readParquetTable(f.parquet.bytes).getChild('kafka')!;
    const out: unknown[] = [];
    for (let i = 0; i < kafka.length; i++) out.push((kafka.get(i) as { raw_record: Uint8Array | null }).raw_record);
    return out;
  });
  assert.ok(raw.some((r) => r !== null), 'rows kept as raw_record');
  const decoded = scanBatches(x.segment).batches.map((b) => decodeRecordBatch(x.segment.subarray(b.start, b.end)));
  const records = decoded.flatMap((d) => d.records);
  assert.ok(decoded.some((d) => d.timestampType === 'log-append'), 'LogAppendTime batch');
  assert.ok(records.some((r) => r.key === null) && records.some((r) => r.value === null), 'null keys and values');
  assert.ok(records.some((r) => r.headers.length > 1 && new Set(r.headers.map((h) => h.key)).size < r.headers.length), 'duplicate header keys');
  assert.ok(records.some((r) => r.headers.some((h) => h.value === null)), 'null header values');
  assert.ok(records.some((r) => r.attributes !== 0), 'record attributes');
  assert.ok(decoded.some((d, i) => i > 0 && d.baseOffset > decoded[i - 1]!.baseOffset + BigInt(decoded[i - 1]!.lastOffsetDelta) + 1n), 'gaps between batches');
});

for (const parquet of ['zstd', 'snappy', 'none'] as ParquetCompression[]) {
  test(`native and parquet-wasm decoding give identical batches (${parquet} data files)`, async (t) => {
    const x = await tier(t, parquet, parquet === 'zstd' ? 64 * 1024 : undefined);
    for (const compression of ['none', 'original'] as RebuildCompression[]) {
      for (const maxBytes of [1, 50_000, 1 << 30]) {
        const native = await walk(x, 'native', compression, maxBytes);
        const wasm = await walk(x, 'parquet-wasm', compression, maxBytes);
        assert.deepEqual([...native.decodedWith], ['native']);
        assert.deepEqual([...wasm.decodedWith], ['parquet-wasm']);
        assert.equal(native.batches.length, wasm.batches.length);
        native.batches.forEach((b, i) => assert.ok(b.equals(wasm.batches[i]!), `batch ${i} (compression ${compression}, maxBytes ${maxBytes})`));
        // 'auto' takes the native path for our own files.
        const auto = await walk(x, 'auto', compression, maxBytes);
        assert.deepEqual([...auto.decodedWith], ['native']);
        assert.deepEqual(Buffer.concat(auto.batches), Buffer.concat(native.batches));
      }
    }
    // Through the batch cache: the walks that fill it (a response is kept when asked for again) and a walk
    // served from it (sliced differently, so views of several cached responses make up one) give the same
    // bytes as parquet-wasm.
    const cache = createBatchCache(64 << 20);
    const expected = Buffer.concat((await walk(x, 'parquet-wasm', 'none', 20_000)).batches);
    assert.deepEqual(Buffer.concat((await walk(x, 'native', 'none', 20_000, cache)).batches), expected);
    assert.deepEqual(Buffer.concat((await walk(x, 'native', 'none', 20_000, cache)).batches), expected);
    const hits = cache.hits;
    assert.deepEqual(Buffer.concat((await walk(x, 'native', 'none', 7_000, cache)).batches), expected);
    assert.ok(cache.hits > hits, 'the second walk was served from the cache');
  });
}

test('a file the native reader does not support (DELTA encodings) falls back to parquet-wasm with the same bytes', async (t) => {
  const x = await tier(t, 'zstd');
  const f = x.files.find((y) => y.parquet !== null && y.index.rowGroups.length > 2)!;
  const table = readParquetTable(f.parquet!.bytes);
  // parquet-rs v2 pages without a dictionary: DELTA_BINARY_PACKED and DELTA_BYTE_ARRAY values.
  const props = new pq.WriterPropertiesBuilder()
    .setWriterVersion(pq.WriterVersion.V2)
    .setDictionaryEnabled(false)
    .setCompression(pq.Compression.ZSTD)
    .setMaxRowGroupSize(f.index.rowGroups[0]!.numRows)
    .build();
  const bytes = pq.writeParquet(pq.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), props);
  const footer = parseParquetFooter(bytes);
  assert.deepEqual(footer.rowGroups.map((rg) => Number(rg.numRows)), f.index.rowGroups.map((rg) => rg.numRows));
  // The same index with the other file's byte ranges.
  const index: SegmentIndex = {
    ...f.index,
    dataFile: { ...f.index.dataFile!, size: bytes.length, footerOffset: bytes.length - 8 - footer.metadataLength, footerLength: footer.metadataLength },
    rowGroups: f.index.rowGroups.map((rg, i) => {
      const cols = footer.rowGroups[i]!.columns;
      const start = Math.min(...cols.map((c) => Number(c.startOffset)));
      const end = Math.max(...cols.map((c) => Number(c.startOffset + c.totalCompressedSize)));
      return { ...rg, byteStart: start, byteLength: end - start };
    }),
  };
  await x.io.put(resolveLocation(x.table, f.dataPath!), Buffer.from(bytes));
  const fromOffset = async (decoder: RowDecoder) => {
    const footers = createFooterCache(1 << 20);
    const out: Buffer[] = [];
    let offset = index.baseOffset;
    const used = new Set<string>();
    while (offset <= index.lastOffset) {
      const r = await fetchFromParquet({ io: x.io, tableLocation: x.table, index, fetchOffset: offset, maxBytes: 30_000, footers, decoder });
      if (r.decodedWith !== null) used.add(r.decodedWith);
      out.push(r.records);
      offset = r.nextOffset;
    }
    return { bytes: Buffer.concat(out), used };
  };
  const auto = await fromOffset('auto');
  assert.deepEqual([...auto.used], ['parquet-wasm']);
  assert.ok(auto.bytes.equals((await fromOffset('parquet-wasm')).bytes));
  // The original file's batches are the same records: compare with a native walk of it.
  await x.io.put(resolveLocation(x.table, f.dataPath!), Buffer.from(f.parquet!.bytes));
  const original = await walk(x, 'native', 'none', 30_000, undefined, [f.index]);
  assert.ok(auto.bytes.equals(Buffer.concat(original.batches)));
  await x.io.put(resolveLocation(x.table, f.dataPath!), Buffer.from(bytes));
  await assert.rejects(
    fetchFromParquet({ io: x.io, tableLocation: x.table, index, fetchOffset: index.baseOffset, maxBytes: 1, decoder: 'native' }),
    (e: unknown) => e instanceof ParquetError && e.code === 'UNSUPPORTED_TYPE' && /DELTA/.test(e.message),
  );
});

test('a forward reader range-reads and decodes each row group once: the footer cache keeps the last decoded row groups', async (t) => {
  const x = await tier(t, 'zstd');
  const f = x.files.find((y) => y.index.rowGroups.length > 3)!;
  const spanOfAll = f.index.rowGroups.reduce((n, rg) => n + rg.byteLength, 0);
  const forward = async (reuse: boolean, decodedBytes?: number) => {
    const footers = createFooterCache(1 << 20, decodedBytes);
    let offset = f.index.baseOffset;
    let read = 0;
    const out: Buffer[] = [];
    while (offset <= f.index.lastOffset) {
      const r = await fetchFromParquet({ io: x.io, tableLocation: x.table, index: f.index, fetchOffset: offset, maxBytes: 6000, footers, reuseDecodedRowGroups: reuse });
      read += r.bytesRead;
      out.push(r.records);
      offset = r.nextOffset;
    }
    return { read, bytes: Buffer.concat(out), kept: footers.rowGroups?.size ?? 0 };
  };
  const reused = await forward(true);
  const fresh = await forward(false);
  const none = await forward(true, 0);
  assert.ok(reused.bytes.equals(fresh.bytes) && none.bytes.equals(fresh.bytes), 'the same batches either way');
  assert.equal(reused.read, spanOfAll, 'every row group read exactly once');
  assert.ok(fresh.read > spanOfAll, `without reuse row groups are read again (${fresh.read} > ${spanOfAll})`);
  assert.equal(none.read, fresh.read, 'a zero budget keeps nothing');
  assert.ok(reused.kept > 0 && none.kept === 0);
  // The budget bounds what is kept.
  const small = await forward(true, 1);
  assert.ok(small.bytes.equals(fresh.bytes));
  assert.equal(small.kept, 0, 'a row group larger than the budget is not kept');
});

test('readers sharing a footer cache, interleaved and concurrent, get the bytes a lone reader gets; earlier results stay intact', async (t) => {
  // Decoded row groups keep their pages in reused buffers: this checks none is reused while a fetch or
  // the cache still holds it.
  const x = await tier(t, 'zstd');
  const f = x.files.find((y) => y.index.rowGroups.length > 3)!;
  const maxBytes = 5000;
  const alone = async (from: bigint): Promise<Buffer[]> => {
    const out: Buffer[] = [];
    for (let offset = from; offset <= f.index.lastOffset; ) {
      const r = await fetchFromParquet({ io: x.io, tableLocation: x.table, index: f.index, fetchOffset: offset, maxBytes, decoder: 'native', reuseDecodedRowGroups: false });
      out.push(Buffer.from(r.records));
      offset = r.nextOffset;
    }
    return out;
  };
  const span = f.index.lastOffset - f.index.baseOffset;
  const starts = [f.index.baseOffset, f.index.baseOffset + span / 3n, f.index.baseOffset + span / 2n, f.index.baseOffset + span / 3n];
  const want = await Promise.all(starts.map((s) => alone(s)));
  const footers = createFooterCache(1 << 20);
  const got: Buffer[][] = starts.map(() => []);
  const at = [...starts];
  for (let round = 0; at.some((o) => o <= f.index.lastOffset); round++) {
    // Each round: some readers fetch at once, in an order that changes from round to round.
    const who = at.map((_, i) => i).filter((i) => at[i]! <= f.index.lastOffset && (i + round) % 3 !== 0);
    if (round % 2 === 1) who.reverse();
    const results = await Promise.all(who.map((i) => fetchFromParquet({ io: x.io, tableLocation: x.table, index: f.index, fetchOffset: at[i]!, maxBytes, footers, decoder: 'native' })));
    results.forEach((r, k) => {
      got[who[k]!]!.push(r.records);
      at[who[k]!] = r.nextOffset;
    });
  }
  for (let i = 0; i < starts.length; i++) {
    assert.equal(got[i]!.length, want[i]!.length, `reader ${i}: number of fetches`);
    got[i]!.forEach((b, k) => assert.ok(b.equals(want[i]![k]!), `reader ${i}, fetch ${k}: the same bytes as a lone reader, still intact after the later fetches`));
  }
});
