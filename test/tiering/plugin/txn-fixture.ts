/**
 * A tiering plugin on a local warehouse whose transaction source a test drives, segment files of
 * transactional batches and markers written by hand, and the table's keys read by DuckDB (position deletes
 * applied) and icebird. For the tests of how transactional rows are hidden and settled in the table.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { icebergRead } from 'icebird';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { Table } from '../../../iceberg/table.js';
import { controlMarkerRecord, encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import type { LogSegmentData, PartitionTransactions, TopicTieringConfig } from '../../../tiering/plugin/api.js';
import { ConvertCodec } from '../../../tiering/plugin/convert-codec.js';
import { IcebergTieringPlugin } from '../../../tiering/plugin/iceberg-tiering.js';
import { installWarehouseFetch } from '../../helpers/file-fetch.js';

export const TOPIC = 'txns';

export interface TxnEnv {
  readonly dir: string;
  readonly plugin: IcebergTieringPlugin;
  readonly catalog: WarehouseCatalog;
  readonly io: LocalFileIO;
}

type After = { after: (fn: () => Promise<void> | void) => void };

/** A plugin whose transaction source is `source(partition, from, to)`; `commitIntervalMs` of the topic. */
export async function txnEnv(t: After, source: (partition: number, from: number, to: number) => PartitionTransactions | undefined, commitIntervalMs = 60_000): Promise<TxnEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-txn-settle-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const warehouse = pathToFileURL(join(dir, 'warehouse')).href;
  const io = new LocalFileIO({ root: warehouse, fsync: false });
  const catalog = new WarehouseCatalog({ io, warehouse });
  const plugin = new IcebergTieringPlugin({ catalog, io, codec: new ConvertCodec(), retryBaseMs: 1, retryMaxMs: 5, stableRetryMs: 1, waitForTransactions: true });
  t.after(() => plugin.close());
  plugin.attachTransactions(async (tp, from, to) => source(tp.partition, from, to));
  const config: TopicTieringConfig = { enabled: true, namespace: ['kafka'], commitIntervalMs, retentionMs: Infinity, retentionBytes: Infinity };
  await plugin.configureTopic(TOPIC, config);
  return { dir, plugin, catalog, io };
}

/**
 * A transactional batch of producer `pid` (-1: a plain batch), or a control batch ending `marker`'s
 * transaction; `ts` its timestamp (default 1_700_000_000_000).
 */
export type Item = ({ readonly pid: bigint; readonly keys: readonly string[] } | { readonly marker: bigint; readonly kind: 'commit' | 'abort' }) & { readonly ts?: number };

/** A segment file of partition `partition` from `base`. */
export async function writeSegment(dir: string, partition: number, base: number, items: readonly Item[]): Promise<LogSegmentData> {
  const parts: Buffer[] = [];
  let offset = base;
  for (const it of items) {
    if ('marker' in it) {
      parts.push(encodeRecordBatch({ baseOffset: BigInt(offset), baseTimestamp: BigInt(it.ts ?? 1_700_000_000_000), producerId: it.marker, producerEpoch: 0, baseSequence: -1, isTransactional: true, isControl: true, records: [controlMarkerRecord(it.kind, 0)] }));
      offset++;
      continue;
    }
    parts.push(encodeRecordBatch({ baseOffset: BigInt(offset), baseTimestamp: BigInt(it.ts ?? 1_700_000_000_000), producerId: it.pid, producerEpoch: 0, baseSequence: it.pid >= 0n ? offset : -1, isTransactional: it.pid >= 0n, records: it.keys.map((k) => ({ key: Buffer.from(k), value: Buffer.from(k) })) }));
    offset += it.keys.length;
  }
  const path = join(dir, `${partition}-${String(base).padStart(20, '0')}.log`);
  const bytes = Buffer.concat(parts);
  await writeFile(path, bytes);
  return { topic: TOPIC, partition, baseOffset: base, lastOffset: offset - 1, path, sizeInBytes: bytes.length, maxTimestamp: Math.max(...items.map((it) => it.ts ?? 1_700_000_000_000)) };
}

/** A key as icebird hands it out: bytes, sometimes wrapped in a one-element array (see test/tiering/e2e/table-readers.ts). */
function icebirdKey(v: unknown): string {
  if (Array.isArray(v) && v.length === 1) return icebirdKey(v[0]);
  if (v instanceof Uint8Array) return Buffer.from(v).toString();
  if (typeof v === 'string') return v;
  throw new Error(`icebird key is neither bytes nor a string: ${typeof v}`);
}

/** Keys of the table's rows, sorted, by DuckDB (position deletes applied) and by icebird. */
export async function tableKeys(e: TxnEnv): Promise<{ duckdb: string[]; icebird: string[] }> {
  const table = await Table.load(e.catalog, { namespace: ['kafka'], name: TOPIC }, e.io);
  const live = await table.files();
  if (live.dataFiles.length === 0) return { duckdb: [], icebird: [] };
  const files = live.dataFiles.map((f) => `'${fileURLToPath(f.data_file.file_path)}'`).join(', ');
  const deletes = live.deleteFiles.map((f) => `'${fileURLToPath(f.data_file.file_path)}'`).join(', ');
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const hidden = deletes === '' ? '' : `anti join (select file_path, pos from read_parquet([${deletes}])) d on d.file_path = 'file://' || t.filename and d.pos = t.file_row_number`;
    const rows = (await conn.runAndReadAll(`select decode(kafka.key) as k from read_parquet([${files}], filename = true, file_row_number = true) t ${hidden}`)).getRowObjectsJson();
    const restore = installWarehouseFetch(e.io);
    try {
      const loc = table.metadataLocation;
      const ice = await icebergRead({ tableUrl: table.location, metadataFileName: loc.slice(loc.lastIndexOf('/') + 1) });
      return { duckdb: rows.map((r) => String(r['k'])).sort(), icebird: ice.map((r) => icebirdKey((r['kafka'] as { key: unknown }).key)).sort() };
    } finally {
      restore();
    }
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** How many snapshots the table has. */
export async function snapshotCount(e: TxnEnv): Promise<number> {
  return (await Table.load(e.catalog, { namespace: ['kafka'], name: TOPIC }, e.io)).metadata.snapshots.length;
}
