// The native Parquet writer against two independent readers (DuckDB, and parquet-rs through parquet-wasm):
// seeded random rows with nulls at every level (top-level, inside structs, null and empty lists and maps,
// null list elements and map values), written with several row-group, page and codec settings, must read
// back exactly as the same rows written by parquet-wasm, with the same Iceberg metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Schema } from '../../../iceberg/schema.js';
import { writeParquet, type ParquetWriteOptions, type ParquetWriteResult } from '../../../iceberg/parquet/writer.js';
import { readParquetTable } from '../../../iceberg/parquet/reader.js';
import { icebergToArrowSchema } from '../../../iceberg/parquet/arrow-schema.js';
import { ParquetError } from '../../../iceberg/parquet/errors.js';
import { nativeWriterSupports } from '../../../iceberg/parquet/native-writer.js';
import { CREATED_BY, PhysicalType } from '../../../iceberg/parquet/footer.js';
import { prng } from '../../protocol/helpers/random-values.js';

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'flag', required: false, type: 'boolean' },
    { id: 3, name: 'n', required: false, type: 'int' },
    { id: 4, name: 'name', required: false, type: 'string' },
    { id: 5, name: 'payload', required: false, type: 'binary' },
    { id: 6, name: 'ts', required: true, type: 'timestamptz' },
    { id: 7, name: 'local_ts', required: false, type: 'timestamp' },
    { id: 8, name: 'day', required: false, type: 'date' },
    { id: 9, name: 'score', required: false, type: 'double' },
    { id: 10, name: 'ratio', required: false, type: 'float' },
    { id: 11, name: 'tags', required: false, type: { type: 'list', 'element-id': 12, element: 'string', 'element-required': false } },
    {
      id: 13,
      name: 'headers',
      required: false,
      type: {
        type: 'list',
        'element-id': 14,
        'element-required': true,
        element: {
          type: 'struct',
          fields: [
            { id: 15, name: 'key', required: true, type: 'string' },
            { id: 16, name: 'value', required: false, type: 'binary' },
          ],
        },
      },
    },
    { id: 17, name: 'attrs', required: false, type: { type: 'map', 'key-id': 18, key: 'string', 'value-id': 19, value: 'long', 'value-required': false } },
    {
      id: 20,
      name: 'inner',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 21, name: 'a', required: false, type: 'int' },
          { id: 22, name: 'b', required: true, type: 'long' },
          { id: 23, name: 'deep', required: false, type: { type: 'list', 'element-id': 24, element: { type: 'list', 'element-id': 25, element: 'int', 'element-required': false }, 'element-required': false } },
        ],
      },
    },
    { id: 26, name: 'uid', required: false, type: 'uuid' },
    { id: 27, name: 'fx', required: false, type: 'fixed[3]' },
  ],
};

function sampleTable(rows: number, seed: number): arrow.Table {
  const r = prng(seed); // seeded, so a failure reproduces
  const maybe = <T>(p: number, f: () => T): T | null => (r() < p ? null : f());
  const int = (lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
  const bytes = (max: number): Uint8Array => Uint8Array.from({ length: int(0, max) }, () => int(0, 255));
  const word = (): string => ['a', 'zz', 'émile', 'ß', '', 'k-' + int(0, 99), '日本'][int(0, 6)]!;
  const s = icebergToArrowSchema(schema);
  const type = (name: string): arrow.DataType => (s.fields.find((f) => f.name === name) as arrow.Field).type;
  const col = <T>(f: (i: number) => T): T[] => Array.from({ length: rows }, (_, i) => f(i));
  const columns: Record<string, arrow.Vector> = {
    id: arrow.vectorFromArray(col((i) => BigInt(i) * 1_000_003n - 5_000_000_000n), type('id')),
    flag: arrow.vectorFromArray(col(() => maybe(0.2, () => r() < 0.5)), type('flag')),
    n: arrow.vectorFromArray(col(() => maybe(0.3, () => int(-2_000_000_000, 2_000_000_000))), type('n')),
    name: arrow.vectorFromArray(col(() => maybe(0.25, word)), type('name')),
    payload: arrow.vectorFromArray(col(() => maybe(0.1, () => bytes(300))), type('payload')),
    ts: arrow.vectorFromArray(col((i) => 1_700_000_000_000 + i), type('ts')),
    local_ts: arrow.vectorFromArray(col((i) => maybe(0.5, () => 1_600_000_000_000 - i * 7)), type('local_ts')),
    day: arrow.vectorFromArray(col(() => maybe(0.3, () => new Date(int(-1000, 30000) * 86_400_000))), type('day')),
    score: arrow.vectorFromArray(col(() => maybe(0.2, () => (r() < 0.05 ? NaN : (r() - 0.5) * 1e6))), type('score')),
    ratio: arrow.vectorFromArray(col(() => maybe(0.2, () => Math.fround(r()))), type('ratio')),
    tags: arrow.vectorFromArray(col(() => maybe(0.2, () => Array.from({ length: int(0, 3) }, () => maybe(0.2, word)))), type('tags')),
    headers: arrow.vectorFromArray(col(() => maybe(0.15, () => Array.from({ length: int(0, 3) }, () => ({ key: word(), value: maybe(0.3, () => bytes(20)) })))), type('headers')),
    attrs: arrow.vectorFromArray(col(() => maybe(0.2, () => new Map(Array.from({ length: int(0, 3) }, (_, k) => [`k${k}`, maybe(0.3, () => BigInt(int(-99, 99)))])))), type('attrs')),
    inner: arrow.vectorFromArray(
      col(() =>
        maybe(0.2, () => ({
          a: maybe(0.3, () => int(-5, 5)),
          b: BigInt(int(0, 1_000_000)),
          deep: maybe(0.3, () => Array.from({ length: int(0, 2) }, () => maybe(0.3, () => Array.from({ length: int(0, 2) }, () => maybe(0.3, () => int(0, 9)))))),
        })),
      ),
      type('inner'),
    ),
    uid: arrow.vectorFromArray(col(() => maybe(0.3, () => Uint8Array.from({ length: 16 }, () => int(0, 255)))), new arrow.FixedSizeBinary(16)),
    fx: arrow.vectorFromArray(col(() => maybe(0.3, () => Uint8Array.from({ length: 3 }, () => int(0, 255)))), new arrow.FixedSizeBinary(3)),
  };
  return new arrow.Table(columns);
}

/** Rows of a decoded table as JSON text (bigints and bytes spelled out), for exact comparison. */
function rowsOf(t: arrow.Table): string[] {
  const norm = (v: unknown): unknown => {
    if (v === null || v === undefined) return null;
    if (typeof v === 'bigint') return `${v}n`;
    if (v instanceof Uint8Array) return `hex:${Buffer.from(v).toString('hex')}`;
    if (typeof v === 'number' && Number.isNaN(v)) return 'NaN';
    if (v instanceof Date) return v.toISOString();
    if (Array.isArray(v)) return v.map(norm);
    if (typeof v === 'object') {
      const o = v as { toJSON?: () => unknown };
      const j = typeof o.toJSON === 'function' ? o.toJSON() : v;
      if (Array.isArray(j)) return j.map(norm);
      return Object.fromEntries(Object.entries(j as Record<string, unknown>).map(([k, x]) => [k, norm(x)]));
    }
    return v;
  };
  return t.toArray().map((row) => JSON.stringify(norm(row)));
}

/** Rows as DuckDB reads them; `uuidLogical`: the file marks uid with the UUID logical type (the spec's mapping). */
async function duckRows(dir: string, name: string, bytes: Uint8Array, uuidLogical: boolean): Promise<unknown[]> {
  const path = join(dir, name);
  await writeFile(path, bytes);
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const rows = await conn.runAndReadAll(`select * exclude (payload, uid, fx), hex(payload) as payload, ${uuidLogical ? "upper(replace(uid::varchar, '-', ''))" : 'hex(uid)'} as uid, hex(fx) as fx, list_transform(headers, h -> {'key': h.key, 'value': hex(h.value)}) as headers from read_parquet('${path}') order by id`);
    return rows.getRowObjectsJson();
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

function sameMetrics(a: ParquetWriteResult, b: ParquetWriteResult): void {
  const m = a.metrics;
  const n = b.metrics;
  assert.equal(m.record_count, n.record_count);
  for (const k of ['value_counts', 'null_value_counts', 'nan_value_counts', 'lower_bounds', 'upper_bounds'] as const) {
    const sorted = (x: ReadonlyMap<number, unknown>): [number, unknown][] => [...x].sort((p, q) => p[0] - q[0]);
    assert.deepEqual(sorted(m[k]), sorted(n[k]), k);
  }
  assert.deepEqual([...m.column_sizes.keys()].sort(), [...n.column_sizes.keys()].sort());
}

const cases: { name: string; rows: number; options: ParquetWriteOptions; slice?: number }[] = [
  { name: 'zstd, one row group, one page per column', rows: 500, options: { compression: 'zstd' } },
  { name: 'snappy, row groups of 97 rows, pages of ~200 bytes', rows: 700, options: { compression: 'snappy', rowGroupRows: 97, pageBytes: 200 } },
  { name: 'uncompressed, input in sliced batches', rows: 400, options: { compression: 'none', rowGroupRows: 150 }, slice: 33 },
];

for (const c of cases) {
  test(`native writer: ${c.name} — DuckDB and parquet-rs read the same rows as from parquet-wasm's file, same metrics`, async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'floe-native-parquet-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const table = sampleTable(c.rows, c.rows);
    const input: arrow.Table | arrow.RecordBatch[] = c.slice
      ? Array.from({ length: Math.ceil(c.rows / c.slice) }, (_, k) => table.slice(k * c.slice!, (k + 1) * c.slice!).batches).flat()
      : table;
    const native = await writeParquet(schema, input, { ...c.options, engine: 'native' });
    const wasm = await writeParquet(schema, table, { ...c.options, engine: 'parquet-wasm' });
    assert.equal(native.footer.createdBy, CREATED_BY);
    assert.deepEqual(rowsOf(readParquetTable(native.bytes)), rowsOf(table));
    assert.deepEqual(rowsOf(readParquetTable(native.bytes)), rowsOf(readParquetTable(wasm.bytes)));
    assert.deepEqual(await duckRows(dir, 'native.parquet', native.bytes, true), await duckRows(dir, 'wasm.parquet', wasm.bytes, false));
    const groups = Math.ceil(c.rows / (c.options.rowGroupRows ?? c.rows));
    assert.equal(native.footer.rowGroups.length, groups);
    assert.deepEqual(native.splitOffsets, native.footer.rowGroups.map((g) => g.startOffset));
    sameMetrics(native, wasm);
    // Field ids on every element, nested ones included, as parquet-wasm writes them. The map's repeated
    // group is `key_value` as the Parquet spec names it (parquet-wasm calls it `entries`, after Arrow).
    assert.deepEqual(
      native.footer.leaves.map((l) => [l.path.join('.'), l.fieldId]),
      wasm.footer.leaves.map((l) => [l.path.join('.').replace('attrs.entries.', 'attrs.key_value.'), l.fieldId]),
    );
  });
}

test('native writer: string and binary statistics longer than 64 bytes are truncated prefixes, marked inexact, still bounding', async () => {
  const s: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'v', required: true, type: 'binary' }] };
  const long = (b: number): Uint8Array => new Uint8Array(100).fill(b);
  const table = new arrow.Table({ v: arrow.vectorFromArray([long(5), long(9), long(7)], new arrow.Binary()) });
  const res = await writeParquet(s, table, { engine: 'native' });
  const st = res.footer.rowGroups[0]!.columns[0]!.statistics!;
  assert.equal(res.footer.rowGroups[0]!.columns[0]!.physicalType, PhysicalType.BYTE_ARRAY);
  assert.equal(st.minValue!.length, 64);
  assert.equal(st.isMinValueExact, false);
  assert.equal(st.isMaxValueExact, false);
  assert.ok(Buffer.compare(Buffer.from(st.minValue!), Buffer.from(long(5))) <= 0);
  assert.ok(Buffer.compare(Buffer.from(st.maxValue!), Buffer.from(long(9))) > 0);
  assert.equal(st.nullCount, 0n);
});

test('native writer: decimals are not written natively; the default engine falls back to parquet-wasm, an explicit native request is refused', async () => {
  const s: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'd', required: false, type: 'decimal(9,2)' }] };
  assert.equal(nativeWriterSupports(s), false);
  assert.equal(nativeWriterSupports(schema), true);
  const type = icebergToArrowSchema(s).fields[0]!.type as arrow.Decimal;
  const table = new arrow.Table({ d: arrow.makeVector(arrow.makeData({ type, length: 1, nullCount: 0, data: new Uint32Array([150, 0, 0, 0]) })) });
  const res = await writeParquet(s, table);
  assert.equal(res.footer.numRows, 1n);
  assert.equal(readParquetTable(res.bytes).numRows, 1);
  await assert.rejects(writeParquet(s, table, { engine: 'native' }), (e: unknown) => e instanceof ParquetError && e.code === 'UNSUPPORTED_TYPE' && /parquet-wasm/.test(e.message));
});

test('native writer: no rows gives a valid file with the schema and no row groups', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-native-parquet-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const res = await writeParquet(schema, [], { engine: 'native' });
  assert.equal(res.footer.numRows, 0n);
  assert.equal(res.footer.rowGroups.length, 0);
  assert.equal(res.metrics.record_count, 0n);
  assert.equal(readParquetTable(res.bytes).numRows, 0);
  assert.deepEqual(await duckRows(dir, 'empty.parquet', res.bytes, true), []);
});

test('native writer: a released file hands its memory to the next writer, which still writes correct bytes', async () => {
  const a = await writeParquet(schema, sampleTable(300, 1), { engine: 'native', sizeHint: 1 << 20 });
  const aBuffer = a.bytes.buffer;
  a.release();
  a.release(); // once is what counts; a second call changes nothing
  const table = sampleTable(200, 2);
  const b = await writeParquet(schema, table, { engine: 'native', sizeHint: 1 << 20 });
  assert.equal(b.bytes.buffer, aBuffer, 'the second file is written into the first one\'s memory');
  assert.deepEqual(rowsOf(readParquetTable(b.bytes)), rowsOf(table));
  // Not released: the next writer gets fresh memory and b stays intact.
  const c = await writeParquet(schema, sampleTable(100, 3), { engine: 'native', sizeHint: 1 << 20 });
  assert.notEqual(c.bytes.buffer, b.bytes.buffer);
  assert.deepEqual(rowsOf(readParquetTable(b.bytes)), rowsOf(table));
});

test('native writer: an optional column missing from the batches is written as nulls', async () => {
  const s: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'note', required: false, type: 'string' },
      { id: 3, name: 'tags', required: false, type: { type: 'list', 'element-id': 4, element: 'int', 'element-required': true } },
    ],
  };
  const table = new arrow.Table({ id: arrow.makeVector(BigInt64Array.from([1n, 2n, 3n])) });
  const res = await writeParquet(s, table, { engine: 'native' });
  const back = readParquetTable(res.bytes);
  assert.deepEqual([...back.getChild('note')!], [null, null, null]);
  assert.deepEqual([...back.getChild('tags')!], [null, null, null]);
  assert.equal(res.metrics.null_value_counts.get(2), 3n);
});
