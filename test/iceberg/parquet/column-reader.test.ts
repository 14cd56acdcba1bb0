import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import type { Schema } from '../../../iceberg/schema.js';
import { writeParquet, type ParquetCompression } from '../../../iceberg/parquet/writer.js';
import { parseParquetFooter, readParquetTable } from '../../../iceberg/parquet/reader.js';
import { icebergToArrowSchema } from '../../../iceberg/parquet/arrow-schema.js';
import { ParquetError } from '../../../iceberg/parquet/errors.js';
import type { ParquetFooter } from '../../../iceberg/parquet/footer.js';
import { decodeThriftStructPrefix } from '../../../iceberg/parquet/thrift.js';
import { findLeafByFieldId, int64At, int64IsSafe, readColumnChunks, type DecodedColumn } from '../../../iceberg/parquet/column-reader.js';

// Every shape the tiering schema has: required and optional int/long/binary/string, and a
// list<struct<string, binary>> (Kafka headers), plus a double the reader does not support.
const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'int' },
    { id: 2, name: 'big', required: true, type: 'long' },
    { id: 3, name: 'opt_long', required: false, type: 'long' },
    { id: 4, name: 'small', required: false, type: 'int' },
    { id: 5, name: 'name', required: false, type: 'string' },
    { id: 6, name: 'data', required: false, type: 'binary' },
    {
      id: 7,
      name: 'headers',
      required: false,
      type: {
        type: 'list',
        'element-id': 8,
        'element-required': true,
        element: {
          type: 'struct',
          fields: [
            { id: 9, name: 'key', required: true, type: 'string' },
            { id: 10, name: 'value', required: false, type: 'binary' },
          ],
        },
      },
    },
    { id: 11, name: 'score', required: false, type: 'double' },
  ],
};

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

interface Header {
  key: string;
  value: Uint8Array | null;
}

function sample(rows: number, seed = 1): arrow.Table {
  const rand = rng(seed);
  const s = icebergToArrowSchema(schema);
  const type = (name: string): arrow.DataType => s.fields.find((f) => f.name === name)!.type;
  const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => Math.floor(rand() * 256));
  const ids: number[] = [];
  const big: bigint[] = [];
  const opt: (bigint | null)[] = [];
  const small: (number | null)[] = [];
  const names: (string | null)[] = [];
  const data: (Uint8Array | null)[] = [];
  const headers: (Header[] | null)[] = [];
  const scores: (number | null)[] = [];
  for (let i = 0; i < rows; i++) {
    ids.push(i);
    big.push(BigInt(Math.floor((rand() - 0.5) * 2 ** 52)));
    opt.push(rand() < 0.2 ? null : BigInt(i) * 1000n - 7n);
    small.push(rand() < 0.1 ? null : Math.floor(rand() * 5) - 2);
    names.push(rand() < 0.15 ? null : `name-${Math.floor(rand() * 20)}`);
    data.push(rand() < 0.1 ? null : bytes(rand() < 0.1 ? 0 : Math.floor(rand() * 300)));
    const h = rand();
    headers.push(h < 0.2 ? null : h < 0.35 ? [] : Array.from({ length: 1 + Math.floor(rand() * 3) }, (_, k) => ({ key: k === 1 ? 'dup' : `h${Math.floor(rand() * 4)}`, value: rand() < 0.2 ? null : bytes(Math.floor(rand() * 12)) })));
    scores.push(rand());
  }
  const columns: Record<string, arrow.Vector> = {
    id: arrow.vectorFromArray(ids, type('id')),
    big: arrow.makeVector(BigInt64Array.from(big)),
    opt_long: arrow.vectorFromArray(opt, type('opt_long')),
    small: arrow.vectorFromArray(small, type('small')),
    name: arrow.vectorFromArray(names, type('name')),
    data: arrow.vectorFromArray(data, type('data')),
    headers: arrow.vectorFromArray(headers, type('headers')),
    score: arrow.vectorFromArray(scores, type('score')),
  };
  // With the id-carrying schema, so files written by parquet-wasm directly have field ids too.
  const children = s.fields.map((f) => columns[f.name]!.data[0]!);
  return new arrow.Table(s, [new arrow.RecordBatch(s, arrow.makeData({ type: new arrow.Struct(s.fields), length: rows, nullCount: 0, children }))]);
}

/** The file's bytes that hold row groups [first, last], and where they start. */
function spanOf(footer: ParquetFooter, bytes: Uint8Array, first: number, last: number): { span: Uint8Array; start: number } {
  let start = Infinity;
  let end = 0;
  for (let g = first; g <= last; g++) {
    for (const c of footer.rowGroups[g]!.columns) {
      start = Math.min(start, Number(c.startOffset));
      end = Math.max(end, Number(c.startOffset + c.totalCompressedSize));
    }
  }
  return { span: bytes.subarray(start, end), start };
}

type Cell = null | number | bigint | string | Uint8Array | Header[];

/** Row values of a flat column from its levels and values. */
function flatRows(c: DecodedColumn, asString = false): Cell[] {
  const out: Cell[] = [];
  let v = 0;
  for (let i = 0; i < c.numLevels; i++) {
    if (c.definitionLevels !== null && c.definitionLevels[i] !== c.maxDefinitionLevel) {
      out.push(null);
      continue;
    }
    out.push(valueAt(c, v++, asString));
  }
  assert.equal(v, c.numValues);
  return out;
}

function valueAt(c: DecodedColumn, i: number, asString: boolean): Cell {
  const vals = c.values;
  if (vals.kind === 'int32') return vals.data[i]!;
  if (vals.kind === 'int64') {
    assert.ok(int64IsSafe(vals.data, i));
    return BigInt(int64At(vals.data, i));
  }
  const b = vals.data.subarray(vals.starts[i]!, vals.ends[i]!);
  return asString ? b.toString('utf8') : new Uint8Array(b);
}

/** Rows of the headers list from its key and value leaves. */
function headerRows(keys: DecodedColumn, values: DecodedColumn): (Header[] | null)[] {
  assert.equal(keys.numLevels, values.numLevels);
  const out: (Header[] | null)[] = [];
  let kv = 0;
  let vv = 0;
  for (let i = 0; i < keys.numLevels; i++) {
    const d = keys.definitionLevels![i]!;
    if (keys.repetitionLevels![i] === 0) out.push(d === 0 ? null : []);
    if (d < keys.maxDefinitionLevel) {
      assert.ok(d <= 1);
      continue;
    }
    const key = valueAt(keys, kv++, true) as string;
    const value = values.definitionLevels![i] === values.maxDefinitionLevel ? (valueAt(values, vv++, false) as Uint8Array) : null;
    out[out.length - 1]!.push({ key, value });
  }
  return out;
}

function arrowRows(t: arrow.Table, name: string): Cell[] {
  const col = t.getChild(name)!;
  const out: Cell[] = [];
  for (let i = 0; i < t.numRows; i++) {
    const v: unknown = col.get(i);
    if (v === null || v === undefined) out.push(null);
    else if (name === 'headers') {
      const list = v as arrow.Vector;
      const hs: Header[] = [];
      for (let k = 0; k < list.length; k++) {
        const e = list.get(k) as { key: string; value: Uint8Array | null };
        hs.push({ key: e.key, value: e.value === null ? null : new Uint8Array(e.value) });
      }
      out.push(hs);
    } else if (v instanceof Uint8Array) out.push(new Uint8Array(v));
    else out.push(v as Cell);
  }
  return out;
}

/** Decodes row groups [first, last] natively and checks every supported column against parquet-wasm. */
function compare(bytes: Uint8Array, first: number, last: number, what: string): void {
  const footer = parseParquetFooter(bytes);
  const { span, start } = spanOf(footer, bytes, first, last);
  const groups = Array.from({ length: last - first + 1 }, (_, k) => first + k);
  const want = readParquetTable(bytes, { rowGroups: groups });
  const leaf = (id: number): number => {
    const i = findLeafByFieldId(footer, id);
    assert.ok(i >= 0, `leaf ${id}`);
    return i;
  };
  const [id, big, opt, small, name, data, hk, hv] = readColumnChunks(footer, span, start, groups, [1, 2, 3, 4, 5, 6, 9, 10].map(leaf));
  for (const c of [id!, big!, opt!, small!, name!, data!]) assert.equal(c.numRows, want.numRows, `${what}: rows of ${c.leaf.path.join('.')}`);
  assert.deepEqual(flatRows(id!), arrowRows(want, 'id'), `${what}: id`);
  assert.deepEqual(flatRows(big!), arrowRows(want, 'big'), `${what}: big`);
  assert.deepEqual(flatRows(opt!), arrowRows(want, 'opt_long'), `${what}: opt_long`);
  assert.deepEqual(flatRows(small!), arrowRows(want, 'small'), `${what}: small`);
  assert.deepEqual(flatRows(name!, true), arrowRows(want, 'name'), `${what}: name`);
  assert.deepEqual(flatRows(data!), arrowRows(want, 'data'), `${what}: data`);
  assert.equal(hk!.maxRepetitionLevel, 1);
  assert.equal(hk!.numRows, want.numRows);
  assert.deepEqual(headerRows(hk!, hv!), arrowRows(want, 'headers'), `${what}: headers`);
}

/** Encodings of the data pages in a file's chunks, as the page headers say (to show what was covered). */
function pageEncodings(bytes: Uint8Array): Set<string> {
  const footer = parseParquetFooter(bytes);
  const seen = new Set<string>();
  for (const rg of footer.rowGroups) {
    for (const c of rg.columns) {
      let pos = Number(c.startOffset);
      const end = pos + Number(c.totalCompressedSize);
      while (pos < end) {
        const { struct, length } = decodeThriftStructPrefix(bytes, pos, end);
        const type = struct.get(1) as number;
        const v1 = struct.get(5) as Map<number, unknown> | undefined;
        const v2 = struct.get(8) as Map<number, unknown> | undefined;
        seen.add(type === 2 ? 'dict' : type === 0 ? `v1:${v1!.get(2)}` : `v2:${v2!.get(4)}`);
        pos += length + (struct.get(3) as number);
      }
    }
  }
  return seen;
}

function ipc(t: arrow.Table): Uint8Array {
  return arrow.tableToIPC(t, 'stream');
}

const ROWS = 3000;

for (const compression of ['zstd', 'snappy', 'none'] as ParquetCompression[]) {
  for (const dictionary of ['on', 'off'] as const) {
    test(`matches parquet-wasm: writeParquet ${compression}, dictionary ${dictionary}, several row groups`, async () => {
      const res = await writeParquet(schema, sample(ROWS), { compression, dictionary, rowGroupRows: 700 });
      assert.ok(res.footer.rowGroups.length >= 4);
      const enc = pageEncodings(res.bytes);
      if (dictionary === 'on') assert.ok(enc.has('dict'), `dictionary pages in ${[...enc]}`);
      else assert.ok(!enc.has('dict'), `no dictionary pages in ${[...enc]}`);
      compare(res.bytes, 0, res.footer.rowGroups.length - 1, 'all row groups');
      compare(res.bytes, 1, 2, 'row groups 1..2');
      compare(res.bytes, 3, 3, 'row group 3');
    });
  }
}

test('matches parquet-wasm: small v1 pages, dictionary overflowing into PLAIN pages mid-chunk', () => {
  const t = sample(ROWS, 5);
  const props = new pq.WriterPropertiesBuilder()
    .setCompression(pq.Compression.ZSTD)
    .setMaxRowGroupSize(1200)
    .setDataPageSizeLimit(256)
    .setDictionaryPageSizeLimit(200)
    .setWriteBatchSize(64)
    .build();
  const bytes = pq.writeParquet(pq.Table.fromIPCStream(ipc(t)), props);
  const enc = pageEncodings(bytes);
  // Dictionary indexes (PLAIN_DICTIONARY in v1 files) and PLAIN pages after the dictionary filled up.
  assert.ok(enc.has('dict') && enc.has('v1:0') && (enc.has('v1:2') || enc.has('v1:8')), [...enc].join(' '));
  const footer = parseParquetFooter(bytes);
  assert.ok(footer.rowGroups.length >= 3);
  compare(bytes, 0, footer.rowGroups.length - 1, 'small pages');
  compare(bytes, 1, 1, 'small pages, row group 1');
});

test('matches parquet-wasm: data page v2 (levels outside the compressed values), dictionary and PLAIN', () => {
  for (const [codec, dict] of [
    [pq.Compression.ZSTD, true],
    [pq.Compression.SNAPPY, false],
    [pq.Compression.UNCOMPRESSED, true],
  ] as const) {
    const props = new pq.WriterPropertiesBuilder()
      .setWriterVersion(pq.WriterVersion.V2)
      .setCompression(codec)
      .setEncoding(pq.Encoding.PLAIN)
      .setDictionaryEnabled(dict)
      .setMaxRowGroupSize(1000)
      .setDataPageSizeLimit(512)
      .setDictionaryPageSizeLimit(300)
      .setWriteBatchSize(64)
      .build();
    const bytes = pq.writeParquet(pq.Table.fromIPCStream(ipc(sample(ROWS, 9))), props);
    const enc = pageEncodings(bytes);
    assert.ok(enc.has('v2:0'), [...enc].join(' '));
    if (dict) assert.ok(enc.has('v2:8') && enc.has('dict'), [...enc].join(' '));
    compare(bytes, 0, parseParquetFooter(bytes).rowGroups.length - 1, `v2 codec ${codec} dictionary ${dict}`);
  }
});

function expectError(fn: () => unknown, code: string, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ParquetError, `a ParquetError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  });
}

test('DELTA encodings, unsupported physical types and codecs throw UNSUPPORTED_TYPE (the caller falls back)', async () => {
  // parquet-rs v2 files without a dictionary use DELTA_BINARY_PACKED / DELTA_BYTE_ARRAY.
  const props = new pq.WriterPropertiesBuilder().setWriterVersion(pq.WriterVersion.V2).setDictionaryEnabled(false).build();
  const bytes = pq.writeParquet(pq.Table.fromIPCStream(ipc(sample(200))), props);
  const footer = parseParquetFooter(bytes);
  const { span, start } = spanOf(footer, bytes, 0, 0);
  expectError(() => readColumnChunks(footer, span, start, [0], [findLeafByFieldId(footer, 2)]), 'UNSUPPORTED_TYPE', /DELTA_BINARY_PACKED/);

  const res = await writeParquet(schema, sample(50));
  const f2 = res.footer;
  const s2 = spanOf(f2, res.bytes, 0, 0);
  expectError(() => readColumnChunks(f2, s2.span, s2.start, [0], [findLeafByFieldId(f2, 11)]), 'UNSUPPORTED_TYPE', /DOUBLE/);

  const lz4 = pq.writeParquet(pq.Table.fromIPCStream(ipc(sample(50))), new pq.WriterPropertiesBuilder().setCompression(pq.Compression.LZ4_RAW).build());
  const f3 = parseParquetFooter(lz4);
  const s3 = spanOf(f3, lz4, 0, 0);
  expectError(() => readColumnChunks(f3, s3.span, s3.start, [0], [findLeafByFieldId(f3, 1)]), 'UNSUPPORTED_TYPE', /codec 7/);
});

/** A small uncompressed file (one row group) and where the first page header of the `data` column is. */
async function corruptible(compression: ParquetCompression) {
  const res = await writeParquet(schema, sample(300, 3), { compression, dictionary: 'off' });
  const footer = res.footer;
  const leaf = findLeafByFieldId(footer, 6);
  const chunk = footer.rowGroups[0]!.columns[leaf]!;
  const read = (bytes: Uint8Array, f: ParquetFooter = footer) => {
    const { span, start } = spanOf(f, bytes, 0, 0);
    return readColumnChunks(f, span, start, [0], [leaf]);
  };
  return { res, footer, leaf, chunk, read, page: Number(chunk.startOffset) };
}

test('corrupt input: a page cut short, a bad header, a wrong uncompressed size, a chunk claiming more values', async () => {
  for (const compression of ['none', 'zstd'] as ParquetCompression[]) {
    const { res, footer, leaf, chunk, read, page } = await corruptible(compression);
    assert.equal(read(res.bytes)[0]!.numRows, 300);

    // The bytes read end inside the chunk.
    const { span, start } = spanOf(footer, res.bytes, 0, 0);
    const chunkEnd = Number(chunk.startOffset + chunk.totalCompressedSize) - start;
    expectError(() => readColumnChunks(footer, span.subarray(0, chunkEnd - 10), start, [0], [leaf]), 'INVALID_PARQUET', /outside the bytes read/);

    // The footer says the chunk is shorter than its page.
    const shorter = structuredClone(footer) as ParquetFooter;
    (shorter.rowGroups[0]!.columns[leaf] as { totalCompressedSize: bigint }).totalCompressedSize = chunk.totalCompressedSize - 5n;
    expectError(() => read(res.bytes, shorter), 'INVALID_PARQUET', /runs past the end of its column chunk/);

    // The chunk claims more values than its pages hold.
    const more = structuredClone(footer) as ParquetFooter;
    (more.rowGroups[0]!.columns[leaf] as { numValues: bigint }).numValues = chunk.numValues + 1n;
    expectError(() => read(res.bytes, more), 'INVALID_PARQUET', /chunk ends after 300 of its 301 values/);

    // A header byte that is no compact-protocol field.
    const bad = Uint8Array.from(res.bytes);
    bad[page] = 0xff;
    expectError(() => read(bad), 'INVALID_PARQUET', /unreadable page header/);

    // Field 2 (uncompressed_page_size) one off: the header starts 0x15 <type> 0x15 <size varint>.
    const wrong = Uint8Array.from(res.bytes);
    assert.equal(wrong[page], 0x15);
    assert.equal(wrong[page + 2], 0x15);
    wrong[page + 3] = wrong[page + 3]! ^ 0x02;
    expectError(() => read(wrong), 'INVALID_PARQUET', compression === 'none' ? /holds \d+ bytes where its header says/ : /decodes to/);
  }
});

test('corrupt input: random byte flips never escape as anything but a ParquetError', async () => {
  for (const compression of ['none', 'snappy'] as ParquetCompression[]) {
    const res = await writeParquet(schema, sample(200, 4), { compression, dictionary: 'on', rowGroupRows: 100 });
    const footer = res.footer;
    const leaves = [1, 2, 3, 4, 5, 6, 9, 10].map((id) => findLeafByFieldId(footer, id));
    const { span, start } = spanOf(footer, res.bytes, 0, 1);
    const rand = rng(11);
    let failures = 0;
    for (let k = 0; k < 300; k++) {
      const bad = Uint8Array.from(span);
      for (let f = 0; f < 3; f++) bad[Math.floor(rand() * bad.length)] = Math.floor(rand() * 256);
      try {
        readColumnChunks(footer, bad, start, [0, 1], leaves);
      } catch (e) {
        assert.ok(e instanceof ParquetError, `flip ${k}: ${e instanceof Error ? e.stack : String(e)}`);
        assert.ok(e.code === 'INVALID_PARQUET' || e.code === 'UNSUPPORTED_TYPE', e.message);
        failures++;
      }
    }
    assert.ok(failures > 0, 'some flips are detected');
  }
});

test('int64 pairs give exact safe integers, negatives included', () => {
  const v = [0, 1, -1, 2 ** 32, -(2 ** 32) - 5, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 1_700_000_000_000_000];
  const pairs = new Int32Array(new BigInt64Array(v.map(BigInt)).buffer);
  v.forEach((x, i) => {
    assert.ok(int64IsSafe(pairs, i));
    assert.equal(int64At(pairs, i), x);
  });
  const unsafe = new Int32Array(new BigInt64Array([2n ** 60n]).buffer);
  assert.equal(int64IsSafe(unsafe, 0), false);
});
