/**
 * Reads a topic's Iceberg table the way an outside engine would: the table metadata from Floe's REST catalog
 * (`GET /v1/namespaces/{ns}/tables/{table}`), the live data files through icebird (manifest list, manifests),
 * with the warehouse's `file://` objects served to icebird's fetch; the rows by DuckDB. Nothing here uses
 * Floe's tiering or Iceberg code.
 */
import { fileURLToPath } from 'node:url';
import { DuckDBInstance, type DuckDBBlobValue } from '@duckdb/node-api';
import { icebergManifests } from 'icebird';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { installWarehouseFetch } from './file-fetch.js';

export interface TableRow {
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

/** The REST catalog's LoadTableResult for `kafka.<topic>`, or undefined while the table does not exist. */
export async function loadTable(restUrl: string, topic: string, namespace = 'kafka'): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${restUrl}/v1/namespaces/${encodeURIComponent(namespace)}/tables/${encodeURIComponent(topic)}`);
  if (res.status === 404) return undefined;
  if (!res.ok) throw new Error(`load table ${namespace}.${topic}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** The current snapshot's summary, or undefined when the table has no snapshot yet. */
export function currentSummary(load: Record<string, unknown>): Record<string, string> | undefined {
  const metadata = load['metadata'] as { 'current-snapshot-id'?: number | null; snapshots?: { 'snapshot-id': number; summary: Record<string, string> }[] };
  const id = metadata['current-snapshot-id'];
  if (id === undefined || id === null || id === -1) return undefined;
  return metadata.snapshots?.find((s) => s['snapshot-id'] === id)?.summary;
}

/**
 * A snapshot summary property as of the current snapshot: the value in the newest snapshot of the current
 * ancestry that sets it (Floe writes a partition's committed offset only in the snapshots that change it).
 */
export function latestProperty(load: Record<string, unknown>, key: string): string | undefined {
  const metadata = load['metadata'] as { 'current-snapshot-id'?: number | null; snapshots?: { 'snapshot-id': number; 'parent-snapshot-id'?: number; summary: Record<string, string> }[] };
  const byId = new Map((metadata.snapshots ?? []).map((s) => [s['snapshot-id'], s]));
  for (let id = metadata['current-snapshot-id']; id !== undefined && id !== null; ) {
    const snap = byId.get(id);
    if (snap === undefined) return undefined;
    const v = snap.summary[key];
    if (v !== undefined) return v;
    id = snap['parent-snapshot-id'];
  }
  return undefined;
}

/**
 * The live data files of the table's current snapshot, listed by icebird's manifest reader (an independent
 * Avro and manifest implementation), as local paths.
 */
export async function liveDataFiles(restUrl: string, topic: string, warehouseRoot: string, namespace = 'kafka'): Promise<string[]> {
  const load = await loadTable(restUrl, topic, namespace);
  if (load === undefined || currentSummary(load) === undefined) return [];
  const io = new LocalFileIO({ root: warehouseRoot, fsync: false });
  const restore = installWarehouseFetch(io);
  try {
    const manifests = await icebergManifests(load['metadata'] as never);
    const files: string[] = [];
    for (const { entries } of manifests) {
      for (const e of entries) if (e.status !== 2 && !e.data_file.content) files.push(fileURLToPath(e.data_file.file_path));
    }
    return files;
  } finally {
    restore();
    await io.close();
  }
}

/**
 * Every row of the table's current snapshot, read by DuckDB (`read_parquet`) from the live data files
 * (see liveDataFiles), sorted by partition and offset; empty before the first commit.
 */
export async function tableRows(restUrl: string, topic: string, warehouseRoot: string, namespace = 'kafka'): Promise<TableRow[]> {
  const files = await liveDataFiles(restUrl, topic, warehouseRoot, namespace);
  if (files.length === 0) return [];
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const list = files.map((f) => `'${f.replaceAll("'", "''")}'`).join(', ');
    const reader = await conn.runAndReadAll(
      `select kafka.partition as p, kafka."offset" as o, epoch_ms(kafka."timestamp") as ts, kafka."key" as k, "value" as v from read_parquet([${list}]) order by p, o`,
    );
    return reader.getRows().map((r) => ({
      partition: Number(r[0]),
      offset: Number(r[1]),
      timestamp: Number(r[2]),
      key: r[3] === null ? null : Buffer.from((r[3] as DuckDBBlobValue).bytes),
      value: r[4] === null ? null : Buffer.from((r[4] as DuckDBBlobValue).bytes),
    }));
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** Polls `check` until it returns a value other than undefined, or fails after `deadlineMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, deadlineMs = 60_000, everyMs = 100): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`gave up after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Waits until `<topic>_latest` has applied every offset its topic table committed (the summaries'
 * `floe.latest.applied.<p>` and `floe.kafka.committed-offset.<p>`), and the topic table holds at least
 * `records` records (one per offset: no transactions).
 */
export async function upsertCaughtUp(restUrl: string, topic: string, partitions: number, records: number): Promise<void> {
  await waitFor(`the upsert table of ${topic} to catch up with the topic table`, async () => {
    const table = await loadTable(restUrl, topic);
    const latest = await loadTable(restUrl, `${topic}_latest`);
    if (table === undefined || latest === undefined) return undefined;
    let committed = 0;
    for (let p = 0; p < partitions; p++) {
      const offset = Number(latestProperty(table, `floe.kafka.committed-offset.${p}`) ?? -1);
      const applied = Number((latestProperty(latest, `floe.latest.applied.${p}`) ?? '-1:').split(':')[0]);
      if (applied !== offset) return undefined;
      committed += offset + 1;
    }
    return committed >= records ? true : undefined;
  }, 90_000, 250);
}

export interface KcatRecord {
  readonly offset: number;
  readonly key: string;
  readonly value: string;
}

/**
 * Every record of one partition from `offset` to the end, read by kcat (librdkafka, CRCs checked). Keys and
 * values must be printable text without tabs or newlines; a null key prints as the empty string.
 */
export async function kcatRead(bootstrap: string, topic: string, partition: number, offset: number): Promise<KcatRecord[]> {
  const { spawn } = await import('node:child_process');
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('kcat', ['-b', bootstrap, '-X', 'check.crcs=true', '-C', '-t', topic, '-p', String(partition), '-o', String(offset), '-e', '-q', '-f', '%o\t%k\t%s\n'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`kcat exited with ${code}: ${err}`))));
  });
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [o, k, v] = l.split('\t');
      return { offset: Number(o), key: k ?? '', value: v ?? '' };
    });
}
