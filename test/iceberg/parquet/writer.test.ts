import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Schema } from '../../../iceberg/schema.js';
import { writeParquet } from '../../../iceberg/parquet/writer.js';
import { parseParquetFooter, readParquetFooter, readParquetTable } from '../../../iceberg/parquet/reader.js';
import { arrowToIcebergSchema, icebergToArrowSchema } from '../../../iceberg/parquet/arrow-schema.js';
import { ParquetError } from '../../../iceberg/parquet/errors.js';
import { fromSingleValue } from '../../../iceberg/metrics.js';
import { CREATED_BY } from '../../../iceberg/parquet/footer.js';

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'payload', required: false, type: 'binary' },
    { id: 4, name: 'score', required: false, type: 'double' },
    { id: 5, name: 'ts', required: true, type: 'timestamptz' },
    { id: 6, name: 'amount', required: false, type: 'decimal(10,2)' },
    { id: 7, name: 'tags', required: false, type: { type: 'list', 'element-id': 8, element: 'string', 'element-required': true } },
    {
      id: 9,
      name: 'attrs',
      required: false,
      type: { type: 'map', 'key-id': 10, key: 'string', 'value-id': 11, value: 'int', 'value-required': false },
    },
    {
      id: 12,
      name: 'inner',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 13, name: 'a', required: false, type: 'int' },
          { id: 14, name: 'b', required: false, type: 'date' },
        ],
      },
    },
    { id: 15, name: 'uid', required: false, type: 'uuid' },
  ],
};

const LONG_NAME = 'zebra-crossing-with-a-long-name';
const ROWS = 5;
const micros = [1_700_000_000_000_001n, 1_700_000_000_000_002n, 1_700_000_000_000_003n, 1_700_000_000_000_004n, 1_700_000_000_000_005n];

function bitmap(valid: boolean[]): Uint8Array {
  const out = new Uint8Array(Math.ceil(valid.length / 8));
  valid.forEach((v, i) => {
    if (v) out[i >> 3] = (out[i >> 3] as number) | (1 << (i & 7));
  });
  return out;
}

// Arrow JS builds dates from JavaScript Dates (milliseconds).
const day = (n: number): Date => new Date(n * 86_400_000);

function sampleTable(): arrow.Table {
  const s = icebergToArrowSchema(schema);
  const type = (name: string): arrow.DataType => (s.fields.find((f) => f.name === name) as arrow.Field).type;
  const decValid = [true, true, false, true, true];
  const dec = new Uint32Array(ROWS * 4);
  [12345, -500, 0, 99, 1].forEach((v, i) => {
    const big = BigInt.asUintN(128, BigInt(v));
    for (let w = 0; w < 4; w++) dec[i * 4 + w] = Number((big >> BigInt(32 * w)) & 0xffffffffn);
  });
  const columns: Record<string, arrow.Vector> = {
    id: arrow.makeVector(BigInt64Array.from([1n, 2n, 3n, 4n, 5n])),
    name: arrow.vectorFromArray(['apple', null, LONG_NAME, 'banana', 'apple'], new arrow.Utf8()),
    payload: arrow.vectorFromArray([Uint8Array.of(0, 1), Uint8Array.of(0xff), null, Uint8Array.of(), Uint8Array.of(7)], new arrow.Binary()),
    score: arrow.vectorFromArray([1.5, NaN, null, -2.25, 0], new arrow.Float64()),
    ts: arrow.makeVector(arrow.makeData({ type: type('ts') as arrow.TimestampMicrosecond, length: ROWS, nullCount: 0, data: BigInt64Array.from(micros) })),
    amount: arrow.makeVector(
      arrow.makeData({ type: type('amount') as arrow.Decimal, length: ROWS, nullCount: 1, nullBitmap: bitmap(decValid), data: dec }),
    ),
    tags: arrow.vectorFromArray([['x', 'y'], [], null, ['z'], ['x']], type('tags')),
    attrs: arrow.vectorFromArray([new Map([['k', 1]]), null, new Map([['a', null], ['b', 2]]), new Map(), new Map([['k', 3]])], type('attrs')),
    inner: arrow.vectorFromArray([{ a: 10, b: day(19000) }, { a: null, b: day(1) }, null, { a: -3, b: day(0) }, { a: 7, b: day(2) }], type('inner')),
    uid: arrow.vectorFromArray([new Uint8Array(16).fill(0x11), null, new Uint8Array(16).fill(0x22), null, new Uint8Array(16).fill(0x01)], new arrow.FixedSizeBinary(16)),
  };
  return new arrow.Table(columns);
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

test('writes Parquet that DuckDB reads back row for row, with every field id and our metrics', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-parquet-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const res = await writeParquet(schema, sampleTable(), { rowGroupRows: 2, sliceRows: 3 });
  const path = join(dir, 'data.parquet');
  await writeFile(path, res.bytes);
  const q = await duck(t);

  const rows = await q(`select id, name, payload::varchar as payload, score, epoch_us(ts) as ts, amount::varchar as amount, tags, attrs, "inner", uid::varchar as uid from read_parquet('${path}') order by id`);
  assert.equal(rows.length, ROWS);
  assert.deepEqual(rows.map((r) => r['id']), ['1', '2', '3', '4', '5']);
  assert.deepEqual(rows.map((r) => r['name']), ['apple', null, LONG_NAME, 'banana', 'apple']);
  assert.deepEqual(rows.map((r) => r['ts']), micros.map(String));
  assert.deepEqual(rows.map((r) => r['amount']), ['123.45', '-5.00', null, '0.99', '0.01']);
  assert.deepEqual(rows.map((r) => r['score']), [1.5, 'NaN', null, -2.25, 0]);
  assert.deepEqual(rows[0]?.['tags'], ['x', 'y']);
  assert.deepEqual(rows[2]?.['attrs'], [{ key: 'a', value: null }, { key: 'b', value: 2 }]);
  assert.deepEqual(rows[1]?.['inner'], { a: null, b: '1970-01-02' });
  assert.equal(rows[2]?.['inner'], null);
  assert.equal(rows[1]?.['payload'], '\\xFF');

  // Every Iceberg field id is in the Parquet schema, nested ones included.
  const ids = await q(`select name, field_id from parquet_schema('${path}') where field_id is not null`);
  const byName = new Map(ids.map((r) => [r['name'], Number(r['field_id'])]));
  const expected: [string, number][] = [['id', 1], ['name', 2], ['payload', 3], ['score', 4], ['ts', 5], ['amount', 6], ['tags', 7], ['element', 8], ['attrs', 9], ['key', 10], ['value', 11], ['inner', 12], ['a', 13], ['b', 14], ['uid', 15]];
  for (const [name, id] of expected) assert.equal(byName.get(name), id, `field id of ${name}`);
  assert.equal(ids.length, expected.length);

  // Row groups, sizes and offsets agree with DuckDB's reading of the footer.
  const meta = await q(`select row_group_id, row_group_num_rows, min(coalesce(least(dictionary_page_offset, data_page_offset), data_page_offset)) as start from parquet_metadata('${path}') group by all order by row_group_id`);
  assert.deepEqual(meta.map((r) => Number(r['row_group_num_rows'])), [2, 2, 1]);
  assert.equal(meta.reduce((a, r) => a + BigInt(r['row_group_num_rows'] as string), 0n), res.metrics.record_count);
  assert.deepEqual(res.splitOffsets, meta.map((r) => BigInt(r['start'] as string)));
  const size = await q(`select size from read_blob('${path}')`);
  assert.equal(BigInt(size[0]?.['size'] as string), res.metrics.file_size_in_bytes);
  assert.equal(res.metrics.file_size_in_bytes, BigInt(res.bytes.length));

  // Metrics.
  const m = res.metrics;
  assert.equal(m.record_count, 5n);
  assert.equal(m.value_counts.get(1), 5n);
  assert.equal(m.null_value_counts.get(2), 1n);
  assert.equal(m.nan_value_counts.get(4), 1n);
  assert.equal(m.null_value_counts.get(4), 1n);
  assert.equal(fromSingleValue('long', m.lower_bounds.get(1) as Uint8Array), 1n);
  assert.equal(fromSingleValue('long', m.upper_bounds.get(1) as Uint8Array), 5n);
  assert.equal(fromSingleValue('string', m.lower_bounds.get(2) as Uint8Array), 'apple');
  // The longest name is the maximum; its bound is cut to 16 characters and rounded up.
  assert.equal(fromSingleValue('string', m.upper_bounds.get(2) as Uint8Array), 'zebra-crossing-x');
  assert.equal(fromSingleValue('double', m.lower_bounds.get(4) as Uint8Array), -2.25);
  assert.equal(fromSingleValue('double', m.upper_bounds.get(4) as Uint8Array), 1.5);
  assert.equal(fromSingleValue('timestamptz', m.lower_bounds.get(5) as Uint8Array), micros[0]);
  assert.equal(fromSingleValue('timestamptz', m.upper_bounds.get(5) as Uint8Array), micros[4]);
  assert.equal(fromSingleValue('decimal(10,2)', m.lower_bounds.get(6) as Uint8Array), -500n);
  assert.equal(fromSingleValue('decimal(10,2)', m.upper_bounds.get(6) as Uint8Array), 12345n);
  assert.equal(fromSingleValue('int', m.lower_bounds.get(13) as Uint8Array), -3);
  assert.equal(fromSingleValue('date', m.upper_bounds.get(14) as Uint8Array), 19000);
  assert.deepEqual(m.lower_bounds.get(15), new Uint8Array(16).fill(0x01));
  assert.deepEqual(m.lower_bounds.get(3), Uint8Array.of());
  assert.deepEqual(m.upper_bounds.get(3), Uint8Array.of(0xff));
  // Fields inside lists and maps get counts and sizes but no bounds.
  assert.ok(m.value_counts.has(8) && m.value_counts.has(10) && m.value_counts.has(11));
  assert.ok(!m.lower_bounds.has(8) && !m.lower_bounds.has(10));
  for (const id of [1, 2, 3, 4, 5, 6, 8, 10, 11, 13, 14, 15]) assert.ok((m.column_sizes.get(id) ?? 0n) > 0n, `column size of ${id}`);
  // Column sizes add up to DuckDB's compressed sizes.
  const sizes = await q(`select sum(total_compressed_size) as s from parquet_metadata('${path}')`);
  assert.equal([...m.column_sizes.values()].reduce((a, b) => a + b, 0n), BigInt(sizes[0]?.['s'] as string));
});

test('reads back selected row groups and columns, footer by range reads, schema with ids', async () => {
  const res = await writeParquet(schema, sampleTable(), { rowGroupRows: 2, compression: 'snappy' });
  const t1 = readParquetTable(res.bytes, { rowGroups: [1], columns: ['id', 'name'] });
  assert.equal(t1.numRows, 2);
  assert.deepEqual(t1.schema.fields.map((f) => f.name), ['id', 'name']);
  assert.deepEqual([...(t1.getChild('id') as arrow.Vector)], [3n, 4n]);
  assert.deepEqual([...(t1.getChild('name') as arrow.Vector)], [LONG_NAME, 'banana']);

  const all = readParquetTable(res.bytes);
  const back = arrowToIcebergSchema(all.schema);
  // uuid is stored as fixed[16]; everything else maps back to the same type and id.
  const expected = schema.fields.map((f) => (f.name === 'uid' ? { ...f, type: 'fixed[16]' } : f));
  assert.deepEqual(back.fields, expected);

  let reads = 0;
  const footer = await readParquetFooter(async (offset, length) => {
    reads++;
    return res.bytes.subarray(offset, offset + length);
  }, res.bytes.length);
  assert.equal(reads, 1);
  assert.deepEqual(footer, parseParquetFooter(res.bytes));
  assert.equal(footer.rowGroups.length, 3);
  assert.equal(footer.keyValueMetadata.has('iceberg.schema'), true);
});

test('writes an empty file with the schema and zero rows', async () => {
  const res = await writeParquet(schema, []);
  assert.equal(res.metrics.record_count, 0n);
  assert.equal(res.footer.numRows, 0n);
  assert.equal(readParquetTable(res.bytes).numRows, 0);
  assert.equal(res.metrics.lower_bounds.size, 0);
});

test('rejects batches that do not match the schema, with a code and a fix', async () => {
  const wrong = new arrow.Table({ id: arrow.makeVector(Int32Array.from([1])), ts: arrow.makeVector(BigInt64Array.from([1n])) });
  await assert.rejects(writeParquet(schema, wrong), (e: unknown) => e instanceof ParquetError && e.code === 'TYPE_MISMATCH' && /'id'/.test(e.message));
  const nulls = new arrow.Table({ id: arrow.vectorFromArray([1n, null], new arrow.Int64()) });
  await assert.rejects(
    writeParquet({ type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: 'long' }] }, nulls),
    (e: unknown) => e instanceof ParquetError && e.code === 'TYPE_MISMATCH' && /nulls/.test(e.message),
  );
  // Type checks are remembered per Arrow type object within a file: a later batch of another type is still
  // checked. (Native engine: parquet-wasm's stream drops a batch that fails after earlier ones and writes the
  // rest, a separate problem.)
  const one: arrow.Schema = icebergToArrowSchema({ type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: 'long' }] });
  const good = (v: bigint) => new arrow.RecordBatch(one, arrow.makeData({ type: new arrow.Struct(one.fields), length: 1, nullCount: 0, children: [arrow.makeData({ type: one.fields[0]!.type, length: 1, nullCount: 0, data: BigInt64Array.from([v]) })] }));
  const bad = new arrow.Table({ id: arrow.makeVector(Int32Array.from([3])) }).batches[0]!;
  const longSchema: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] };
  assert.equal((await writeParquet(longSchema, [good(1n), good(2n)], { engine: 'native' })).footer.numRows, 2n);
  await assert.rejects(writeParquet(longSchema, [good(1n), good(2n), bad], { engine: 'native' }), (e: unknown) => e instanceof ParquetError && e.code === 'TYPE_MISMATCH' && /'id'/.test(e.message));
});

test('a batch that does not match the schema after good ones fails the write with either engine, never a file without it', async () => {
  const longs: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] };
  const good = (v: bigint): arrow.RecordBatch => new arrow.Table({ id: arrow.vectorFromArray([v], new arrow.Int64()) }).batches[0]!;
  const bad = new arrow.Table({ id: arrow.makeVector(Int32Array.from([3])) }).batches[0]!;
  for (const engine of ['native', 'parquet-wasm'] as const) {
    await assert.rejects(writeParquet(longs, [good(1n), good(2n), bad], { engine }), (e: unknown) => e instanceof ParquetError && e.code === 'TYPE_MISMATCH', engine);
    const ok = await writeParquet(longs, [good(1n), good(2n)], { engine });
    assert.equal(ok.footer.numRows, 2n, `${engine}: the good batches alone make a file`);
  }
});

test('both engines write a created_by that parquet-mr parses, so Spark keeps the binary columns\' statistics', async () => {
  // parquet-mr's VersionParser.FORMAT: a created_by it cannot parse makes CorruptStatistics drop the min/max of
  // every BYTE_ARRAY column (PARQUET-251), which Spark then cannot filter row groups with.
  const parquetMr = /^(.*?)\s+version\s*(?:([^(]*?)\s*(?:\(\s*build\s*([^)]*?)\s*\))?)?$/;
  const bin: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'b', required: false, type: 'binary' }] };
  const table = new arrow.Table({ b: arrow.vectorFromArray([Buffer.from('x'), null], new arrow.Binary()) });
  for (const engine of ['native', 'parquet-wasm'] as const) {
    const res = await writeParquet(bin, table, { engine });
    assert.equal(res.footer.createdBy, CREATED_BY, engine);
    const m = parquetMr.exec(res.footer.createdBy ?? '');
    assert.ok(m, `${engine}: ${String(res.footer.createdBy)} parses`);
    assert.equal(m[1], 'floe');
    assert.match(m[2] ?? '', /^\d+\.\d+\.\d+$/, 'a semantic version');
  }
});
