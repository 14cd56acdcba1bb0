import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { assignFreshSchemaIds } from '../../../iceberg/schema.js';
import { encodeRecordBatch, decodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { scanBatches } from '../../../protocol/record-batch/batches.js';
import { convertSegment, type ConvertedFile, type SegmentSource } from '../../../tiering/convert/segment-to-parquet.js';
import { FIELD_IDS, LAST_COLUMN_ID, TOPIC_SCHEMA } from '../../../tiering/convert/schema.js';
import { buildSegment } from './segment-fixture.js';

async function convertAll(segment: Buffer, opts: Partial<Parameters<typeof convertSegment>[1]> = {}): Promise<ConvertedFile[]> {
  const out: ConvertedFile[] = [];
  for await (const f of convertSegment(segment, { partition: 5, ...opts })) out.push(f);
  return out;
}

async function duck(t: { after: (fn: () => void) => void }) {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  t.after(() => {
    conn.closeSync();
    db.closeSync();
  });
  return async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson();
}

const hex = (b: Buffer | null): string | null => (b === null ? null : b.toString('hex'));

test('the schema ids are the ones Iceberg fresh-id assignment gives, so table creation keeps them', () => {
  const { schema, lastColumnId } = assignFreshSchemaIds(TOPIC_SCHEMA, 0);
  assert.deepEqual(schema, TOPIC_SCHEMA);
  assert.equal(lastColumnId, LAST_COLUMN_ID);
});

test('DuckDB reads exactly one row per data record with identical key, value, headers, offset and timestamp', async (t) => {
  const segment = buildSegment();
  const files = await convertAll(segment, { targetRowGroupBytes: 8 * 1024 });
  const dir = await mkdtemp(join(tmpdir(), 'floe-convert-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const paths: string[] = [];
  for (const [i, f] of files.entries()) {
    if (!f.parquet) continue;
    const p = join(dir, `${i}.parquet`);
    await writeFile(p, f.parquet.bytes);
    paths.push(p);
  }
  const q = await duck(t);
  const rows = await q(
    `SELECT kafka.partition AS p, kafka.offset AS o, CAST(epoch_us(kafka.timestamp) AS VARCHAR) AS ts, kafka.timestamp_type AS tt, hex(kafka.key) AS k, hex(value) AS v,
            to_json([{'k': h.key, 'v': hex(h.value)} FOR h IN kafka.headers]) AS hs, kafka.raw_record IS NOT NULL AS raw,
            kafka.batch.producer_id AS pid
       FROM read_parquet([${paths.map((p) => `'${p}'`).join(',')}]) ORDER BY o`,
  );
  const expected: Record<string, unknown>[] = [];
  for (const b of scanBatches(segment).batches) {
    const d = decodeRecordBatch(segment.subarray(b.start, b.end));
    if (d.isControl) continue;
    for (const r of d.records) {
      const ts = d.timestampType === 'log-append' ? d.maxTimestamp : d.baseTimestamp + BigInt(r.timestampDelta);
      const validKeys = r.headers.every((h) => Buffer.from(h.key, 'utf8').toString('utf8') === h.key && !h.key.includes('\ufffd'));
      expected.push({
        p: 5,
        o: String(d.baseOffset + BigInt(r.offsetDelta)),
        ts: String(ts * 1000n),
        tt: d.timestampType === 'log-append' ? 1 : 0,
        k: hex(r.key)?.toUpperCase() ?? null,
        v: hex(r.value)?.toUpperCase() ?? null,
        hs: JSON.stringify(r.headers.map((h) => ({ k: h.key, v: h.value === null ? null : h.value.toString('hex').toUpperCase() }))),
        raw: !validKeys,
        pid: String(d.producerId),
      });
    }
  }
  assert.equal(rows.length, expected.length, 'one row per data record, no control records');
  rows.forEach((row, i) => {
    const e = expected[i]!;
    assert.deepEqual({ ...row, hs: JSON.stringify(JSON.parse(String(row.hs))), pid: String(row.pid) }, e, `row ${i}`);
  });
  assert.ok(rows.some((r) => r.raw === true), 'the non-UTF-8 header key kept its raw bytes');
  // Field ids are in the Parquet schema, nested ones included.
  const schema = await q(`SELECT name, field_id FROM parquet_schema('${paths[0]}') WHERE field_id IS NOT NULL`);
  const ids = new Map(schema.map((r) => [String(r.name), Number(r.field_id)]));
  assert.equal(ids.get('kafka'), FIELD_IDS.kafka);
  assert.equal(ids.get('offset'), FIELD_IDS.offset);
  assert.equal(ids.get('producer_id'), FIELD_IDS.batchProducerId);
  assert.equal(ids.get('raw_record'), FIELD_IDS.rawRecord);
});

test('row groups are ordered by offset and agree with the footer; files split at batch boundaries with deterministic names', async () => {
  const segment = buildSegment();
  const files = await convertAll(segment, { targetFileBytes: 40 * 1024, targetRowGroupBytes: 4096 });
  assert.ok(files.length > 3);
  let prevLast = -1n;
  for (const f of files) {
    assert.ok(f.index.baseOffset > prevLast);
    prevLast = f.index.lastOffset;
    const pad = (o: bigint) => o.toString().padStart(20, '0');
    assert.equal(f.indexPath, `kafka-index/partition=5/${pad(f.index.baseOffset)}-${pad(f.index.lastOffset)}.idx`);
    if (f.dataPath === null) continue;
    assert.equal(f.dataPath, `data/partition=5/${pad(f.index.baseOffset)}-${pad(f.index.lastOffset)}.parquet`);
    const footer = f.parquet!.footer;
    assert.equal(footer.rowGroups.length, f.index.rowGroups.length);
    let row = 0;
    f.index.rowGroups.forEach((rg, i) => {
      assert.equal(rg.firstRow, row);
      assert.equal(BigInt(rg.numRows), footer.rowGroups[i]!.numRows);
      assert.ok(rg.firstOffset <= rg.lastOffset);
      if (i > 0) assert.ok(rg.firstOffset > f.index.rowGroups[i - 1]!.lastOffset);
      assert.equal(BigInt(rg.byteStart), footer.rowGroups[i]!.startOffset);
      row += rg.numRows;
    });
    assert.equal(row, f.index.rowCount);
    assert.equal(f.parquet!.metrics.record_count, BigInt(f.index.rowCount));
  }
  // Same input, same output names and bytes: a retry overwrites.
  const again = await convertAll(segment, { targetFileBytes: 40 * 1024, targetRowGroupBytes: 4096 });
  assert.deepEqual(again.map((f) => [f.dataPath, f.indexPath]), files.map((f) => [f.dataPath, f.indexPath]));
  assert.deepEqual(again.map((f) => f.indexBytes), files.map((f) => f.indexBytes));
});

test('a range of control batches only yields an index and no data file', async () => {
  const { controlMarkerRecord } = await import('../../../protocol/record-batch/record-batch.js');
  const seg = encodeRecordBatch({ baseOffset: 10n, baseTimestamp: 1n, isControl: true, isTransactional: true, producerId: 1n, producerEpoch: 0, records: [controlMarkerRecord('commit', 0)] });
  const [f, ...rest] = await convertAll(seg);
  assert.equal(rest.length, 0);
  assert.equal(f!.dataPath, null);
  assert.equal(f!.parquet, null);
  assert.deepEqual(f!.index.batches[0]!.stored, seg);
});

test('a torn or out-of-order segment is refused with INVALID_SEGMENT', async () => {
  const a = encodeRecordBatch({ baseOffset: 5n, baseTimestamp: 1n, records: [{ value: Buffer.from('a') }] });
  const b = encodeRecordBatch({ baseOffset: 3n, baseTimestamp: 1n, records: [{ value: Buffer.from('b') }] });
  await assert.rejects(convertAll(Buffer.concat([a, b])), { code: 'INVALID_SEGMENT' });
  await assert.rejects(convertAll(a.subarray(0, a.length - 1)), { code: 'INVALID_SEGMENT' });
  const corrupt = Buffer.from(a);
  corrupt[corrupt.length - 1]! ^= 1;
  await assert.rejects(convertAll(corrupt), { code: 'INVALID_SEGMENT' });
  await assert.rejects(convertAll(a, { targetRowGroupBytes: 0 }), { code: 'INVALID_OPTION' });
});

// The converter decides per record, in one walk, whether the typed columns rebuild it: that is the case
// exactly when every varint is minimal and every header key is valid UTF-8. This checks the verdict
// against the definition — decode, re-encode, compare — for records crafted to break each rule, and that
// the rebuilt batch is byte-identical either way.
test('raw_record is kept exactly for the records a decode and re-encode would change, and only for them', async () => {
  const { decodeRecords, encodeRecords } = await import('../../../protocol/record-batch/records.js');
  const { writeVarint, writeVarlongNumber } = await import('../../../protocol/varint.js');
  const { writeBatchCrc } = await import('../../../protocol/record-batch/crc.js');
  const { BATCH_HEADER_SIZE, BATCH_OFFSETS, BATCH_LOG_OVERHEAD } = await import('../../../protocol/record-batch/header.js');
  const { readParquetTable } = await import('../../../iceberg/parquet/reader.js');
  const { LocalFileIO } = await import('../../../iceberg/io/local.js');
  const { fetchFromParquet } = await import('../../../tiering/convert/parquet-to-batches.js');
  const { resolveLocation } = await import('../../../tiering/offset-index/location.js');

  const varint = (v: number, long = false, padded = false): Buffer => {
    const b = Buffer.alloc(12);
    let n = long ? writeVarlongNumber(b, 0, v) : writeVarint(b, 0, v);
    if (padded) {
      b[n - 1]! |= 0x80; // a continuation bit on the last byte, then a zero byte: same value, one byte longer
      b[n++] = 0;
    }
    return b.subarray(0, n);
  };
  type Pad = 'len' | 'ts' | 'off' | 'key' | 'count' | 'hval';
  const record = (offsetDelta: number, headerKey: Buffer, pad?: Pad): Buffer => {
    const p = (what: Pad): boolean => pad === what;
    const key = Buffer.from(`k${offsetDelta}`);
    const body = Buffer.concat([
      Buffer.of(0),
      varint(offsetDelta * 3, true, p('ts')),
      varint(offsetDelta, false, p('off')),
      varint(key.length, false, p('key')),
      key,
      varint(2),
      Buffer.from('v!'),
      varint(1, false, p('count')),
      varint(headerKey.length),
      headerKey,
      varint(-1, false, p('hval')),
    ]);
    return Buffer.concat([varint(body.length, false, p('len')), body]);
  };
  const keys: [Buffer, Pad | undefined][] = [
    [Buffer.from('plain'), undefined],
    [Buffer.from('ü-日本'), undefined],
    [Buffer.from('plain'), 'len'],
    [Buffer.from('plain'), 'ts'],
    [Buffer.from('plain'), 'off'],
    [Buffer.from('plain'), 'key'],
    [Buffer.from('plain'), 'count'],
    [Buffer.from('plain'), 'hval'],
    [Buffer.of(0x41, 0xff, 0x42), undefined], // not UTF-8
    [Buffer.of(0xc0, 0xaf), undefined], // overlong encoding of '/'
    [Buffer.of(0xed, 0xa0, 0x80), undefined], // a UTF-16 surrogate
    [Buffer.of(0x61, 0xe2, 0x82), undefined], // cut off inside a sequence
    [Buffer.from('last'), undefined],
  ];
  const records = keys.map(([k, pad], i) => record(i, k, pad));
  const section = Buffer.concat(records);
  // A real batch of the same count, its records section swapped for the crafted one.
  const shell = encodeRecordBatch({ baseOffset: 100n, baseTimestamp: 1_700_000_000_000n, records: records.map(() => ({ value: null })) });
  const batch = Buffer.concat([shell.subarray(0, BATCH_HEADER_SIZE), section]);
  batch.writeInt32BE(batch.length - BATCH_LOG_OVERHEAD, BATCH_OFFSETS.batchLength);
  writeBatchCrc(batch, 0);

  const expectRaw = records.map((r) => !encodeRecords(decodeRecords(r, 1)).equals(r));
  assert.deepEqual(expectRaw, [false, false, true, true, true, true, true, true, true, true, true, true, false], 'the crafted records break the rules they name');

  const [file] = await convertAll(batch, { partition: 0 });
  const table = readParquetTable(file!.parquet!.bytes);
  const kafka = table.getChild('kafka')!;
  const raws = Array.from({ length: table.numRows }, (_, i) => kafka.get(i)!['raw_record'] as Uint8Array | null);
  assert.deepEqual(raws.map((r) => r !== null), expectRaw);
  raws.forEach((r, i) => {
    if (r !== null) assert.deepEqual(Buffer.from(r), records[i]);
  });
  // The header key column holds what a UTF-8 decoder shows, never invalid UTF-8.
  const headerKeys = Array.from({ length: table.numRows }, (_, i) => (kafka.get(i)!['headers'] as { toArray(): { key: string }[] }).toArray()[0]!.key);
  assert.deepEqual(headerKeys, keys.map(([k]) => k.toString('utf8')));

  // Rebuilt from the data file, the batch is the original byte for byte.
  const dir = await mkdtemp(join(tmpdir(), 'floe-raw-'));
  try {
    const io = new LocalFileIO({ root: dir, fsync: false });
    const tableLoc = `file://${dir}/t`;
    await io.put(resolveLocation(tableLoc, file!.dataPath!), Buffer.from(file!.parquet!.bytes));
    const res = await fetchFromParquet({ io, tableLocation: tableLoc, index: file!.index, fetchOffset: 100n, maxBytes: 1 << 20 });
    assert.deepEqual(res.records, batch);
    await io.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** A segment read through a SegmentSource that returns at most `maxRead` bytes per read, as a file may. */
function chunkySource(segment: Buffer, maxRead: number): SegmentSource & { reads: number; bytesRead: number } {
  const src = {
    size: segment.length,
    reads: 0,
    bytesRead: 0,
    read: async (target: Buffer, offset: number, length: number, position: number) => {
      const n = Math.max(0, Math.min(length, maxRead, segment.length - position));
      segment.copy(target, offset, position, position + n);
      src.reads++;
      src.bytesRead += n;
      return n;
    },
  };
  return src;
}

async function convertSource(source: SegmentSource, opts: Partial<Parameters<typeof convertSegment>[1]>, window: { buf: Buffer | null }): Promise<ConvertedFile[]> {
  const out: ConvertedFile[] = [];
  for await (const f of convertSegment(source, { partition: 5, ...opts }, window)) out.push(f);
  return out;
}

test('a segment read a window at a time converts to the same files as the segment in memory, reading each byte once and holding about one file', async () => {
  const segment = buildSegment(400);
  const opts = { targetFileBytes: 48 * 1024, targetRowGroupBytes: 4096 };
  const inMemory = await convertAll(segment, opts);
  assert.ok(inMemory.length >= 5, `several files: ${inMemory.length}`);
  const largestBatch = Math.max(...scanBatches(segment).batches.map((b) => b.end - b.start));
  // A window that starts too small to hold one batch, and reads that stop short.
  for (const [maxRead, start] of [
    [1000, 16],
    [1 << 30, 0],
  ] as const) {
    const source = chunkySource(segment, maxRead);
    const window = { buf: start > 0 ? Buffer.alloc(start) : null };
    const streamed = await convertSource(source, opts, window);
    assert.deepEqual(streamed.map((f) => [f.dataPath, f.indexPath, f.logBytes]), inMemory.map((f) => [f.dataPath, f.indexPath, f.logBytes]));
    assert.deepEqual(streamed.map((f) => f.indexBytes), inMemory.map((f) => f.indexBytes));
    assert.deepEqual(streamed.map((f) => (f.parquet ? Buffer.from(f.parquet.bytes) : null)), inMemory.map((f) => (f.parquet ? Buffer.from(f.parquet.bytes) : null)));
    assert.equal(source.bytesRead, segment.length, 'every byte is read once');
    assert.ok(window.buf !== null);
    if (start > 0) {
      // Grown from 16 bytes only as far as a file's batches needed (doubling).
      assert.ok(window.buf.length <= 2 * (opts.targetFileBytes + largestBatch), `window ${window.buf.length} stays about one file`);
      assert.ok(window.buf.length < segment.length / 4, `window ${window.buf.length} is far smaller than the segment ${segment.length}`);
    } else {
      // The default: a file's worth plus 1 MiB for the batch that crosses it, never more than the segment.
      assert.equal(window.buf.length, Math.min(segment.length, opts.targetFileBytes + (1 << 20)));
    }
  }
});

test('a window handed back is used again for the next segment, and a window-read segment reports errors at their byte in the segment', async () => {
  const segment = buildSegment(200);
  const opts = { targetFileBytes: 32 * 1024 };
  const window: { buf: Buffer | null } = { buf: null };
  await convertSource(chunkySource(segment, 1 << 30), opts, window);
  const first = window.buf;
  assert.ok(first !== null);
  await convertSource(chunkySource(segment, 1 << 30), opts, window);
  assert.equal(window.buf, first, 'no new window for a segment of the same shape');

  // Flip a byte inside a batch well past the first file: the message names the batch's byte in the segment.
  const batches = scanBatches(segment).batches;
  const victim = batches.find((b) => b.start > 3 * opts.targetFileBytes)!;
  const corrupt = Buffer.from(segment);
  corrupt[victim.end - 1]! ^= 1;
  await assert.rejects(convertSource(chunkySource(corrupt, 777), opts, { buf: null }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'INVALID_SEGMENT');
    assert.match(err.message, new RegExp(`batch at byte ${victim.start} \\(offset ${victim.baseOffset}\\)`));
    return true;
  });
  // A segment cut inside its last batch.
  const last = batches[batches.length - 1]!;
  await assert.rejects(convertSource(chunkySource(segment.subarray(0, last.end - 5), 1 << 30), opts, { buf: null }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'INVALID_SEGMENT');
    assert.match(err.message, new RegExp(`at byte ${last.start}\\b`));
    return true;
  });
});

test('conversion gives the event loop a turn after every chunk it writes, within a single data file', async () => {
  // 80 batches of one 64 KiB value each: 5 MiB of payload, one data file, about five 1 MiB chunks.
  const value = Buffer.alloc(64 * 1024, 7);
  const segment = Buffer.concat(Array.from({ length: 80 }, (_, i) => encodeRecordBatch({ baseOffset: BigInt(i), baseTimestamp: 1n, records: [{ value }] })));
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const files = await convertAll(segment);
  running = false;
  assert.equal(files.length, 1);
  assert.equal(files[0]!.index.rowCount, 80);
  // Whatever else the loop runs (produce, fetch) gets in at least once per MiB of payload.
  assert.ok(turns >= 4, `the event loop turned ${turns} times during the conversion`);
});
