/**
 * One topic's schema-mode state beside its table (iceberg-topic.ts holds one): the value and key typing
 * handed to each conversion, the table's typed layout (its schema goes into the commit that first needs it), and the
 * dead-letter table `<topic>~dlq` (written at copy time, committed just before the topic table's commit of
 * the same segments). Absent settings mean `key_value` with binary keys: nothing here is used.
 */
import type { Catalog, TableIdentifier } from '../../iceberg/catalog/catalog.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import type { Schema } from '../../iceberg/schema.js';
import type { SnapshotUpdate } from '../../iceberg/transaction.js';
import type { LogSegmentData, TieringObserver } from './api.js';
import { DeadLetterTable, type PendingDeadLetters } from './dead-letter-table.js';
import type { ConvertedSegment } from './segment-codec.js';
import { RecordTypers, type TopicTypingSettings } from '../typed/record-typers.js';
import { TypedLayout } from '../typed/table-layout.js';
import type { RegistryReader } from '../typed/value-typer.js';

export interface TypingReport {
  readonly observer?: TieringObserver | undefined;
  readonly onWarn?: ((message: string, context: Record<string, unknown>) => void) | undefined;
}

export class TopicTyping {
  /** The value and key typing (undefined in `key_value` mode with binary keys). */
  typers: RecordTypers | undefined;
  private layout: TypedLayout | undefined;
  private deadLetterTable: Promise<DeadLetterTable> | undefined;
  private readonly pending = new Map<string, PendingDeadLetters>();
  private catalog: Catalog | undefined;
  private report: TypingReport = {};

  constructor(
    private readonly topic: string,
    private readonly id: TableIdentifier,
    private readonly io: FileIO,
  ) {}

  /**
   * Sets how values and keys become rows: a schema mode types them with the registry's schemas (the layout
   * starts from the table's current schema and evolves as new schema versions arrive); undefined is
   * `key_value` with binary keys. Takes effect for segments converted from now on.
   */
  configure(settings: TopicTypingSettings | undefined, registry: () => RegistryReader | null | undefined, catalog: Catalog, table: { schema: Schema; lastColumnId: number }, report: TypingReport): void {
    if (settings === undefined || (settings.value === undefined && settings.key === undefined)) {
      this.typers = undefined;
      return;
    }
    if (this.typers && JSON.stringify(this.typers.settings) === JSON.stringify(settings)) return;
    this.layout ??= TypedLayout.of(table.schema, table.lastColumnId);
    this.typers = new RecordTypers(this.layout, settings, registry, (r) =>
      report.onWarn?.(`records whose ${r.part} has schema id ${r.schemaId} cannot be typed into the table; they go to the dead-letter table (${settings.invalidRecordAction}) and Kafka consumers still read them`, {
        topic: this.topic,
        part: r.part,
        schemaId: r.schemaId,
        subjects: r.versions.map((v) => `${v.subject} version ${v.version}`),
        reason: r.reason,
        detail: r.message,
      }),
    );
    this.report = report;
    this.catalog = catalog;
  }

  private deadLetters(): Promise<DeadLetterTable> {
    this.deadLetterTable ??= DeadLetterTable.open({ catalog: this.catalog!, io: this.io, namespace: this.id.namespace, topic: this.topic, tableName: this.id.name }).catch((err: unknown) => {
      this.deadLetterTable = undefined;
      throw err;
    });
    return this.deadLetterTable;
  }

  /** After a segment's conversion: the observer's event, and its dead letters written (not committed). */
  async converted(segment: LogSegmentData, converted: ConvertedSegment): Promise<void> {
    if (!converted.typed) return;
    const c = converted.typed.counts;
    const byReason: Record<string, number> = {};
    for (const l of converted.typed.deadLetters) byReason[l.reason] = (byReason[l.reason] ?? 0) + 1;
    if (c.dead > 0 && converted.typed.deadLetters.length === 0) byReason['DROPPED'] = c.dead;
    try {
      this.report.observer?.valuesTyped?.({ topic: this.topic, exact: c.exact, rawKept: c.rawKept, deadLetters: byReason, action: this.typers?.invalidRecordAction ?? 'dlq_table' });
    } catch {
      // Observers must not stop tiering.
    }
    if (converted.typed.deadLetters.length > 0) {
      const dlq = await this.deadLetters();
      this.pending.set(key(segment.partition, segment.baseOffset), await dlq.write(segment.partition, segment.baseOffset, segment.lastOffset, converted.typed.deadLetters));
    }
  }

  /**
   * Before the topic table's commit of these segments: commits their dead letters (the dead-letter table
   * skips what it holds, so a retry after a crash adds nothing twice).
   */
  async commitDeadLetters(segments: readonly { partition: number; baseOffset: number }[]): Promise<void> {
    const letters = segments.map((s) => this.pending.get(key(s.partition, s.baseOffset))).filter((x) => x !== undefined);
    if (letters.length > 0) await (await this.deadLetters()).commit(letters);
  }

  /** The segments' pending dead letters are no longer needed (committed, or already in the table). */
  forget(partition: number, baseOffset: number): void {
    this.pending.delete(key(partition, baseOffset));
  }

  /**
   * Puts the typed layout's schema into `update` when the table does not have it yet (files converted since
   * the last commit may use new columns); returns the layout version it set, for `landed`.
   */
  withLayout(update: SnapshotUpdate): number | undefined {
    const layout = this.layout;
    if (layout === undefined || !layout.changed) return undefined;
    update.setSchema(layout.schema(), layout.lastColumnId);
    return layout.version;
  }

  /** A commit carrying layout version `version` (from withLayout) landed. */
  landed(version: number | undefined): void {
    if (version !== undefined) this.layout?.landed(version);
  }
}

function key(partition: number, baseOffset: number): string {
  return `${partition}:${baseOffset}`;
}
