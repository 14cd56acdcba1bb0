/**
 * A Debezium-shaped change stream for the upsert table tests, and the table it should produce, computed
 * here from the events alone (not with Floe's code): per key, fold the events in produce order; an event
 * applies unless its `ts_ms` is lower than the key's current one (a late event); `op: d` and tombstones
 * remove the key. Keys are Debezium's JSON keys (`{"id":N}`); some values come wrapped in JsonConverter's
 * `{schema, payload}` envelope, some bare; a few records have no key (heartbeats) and never make a row.
 */
import { prng } from '../protocol/helpers/random-values.js';

/**
 * The topic configs a CdcStream's topic takes: an upsert table of Debezium events ordered by ts_ms, plus
 * `extra` (segment size, commit interval, ...), as CreateTopics/AlterConfigs entries.
 */
export function cdcTopicConfigs(extra: Readonly<Record<string, string>> = {}): { name: string; value: string }[] {
  const all = { 'iceberg.upsert.enabled': 'true', 'iceberg.upsert.cdc.format': 'debezium', 'iceberg.upsert.order.field': 'ts_ms', ...extra };
  return Object.entries(all).map(([name, value]) => ({ name, value }));
}

export interface CdcEvent {
  readonly key: string | null;
  /** null for a tombstone. */
  readonly value: string | null;
}

interface State {
  ts: number;
  value: string | null;
}

export class CdcStream {
  private readonly rand: () => number;
  /** What the source database holds now, per id (ts_ms of its last change). */
  private readonly db = new Map<number, { ts: number; version: number } | undefined>();
  private clock = 1_000_000;
  /** The expected table, folded from every event handed out. */
  private readonly table = new Map<string, State>();

  constructor(seed: number, private readonly ids: number) {
    this.rand = prng(seed);
  }

  /** The next `n` events: creates, updates, deletes with their tombstone, late events, heartbeats. */
  events(n: number): CdcEvent[] {
    const out: CdcEvent[] = [];
    while (out.length < n) {
      const id = Math.floor(this.rand() * this.ids);
      const key = JSON.stringify({ id });
      const row = this.db.get(id);
      const r = this.rand();
      this.clock += 10;
      if (r < 0.04) {
        out.push(this.fold({ key: null, value: JSON.stringify({ heartbeat: this.clock }) }));
      } else if (row === undefined) {
        this.db.set(id, { ts: this.clock, version: 1 });
        out.push(this.fold({ key, value: this.envelope(id, r < 0.2 ? 'r' : 'c', 1, this.clock) }));
      } else if (r < 0.16) {
        this.db.set(id, undefined);
        out.push(this.fold({ key, value: this.envelope(id, 'd', row.version, this.clock) }));
        out.push(this.fold({ key, value: null }));
      } else if (r < 0.26) {
        // A late event: an older change of this row arriving after newer ones.
        out.push(this.fold({ key, value: this.envelope(id, 'u', row.version - 1, row.ts - 5) }));
      } else {
        const version = row.version + 1;
        this.db.set(id, { ts: this.clock, version });
        out.push(this.fold({ key, value: this.envelope(id, 'u', version, this.clock) }));
      }
    }
    return out;
  }

  /** The expected upsert table as sorted `key=value` strings. */
  expected(): string[] {
    return [...this.table].filter(([, s]) => s.value !== null).map(([k, s]) => `${k}=${s.value}`).sort();
  }

  /**
   * The upsert table `events` make when folded in this order (e.g. what a consumer read back from the log,
   * partition by partition: a key's events are all in one partition, in offset order).
   */
  static fold(events: Iterable<CdcEvent>): string[] {
    const s = new CdcStream(0, 1);
    for (const e of events) s.fold(e);
    return s.expected();
  }

  private envelope(id: number, op: 'c' | 'r' | 'u' | 'd', version: number, ts: number): string {
    const after = op === 'd' ? null : { id, name: `customer-${id}`, version };
    const payload = { before: op === 'c' || op === 'r' ? null : { id, name: `customer-${id}`, version: version - 1 }, after, op, ts_ms: ts, source: { connector: 'postgresql', lsn: ts * 8 } };
    return JSON.stringify(id % 2 === 0 ? { schema: { type: 'struct', name: 'cdc.Envelope' }, payload } : payload);
  }

  private fold(e: CdcEvent): CdcEvent {
    if (e.key === null) return e;
    const before = this.table.get(e.key);
    if (e.value === null) {
      this.table.set(e.key, { ts: before?.ts ?? -Infinity, value: null });
      return e;
    }
    const parsed = JSON.parse(e.value) as { payload?: { op: string; ts_ms: number }; op?: string; ts_ms?: number };
    const p = (parsed.payload ?? parsed) as { op: string; ts_ms: number };
    if (before !== undefined && p.ts_ms < before.ts) return e; // late: changes nothing
    this.table.set(e.key, { ts: p.ts_ms, value: p.op === 'd' ? null : e.value });
    return e;
  }
}
