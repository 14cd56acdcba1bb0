/**
 * Tables for the maintenance tests: a WarehouseCatalog over a LocalFileIO in a temp folder, with a manual
 * clock shared by catalog and table (snapshot timestamps are then exact), rows of (id, name), and icebird as
 * an independent reader of the current snapshot with deletes applied.
 */
import type { TestContext } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { icebergRead } from 'icebird';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import type { Catalog, TableIdentifier } from '../../../iceberg/catalog/catalog.js';
import { Table } from '../../../iceberg/table.js';
import type { Schema } from '../../../iceberg/schema.js';
import type { DataFile } from '../../../iceberg/data-file.js';
import { installWarehouseFetch } from '../../helpers/file-fetch.js';

export const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
  ],
};

export const ID: TableIdentifier = { namespace: ['db'], name: 't' };

export interface Env {
  readonly dir: string;
  readonly io: FileIO;
  readonly catalog: Catalog;
  readonly table: Table;
  /** The manual clock (ms); `tick()` moves it on by a second. */
  now(): number;
  tick(ms?: number): number;
}

export async function tableEnv(t: TestContext, properties: Record<string, string> = {}, env: { io?: FileIO; warehouse?: string; formatVersion?: 2 | 3 } = {}): Promise<Env> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-maint-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  let io = env.io;
  if (!io) {
    const local = new LocalFileIO({ root: dir, fsync: false });
    t.after(() => local.close());
    io = local;
  }
  let clock = 1_700_000_000_000;
  const now = (): number => clock;
  const catalog = new WarehouseCatalog({ io, warehouse: env.warehouse ?? `file://${dir}/wh`, now });
  await catalog.createNamespace(['db']);
  await catalog.createTable(ID, { schema: SCHEMA, properties, ...(env.formatVersion ? { formatVersion: env.formatVersion } : {}) });
  const table = await Table.load(catalog, ID, io, { now });
  return {
    dir,
    io,
    catalog,
    table,
    now,
    tick: (ms = 1000) => (clock += ms),
  };
}

export function rows(ids: number[]): arrow.Table {
  return new arrow.Table({ id: arrow.makeVector(BigInt64Array.from(ids.map(BigInt))), name: arrow.vectorFromArray(ids.map((i) => `n${i}`), new arrow.Utf8()) });
}

/** Appends one data file of `ids` as one snapshot; returns the file. */
export async function append(env: Env, ids: number[]): Promise<DataFile> {
  env.tick();
  const f = await env.table.writeDataFile(rows(ids));
  await env.table.commit(env.table.newAppend().addFile(f));
  return f;
}

/** The ids icebird reads from the table's current metadata file, sorted. */
export async function icebirdIds(io: FileIO, table: Table): Promise<number[]> {
  const restore = installWarehouseFetch(io);
  try {
    const name = table.metadataLocation.slice(table.metadataLocation.lastIndexOf('/') + 1);
    const got = await icebergRead({ tableUrl: table.location, metadataFileName: name });
    return got.map((r) => Number(r['id'])).sort((a, b) => a - b);
  } finally {
    restore();
  }
}

export const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

export type { Catalog };
