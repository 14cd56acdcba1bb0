/**
 * Manifests (Iceberg spec, "Manifests"): Avro files of manifest entries, one partition spec each. The header
 * carries what readers rely on: `schema`, `schema-id`, `partition-spec`, `partition-spec-id`,
 * `format-version`, `content`. Writing also yields the manifest's `manifest_file` row for the manifest list
 * (counts and partition field summaries).
 */
import type { Schema, StructType } from './schema.js';
import type { PartitionSpec } from './partition-spec.js';
import { partitionType } from './partition-spec.js';
import { parseJson, stringifyJson, type JsonValue } from './json.js';
import { parsePrimitiveType, type ParsedPrimitive } from './types.js';
import { compareSingleValues, decimalFromBytes, toSingleValue, type SingleValue } from './metrics.js';
import { type AvroCodec, readContainer, writeContainer } from './avro/container.js';
import { AvroError } from './avro/errors.js';
import { avroCompatibleName, checkFormatVersion, decimalRequiredBytes, manifestEntrySchema } from './avro/schemas.js';
import {
  DataFileContent,
  ManifestEntryStatus,
  type DataFile,
  type FileFormat,
  type ManifestEntry,
  type PartitionData,
  type PartitionValue,
} from './data-file.js';
import { ManifestContent, type FieldSummary, type ManifestFile } from './manifest-list.js';

export interface ManifestWriteOptions {
  readonly formatVersion: number;
  /** The table schema the files were written with. */
  readonly schema: Schema;
  readonly partitionSpec: PartitionSpec;
  /** 'data' for data files, 'deletes' for delete files; default 'data'. */
  readonly content?: 'data' | 'deletes';
  readonly codec?: AvroCodec;
}

export interface ManifestMetadata {
  readonly schema: Schema;
  readonly schemaId: number;
  readonly partitionSpec: PartitionSpec;
  readonly formatVersion: number;
  readonly content: 'data' | 'deletes';
}

export interface Manifest {
  readonly metadata: ManifestMetadata;
  readonly entries: ManifestEntry[];
}

// ---------------------------------------------------------------------------------------------------
// Partition values <-> Avro

function partitionValueToAvro(type: ParsedPrimitive, v: PartitionValue | undefined): unknown {
  if (v === null || v === undefined) return null;
  switch (type.kind) {
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return BigInt(v as number | bigint);
    case 'int':
    case 'date':
      return Number(v);
    case 'decimal': {
      const size = decimalRequiredBytes(type.precision);
      const unscaled = BigInt(v as number | bigint);
      const out = Buffer.alloc(size);
      let x = BigInt.asUintN(size * 8, unscaled);
      for (let i = size - 1; i >= 0; i--) {
        out[i] = Number(x & 0xffn);
        x >>= 8n;
      }
      return out;
    }
    case 'uuid':
    case 'fixed':
    case 'binary':
      return Buffer.from(toSingleValue(type, v as SingleValue));
    default:
      return v;
  }
}

function partitionValueFromAvro(type: ParsedPrimitive, v: unknown): PartitionValue {
  if (v === null || v === undefined) return null;
  if (type.kind === 'decimal' && v instanceof Uint8Array) return decimalFromBytes(v);
  if (v instanceof Uint8Array) return new Uint8Array(v);
  return v as PartitionValue;
}

function partitionPrimitives(struct: StructType): ParsedPrimitive[] {
  return struct.fields.map((f) => {
    if (typeof f.type !== 'string') throw new AvroError('UNSUPPORTED_TYPE', `Partition field '${f.name}' is not primitive`);
    return parsePrimitiveType(f.type);
  });
}

// ---------------------------------------------------------------------------------------------------
// Writing

const mapToAvro = <V>(m: ReadonlyMap<number, V> | null | undefined, conv: (v: V) => unknown): unknown =>
  m == null ? null : [...m].map(([key, value]) => ({ key, value: conv(value) }));

function entryToAvro(e: ManifestEntry, ptype: StructType, prims: ParsedPrimitive[], version: number): unknown {
  const f = e.data_file;
  const partition: Record<string, unknown> = {};
  ptype.fields.forEach((pf, i) => {
    partition[avroCompatibleName(pf.name)] = partitionValueToAvro(prims[i] as ParsedPrimitive, f.partition[pf.name]);
  });
  const df: Record<string, unknown> = {
    content: f.content,
    file_path: f.file_path,
    file_format: f.file_format.toUpperCase(),
    partition,
    record_count: f.record_count,
    file_size_in_bytes: f.file_size_in_bytes,
    column_sizes: mapToAvro(f.column_sizes, (v) => v),
    value_counts: mapToAvro(f.value_counts, (v) => v),
    null_value_counts: mapToAvro(f.null_value_counts, (v) => v),
    nan_value_counts: mapToAvro(f.nan_value_counts, (v) => v),
    lower_bounds: mapToAvro(f.lower_bounds, (v) => Buffer.from(v)),
    upper_bounds: mapToAvro(f.upper_bounds, (v) => Buffer.from(v)),
    key_metadata: f.key_metadata ? Buffer.from(f.key_metadata) : null,
    split_offsets: f.split_offsets ? [...f.split_offsets] : null,
    equality_ids: f.equality_ids ? [...f.equality_ids] : null,
    sort_order_id: f.sort_order_id ?? null,
    referenced_data_file: f.referenced_data_file ?? null,
  };
  if (version >= 3) {
    df['first_row_id'] = f.first_row_id ?? null;
    df['content_offset'] = f.content_offset ?? null;
    df['content_size_in_bytes'] = f.content_size_in_bytes ?? null;
  }
  return {
    status: e.status,
    snapshot_id: e.snapshot_id,
    sequence_number: e.sequence_number,
    file_sequence_number: e.file_sequence_number,
    data_file: df,
  };
}

function checkEntry(e: ManifestEntry, content: 'data' | 'deletes'): void {
  const isData = e.data_file.content === DataFileContent.DATA;
  if (isData !== (content === 'data')) {
    throw new AvroError('INVALID_MANIFEST', `${e.data_file.file_path} is a ${isData ? 'data' : 'delete'} file but the manifest holds ${content}; write data and delete files to separate manifests`);
  }
  if (e.status !== ManifestEntryStatus.ADDED && (e.sequence_number === null || e.file_sequence_number === null)) {
    throw new AvroError('INVALID_MANIFEST', `${e.data_file.file_path}: existing and deleted entries must carry both sequence numbers explicitly`);
  }
}

/** Encodes a manifest file. Entries of status ADDED may leave snapshot id and sequence numbers null (inherited). */
export function writeManifest(entries: readonly ManifestEntry[], options: ManifestWriteOptions): Buffer {
  const version = checkFormatVersion(options.formatVersion);
  const content = options.content ?? 'data';
  const ptype = partitionType(options.partitionSpec, options.schema);
  const prims = partitionPrimitives(ptype);
  for (const e of entries) checkEntry(e, content);
  const metadata: Record<string, string> = {
    schema: stringifyJson(options.schema as unknown as JsonValue),
    'schema-id': String(options.schema['schema-id']),
    'partition-spec': stringifyJson(options.partitionSpec.fields as unknown as JsonValue),
    'partition-spec-id': String(options.partitionSpec['spec-id']),
    'format-version': String(version),
    content,
  };
  return writeContainer(
    manifestEntrySchema(ptype, version),
    entries.map((e) => entryToAvro(e, ptype, prims, version)),
    metadata,
    options.codec ? { codec: options.codec } : {},
  );
}

// ---------------------------------------------------------------------------------------------------
// Reading

type Rec = Record<string, unknown>;

function mapFromAvro<V>(v: unknown, conv: (x: unknown) => V): Map<number, V> | null {
  if (!Array.isArray(v)) return null;
  const m = new Map<number, V>();
  for (const kv of v as Rec[]) m.set(Number(kv['key']), conv(kv['value']));
  return m;
}

const asBig = (x: unknown): bigint => (typeof x === 'bigint' ? x : BigInt(x as number));
const asBytes = (x: unknown): Uint8Array => new Uint8Array(x as Uint8Array);
const bigOrNull = (x: unknown): bigint | null => (typeof x === 'bigint' ? x : null);

function headerJson(meta: ReadonlyMap<string, string>, key: string): JsonValue {
  const text = meta.get(key);
  if (text === undefined) throw new AvroError('INVALID_MANIFEST', `Manifest header lacks '${key}'; it was not written by a v2+ Iceberg writer`);
  return parseJson(text);
}

/** Decodes a manifest file: header metadata and entries, with nulls left for inheritance (see `inheritFromManifestFile`). */
export function readManifest(bytes: Uint8Array): Manifest {
  const c = readContainer(bytes);
  const schema = headerJson(c.metadata, 'schema') as unknown as Schema;
  const specFields = headerJson(c.metadata, 'partition-spec');
  if (!Array.isArray(specFields)) throw new AvroError('INVALID_MANIFEST', "Manifest header 'partition-spec' is not a JSON array of partition fields");
  const partitionSpec = { 'spec-id': Number(c.metadata.get('partition-spec-id') ?? '0'), fields: specFields } as unknown as PartitionSpec;
  const formatVersion = Number(c.metadata.get('format-version') ?? '1');
  const content = c.metadata.get('content') === 'deletes' ? 'deletes' : 'data';
  const ptype = partitionType(partitionSpec, schema);
  const prims = partitionPrimitives(ptype);
  const entries = (c.records as Rec[]).map((r): ManifestEntry => {
    const d = r['data_file'] as Rec;
    const p = (d['partition'] ?? {}) as Rec;
    const partition: Record<string, PartitionValue> = {};
    ptype.fields.forEach((pf, i) => {
      partition[pf.name] = partitionValueFromAvro(prims[i] as ParsedPrimitive, p[avroCompatibleName(pf.name)]);
    });
    const df: DataFile = {
      content: (typeof d['content'] === 'number' ? d['content'] : 0) as DataFile['content'],
      file_path: String(d['file_path']),
      file_format: String(d['file_format']).toLowerCase() as FileFormat,
      partition: partition as PartitionData,
      record_count: asBig(d['record_count']),
      file_size_in_bytes: asBig(d['file_size_in_bytes']),
      column_sizes: mapFromAvro(d['column_sizes'], asBig),
      value_counts: mapFromAvro(d['value_counts'], asBig),
      null_value_counts: mapFromAvro(d['null_value_counts'], asBig),
      nan_value_counts: mapFromAvro(d['nan_value_counts'], asBig),
      lower_bounds: mapFromAvro(d['lower_bounds'], asBytes),
      upper_bounds: mapFromAvro(d['upper_bounds'], asBytes),
      key_metadata: d['key_metadata'] instanceof Uint8Array ? asBytes(d['key_metadata']) : null,
      split_offsets: Array.isArray(d['split_offsets']) ? (d['split_offsets'] as unknown[]).map(asBig) : null,
      equality_ids: Array.isArray(d['equality_ids']) ? (d['equality_ids'] as unknown[]).map(Number) : null,
      sort_order_id: typeof d['sort_order_id'] === 'number' ? d['sort_order_id'] : null,
      referenced_data_file: typeof d['referenced_data_file'] === 'string' ? d['referenced_data_file'] : null,
      first_row_id: bigOrNull(d['first_row_id']),
      content_offset: bigOrNull(d['content_offset']),
      content_size_in_bytes: bigOrNull(d['content_size_in_bytes']),
    };
    return {
      status: (typeof r['status'] === 'number' ? r['status'] : 0) as ManifestEntryStatus,
      snapshot_id: bigOrNull(r['snapshot_id']),
      sequence_number: bigOrNull(r['sequence_number']),
      file_sequence_number: bigOrNull(r['file_sequence_number']),
      data_file: df,
    };
  });
  return { metadata: { schema, schemaId: Number(c.metadata.get('schema-id') ?? schema['schema-id']), partitionSpec, formatVersion, content }, entries };
}

/**
 * Fills inherited values (spec, "Sequence Number Inheritance" and "First Row ID Inheritance"): a null
 * snapshot id or sequence number of an ADDED entry takes the manifest's; null first_row_ids of data files
 * are assigned from the manifest's first_row_id in entry order.
 */
export function inheritFromManifestFile(entries: readonly ManifestEntry[], manifest: ManifestFile): ManifestEntry[] {
  let nextRowId = manifest.first_row_id ?? null;
  return entries.map((e) => {
    const added = e.status === ManifestEntryStatus.ADDED;
    let df = e.data_file;
    if (df.content === DataFileContent.DATA && df.first_row_id == null && nextRowId !== null) {
      df = { ...df, first_row_id: nextRowId };
      nextRowId += df.record_count;
    }
    return {
      status: e.status,
      snapshot_id: e.snapshot_id ?? manifest.added_snapshot_id,
      sequence_number: e.sequence_number ?? (added ? manifest.sequence_number : null),
      file_sequence_number: e.file_sequence_number ?? (added ? manifest.sequence_number : null),
      data_file: df,
    };
  });
}

// ---------------------------------------------------------------------------------------------------
// Summary for the manifest list

export interface ManifestFileInput {
  readonly manifest_path: string;
  readonly manifest_length: bigint | number;
  /** The snapshot that adds this manifest. */
  readonly added_snapshot_id: bigint;
  /** Null (default) for a manifest new in the committing snapshot. */
  readonly sequence_number?: bigint | null;
  readonly key_metadata?: Uint8Array | null;
}

/** Partition field summaries over the partition tuples of the given entries (all statuses but DELETED count). */
export function partitionSummaries(entries: readonly ManifestEntry[], spec: PartitionSpec, schema: Schema): FieldSummary[] {
  const ptype = partitionType(spec, schema);
  const prims = partitionPrimitives(ptype);
  return ptype.fields.map((pf, i) => {
    const t = prims[i] as ParsedPrimitive;
    let containsNull = false;
    let containsNan = false;
    let lower: Uint8Array | undefined;
    let upper: Uint8Array | undefined;
    for (const e of entries) {
      const v = e.data_file.partition[pf.name];
      if (v === null || v === undefined) {
        containsNull = true;
        continue;
      }
      if (typeof v === 'number' && Number.isNaN(v)) {
        containsNan = true;
        continue;
      }
      const b = toSingleValue(t, v);
      if (!lower || compareSingleValues(t, b, lower) < 0) lower = b;
      if (!upper || compareSingleValues(t, b, upper) > 0) upper = b;
    }
    const floating = t.kind === 'float' || t.kind === 'double';
    return { contains_null: containsNull, contains_nan: floating ? containsNan : null, lower_bound: lower ?? null, upper_bound: upper ?? null };
  });
}

/** The manifest list row for a manifest holding `entries`. */
export function manifestFileFor(entries: readonly ManifestEntry[], options: ManifestWriteOptions, input: ManifestFileInput): ManifestFile {
  let added = 0;
  let existing = 0;
  let deleted = 0;
  let addedRows = 0n;
  let existingRows = 0n;
  let deletedRows = 0n;
  let minSeq: bigint | null = null;
  for (const e of entries) {
    const rows = e.data_file.record_count;
    if (e.status === ManifestEntryStatus.ADDED) {
      added++;
      addedRows += rows;
    } else if (e.status === ManifestEntryStatus.EXISTING) {
      existing++;
      existingRows += rows;
    } else {
      deleted++;
      deletedRows += rows;
      continue; // deleted files are not live: they don't bound the minimum sequence number
    }
    if (e.sequence_number !== null && (minSeq === null || e.sequence_number < minSeq)) minSeq = e.sequence_number;
  }
  const seq = input.sequence_number ?? null;
  // New entries inherit the manifest's sequence number, which is >= any explicit one, so the minimum is
  // the explicit minimum if there is one, else the manifest's own number (null: filled by the list writer).
  const min = minSeq ?? seq;
  return {
    manifest_path: input.manifest_path,
    manifest_length: BigInt(input.manifest_length),
    partition_spec_id: options.partitionSpec['spec-id'],
    content: (options.content ?? 'data') === 'data' ? ManifestContent.DATA : ManifestContent.DELETES,
    sequence_number: seq,
    min_sequence_number: min,
    added_snapshot_id: input.added_snapshot_id,
    added_files_count: added,
    existing_files_count: existing,
    deleted_files_count: deleted,
    added_rows_count: addedRows,
    existing_rows_count: existingRows,
    deleted_rows_count: deletedRows,
    partitions: partitionSummaries(entries.filter((e) => e.status !== ManifestEntryStatus.DELETED), options.partitionSpec, options.schema),
    key_metadata: input.key_metadata ?? null,
    first_row_id: null,
  };
}

/** Writes a manifest and returns its bytes with the manifest list row describing it. */
export function writeManifestFile(
  entries: readonly ManifestEntry[],
  options: ManifestWriteOptions,
  input: Omit<ManifestFileInput, 'manifest_length'>,
): { bytes: Buffer; manifestFile: ManifestFile } {
  const bytes = writeManifest(entries, options);
  return { bytes, manifestFile: manifestFileFor(entries, options, { ...input, manifest_length: bytes.length }) };
}
