/**
 * Rows of a topic table as Trino returns them, and the same rows built from the Kafka side: the batches the
 * broker served over the wire before tiering (decoded by our codec with CRCs checked, and equal to what the
 * clients sent, see trino.test.ts). Both sides are rendered into one plain form, field by field by name,
 * so `deepEqual` shows exactly which column of which row differs, and a column the table gains or loses
 * fails the comparison too.
 *
 * Trino's JSON protocol encodes varbinary as base64, rows as positional arrays (names come from the
 * column's type signature), timestamp(6) with time zone as `YYYY-MM-DD hh:mm:ss.ffffff UTC` (the session
 * time zone is UTC, and the client declares PARAMETRIC_DATETIME, see ../../helpers/trino.ts), and bigint as
 * a JSON number: fine for offsets and timestamps, not for snapshot ids, which the queries cast to varchar.
 */
import type { TrinoResult } from '../../helpers/trino.js';
import type { ServedBatch } from '../../tiering/e2e/wire.js';

/** What the JSON protocol says about one column: its type signature, for the field names of rows. */
interface TypeSignature {
  readonly rawType: string;
  readonly arguments: readonly { readonly kind: string; readonly value: unknown }[];
}

/** A protocol value turned into plain JSON: rows become objects keyed by field name (recursively). */
function named(value: unknown, sig: TypeSignature): unknown {
  if (value === null) return null;
  if (sig.rawType === 'row') {
    const fields = sig.arguments.map((a) => a.value as { fieldName?: { name: string }; typeSignature: TypeSignature });
    const values = value as unknown[];
    return Object.fromEntries(fields.map((f, i) => [f.fieldName?.name ?? `_${i}`, named(values[i], f.typeSignature)]));
  }
  if (sig.rawType === 'array') {
    const element = (sig.arguments[0]?.value ?? { rawType: 'unknown', arguments: [] }) as TypeSignature;
    return (value as unknown[]).map((v) => named(v, element));
  }
  return value;
}

/** The result's rows as objects keyed by column name, rows inside them as objects too. */
export function objects(result: TrinoResult): Record<string, unknown>[] {
  const cols = result.columns as readonly { name: string; typeSignature?: TypeSignature }[];
  return result.rows.map((r) => Object.fromEntries(cols.map((c, i) => [c.name, c.typeSignature ? named(r[i], c.typeSignature) : r[i]])));
}

const b64 = (b: Buffer | null): string | null => (b === null ? null : b.toString('base64'));

/** Milliseconds since the epoch as Trino renders a timestamp(6) with time zone in UTC: all six digits. */
export function trinoTimestamp(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2023-11-14T22:13:20.010Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000 UTC`;
}

/** One record as the Kafka side says it must appear in the table (a row of `SELECT kafka, value`). */
export interface KafkaRow {
  readonly kafka: {
    readonly partition: number;
    readonly offset: number;
    readonly timestamp: string;
    readonly timestamp_type: number;
    readonly key: string | null;
    readonly headers: readonly { readonly key: string; readonly value: string | null }[];
    readonly batch: Readonly<Record<string, number>>;
    readonly record_attributes: number | null;
    readonly timestamp_delta: number | null;
    readonly raw_record: string | null;
  };
  readonly value: string | null;
}

/** Epoch milliseconds of a row's kafka.timestamp (for filters). */
export function rowMillis(r: KafkaRow): number {
  return Date.parse(r.kafka.timestamp.replace(' UTC', 'Z').replace(' ', 'T'));
}

/**
 * The rows of one partition's served batches (control batches have none): Floe's table layout, see
 * tiering/convert/schema.ts: the visible timestamp (base + delta, or the batch's max timestamp for
 * LogAppendTime), the batch's header fields on every row, the record attributes only when non-zero, the
 * timestamp delta only for LogAppendTime batches, and no raw record for records the typed columns rebuild.
 */
export function kafkaRows(partition: number, batches: readonly ServedBatch[]): KafkaRow[] {
  const out: KafkaRow[] = [];
  for (const { batch } of batches) {
    if (batch.isControl) continue;
    const logAppend = batch.timestampType === 'log-append';
    for (const r of batch.records) {
      out.push({
        kafka: {
          partition,
          offset: Number(batch.baseOffset) + r.offsetDelta,
          timestamp: trinoTimestamp(Number(logAppend ? batch.maxTimestamp : batch.baseTimestamp + BigInt(r.timestampDelta))),
          timestamp_type: logAppend ? 1 : 0,
          key: b64(r.key),
          headers: r.headers.map((h) => ({ key: h.key, value: b64(h.value) })),
          batch: {
            base_offset: Number(batch.baseOffset),
            last_offset_delta: batch.lastOffsetDelta,
            partition_leader_epoch: batch.partitionLeaderEpoch,
            attributes: batch.attributes,
            base_timestamp: Number(batch.baseTimestamp),
            max_timestamp: Number(batch.maxTimestamp),
            producer_id: Number(batch.producerId),
            producer_epoch: batch.producerEpoch,
            base_sequence: batch.baseSequence,
            records_count: batch.recordsCount,
          },
          record_attributes: r.attributes === 0 ? null : r.attributes,
          timestamp_delta: logAppend ? r.timestampDelta : null,
          raw_record: null,
        },
        value: b64(r.value),
      });
    }
  }
  return out;
}

/** Ordering of the table queries: `ORDER BY kafka.partition, kafka.offset`. */
export const byPartitionOffset = (a: KafkaRow, b: KafkaRow): number => a.kafka.partition - b.kafka.partition || a.kafka.offset - b.kafka.offset;
