/**
 * Manifest merging during snapshot production, the way Iceberg's merge-append keeps a long-lived table's
 * manifest list short. Table properties (Iceberg's names and defaults):
 *
 *   commit.manifest-merge.enabled        true
 *   commit.manifest.min-count-to-merge   100
 *   commit.manifest.target-size-bytes    8 MiB
 *
 * The manifests of the new snapshot are grouped by partition spec (newest spec first) and content (data,
 * then deletes). Each group is bin-packed from its end into consecutive runs of at most the target size
 * (so the under-filled bin is the newest one, merged next time) and every bin of two or more manifests is
 * rewritten as one manifest, except the bin holding the group's first manifest (the commit's new files), which
 * is merged only once it holds `min-count-to-merge` manifests.
 *
 * In a merged manifest, entries keep their snapshot id and both sequence numbers exactly (EXISTING), so
 * position and equality deletes apply to the same rows as before; ADDED entries of the committing snapshot
 * stay ADDED (and inherit); DELETED entries stay only when the committing snapshot deleted them. Manifests of
 * earlier snapshots with no live file left are dropped from the list.
 */
import { randomUUID } from 'node:crypto';
import type { FileIO } from './io/file-io.js';
import { ManifestEntryStatus, type ManifestEntry } from './data-file.js';
import { writeManifestFile } from './manifest.js';
import { ManifestContent, type ManifestFile } from './manifest-list.js';
import type { PartitionSpec } from './partition-spec.js';
import type { Schema } from './schema.js';

/** Table property: whether commits merge manifests. */
export const MANIFEST_MERGE_ENABLED = 'commit.manifest-merge.enabled';
/** Table property: manifests a bin holding the commit's new manifest needs before it is merged. */
export const MANIFEST_MIN_MERGE_COUNT = 'commit.manifest.min-count-to-merge';
/** Table property: the size merged manifests are packed up to. */
export const MANIFEST_TARGET_SIZE_BYTES = 'commit.manifest.target-size-bytes';

export interface ManifestMergeSettings {
  readonly enabled: boolean;
  readonly minCountToMerge: number;
  readonly targetSizeBytes: number;
}

export const MANIFEST_MERGE_DEFAULTS: ManifestMergeSettings = Object.freeze({ enabled: true, minCountToMerge: 100, targetSizeBytes: 8 * 1024 * 1024 });

function intProperty(properties: Readonly<Record<string, string>>, key: string, fallback: number, min: number): number {
  const raw = properties[key];
  if (raw === undefined) return fallback;
  const n = Number(raw.trim());
  // A malformed property must not stop every commit of the table: the default applies.
  return Number.isSafeInteger(n) && n >= min ? n : fallback;
}

/** The merge settings of a table, from its properties (malformed values fall back to the defaults). */
export function manifestMergeSettings(properties: Readonly<Record<string, string>>): ManifestMergeSettings {
  const enabled = (properties[MANIFEST_MERGE_ENABLED] ?? 'true').trim().toLowerCase() !== 'false';
  return {
    enabled,
    minCountToMerge: intProperty(properties, MANIFEST_MIN_MERGE_COUNT, MANIFEST_MERGE_DEFAULTS.minCountToMerge, 0),
    targetSizeBytes: intProperty(properties, MANIFEST_TARGET_SIZE_BYTES, MANIFEST_MERGE_DEFAULTS.targetSizeBytes, 1),
  };
}

/**
 * Packs `items` into consecutive runs of total weight at most `target`, filling from the end (a lookback of
 * one bin): the first run is the one left under-filled. An item heavier than the target gets a run alone.
 * Order is preserved.
 */
export function packEnd<T>(items: readonly T[], weight: (item: T) => number, target: number): T[][] {
  const bins: T[][] = [];
  let bin: T[] = [];
  let binWeight = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as T;
    const w = weight(item);
    if (bin.length > 0 && binWeight + w > target) {
      bins.push(bin.reverse());
      bin = [];
      binWeight = 0;
    }
    bin.push(item);
    binWeight += w;
  }
  if (bin.length > 0) bins.push(bin.reverse());
  return bins.reverse();
}

export interface MergeManifestsInput {
  /** The manifests the new snapshot would list, new manifests first (data and delete manifests mixed). */
  readonly manifests: readonly ManifestFile[];
  /** The committing snapshot. */
  readonly snapshotId: bigint;
  readonly formatVersion: number;
  /** The table's current schema (merged manifests are written with it). */
  readonly schema: Schema;
  /** The table's partition specs, by id. */
  readonly specs: readonly PartitionSpec[];
  readonly settings: ManifestMergeSettings;
  /** Entries of a manifest with inherited values filled in (see `inheritFromManifestFile`). */
  readonly readEntries: (manifest: ManifestFile) => Promise<ManifestEntry[]>;
  /** Where to write merged manifests. */
  readonly io: FileIO;
  /** Folder of new manifests, `<table>/metadata`. */
  readonly metadataDir: string;
}

export interface MergeManifestsResult {
  /** The manifests to list, in order. */
  readonly manifests: ManifestFile[];
  /** Merged manifests written by this call (attempt files: delete them if the commit fails). */
  readonly written: string[];
  /** Input manifests that the result no longer lists (merged into another, or without live files). */
  readonly replaced: ManifestFile[];
}

const isLive = (m: ManifestFile): boolean => m.added_files_count > 0 || m.existing_files_count > 0;

/** Merges the manifests of a snapshot being produced; see the module comment for the rules. */
export async function mergeManifests(input: MergeManifestsInput): Promise<MergeManifestsResult> {
  const { settings, snapshotId } = input;
  const replaced: ManifestFile[] = [];
  // Manifests of earlier snapshots with no live file (only DELETED entries) are dropped from the list.
  const kept = input.manifests.filter((m) => {
    const drop = !isLive(m) && m.added_snapshot_id !== snapshotId;
    if (drop) replaced.push(m);
    return !drop;
  });
  if (!settings.enabled || kept.length === 0) return { manifests: kept, written: [], replaced };

  const written: string[] = [];
  const out: ManifestFile[] = [];
  for (const content of [ManifestContent.DATA, ManifestContent.DELETES]) {
    const ofContent = kept.filter((m) => m.content === content);
    const first = ofContent[0];
    if (first === undefined) continue;
    const specIds = [...new Set(ofContent.map((m) => m.partition_spec_id))].sort((a, b) => b - a);
    for (const specId of specIds) {
      const group = ofContent.filter((m) => m.partition_spec_id === specId);
      const spec = input.specs.find((s) => s['spec-id'] === specId);
      for (const bin of packEnd(group, (m) => Number(m.manifest_length), settings.targetSizeBytes)) {
        const tooFew = bin.includes(first) && bin.length < settings.minCountToMerge;
        if (bin.length === 1 || tooFew || spec === undefined) {
          out.push(...bin);
          continue;
        }
        const merged = await writeMerged(input, bin, spec, content);
        if (merged === undefined) {
          out.push(...bin);
          continue;
        }
        written.push(merged.manifest_path);
        replaced.push(...bin);
        out.push(merged);
      }
    }
  }
  return { manifests: out, written, replaced };
}

async function writeMerged(input: MergeManifestsInput, bin: readonly ManifestFile[], spec: PartitionSpec, content: ManifestContent): Promise<ManifestFile | undefined> {
  const entries: ManifestEntry[] = [];
  for (const m of bin) {
    for (const e of await input.readEntries(m)) {
      const ours = e.snapshot_id === input.snapshotId;
      if (e.status === ManifestEntryStatus.DELETED) {
        if (ours) entries.push(e);
      } else if (e.status === ManifestEntryStatus.ADDED && ours) {
        entries.push(e);
      } else {
        // Carried as EXISTING with the exact sequence numbers it had; without them (a v1-era entry) the
        // bin is left as it is rather than guessing.
        if (e.sequence_number === null || e.file_sequence_number === null) return undefined;
        entries.push({ ...e, status: ManifestEntryStatus.EXISTING });
      }
    }
  }
  const location = `${input.metadataDir}/${randomUUID()}-m-merged.avro`;
  let written: { bytes: Buffer; manifestFile: ManifestFile };
  try {
    written = writeManifestFile(
      entries,
      { formatVersion: input.formatVersion, schema: input.schema, partitionSpec: spec, content: content === ManifestContent.DATA ? 'data' : 'deletes' },
      { manifest_path: location, added_snapshot_id: input.snapshotId },
    );
  } catch {
    // The current schema cannot describe this spec's partition tuple (a source column was dropped): leave
    // these manifests unmerged; they stay valid as they are.
    return undefined;
  }
  await input.io.put(location, written.bytes);
  return written.manifestFile;
}
