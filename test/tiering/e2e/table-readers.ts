/**
 * The topic table read by independent Iceberg readers, each row reduced to what a Kafka consumer sees
 * (partition, offset, timestamp in ms, key, value, headers), sorted by partition and offset:
 *
 * - icebird (npm, pure JS): the table as the broker's REST catalog describes it, its metadata file, manifests
 *   and Parquet files fetched through globalThis.fetch (test/helpers/file-fetch.ts serves warehouse URLs from
 *   a FileIO, local or S3). icebird 0.3.1 calls hyparquet without `utf8: false`, so a top-level binary column
 *   (`value`) comes back UTF-8-decoded (a TextDecoder string, U+FFFD for invalid sequences) while binary
 *   fields inside the `kafka` struct come back as bytes. Such strings are compared with the expected bytes
 *   decoded the same way (`icebirdView`): exact for text, deterministic for binary; DuckDB checks the bytes;
 * - DuckDB (`@duckdb/node-api`): `read_parquet` over the live data files of the current snapshot, listed with
 *   our manifest readers (`Table.files()`), with the live position delete files applied: rows whose
 *   (file, file_row_number) a delete file names are anti-joined away (Floe's delete files always come with
 *   or after their data files, so the sequence-number rule keeps all of them). Files are copied to a temp
 *   folder first so S3 warehouses need no DuckDB extension.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { icebergRead } from 'icebird';
import { RestCatalogClient } from '../../../iceberg/catalog/rest-client.js';
import { DataFileContent } from '../../../iceberg/data-file.js';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { Table } from '../../../iceberg/table.js';
import { installWarehouseFetch } from '../../helpers/file-fetch.js';
import type { Header } from '../../interop/clients/types.js';

export interface TableRow {
  readonly partition: number;
  readonly offset: number;
  /** Milliseconds since the epoch (the table stores microseconds). */
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: readonly Header[];
}

/**
 * A row as icebird hands it out. Binary leaves come back as bytes or, for top-level columns, as UTF-8-decoded
 * strings (see above); `icebirdView` renders what was expected the way icebird rendered each field.
 */
export type IcebirdBytes = Buffer | string | null;

export interface IcebirdRow {
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: IcebirdBytes;
  readonly value: IcebirdBytes;
  readonly headers: readonly (readonly [string, IcebirdBytes])[];
}

const decoder = new TextDecoder();

/** `want` as a string when icebird gave a string, as hex when it gave bytes. */
function like(want: Buffer | null, got: IcebirdBytes): string | null {
  if (want === null) return null;
  return typeof got === 'string' ? `text:${decoder.decode(want)}` : `hex:${want.toString('hex')}`;
}

const shown = (got: IcebirdBytes): string | null => (got === null ? null : typeof got === 'string' ? `text:${got}` : `hex:${got.toString('hex')}`);

/** Comparable pair for one row: what icebird showed, and the expected row rendered the same way. */
export function icebirdView(got: IcebirdRow | undefined, want: TableRow): { got: unknown; want: unknown } {
  const g = got ?? { partition: -1, offset: -1, timestamp: -1, key: null, value: null, headers: [] };
  return {
    got: { partition: g.partition, offset: g.offset, timestamp: g.timestamp, key: shown(g.key), value: shown(g.value), headers: g.headers.map(([k, v]) => [k, shown(v)]) },
    want: {
      partition: want.partition,
      offset: want.offset,
      timestamp: want.timestamp,
      key: like(want.key, g.key),
      value: like(want.value, g.value),
      headers: want.headers.map(([k, v], i) => [k, like(v, g.headers[i]?.[1] ?? null)]),
    },
  };
}

async function loadTable(restUrl: string, io: FileIO, namespace: readonly string[], name: string): Promise<Table> {
  return Table.load(new RestCatalogClient({ uri: restUrl }), { namespace, name }, io);
}

const byOffset = (a: { partition: number; offset: number }, b: { partition: number; offset: number }): number => a.partition - b.partition || a.offset - b.offset;

function num(v: unknown, what: string): number {
  if (typeof v === 'bigint' || typeof v === 'number') return Number(v);
  throw new Error(`${what} is not a number: ${typeof v}`);
}

/** Milliseconds from a timestamptz as a reader hands it out: a Date, or microseconds. */
function millis(v: unknown, what: string): number {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'bigint') return Number(v / 1000n);
  throw new Error(`${what} is not a timestamp: ${typeof v}`);
}

function binary(v: unknown, what: string): IcebirdBytes {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v);
  // icebird 0.3.1 (hyparquet 1.19) hands `kafka.key` out wrapped in a one-element array for most rows,
  // though the file declares it OPTIONAL BYTE_ARRAY (field id 7) and DuckDB reads it as a plain BLOB.
  if (Array.isArray(v) && v.length === 1) return binary(v[0], what);
  throw new Error(`${what} is neither bytes nor a string: ${typeof v}`);
}

function icebirdHeaders(v: unknown, what: string): (readonly [string, IcebirdBytes])[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v)) throw new Error(`${what} is not a list`);
  return v.map((h: unknown, i) => {
    const o = h as { key?: unknown; value?: unknown };
    if (typeof o.key !== 'string') throw new Error(`${what}[${i}].key is not a string`);
    return [o.key, binary(o.value, `${what}[${i}].value`)] as const;
  });
}

/** Reads every row with icebird, from the metadata file the REST catalog names. */
export async function readWithIcebird(restUrl: string, io: FileIO, namespace: readonly string[], name: string): Promise<IcebirdRow[]> {
  const table = await loadTable(restUrl, io, namespace, name);
  const restore = installWarehouseFetch(io);
  try {
    const loc = table.metadataLocation;
    const rows = await icebergRead({ tableUrl: table.location, metadataFileName: loc.slice(loc.lastIndexOf('/') + 1) });
    return rows
      .map((r: Record<string, unknown>, i): IcebirdRow => {
        const k = r['kafka'] as Record<string, unknown> | undefined;
        if (k === undefined) throw new Error(`icebird row ${i} has no kafka struct`);
        return {
          partition: num(k['partition'], 'kafka.partition'),
          offset: num(k['offset'], 'kafka.offset'),
          timestamp: millis(k['timestamp'], 'kafka.timestamp'),
          key: binary(k['key'], 'kafka.key'),
          value: binary(r['value'], 'value'),
          headers: icebirdHeaders(k['headers'], 'kafka.headers'),
        };
      })
      .sort(byOffset);
  } finally {
    restore();
  }
}

const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** Reads every row with DuckDB's read_parquet over the current snapshot's live data files, position deletes applied. */
export async function readWithDuckDB(t: TestContext, restUrl: string, io: FileIO, namespace: readonly string[], name: string): Promise<TableRow[]> {
  const table = await loadTable(restUrl, io, namespace, name);
  const { dataFiles, deleteFiles } = await table.files();
  const equality = deleteFiles.filter((e) => e.data_file.content !== DataFileContent.POSITION_DELETES);
  if (equality.length > 0) throw new Error(`the table has ${equality.length} equality delete files; this reader applies position deletes only`);
  const dir = await mkdtemp(join(tmpdir(), 'floe-e2e-duck-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // Local copy of each data file, and the file_path the delete files name it by.
  const paths: { local: string; uri: string }[] = [];
  for (const [i, e] of dataFiles.entries()) {
    const p = join(dir, `${i}.parquet`);
    await writeFile(p, await io.get(e.data_file.file_path));
    paths.push({ local: p, uri: e.data_file.file_path });
  }
  const deletes: string[] = [];
  for (const [i, e] of deleteFiles.entries()) {
    const p = join(dir, `d${i}.parquet`);
    await writeFile(p, await io.get(e.data_file.file_path));
    deletes.push(p);
  }
  if (paths.length === 0) return [];
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const hidden =
      deletes.length === 0
        ? ''
        : `ANTI JOIN (SELECT f.local, d.pos FROM read_parquet([${deletes.map(sqlString).join(',')}]) d
                        JOIN (VALUES ${paths.map((p) => `(${sqlString(p.local)}, ${sqlString(p.uri)})`).join(',')}) f(local, uri) ON d.file_path = f.uri) x
             ON x.local = t.filename AND x.pos = t.file_row_number`;
    const reader = await conn.runAndReadAll(
      `SELECT kafka.partition AS p, kafka.offset AS o, CAST(epoch_us(kafka.timestamp) AS VARCHAR) AS ts, hex(kafka.key) AS k, kafka.key IS NULL AS knull,
              hex(value) AS v, value IS NULL AS vnull, to_json([{'k': h.key, 'v': hex(h.value)} FOR h IN kafka.headers]) AS hs
         FROM read_parquet([${paths.map((p) => sqlString(p.local)).join(',')}], filename = true, file_row_number = true) t ${hidden}`,
    );
    const unhex = (s: unknown, isNull: unknown): Buffer | null => (isNull === true ? null : Buffer.from(String(s ?? ''), 'hex'));
    return reader
      .getRowObjectsJson()
      .map((r): TableRow => ({
        partition: Number(r['p']),
        offset: Number(r['o']),
        timestamp: Number(BigInt(String(r['ts'])) / 1000n),
        key: unhex(r['k'], r['knull']),
        value: unhex(r['v'], r['vnull']),
        headers: r['hs'] === null ? [] : (JSON.parse(String(r['hs'])) as { k: string; v: string | null }[]).map((h) => [h.k, h.v === null ? null : Buffer.from(h.v, 'hex')] as const),
      }))
      .sort(byOffset);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}
