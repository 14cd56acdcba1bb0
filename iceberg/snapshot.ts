/**
 * Snapshots and snapshot references (Iceberg spec, "Snapshots", "Snapshot References", Appendix C and
 * Appendix F "Optional Snapshot Summary Fields"). Snapshot ids are 64-bit and kept as `bigint` so that they
 * are exact; JSON goes through `./json.js`, which reads and writes them without loss.
 */
import { randomBytes } from 'node:crypto';
import { fromBigInt, isJsonObject, toBigInt, type JsonObject } from './json.js';
import { IcebergError } from './types.js';

export type Operation = 'append' | 'replace' | 'overwrite' | 'delete';
export const OPERATIONS: readonly Operation[] = ['append', 'replace', 'overwrite', 'delete'];

/** The snapshot summary: `operation` plus string properties. */
export type Summary = { readonly operation: Operation } & { readonly [key: string]: string };

export interface Snapshot {
  readonly 'snapshot-id': bigint;
  readonly 'parent-snapshot-id'?: bigint;
  readonly 'sequence-number': number;
  readonly 'timestamp-ms': number;
  readonly 'manifest-list': string;
  readonly summary: Summary;
  readonly 'schema-id'?: number;
  /** v3 row lineage. */
  readonly 'first-row-id'?: number;
  readonly 'added-rows'?: number;
  readonly 'key-id'?: string;
}

export type SnapshotRefType = 'branch' | 'tag';

export interface SnapshotRef {
  readonly 'snapshot-id': bigint;
  readonly type: SnapshotRefType;
  readonly 'min-snapshots-to-keep'?: number;
  readonly 'max-snapshot-age-ms'?: number;
  readonly 'max-ref-age-ms'?: number;
}

export const MAIN_BRANCH = 'main';

export interface SnapshotLogEntry {
  readonly 'snapshot-id': bigint;
  readonly 'timestamp-ms': number;
}

export interface MetadataLogEntry {
  readonly 'metadata-file': string;
  readonly 'timestamp-ms': number;
}

function fail(message: string): never {
  throw new IcebergError('INVALID_SNAPSHOT', message);
}

/** A 64-bit id from JSON (number or bigint) as bigint; `what` names the field in the error. */
export function parseLongId(v: unknown, what: string, code: 'INVALID_SNAPSHOT' | 'INVALID_METADATA' = 'INVALID_SNAPSHOT'): bigint {
  const b = toBigInt(v);
  if (b === undefined || b < -(2n ** 63n) || b >= 2n ** 63n) {
    throw new IcebergError(code, `${what} must be a 64-bit integer, got ${typeof v === 'bigint' ? v.toString() : JSON.stringify(v)}`);
  }
  return b;
}

function safeInt(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) fail(`${what} must be an integer, got ${JSON.stringify(typeof v === 'bigint' ? v.toString() : v)}`);
  return v;
}

/**
 * A fresh positive snapshot id the way the reference implementation makes one: the two halves of a random
 * (v4) UUID XORed together, masked to a positive long. Pass `taken` to avoid ids already in the table.
 */
export function newSnapshotId(taken?: (id: bigint) => boolean): bigint {
  for (;;) {
    const b = randomBytes(16);
    b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
    b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
    const id = (b.readBigUInt64BE(0) ^ b.readBigUInt64BE(8)) & 0x7fffffffffffffffn;
    if (id !== 0n && !taken?.(id)) return id;
  }
}

/** Parses one snapshot. `formatVersion` decides which fields are required (v2: sequence-number, manifest-list, summary). */
export function parseSnapshot(json: unknown, formatVersion = 2): Snapshot {
  if (!isJsonObject(json)) fail('A snapshot must be a JSON object');
  if (json['snapshot-id'] === undefined) fail("snapshot is missing required field 'snapshot-id'");
  const id = parseLongId(json['snapshot-id'], 'snapshot-id');
  const w = `snapshot ${id}`;
  if (json['timestamp-ms'] === undefined) fail(`${w} is missing required field 'timestamp-ms'`);
  if (typeof json['manifest-list'] !== 'string') {
    fail(`${w} is missing 'manifest-list'${json.manifests !== undefined ? ' (v1 manifests lists are not supported; rewrite the table as v2)' : ''}`);
  }
  if (formatVersion >= 2 && json['sequence-number'] === undefined) fail(`${w} is missing required field 'sequence-number'`);
  const summary = parseSummary(json.summary, w);
  let out: Snapshot = {
    'snapshot-id': id,
    'sequence-number': json['sequence-number'] === undefined ? 0 : safeInt(json['sequence-number'], `${w} sequence-number`),
    'timestamp-ms': safeInt(json['timestamp-ms'], `${w} timestamp-ms`),
    'manifest-list': json['manifest-list'],
    summary,
  };
  if (json['parent-snapshot-id'] !== undefined && json['parent-snapshot-id'] !== null) {
    out = { ...out, 'parent-snapshot-id': parseLongId(json['parent-snapshot-id'], `${w} parent-snapshot-id`) };
  }
  if (json['schema-id'] !== undefined) out = { ...out, 'schema-id': safeInt(json['schema-id'], `${w} schema-id`) };
  if (json['first-row-id'] !== undefined) out = { ...out, 'first-row-id': safeInt(json['first-row-id'], `${w} first-row-id`) };
  if (json['added-rows'] !== undefined) out = { ...out, 'added-rows': safeInt(json['added-rows'], `${w} added-rows`) };
  if (formatVersion >= 3) {
    if (out['first-row-id'] === undefined) fail(`${w} is missing 'first-row-id', required in format v3`);
    if (out['added-rows'] === undefined) fail(`${w} is missing 'added-rows', required in format v3`);
  }
  if (json['key-id'] !== undefined) {
    if (typeof json['key-id'] !== 'string') fail(`${w} key-id must be a string`);
    out = { ...out, 'key-id': json['key-id'] };
  }
  return out;
}

function parseSummary(v: unknown, w: string): Summary {
  if (!isJsonObject(v)) fail(`${w} is missing its 'summary' object`);
  const op = v.operation;
  if (typeof op !== 'string' || !(OPERATIONS as readonly string[]).includes(op)) {
    fail(`${w} summary has operation ${JSON.stringify(op)}; expected one of ${OPERATIONS.join(', ')}`);
  }
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'string') fail(`${w} summary '${k}' must be a string, got ${typeof x}`);
    out[k] = x;
  }
  return out as Summary;
}

export function snapshotToJson(s: Snapshot): JsonObject {
  const out: JsonObject = { 'snapshot-id': fromBigInt(s['snapshot-id']) };
  if (s['parent-snapshot-id'] !== undefined) out['parent-snapshot-id'] = fromBigInt(s['parent-snapshot-id']);
  out['sequence-number'] = s['sequence-number'];
  out['timestamp-ms'] = s['timestamp-ms'];
  out['manifest-list'] = s['manifest-list'];
  out.summary = { ...s.summary };
  if (s['schema-id'] !== undefined) out['schema-id'] = s['schema-id'];
  if (s['first-row-id'] !== undefined) out['first-row-id'] = s['first-row-id'];
  if (s['added-rows'] !== undefined) out['added-rows'] = s['added-rows'];
  if (s['key-id'] !== undefined) out['key-id'] = s['key-id'];
  return out;
}

export function parseSnapshotRef(json: unknown, name: string, code: 'INVALID_SNAPSHOT' | 'INVALID_METADATA' = 'INVALID_SNAPSHOT'): SnapshotRef {
  const bad = (m: string): never => {
    throw new IcebergError(code, `ref '${name}' ${m}`);
  };
  if (!isJsonObject(json)) return bad('must be a JSON object');
  if (json['snapshot-id'] === undefined) bad("is missing required field 'snapshot-id'");
  if (json.type !== 'branch' && json.type !== 'tag') bad(`has type ${JSON.stringify(json.type)}; expected "branch" or "tag"`);
  let ref: SnapshotRef = { 'snapshot-id': parseLongId(json['snapshot-id'], `ref '${name}' snapshot-id`, code), type: json.type as SnapshotRefType };
  for (const key of ['min-snapshots-to-keep', 'max-snapshot-age-ms', 'max-ref-age-ms'] as const) {
    const v = json[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) bad(`${key} must be a positive integer`);
    if (key !== 'max-ref-age-ms' && ref.type === 'tag') bad(`is a tag; ${key} applies to branches only`);
    ref = { ...ref, [key]: v };
  }
  if (name === MAIN_BRANCH && ref.type !== 'branch') bad('must be a branch');
  return ref;
}

export function snapshotRefToJson(r: SnapshotRef): JsonObject {
  const out: JsonObject = { 'snapshot-id': fromBigInt(r['snapshot-id']), type: r.type };
  if (r['min-snapshots-to-keep'] !== undefined) out['min-snapshots-to-keep'] = r['min-snapshots-to-keep'];
  if (r['max-snapshot-age-ms'] !== undefined) out['max-snapshot-age-ms'] = r['max-snapshot-age-ms'];
  if (r['max-ref-age-ms'] !== undefined) out['max-ref-age-ms'] = r['max-ref-age-ms'];
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Summary

/** What a commit changed, per file, as the data layer knows it (kept minimal so no manifest types leak in). */
export interface FileChange {
  readonly content: 'data' | 'position-deletes' | 'equality-deletes';
  readonly recordCount: number;
  readonly fileSizeInBytes: number;
  /** A stable key of the file's partition (any string), for `changed-partition-count`. */
  readonly partitionKey?: string;
  /** True for a deletion vector (v3), counted in added-dvs / removed-dvs. */
  readonly isDeletionVector?: boolean;
}

export interface SummaryInput {
  readonly operation: Operation;
  readonly added?: readonly FileChange[];
  readonly removed?: readonly FileChange[];
  /** The parent snapshot's summary, for the `total-*` keys; omit for the table's first snapshot. */
  readonly previous?: Summary;
  /** Caller properties (e.g. `engine-name`, or Floe's committed offsets). They may not override computed keys. */
  readonly properties?: Readonly<Record<string, string>>;
}

/** Standard summary keys (spec Appendix F) maintained as running totals. */
const TOTALS = [
  ['total-data-files', 'added-data-files', 'deleted-data-files'],
  ['total-delete-files', 'added-delete-files', 'removed-delete-files'],
  ['total-records', 'added-records', 'deleted-records'],
  ['total-files-size', 'added-files-size', 'removed-files-size'],
  ['total-position-deletes', 'added-position-deletes', 'removed-position-deletes'],
  ['total-equality-deletes', 'added-equality-deletes', 'removed-equality-deletes'],
] as const;

/**
 * Computes a snapshot summary from the files a commit added and removed: the spec's `added-*`,
 * `deleted-*`/`removed-*` keys (written only when non-zero, like the reference implementation),
 * `changed-partition-count`, and `total-*` carried from the previous summary (written when the previous
 * summary has them, or for the first snapshot).
 */
export function computeSummary(input: SummaryInput): Summary {
  const counts = new Map<string, number>();
  const bump = (k: string, n: number): void => {
    counts.set(k, (counts.get(k) ?? 0) + n);
  };
  const partitions = new Set<string>();
  const tally = (files: readonly FileChange[], added: boolean): void => {
    for (const f of files) {
      if (f.partitionKey !== undefined) partitions.add(f.partitionKey);
      bump(added ? 'added-files-size' : 'removed-files-size', f.fileSizeInBytes);
      if (f.content === 'data') {
        bump(added ? 'added-data-files' : 'deleted-data-files', 1);
        bump(added ? 'added-records' : 'deleted-records', f.recordCount);
        continue;
      }
      bump(added ? 'added-delete-files' : 'removed-delete-files', 1);
      if (f.content === 'position-deletes') {
        if (f.isDeletionVector) bump(added ? 'added-dvs' : 'removed-dvs', 1);
        else bump(added ? 'added-position-delete-files' : 'removed-position-delete-files', 1);
        bump(added ? 'added-position-deletes' : 'removed-position-deletes', f.recordCount);
      } else {
        bump(added ? 'added-equality-delete-files' : 'removed-equality-delete-files', 1);
        bump(added ? 'added-equality-deletes' : 'removed-equality-deletes', f.recordCount);
      }
    }
  };
  tally(input.added ?? [], true);
  tally(input.removed ?? [], false);

  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.properties ?? {})) out[k] = v;
  const set = (k: string, v: number): void => {
    if (k in out) throw new IcebergError('INVALID_SNAPSHOT', `Summary property '${k}' is computed from the commit's files; do not pass it`);
    out[k] = String(v);
  };
  if ('operation' in out) throw new IcebergError('INVALID_SNAPSHOT', "Summary property 'operation' is set from SummaryInput.operation");
  for (const [k, v] of counts) if (v !== 0) set(k, v);
  if (partitions.size > 0) set('changed-partition-count', partitions.size);
  for (const [total, plus, minus] of TOTALS) {
    const prev = input.previous === undefined ? '0' : input.previous[total];
    if (prev === undefined) continue;
    const base = Number(prev);
    if (!Number.isSafeInteger(base)) continue;
    set(total, base + (counts.get(plus) ?? 0) - (counts.get(minus) ?? 0));
  }
  return { operation: input.operation, ...out } as Summary;
}
