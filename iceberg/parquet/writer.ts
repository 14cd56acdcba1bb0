/**
 * Writes Iceberg data files in Parquet. Record batches are checked against the Iceberg schema and stamped
 * with field ids (every column, nested ones included), then encoded by one of two engines:
 *
 * - `native` (default where the schema allows): `native-writer.ts`, PLAIN pages compressed by libzstd /
 *   snappy natively. Several times faster than parquet-wasm with zstd on Kafka-like values (its built-in zstd
 *   is the bottleneck), and it streams: memory is one row group.
 * - `parquet-wasm`: the Rust parquet crate in wasm, fed in slices of ~128k rows so wasm memory stays bounded
 *   (measurements.md). Used for decimals (no native encoding yet), when dictionaries are asked for, or on
 *   request.
 */
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm';
import type { StructType, Type } from '../schema.js';
import { FloatStatsCollector, parquetMetrics, type DataFileMetrics } from '../metrics.js';
import { arrowTypeMismatch, icebergToArrowSchema } from './arrow-schema.js';
import { ParquetError } from './errors.js';
import { CREATED_BY, parseParquetFooter, type ParquetFooter } from './footer.js';
import { CompressionCodec } from './codecs.js';
import { NativeParquetWriter, nativeWriterSupports } from './native-writer.js';

export type ParquetCompression = 'zstd' | 'snappy' | 'none';

export interface ParquetWriteOptions {
  /** Page compression; default zstd. */
  readonly compression?: ParquetCompression;
  /** Maximum rows per row group; default 1,048,576 (parquet-rs default). */
  readonly rowGroupRows?: number;
  /** Rows handed to the wasm writer at once; default 131,072. */
  readonly sliceRows?: number;
  /**
   * Dictionary encoding: 'auto' (default) turns it off for binary columns, whose values (Kafka keys and
   * values) rarely repeat; 'on'/'off' apply to every column.
   */
  readonly dictionary?: 'auto' | 'on' | 'off';
  /** Extra columns (Parquet dotted paths, e.g. `kafka.key`) to write without a dictionary. */
  readonly noDictionaryColumns?: readonly string[];
  /** Key/value metadata for the footer. `iceberg.schema` is always added. */
  readonly keyValueMetadata?: ReadonlyMap<string, string>;
  /** truncate(L) for string/binary bounds in the metrics; default 16. */
  readonly truncateLength?: number;
  /** Encoder (see the module comment); default 'native' when the schema and options allow it. */
  readonly engine?: 'native' | 'parquet-wasm';
  /** Native engine: uncompressed value bytes per page before it is closed at a row; default 1 MiB. */
  readonly pageBytes?: number;
  /** Native engine: the expected file size, so the output buffer need not grow (a hint, not a limit). */
  readonly sizeHint?: number;
}

export interface ParquetWriteResult {
  readonly bytes: Uint8Array;
  readonly footer: ParquetFooter;
  readonly metrics: DataFileMetrics;
  /** Row group start offsets, ascending: the data file's `split_offsets`. */
  readonly splitOffsets: bigint[];
  /**
   * Lets the next file reuse this one's memory (native engine). Call it once `bytes` are no longer used
   * (uploaded and not kept) — the footer's statistics are views of them too; `metrics` and `splitOffsets`
   * are copies and stay valid. Not calling it is always safe.
   */
  readonly release: () => void;
}

export const DEFAULT_SLICE_ROWS = 128 * 1024;
export const DEFAULT_ROW_GROUP_ROWS = 1024 * 1024;

const NATIVE_CODECS: Record<ParquetCompression, CompressionCodec> = {
  zstd: CompressionCodec.ZSTD,
  snappy: CompressionCodec.SNAPPY,
  none: CompressionCodec.UNCOMPRESSED,
};

const CODECS: Record<ParquetCompression, pq.Compression> = {
  zstd: pq.Compression.ZSTD,
  snappy: pq.Compression.SNAPPY,
  none: pq.Compression.UNCOMPRESSED,
};

/** Parquet dotted paths of the leaves of an Arrow schema, with the Iceberg type of each leaf. */
function leafPaths(schema: arrow.Schema, iceberg: StructType): { path: string; type: Type }[] {
  const out: { path: string; type: Type }[] = [];
  const visit = (prefix: string, field: arrow.Field, type: Type): void => {
    const path = prefix ? `${prefix}.${field.name}` : field.name;
    if (typeof type === 'string') {
      out.push({ path, type });
      return;
    }
    if (type.type === 'struct') {
      type.fields.forEach((f, i) => visit(path, field.type.children[i] as arrow.Field, f.type));
    } else if (type.type === 'list') {
      // parquet-rs writes the three-level list as <name>.list.<element name>
      visit(`${path}.list`, field.type.children[0] as arrow.Field, type.element);
    } else {
      const entries = field.type.children[0] as arrow.Field;
      const kv = `${path}.${entries.name}`;
      visit(kv, entries.type.children[0] as arrow.Field, type.key);
      visit(kv, entries.type.children[1] as arrow.Field, type.value);
    }
  };
  iceberg.fields.forEach((f, i) => visit('', schema.fields[i] as arrow.Field, f.type));
  return out;
}

function writerProperties(schema: arrow.Schema, iceberg: StructType, options: ParquetWriteOptions): pq.WriterProperties {
  let b = new pq.WriterPropertiesBuilder()
    .setCompression(CODECS[options.compression ?? 'zstd'])
    .setMaxRowGroupSize(options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS)
    .setCreatedBy(CREATED_BY)
    .setStatisticsEnabled(pq.EnabledStatistics.Chunk);
  const dict = options.dictionary ?? 'auto';
  if (dict === 'off') b = b.setDictionaryEnabled(false);
  if (dict === 'auto') {
    for (const leaf of leafPaths(schema, iceberg)) if (leaf.type === 'binary') b = b.setColumnDictionaryEnabled(leaf.path, false);
  }
  for (const path of options.noDictionaryColumns ?? []) b = b.setColumnDictionaryEnabled(path, false);
  const kv = new Map(options.keyValueMetadata ?? []);
  kv.set('iceberg.schema', JSON.stringify(iceberg));
  b = b.setKeyValueMetadata(kv);
  return b.build();
}

/** `data` re-typed as `type` (same buffers), so the field ids in `type` travel with it through IPC. */
function retype(data: arrow.Data, type: arrow.DataType): arrow.Data {
  const children: arrow.Data[] = [];
  for (let i = 0; i < data.children.length; i++) children.push(retype(data.children[i]!, (type.children[i] as arrow.Field).type));
  return data.clone(type, data.offset, data.length, data.nullCount, data.buffers, children);
}

/**
 * Type checks already made, per top-level field: the Arrow type a batch's column had (an immutable object,
 * the same one batch after batch when a builder makes them) and the mismatch found, if any. Checking a type
 * builds the schema's Arrow type and prints both; a converter's file has dozens of batches of one type.
 */
type TypeVerdicts = WeakMap<arrow.DataType, string | undefined>[];

/** The index of the field named `name` in `fields`, or -1. */
function fieldIndex(fields: readonly arrow.Field[], name: string): number {
  for (let i = 0; i < fields.length; i++) if (fields[i]!.name === name) return i;
  return -1;
}

/**
 * Checks a batch against the schema and returns it with the id-carrying Arrow schema. Loops, not closures:
 * this runs for every batch, and V8 may drop a dead closure's optimized code at a full GC, so per-call
 * closures were compiled again and again.
 */
function conform(batch: arrow.RecordBatch, target: arrow.Schema, iceberg: StructType, verdicts: TypeVerdicts): arrow.RecordBatch {
  const children: arrow.Data[] = [];
  for (let i = 0; i < iceberg.fields.length; i++) {
    const f = iceberg.fields[i]!;
    const want = target.fields[i] as arrow.Field;
    const idx = fieldIndex(batch.schema.fields, f.name);
    const col = idx >= 0 ? batch.data.children[idx] : undefined;
    if (!col) {
      if (f.required) throw new ParquetError('TYPE_MISMATCH', `Record batch lacks required column '${f.name}'; add it or make the field optional`);
      children.push(arrow.makeData({ type: want.type, length: batch.numRows, nullCount: batch.numRows }) as arrow.Data);
      continue;
    }
    const seen = (verdicts[i] ??= new WeakMap());
    let mismatch: string | undefined;
    if (seen.has(col.type)) mismatch = seen.get(col.type);
    else seen.set(col.type, (mismatch = arrowTypeMismatch(f.type, col.type, f.name)));
    if (mismatch) throw new ParquetError('TYPE_MISMATCH', `${mismatch}; build batches with icebergToArrowSchema(schema)`);
    if (f.required && col.nullCount > 0) {
      throw new ParquetError('TYPE_MISMATCH', `Required column '${f.name}' has ${col.nullCount} nulls; fill them or make the field optional`);
    }
    children.push(retype(col, want.type));
  }
  const data = arrow.makeData({ type: new arrow.Struct(target.fields), length: batch.numRows, nullCount: 0, children });
  return new arrow.RecordBatch(target, data);
}

function emptyBatch(target: arrow.Schema): arrow.RecordBatch {
  const children = target.fields.map((f) => arrow.makeBuilder({ type: f.type }).finish().flush() as arrow.Data);
  return new arrow.RecordBatch(target, arrow.makeData({ type: new arrow.Struct(target.fields), length: 0, nullCount: 0, children }));
}

/**
 * Arrow data to write: a table, or record batches from an iterable or an async iterable (a producer that
 * awaits between batches, e.g. to let other work run on the event loop, is pulled batch by batch).
 */
export type ArrowSource = arrow.Table | Iterable<arrow.RecordBatch> | AsyncIterable<arrow.RecordBatch>;

function toBatches(data: ArrowSource): Iterable<arrow.RecordBatch> | AsyncIterable<arrow.RecordBatch> {
  return data instanceof arrow.Table ? data.batches : data;
}

function batchIterator(data: ArrowSource): AsyncIterator<arrow.RecordBatch> | Iterator<arrow.RecordBatch> {
  const batches = toBatches(data);
  return Symbol.asyncIterator in batches ? batches[Symbol.asyncIterator]() : batches[Symbol.iterator]();
}

/**
 * Writes one Parquet data file for `schema` from Arrow data, with field ids on every column, and returns
 * its bytes, parsed footer, Iceberg metrics and split offsets.
 */
export async function writeParquet(
  schema: StructType,
  data: ArrowSource,
  options: ParquetWriteOptions = {},
): Promise<ParquetWriteResult> {
  const target = icebergToArrowSchema(schema);
  const verdicts: TypeVerdicts = [];
  const native = options.engine !== 'parquet-wasm' && options.dictionary !== 'on' && (options.noDictionaryColumns ?? []).length === 0 && nativeWriterSupports(schema);
  if (options.engine === 'native' && !native) {
    throw new ParquetError('UNSUPPORTED_TYPE', 'The native Parquet writer cannot write this file (decimal columns or dictionary encoding); use engine parquet-wasm');
  }
  const finish = (bytes: Buffer, floats: FloatStatsCollector, release: () => void = () => undefined): ParquetWriteResult => {
    const footer = parseParquetFooter(bytes);
    const metrics = parquetMetrics(schema, footer, bytes.length, {
      floatStats: floats.stats,
      ...(options.truncateLength !== undefined ? { truncateLength: options.truncateLength } : {}),
    });
    const splitOffsets = footer.rowGroups.map((rg) => rg.startOffset).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { bytes, footer, metrics, splitOffsets, release };
  };
  if (native) {
    const floats = new FloatStatsCollector(schema);
    const kv = new Map(options.keyValueMetadata ?? []);
    kv.set('iceberg.schema', JSON.stringify(schema));
    const rowGroupRows = options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
    if (!(rowGroupRows > 0)) throw new ParquetError('WRITE_FAILED', 'rowGroupRows must be positive');
    const w = new NativeParquetWriter(schema, {
      codec: NATIVE_CODECS[options.compression ?? 'zstd'],
      rowGroupRows,
      keyValueMetadata: kv,
      ...(options.pageBytes !== undefined ? { pageBytes: options.pageBytes } : {}),
      ...(options.sizeHint !== undefined ? { sizeHint: options.sizeHint } : {}),
    });
    for await (const b of toBatches(data)) {
      const batch = conform(b, target, schema, verdicts);
      floats.add(batch);
      w.write(batch);
    }
    const done = w.finish();
    return finish(done.bytes, floats, done.release);
  }
  const sliceRows = options.sliceRows ?? DEFAULT_SLICE_ROWS;
  if (!(sliceRows > 0)) throw new ParquetError('WRITE_FAILED', 'sliceRows must be positive');
  const floats = new FloatStatsCollector(schema);
  const source = batchIterator(data);
  let current: arrow.RecordBatch | undefined;
  let offset = 0;
  let wroteAny = false;
  let failure: unknown;

  const nextSlice = async (): Promise<arrow.RecordBatch | undefined> => {
    for (;;) {
      if (current && offset < current.numRows) {
        const end = Math.min(current.numRows, offset + sliceRows);
        const s = offset === 0 && end === current.numRows ? current : current.slice(offset, end);
        offset = end;
        return s;
      }
      const n = await source.next();
      if (n.done) return undefined;
      current = conform(n.value, target, schema, verdicts);
      floats.add(current);
      offset = 0;
    }
  };

  const stream = new ReadableStream<pq.RecordBatch>({
    async pull(ctrl) {
      try {
        let slice = await nextSlice();
        // The writer needs the schema even for an empty file: send one empty batch.
        if (!slice && !wroteAny) slice = emptyBatch(target);
        if (!slice) {
          ctrl.close();
          return;
        }
        wroteAny = true;
        const wasm = pq.Table.fromIPCStream(arrow.tableToIPC(new arrow.Table(target, [slice]), 'stream'));
        for (const b of wasm.recordBatches()) ctrl.enqueue(b);
      } catch (err) {
        failure = err;
        ctrl.error(err);
      }
    },
  });

  const chunks: Uint8Array[] = [];
  try {
    const out = await pq.transformParquetStream(stream, writerProperties(target, schema, options));
    const reader = (out as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      chunks.push(r.value);
    }
  } catch (err) {
    if (failure !== undefined) throw failure;
    throw new ParquetError('WRITE_FAILED', `parquet-wasm failed to write the file: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  // parquet-wasm ends the file at a source stream's error, with the rows before it, and does not reject: a
  // batch that failed must fail the write, or the file silently lacks it and everything after it.
  if (failure !== undefined) throw failure;
  return finish(Buffer.concat(chunks), floats);
}
