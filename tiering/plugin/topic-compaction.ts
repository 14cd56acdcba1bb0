/**
 * Compaction of one topic table's partitions (see IcebergTopic.compact): plan (compaction-plan.ts), rebuild
 * each group into one merged segment outside the topic's operation chain (compaction.ts), then swap inputs
 * for outputs in ONE 'replace' commit through the chain, whose summary names the partition's new history.
 * It reaches the table only through `CompactionHost`, which IcebergTopic builds over its internals.
 */
import { tmpdir } from 'node:os';
import type { FileIO } from '../../iceberg/io/file-io.js';
import type { Table } from '../../iceberg/table.js';
import type { SnapshotUpdate } from '../../iceberg/transaction.js';
import { IcebergError } from '../../iceberg/types.js';
import { decodeSegmentIndex } from '../offset-index/format.js';
import { resolveLocation } from '../offset-index/location.js';
import { TieringError } from './api.js';
import { compactionSettings, planCompaction, type CompactionOverrides } from './compaction-plan.js';
import { rewriteGroup, type RewrittenGroup } from './compaction.js';
import { crashPoint } from './crash-points.js';
import type { FileLeases } from './file-leases.js';
import type { PartitionManifest, SegmentEntry } from './partition-manifest.js';
import type { SegmentCodec } from './segment-codec.js';
import type { RecordTypers } from '../typed/record-typers.js';
import { schemaHolds } from '../typed/table-layout.js';
import { TOPIC_SCHEMA } from '../convert/schema.js';
import { sameSchemaStructure } from '../../iceberg/schema.js';

export interface CompactOptions {
  /** Topic-level settings over the table's `write.target-file-size-bytes` and Iceberg's defaults. */
  readonly overrides?: CompactionOverrides;
  /** Where rebuilt segments are written before conversion; default the OS temporary directory. */
  readonly tmpDir?: string;
  /** Compaction's rate limit: resolves when `bytes` more may be read. */
  readonly throttle?: (bytes: number) => Promise<void>;
  /**
   * Rebuild instead of compact (the runbook's `floe table rebuild`): every segment holding offsets at or
   * after this one is converted again on its own from its stored Kafka bytes, with the topic's typing as it
   * is now (a schema registered or fixed since), and swapped in by the same 'replace' commit. Segments the
   * log start cuts through or with hidden rows (position deletes) are left as they are.
   */
  readonly rebuildFrom?: number;
}

export type CompactionOutcome =
  | { readonly status: 'nothing-to-do' }
  | { readonly status: 'skipped'; readonly reason: string }
  | { readonly status: 'gave-up'; readonly reason: string }
  | { readonly status: 'compacted'; readonly inputSegments: number; readonly inputFiles: number; readonly outputSegments: number; readonly outputFiles: number; readonly bytesRead: number; readonly rewriteMs: number; readonly commitMs: number };

/** Attempts of a compaction commit (a conflict reloads the table and rebuilds the history change). */
const COMPACTION_COMMIT_ATTEMPTS = 5;

/** What compaction needs of its topic table (IcebergTopic's internals). */
export interface CompactionHost {
  readonly topic: string;
  readonly io: FileIO;
  readonly codec: SegmentCodec;
  readonly leases: FileLeases;
  /** The table as last loaded or committed. */
  table(): Table;
  manifest(partition: number): PartitionManifest;
  /** Runs `fn` in the topic's chain of table-changing operations. */
  serial<T>(fn: () => Promise<T>): Promise<T>;
  /** Commits `update` with `next` as the partition's history, validated against the base; reloads on failure. */
  commitHistory(update: SnapshotUpdate, next: PartitionManifest): Promise<void>;
  reload(): Promise<void>;
  /** Whether the table still has only the partition spec Floe created it with. */
  specIsOurs(): boolean;
  /** Whether the topic is going away (deleted): nothing may be committed or left behind any more. */
  retired(): boolean;
  /** The topic's value and key typing in schema modes (rewritten files are typed the same way). */
  typed(): RecordTypers | undefined;
}

export class TopicCompaction {
  /** Sizes of committed data files (from the commit, or their offset index after a restart): the plan uses them. */
  readonly fileSizes = new Map<string, number>();

  constructor(private readonly host: CompactionHost) {}

  /**
   * Compacts one partition: plans runs of small segments (compaction-plan.ts), rebuilds each group into one
   * merged segment (compaction.ts; outside the operation chain, so tiering commits, retention and fetches
   * go on meanwhile), then swaps inputs for outputs in ONE 'replace' commit through the chain, whose summary
   * names the new history. Fetches and table readers see either the old or the new history, never a gap or
   * a duplicate. The commit is validated against its base (inputs live, history unchanged) and rebuilt on
   * the reloaded table after a conflict; when the inputs are gone (retention, DeleteRecords) it gives up and
   * deletes only its own unreferenced outputs. Inputs are never deleted here (snapshot expiry does).
   */
  async compact(partition: number, options: CompactOptions = {}): Promise<CompactionOutcome> {
    const foreign = this.foreignLayout();
    if (foreign !== undefined) return { status: 'skipped', reason: foreign };
    const settings = compactionSettings(this.host.table().metadata.properties, options.overrides);
    const m = this.host.manifest(partition);
    await this.loadFileSizes(m);
    const from = options.rebuildFrom;
    const groups =
      from === undefined
        ? planCompaction(m, (f) => this.fileSizes.get(f) ?? Infinity, settings)
        : m.segments
            .filter((s) => s.lastOffset >= from && s.baseOffset >= m.logStartOffset && (s.deleteFiles ?? []).length === 0)
            .map((s) => ({ segments: [s], dataBytes: s.dataFiles.reduce((n, f) => n + (this.fileSizes.get(f) ?? 0), 0), logBytes: s.sizeInBytes }));
    if (groups.length === 0) return { status: 'nothing-to-do' };
    const inputs = groups.flatMap((g) => g.segments);
    const release = this.host.leases.acquire(inputs.flatMap((s) => [...s.dataFiles, ...s.indexFiles]));
    const rewritten: RewrittenGroup[] = [];
    let bytesRead = 0;
    const started = performance.now();
    try {
      const ctx = {
        io: this.host.io,
        codec: this.host.codec,
        tableLocation: this.host.table().location,
        schema: this.host.table().schema(),
        specId: this.host.table().specId(),
        topic: this.host.topic,
        partition,
        tmpDir: options.tmpDir ?? tmpdir(),
        typed: this.host.typed(),
        // A rebuilt segment may cover the offsets of a compacted one: a tag of its own keeps the names apart.
        ...(from !== undefined ? { nameTag: `r${Date.now().toString(36)}` } : {}),
        throttle: async (bytes: number) => {
          bytesRead += bytes;
          await options.throttle?.(bytes);
        },
      };
      for (const g of groups) rewritten.push(await rewriteGroup(ctx, g));
    } catch (err) {
      // Retention or DeleteRecords removed inputs (and deleted their objects) while they were being read.
      const now = this.host.manifest(partition).segments;
      const gone = inputs.some((s) => !now.some((n) => JSON.stringify(n) === JSON.stringify(s)));
      if (!gone) throw err;
      await this.deleteUnreferenced(partition, rewritten);
      return { status: 'gave-up', reason: `${this.host.topic}-${partition}: the segments to compact left the partition's history while they were read (retention or DeleteRecords); nothing changed` };
    } finally {
      release();
    }
    if (this.host.retired()) {
      await this.deleteUnreferenced(partition, rewritten);
      return { status: 'gave-up', reason: `${this.host.topic}: the topic is being deleted` };
    }
    const rewriteMs = performance.now() - started;
    const outcome = await this.host.serial(() => this.commitCompaction(partition, rewritten));
    // commitMs includes waiting for the operation chain (a tiering commit running before it).
    return outcome.status === 'compacted' ? { ...outcome, bytesRead, rewriteMs, commitMs: performance.now() - started - rewriteMs } : outcome;
  }

  private async commitCompaction(partition: number, rewritten: readonly RewrittenGroup[]): Promise<CompactionOutcome> {
    const same = (a: SegmentEntry | undefined, b: SegmentEntry): boolean => a !== undefined && JSON.stringify(a) === JSON.stringify(b);
    let lastError: unknown;
    for (let attempt = 0; attempt < COMPACTION_COMMIT_ATTEMPTS; attempt++) {
      const m = this.host.manifest(partition);
      const segments = [...m.segments];
      const live: RewrittenGroup[] = [];
      for (const g of rewritten) {
        const at = segments.findIndex((s) => s.baseOffset === g.inputs[0]?.baseOffset);
        if (at >= 0 && g.inputs.every((s, i) => same(segments[at + i], s))) {
          segments.splice(at, g.inputs.length, g.entry);
          live.push(g);
        }
      }
      const landed = rewritten.filter((g) => m.segments.some((s) => same(s, g.entry)));
      // Outputs of groups whose inputs left the history (and that did not land): never referenced, deleted.
      const stale = rewritten.filter((g) => !live.includes(g) && !landed.includes(g));
      await this.deleteUnreferenced(partition, stale);
      if (live.length === 0) {
        if (landed.length > 0) return this.compacted(landed);
        return { status: 'gave-up', reason: `${this.host.topic}-${partition}: the segments to compact left the partition's history before the commit (retention or DeleteRecords); nothing changed` };
      }
      const update = this.host.table().newRewrite();
      for (const g of live) {
        for (const s of g.inputs) for (const f of s.dataFiles) update.deleteFile(f);
        for (const f of g.dataFiles) update.addFile(f);
      }
      // Groups of control batches only (no data files) change only the history.
      if (update.isEmpty) update.allowNoFileChanges();
      crashPoint('before-compaction-commit');
      try {
        await this.host.commitHistory(update, { ...m, segments });
      } catch (err) {
        // commitHistory reloaded the table: the next round rebuilds the change on it, or finds it landed.
        const conflict = (err instanceof TieringError && err.code === 'HISTORY_CHANGED') || (err instanceof IcebergError && (err.code === 'INVALID_UPDATE' || err.code === 'COMMIT_CONFLICT'));
        lastError = err;
        if (!conflict) await this.host.reload().catch(() => undefined);
        continue;
      }
      crashPoint('after-compaction-commit');
      for (const g of live) for (const f of g.dataFiles) this.fileSizes.set(f.file_path, Number(f.file_size_in_bytes));
      for (const g of live) for (const s of g.inputs) for (const f of s.dataFiles) this.fileSizes.delete(f);
      return this.compacted([...live, ...landed]);
    }
    throw lastError;
  }

  /**
   * Deletes the outputs of abandoned groups, except what the partition's history references (another process
   * may have compacted the same group: the names are the same by design).
   */
  private async deleteUnreferenced(partition: number, groups: readonly RewrittenGroup[]): Promise<void> {
    const live = new Set(this.host.manifest(partition).segments.flatMap((s) => [...s.dataFiles, ...s.indexFiles]));
    for (const g of groups) for (const f of [...g.entry.dataFiles, ...g.entry.indexFiles]) if (!live.has(f)) await this.host.io.delete(f).catch(() => undefined);
  }

  private compacted(groups: readonly RewrittenGroup[]): CompactionOutcome {
    return {
      status: 'compacted',
      inputSegments: groups.reduce((n, g) => n + g.inputs.length, 0),
      inputFiles: groups.reduce((n, g) => n + g.inputs.reduce((k, s) => k + s.dataFiles.length, 0), 0),
      outputSegments: groups.length,
      outputFiles: groups.reduce((n, g) => n + g.dataFiles.length, 0),
      bytesRead: 0,
      rewriteMs: 0,
      commitMs: 0,
    };
  }

  /** Sizes of the partition's data files not known yet, from their offset indexes (after a restart). */
  private async loadFileSizes(m: PartitionManifest): Promise<void> {
    for (const s of m.segments) {
      if (s.dataFiles.every((f) => this.fileSizes.has(f))) continue;
      for (const loc of s.indexFiles) {
        const index = decodeSegmentIndex(await this.host.io.get(loc));
        if (index.dataFile !== null) this.fileSizes.set(resolveLocation(this.host.table().location, index.dataFile.path), index.dataFile.size);
      }
    }
  }

  /**
   * Why compaction leaves this table alone, or undefined: another engine evolved its partition spec or
   * schema (Floe rewrites only files of the layout it writes, with every column the Kafka path needs).
   */
  private foreignLayout(): string | undefined {
    if (!this.host.specIsOurs()) return `${this.host.topic}: the table's partition spec was changed by another engine; Floe does not compact it (its Kafka reads still work)`;
    // Floe evolves a table's schema only for typed columns: a field its own layout does not hold is another
    // engine's. A key_value topic whose table holds typed columns (the mode was switched back) is left alone:
    // rewriting its typed rows as key_value rows would empty their typed columns for table readers.
    const current = this.host.table().schema();
    const typer = this.host.typed();
    if (typer === undefined) {
      if (!sameSchemaStructure(current, { ...TOPIC_SCHEMA, 'schema-id': current['schema-id'] })) {
        return `${this.host.topic}: the table's schema is not Floe's key_value schema (another engine changed it, or the topic left a schema mode); Floe does not compact it (its Kafka reads still work)`;
      }
    } else if (!schemaHolds(typer.layout.schema(), current)) {
      return `${this.host.topic}: the table's schema has fields Floe's typed layout does not (another engine changed it); Floe does not compact it (its Kafka reads still work)`;
    }
    return undefined;
  }
}
