/**
 * Which row holds the current state of each key of one Kafka partition: the index behind the `_latest`
 * upsert table (latest-table.ts). Rows are applied in offset order; a row wins over the key's current row
 * when its order value is at least the current one's (Kafka offset order by default, so the last record
 * wins), and a row that loses is superseded at once (a late event). A winning delete (a tombstone, or a CDC
 * delete) leaves the key without a live row. Records without a key have no identity and are never live.
 *
 * `apply` says which rows stop being live: the key's previous live row, or the new row itself.
 */
import type { KeyedRow } from './segment-rows.js';
import type { RowReading } from './row-reading.js';

/** The current row of a key. */
export interface CurrentRow {
  readonly offset: number;
  readonly file: string;
  readonly row: number;
  /** The key's latest event deletes it: no live row (the entry stays for ordering and for Kafka's view). */
  readonly deleted: boolean;
  /** Order value of the row (the offset unless an ordering field is configured). */
  readonly order: number;
}

/** A row that left (or never reached) the live set. */
export interface DeadRow {
  readonly file: string;
  readonly row: number;
}

const EMPTY: ReadonlySet<number> = new Set();

export class LatestKeys {
  private readonly current = new Map<string, CurrentRow>();
  /** Live rows by data file (what a deletion vector leaves visible). */
  private readonly byFile = new Map<string, Set<number>>();

  constructor(private readonly reading: RowReading) {}

  get size(): number {
    return this.current.size;
  }

  /** Applies one row (offset order); calls `dead` for every row that is not live after it. */
  apply(r: KeyedRow, dead: (row: DeadRow) => void): void {
    const ev = this.reading(r);
    if (ev.id === null) {
      dead(r);
      return;
    }
    const before = this.current.get(ev.id);
    if (before !== undefined && ev.order < before.order) {
      dead(r); // a late event: the key's current row is newer
      return;
    }
    if (before !== undefined && !before.deleted) {
      this.byFile.get(before.file)?.delete(before.row);
      dead(before);
    }
    // A record without an order value (a tombstone) keeps the key's order: a late event stays late.
    const order = Number.isNaN(ev.order) && before !== undefined ? before.order : ev.order;
    this.current.set(ev.id, { offset: r.offset, file: r.file, row: r.row, deleted: ev.deleted, order });
    if (ev.deleted) {
      dead(r);
      return;
    }
    let rows = this.byFile.get(r.file);
    if (rows === undefined) this.byFile.set(r.file, (rows = new Set()));
    rows.add(r.row);
  }

  /** The live rows of one data file. */
  liveIn(file: string): ReadonlySet<number> {
    return this.byFile.get(file) ?? EMPTY;
  }

  /** Live rows (the table's rows), by data file: row positions ascending. */
  liveRows(): Map<string, number[]> {
    const out = new Map<string, number[]>();
    for (const [file, rows] of this.byFile) if (rows.size > 0) out.set(file, [...rows].sort((a, b) => a - b));
    return out;
  }
}
