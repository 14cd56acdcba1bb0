/** Shared set-up of the compaction tests: a warehouse, small segments, and independent readers of the table. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { icebergRead } from 'icebird';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { Table } from '../../../iceberg/table.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import type { LogSegmentData, TopicPartitionId, TopicTieringConfig } from '../../../tiering/plugin/api.js';
import { ConvertCodec, type ConvertCodecOptions } from '../../../tiering/plugin/convert-codec.js';
import { IcebergTieringPlugin, type IcebergTieringOptions } from '../../../tiering/plugin/iceberg-tiering.js';
import { installWarehouseFetch } from '../../helpers/file-fetch.js';

export const TOPIC = 'clicks';
export const ID = { namespace: ['kafka'], name: TOPIC };
export const CONFIG: TopicTieringConfig = { enabled: true, namespace: ['kafka'], commitIntervalMs: 60_000, retentionMs: Infinity, retentionBytes: Infinity };

type After = { after: (fn: () => Promise<void> | void) => void };

export interface Opened {
  plugin: IcebergTieringPlugin;
  catalog: WarehouseCatalog;
  io: FileIO;
  codec: ConvertCodec;
}

export interface Env {
  dir: string;
  warehouse: string;
  open(options?: { io?: (io: LocalFileIO) => FileIO; plugin?: Partial<IcebergTieringOptions>; codec?: ConvertCodecOptions }): Opened;
}

export async function env(t: After): Promise<Env> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-compact-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const warehouse = pathToFileURL(join(dir, 'warehouse')).href;
  return {
    dir,
    warehouse,
    open(options = {}) {
      const local = new LocalFileIO({ root: warehouse, fsync: false });
      const io = options.io ? options.io(local) : local;
      const catalog = new WarehouseCatalog({ io: local, warehouse });
      const codec = new ConvertCodec(options.codec);
      const plugin = new IcebergTieringPlugin({ catalog, io, codec, retryBaseMs: 1, retryMaxMs: 5, compaction: { bytesPerSecond: Infinity, idleRetryMs: 5 }, ...options.plugin });
      t.after(() => plugin.close());
      return { plugin, catalog, io, codec };
    },
  };
}

/** A segment of `batches` batches of `per` records from `base` (zstd and uncompressed batches alternate). */
export async function segment(dir: string, partition: number, base: number, batches: number, per: number): Promise<LogSegmentData> {
  const parts: Buffer[] = [];
  let offset = base;
  let lastRecord = base;
  for (let b = 0; b < batches; b++) {
    const records = Array.from({ length: per }, (_, i) => ({
      key: (offset + i) % 3 === 0 ? null : Buffer.from(`k${offset + i}`),
      value: (offset + i) % 7 === 0 ? null : Buffer.from(`p${partition}-${offset + i}-${'x'.repeat((offset + i) % 13)}`),
      timestampDelta: i,
      headers: [
        { key: 'h', value: Buffer.from(String(offset + i)) },
        { key: 'h', value: null },
      ],
    }));
    // Every third batch leaves an offset gap after it (as Kafka log compaction does): offsets are never renumbered.
    const gap = b % 3 === 2 ? 2 : 0;
    parts.push(encodeRecordBatch({ baseOffset: BigInt(offset), baseTimestamp: BigInt(1_700_000_000_000 + offset), compression: b % 2 === 0 ? 'zstd' : 'none', producerId: 9n, producerEpoch: 1, baseSequence: offset, records }));
    lastRecord = offset + per - 1;
    offset += per + gap;
  }
  const path = join(dir, `${partition}-${String(base).padStart(20, '0')}.log`);
  const bytes = Buffer.concat(parts);
  await writeFile(path, bytes);
  return { topic: TOPIC, partition, baseOffset: base, lastOffset: lastRecord, path, sizeInBytes: bytes.length, maxTimestamp: 1_700_000_000_000 + lastRecord };
}

/** `count` small segments of partition `p`, one after the other, from offset `from`; returns them and the next offset. */
export async function segments(dir: string, p: number, from: number, count: number): Promise<{ segs: LogSegmentData[]; next: number }> {
  const segs: LogSegmentData[] = [];
  let next = from;
  for (let i = 0; i < count; i++) {
    const s = await segment(dir, p, next, 2 + (i % 3), 4 + (i % 5));
    segs.push(s);
    next = s.lastOffset + 1;
  }
  return { segs, next };
}

/** Every batch Kafka reads of a partition from its remote log start, as separate buffers. */
export async function kafkaBatches(plugin: IcebergTieringPlugin, tp: TopicPartitionId, maxBytes = 1 << 20): Promise<Buffer[]> {
  const out: Buffer[] = [];
  const last = plugin.metadata.highestCommittedOffset(tp);
  let offset = plugin.metadata.remoteLogStartOffset(tp) ?? 0;
  while (offset <= last) {
    const r = await plugin.read(tp, offset, maxBytes, true);
    if (r.records.length === 0) break;
    for (const b of iterateBatches(r.records)) out.push(Buffer.from(r.records.subarray(b.start, b.end)));
    if (r.nextOffset <= offset) throw new Error(`no progress at ${offset}`);
    offset = r.nextOffset;
  }
  return out;
}

/** The table's rows read by DuckDB from the live data files (every Kafka column that identifies a record). */
export async function duckRows(catalog: WarehouseCatalog, io: FileIO, t: After): Promise<string[]> {
  const table = await Table.load(catalog, ID, io);
  const files = (await table.files()).dataFiles.map((e) => `'${fileURLToPath(e.data_file.file_path)}'`);
  if (files.length === 0) return [];
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  t.after(() => {
    conn.closeSync();
    db.closeSync();
  });
  const rows = await conn.runAndReadAll(
    `select kafka.partition as p, kafka."offset" as o, epoch_us(kafka."timestamp") as ts, hex(kafka.key) as k, hex(value) as v, to_json(kafka.headers)::varchar as h, to_json(kafka.batch)::varchar as b from read_parquet([${files.join(', ')}]) order by p, o`,
  );
  return rows.getRowObjectsJson().map((r) => JSON.stringify(r));
}

/** The table's (partition, offset, value) rows as icebird reads them through the current metadata file. */
export async function icebirdRows(catalog: WarehouseCatalog, io: FileIO): Promise<string[]> {
  const table = await Table.load(catalog, ID, io);
  const restore = installWarehouseFetch(io);
  try {
    const loc = table.metadataLocation;
    const rows = await icebergRead({ tableUrl: table.location, metadataFileName: loc.slice(loc.lastIndexOf('/') + 1) });
    return rows
      .map((r: Record<string, unknown>) => {
        const k = r['kafka'] as Record<string, unknown>;
        const v = r['value'] as Uint8Array | null | undefined;
        return `${String(k['partition'])}/${String(k['offset'])}/${v == null ? 'null' : Buffer.from(v).toString('hex')}`;
      })
      .sort();
  } finally {
    restore();
  }
}

export async function liveDataFiles(catalog: WarehouseCatalog, io: FileIO): Promise<string[]> {
  const table = await Table.load(catalog, ID, io);
  return (await table.files()).dataFiles.map((e) => e.data_file.file_path).sort();
}
