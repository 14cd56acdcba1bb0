/**
 * A topic table's upsert table, as its topic table drives it (IcebergTopic owns one of these): opened or
 * dropped as `iceberg.upsert.*` changes, synced after every operation of the topic's chain, maintained with
 * it, and consulted before the topic table deletes a data file (the upsert table may still name it; then
 * the file is deleted once a sync has dropped it from there).
 */
import type { Catalog, TableIdentifier } from '../../../iceberg/catalog/catalog.js';
import type { DataFile } from '../../../iceberg/data-file.js';
import { LatestTable, type LatestSource, type LatestSyncResult, type UpsertSettings } from './latest-table.js';

export interface UpsertReport {
  /** A sync landed (or found nothing to do: not called then). */
  synced?(table: TableIdentifier, result: LatestSyncResult, seconds: number): void;
  /** A sync failed; the next operation of the topic retries it. */
  failed?(table: TableIdentifier, err: unknown): void;
}

export class TopicUpsert {
  private latest: LatestTable | undefined;
  private settings = '';
  /** Objects the topic table dropped while the upsert table still named them. */
  private held: string[] = [];

  constructor(
    private readonly source: LatestSource,
    private readonly of: TableIdentifier,
    /** Deletes an object of the topic table (unless a Kafka fetch holds it). */
    private readonly deleteObject: (path: string) => Promise<void>,
    private readonly report: UpsertReport = {},
  ) {}

  /** Opens the upsert table (undefined settings: drops it, so it cannot outlive the files it names). Run it in the topic's chain. */
  async configure(settings: UpsertSettings | undefined, catalog: Catalog): Promise<void> {
    const key = settings === undefined ? '' : JSON.stringify(settings);
    if (key === this.settings && (settings === undefined) === (this.latest === undefined)) return;
    if (settings === undefined) {
      this.latest = undefined;
      this.settings = '';
      await LatestTable.drop(catalog, this.of, this.source.topic, this.source.io);
      await this.release();
      return;
    }
    if (this.latest !== undefined) {
      // Other semantics: the table is rebuilt from the topic table under the new settings.
      await LatestTable.drop(catalog, this.of, this.source.topic, this.source.io);
    }
    this.latest = undefined;
    this.latest = await LatestTable.open({ catalog, of: this.of, source: this.source, settings });
    this.settings = key;
  }

  /** Data files the topic table just committed (their entries spare the next sync a read of its manifests). */
  learn(files: readonly DataFile[]): void {
    this.latest?.learn(files);
  }

  holds(path: string): boolean {
    return this.latest?.holds(path) ?? false;
  }

  /** The topic table wanted to delete `path`; it is deleted once the upsert table no longer names it. */
  defer(path: string): void {
    this.held.push(path);
  }

  /** Brings the upsert table up to the topic table; a failure is reported and retried after the next operation. */
  async sync(): Promise<void> {
    const latest = this.latest;
    if (latest === undefined) return;
    const started = performance.now();
    try {
      const r = await latest.sync();
      if (r.committed) this.report.synced?.(latest.id, r, (performance.now() - started) / 1000);
    } catch (err) {
      this.report.failed?.(latest.id, err);
    }
    await this.release();
  }

  /** Snapshot expiry of the upsert table (after the topic table's own maintenance). */
  async maintain(): Promise<void> {
    await this.latest?.maintain();
  }

  async drop(catalog: Catalog): Promise<void> {
    this.latest = undefined;
    this.settings = '';
    await LatestTable.drop(catalog, this.of, this.source.topic, this.source.io);
  }

  private async release(): Promise<void> {
    const still: string[] = [];
    for (const f of this.held) {
      if (this.holds(f)) still.push(f);
      else await this.deleteObject(f).catch(() => undefined);
    }
    this.held = still;
  }
}
