/**
 * Manifest lists (Iceberg spec, "Manifest Lists"): one Avro file per snapshot naming its manifests with
 * their file and row counts and partition field summaries. Header keys: `snapshot-id`,
 * `parent-snapshot-id`, `sequence-number`, `format-version` (and `first-row-id` in v3).
 */
import { type AvroCodec, readContainer, writeContainer } from './avro/container.js';
import { AvroError } from './avro/errors.js';
import { checkFormatVersion, manifestFileSchema, type FormatVersion } from './avro/schemas.js';

/** `content` of a manifest_file (field 517). */
export const ManifestContent = { DATA: 0, DELETES: 1 } as const;
export type ManifestContent = (typeof ManifestContent)[keyof typeof ManifestContent];

export interface FieldSummary {
  readonly contains_null: boolean;
  readonly contains_nan?: boolean | null;
  /** Appendix D bytes of the partition field's type. */
  readonly lower_bound?: Uint8Array | null;
  readonly upper_bound?: Uint8Array | null;
}

export interface ManifestFile {
  readonly manifest_path: string;
  readonly manifest_length: bigint;
  readonly partition_spec_id: number;
  readonly content: ManifestContent;
  /** Null for a manifest new in this snapshot: the writer fills in the list's sequence number. */
  readonly sequence_number: bigint | null;
  /** Null when every live file in the manifest is new: filled like sequence_number. */
  readonly min_sequence_number: bigint | null;
  readonly added_snapshot_id: bigint;
  readonly added_files_count: number;
  readonly existing_files_count: number;
  readonly deleted_files_count: number;
  readonly added_rows_count: bigint;
  readonly existing_rows_count: bigint;
  readonly deleted_rows_count: bigint;
  readonly partitions?: readonly FieldSummary[] | null;
  readonly key_metadata?: Uint8Array | null;
  /** v3 row lineage: assigned by the manifest list writer for data manifests that lack one. */
  readonly first_row_id?: bigint | null;
}

export interface ManifestListWriteOptions {
  readonly formatVersion: number;
  readonly snapshotId: bigint;
  readonly parentSnapshotId?: bigint | null;
  readonly sequenceNumber: bigint;
  /** v3: the snapshot's first-row-id; data manifests without a first_row_id get one from here on. */
  readonly firstRowId?: bigint;
  readonly codec?: AvroCodec;
}

export interface ManifestListMetadata {
  readonly snapshotId: bigint;
  readonly parentSnapshotId: bigint | null;
  readonly sequenceNumber: bigint;
  readonly formatVersion: number;
  readonly firstRowId?: bigint;
}

export interface ManifestListWriteResult {
  readonly bytes: Buffer;
  /** The manifests as written: sequence numbers filled in, v3 first_row_ids assigned. */
  readonly manifests: ManifestFile[];
  /** v3: rows that received ids (the snapshot's `added-rows`). */
  readonly assignedRows: bigint;
}

/** Writes a manifest list. */
export function writeManifestList(manifests: readonly ManifestFile[], options: ManifestListWriteOptions): ManifestListWriteResult {
  const version: FormatVersion = checkFormatVersion(options.formatVersion);
  let nextRowId = options.firstRowId;
  if (version >= 3 && nextRowId === undefined) {
    throw new AvroError('INVALID_MANIFEST', 'A v3 manifest list needs firstRowId (the table next-row-id) to assign row ids');
  }
  const start = nextRowId ?? 0n;
  const written = manifests.map((m): ManifestFile => {
    const seq = m.sequence_number ?? options.sequenceNumber;
    let out: ManifestFile = { ...m, sequence_number: seq, min_sequence_number: m.min_sequence_number ?? seq };
    if (version >= 3 && m.content === ManifestContent.DATA && m.first_row_id == null && nextRowId !== undefined) {
      out = { ...out, first_row_id: nextRowId };
      nextRowId += m.added_rows_count + m.existing_rows_count;
    }
    if (version < 3) out = { ...out, first_row_id: null };
    return out;
  });
  const metadata: Record<string, string> = {
    'snapshot-id': options.snapshotId.toString(),
    'parent-snapshot-id': options.parentSnapshotId == null ? 'null' : options.parentSnapshotId.toString(),
    'sequence-number': options.sequenceNumber.toString(),
    'format-version': String(version),
  };
  if (version >= 3) metadata['first-row-id'] = start.toString();
  const records = written.map((m) => ({
    manifest_path: m.manifest_path,
    manifest_length: m.manifest_length,
    partition_spec_id: m.partition_spec_id,
    content: m.content,
    sequence_number: m.sequence_number,
    min_sequence_number: m.min_sequence_number,
    added_snapshot_id: m.added_snapshot_id,
    added_files_count: m.added_files_count,
    existing_files_count: m.existing_files_count,
    deleted_files_count: m.deleted_files_count,
    added_rows_count: m.added_rows_count,
    existing_rows_count: m.existing_rows_count,
    deleted_rows_count: m.deleted_rows_count,
    partitions:
      m.partitions == null
        ? null
        : m.partitions.map((p) => ({
            contains_null: p.contains_null,
            contains_nan: p.contains_nan ?? null,
            lower_bound: p.lower_bound ? Buffer.from(p.lower_bound) : null,
            upper_bound: p.upper_bound ? Buffer.from(p.upper_bound) : null,
          })),
    key_metadata: m.key_metadata ? Buffer.from(m.key_metadata) : null,
    ...(version >= 3 ? { first_row_id: m.first_row_id ?? null } : {}),
  }));
  const bytes = writeContainer(manifestFileSchema(version), records, metadata, options.codec ? { codec: options.codec } : {});
  return { bytes, manifests: written, assignedRows: (nextRowId ?? start) - start };
}

type Rec = Record<string, unknown>;

const bytesOrNull = (v: unknown): Uint8Array | null => (v instanceof Uint8Array ? new Uint8Array(v) : null);
const bigOr = (v: unknown, d: bigint): bigint => (typeof v === 'bigint' ? v : d);
const numOr = (v: unknown, d: number): number => (typeof v === 'number' ? v : d);

function parseBig(meta: ReadonlyMap<string, string>, key: string): bigint | null {
  const v = meta.get(key);
  if (v === undefined || v === 'null') return null;
  try {
    return BigInt(v);
  } catch {
    throw new AvroError('INVALID_MANIFEST', `Manifest list header '${key}' is '${v}', not an integer`);
  }
}

/** Reads a manifest list. v1 lists (no sequence numbers) read with 0, as the spec says. */
export function readManifestList(bytes: Uint8Array): { metadata: ManifestListMetadata; manifests: ManifestFile[] } {
  const c = readContainer(bytes);
  const formatVersion = Number(c.metadata.get('format-version') ?? '1');
  const firstRowId = parseBig(c.metadata, 'first-row-id');
  const metadata: ManifestListMetadata = {
    snapshotId: parseBig(c.metadata, 'snapshot-id') ?? 0n,
    parentSnapshotId: parseBig(c.metadata, 'parent-snapshot-id'),
    sequenceNumber: parseBig(c.metadata, 'sequence-number') ?? 0n,
    formatVersion,
    ...(firstRowId !== null ? { firstRowId } : {}),
  };
  const manifests = (c.records as Rec[]).map((r): ManifestFile => {
    const parts = Array.isArray(r['partitions'])
      ? (r['partitions'] as Rec[]).map((p): FieldSummary => ({
          contains_null: p['contains_null'] === true,
          contains_nan: typeof p['contains_nan'] === 'boolean' ? p['contains_nan'] : null,
          lower_bound: bytesOrNull(p['lower_bound']),
          upper_bound: bytesOrNull(p['upper_bound']),
        }))
      : null;
    return {
      manifest_path: String(r['manifest_path']),
      manifest_length: bigOr(r['manifest_length'], 0n),
      partition_spec_id: numOr(r['partition_spec_id'], 0),
      content: numOr(r['content'], 0) === 1 ? ManifestContent.DELETES : ManifestContent.DATA,
      sequence_number: bigOr(r['sequence_number'], 0n),
      min_sequence_number: bigOr(r['min_sequence_number'], 0n),
      added_snapshot_id: bigOr(r['added_snapshot_id'], 0n),
      added_files_count: numOr(r['added_files_count'] ?? r['added_data_files_count'], 0),
      existing_files_count: numOr(r['existing_files_count'] ?? r['existing_data_files_count'], 0),
      deleted_files_count: numOr(r['deleted_files_count'] ?? r['deleted_data_files_count'], 0),
      added_rows_count: bigOr(r['added_rows_count'], 0n),
      existing_rows_count: bigOr(r['existing_rows_count'], 0n),
      deleted_rows_count: bigOr(r['deleted_rows_count'], 0n),
      partitions: parts,
      key_metadata: bytesOrNull(r['key_metadata']),
      first_row_id: typeof r['first_row_id'] === 'bigint' ? r['first_row_id'] : null,
    };
  });
  return { metadata, manifests };
}
