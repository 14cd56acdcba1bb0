/**
 * What a record means to the `_latest` upsert table: which key it changes, whether it deletes the key, and
 * where it stands in the key's order (latest-keys.ts).
 *
 * - Identity is the Kafka key (the bytes a producer partitions by; Debezium keys its records by the primary
 *   key), or the values of the table's id columns (`iceberg.upsert.id.columns`, read from the data files by
 *   segment-rows.ts). A record without a key, or with a null id column, has none.
 * - A tombstone (null value) deletes the key. With `cdc: 'debezium'` a Debezium change event whose `op` is
 *   `d` deletes it too; `c`, `u` and `r` (snapshot reads) upsert it. The event may be the bare payload
 *   (JsonConverter with schemas.enable=false) or wrapped in `{schema, payload}`. A value that is not such
 *   an event upserts the key.
 * - With id columns the row's columns say all three where the table has them (segment-rows.ts reads
 *   them): the id, Debezium's `op` column, the ordering field's column. A typed Debezium table's fields are
 *   looked up in `after`, then `before` (a delete has only `before`); its `op` and `ts_ms` are top-level.
 * - Order is the Kafka offset, unless `orderField` names a numeric field of the JSON value (dot separated,
 *   looked up in the Debezium payload when there is one, e.g. `ts_ms` or `source.lsn`): then a record whose
 *   field is lower than the key's current record's is a late event and changes nothing. A record without
 *   the field (or not JSON) applies in offset order.
 */
import type { ColumnPaths, KeyedRow, RowColumnProbes } from './segment-rows.js';

export interface RowEvent {
  /** The key as a string of its bytes (latin1), null without a key. */
  readonly id: string | null;
  readonly deleted: boolean;
  /** NaN when the record has no order value: it applies whatever the current order is. */
  readonly order: number;
}

export type RowReading = (row: KeyedRow) => RowEvent;

export interface RowReadingSettings {
  /** `iceberg.upsert.cdc.format`. */
  readonly cdc: 'none' | 'debezium';
  /** `iceberg.upsert.order.field`; absent: offset order. */
  readonly orderField?: string | undefined;
  /** `iceberg.upsert.id.columns`: columns of the table that identify a row; absent: the Kafka key. */
  readonly idColumns?: readonly string[] | undefined;
}

export function rowReading(settings: RowReadingSettings): RowReading {
  const path = settings.orderField === undefined || settings.orderField === '' ? undefined : settings.orderField.split('.');
  const needsJson = settings.cdc === 'debezium' || path !== undefined;
  return (row) => {
    const c = row.columns;
    if (c !== undefined) {
      // A typed row: a tombstone has no columns, so no id; it deletes nothing.
      const deleted = row.tombstone || (settings.cdc === 'debezium' && c.op === 'd');
      return { id: c.id, deleted, order: path === undefined ? row.offset : (c.order ?? (row.value === null ? NaN : numberAt(debeziumPayload(row.value), path))) };
    }
    const id = row.key === null ? null : row.key.toString('latin1');
    if (row.tombstone || row.value === null) return { id, deleted: true, order: path === undefined ? row.offset : NaN };
    if (!needsJson) return { id, deleted: false, order: row.offset };
    const payload = debeziumPayload(row.value);
    const deleted = settings.cdc === 'debezium' && payload !== undefined && payload['op'] === 'd';
    const order = path === undefined ? row.offset : numberAt(payload, path);
    return { id, deleted, order };
  };
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON object a value holds, unwrapped from JsonConverter's `{schema, payload}` envelope; undefined when it is not one. */
function debeziumPayload(value: Buffer): Json | undefined {
  // Cheap refusal before parsing: JSON objects start with '{' (after whitespace).
  let i = 0;
  while (i < value.length && (value[i] === 0x20 || value[i] === 0x0a || value[i] === 0x0d || value[i] === 0x09)) i++;
  if (value[i] !== 0x7b) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isObject(parsed)) return undefined;
  if ('payload' in parsed && 'schema' in parsed) return isObject(parsed['payload']) ? parsed['payload'] : undefined;
  return parsed;
}

function numberAt(obj: Json | undefined, path: readonly string[]): number {
  let v: unknown = obj;
  for (const p of path) {
    if (!isObject(v)) return NaN;
    v = v[p];
  }
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return NaN;
}

/** The columns a typed table's rows are read from, when id columns are set; undefined otherwise. */
export function columnProbes(settings: RowReadingSettings): RowColumnProbes | undefined {
  if (settings.idColumns === undefined || settings.idColumns.length === 0) return undefined;
  const debezium = settings.cdc === 'debezium';
  const field = (c: string): ColumnPaths => (debezium ? [['after', ...c.split('.')], ['before', ...c.split('.')]] : [c.split('.')]);
  const order = settings.orderField === undefined || settings.orderField === '' ? undefined : [settings.orderField.split('.')];
  return { id: settings.idColumns.map(field), ...(debezium ? { op: [['op']] } : {}), ...(order ? { order } : {}) };
}
