/**
 * Rows as the engine drivers (spark_driver.py, pyiceberg_driver.py) hand them over, and one comparable view
 * of a topic-table row for both the engines' answers and the Kafka side (engine-topic.ts `KafkaRow`).
 *
 * The drivers' JSON: binary as {"b64": ...}, timestamps as {"us": <microseconds since the epoch>}; integers
 * beyond 2^53 (snapshot ids) are kept exact by parsing with iceberg/json.ts.
 */
import assert from 'node:assert/strict';
import type { KafkaRow } from './engine-topic.js';

export type EngineValue = null | boolean | number | string | bigint | Buffer | EngineValue[] | { [k: string]: EngineValue };

/** A driver's JSON value, decoded: Buffer for binary, bigint microseconds for timestamps. */
export function decodeValue(v: unknown): EngineValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string' || typeof v === 'bigint') return v;
  if (Array.isArray(v)) return v.map(decodeValue);
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1 && typeof o['b64'] === 'string') return Buffer.from(o['b64'], 'base64');
  if (keys.length === 1 && (typeof o['us'] === 'number' || typeof o['us'] === 'bigint')) return BigInt(o['us']);
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, decodeValue(x)]));
}

export const hex = (b: EngineValue | Buffer | null | undefined): string | null => {
  if (b === null || b === undefined) return null;
  assert.ok(Buffer.isBuffer(b), `expected bytes, got ${typeof b}`);
  return b.toString('hex');
};

export const big = (v: unknown): bigint => {
  assert.ok(typeof v === 'number' || typeof v === 'bigint', `expected an integer, got ${typeof v}`);
  return BigInt(v);
};

export const num = (v: unknown): number => Number(big(v));

/** What a table row must show, from the Kafka side: every `kafka` column and `value`. */
export function kafkaView(r: KafkaRow): Record<string, unknown> {
  return {
    partition: r.partition,
    offset: r.offset,
    timestampUs: BigInt(r.timestamp) * 1000n,
    timestampType: r.timestampType,
    key: hex(r.key),
    // A record without headers has an empty list (never null) in the table.
    headers: r.headers.map(([k, v]) => [k, hex(v)]),
    batch: r.batch,
    recordAttributes: r.recordAttributes,
    timestampDelta: null,
    rawRecord: null,
    value: hex(r.value),
  };
}

/** The same view of an engine's row: its `kafka` struct and `value`. */
export function tableView(kafka: EngineValue | undefined, value: EngineValue | undefined): Record<string, unknown> {
  const k = kafka as Record<string, EngineValue>;
  const b = k['batch'] as Record<string, EngineValue>;
  const headers = k['headers'] as Record<string, EngineValue>[] | null;
  return {
    partition: k['partition'],
    offset: num(k['offset']),
    timestampUs: k['timestamp'],
    timestampType: k['timestamp_type'],
    key: hex(k['key']),
    headers: headers === null ? null : headers.map((h) => [h['key'], hex(h['value'])]),
    batch: {
      baseOffset: num(b['base_offset']),
      lastOffsetDelta: b['last_offset_delta'],
      partitionLeaderEpoch: b['partition_leader_epoch'],
      attributes: b['attributes'],
      baseTimestamp: num(b['base_timestamp']),
      maxTimestamp: num(b['max_timestamp']),
      producerId: num(b['producer_id']),
      producerEpoch: b['producer_epoch'],
      baseSequence: b['base_sequence'],
      recordsCount: b['records_count'],
    },
    recordAttributes: k['record_attributes'],
    timestampDelta: k['timestamp_delta'],
    rawRecord: hex(k['raw_record']),
    value: hex(value),
  };
}
