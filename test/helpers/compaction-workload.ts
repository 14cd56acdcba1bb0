/**
 * The compacted-topic workload of the wire tests (test/broker/log/cleaner/compaction-clients.test.ts on the
 * local log, test/tiering/e2e/compacted-view.test.ts on the tiered range): 600 updates over 8 keys,
 * tombstones for two of them, then 100 unique fillers that push every update into closed segments; produced
 * by kafkajs in batches of 20 (every other one gzip). `expected` gives every record and the compacted view
 * Kafka's cleaner leaves (the last record per key, tombstones included), in the form `view` renders what a
 * client consumed.
 */
import assert from 'node:assert/strict';
import type { KafkajsClient } from '../interop/clients/kafkajs.js';
import type { InRecord, OutRecord } from '../interop/clients/types.js';

export interface Expected {
  offset: number;
  key: string;
  value: string | null;
  timestamp: number;
  headers: [string, string][];
}

/** What a client consumed, as comparable records. */
export function view(records: readonly InRecord[]): Expected[] {
  return records.map((r) => ({
    offset: r.offset,
    key: r.key?.toString() ?? '(null)',
    value: r.value === null ? null : r.value.toString(),
    timestamp: r.timestamp,
    headers: r.headers.map(([k, v]) => [k, v?.toString() ?? '(null)'] as [string, string]),
  }));
}

/** The workload's records for partition 0, timestamped from `base`. */
export function compactionWorkload(base: number): OutRecord[] {
  const out: OutRecord[] = [];
  for (let i = 0; i < 600; i++) out.push({ partition: 0, key: Buffer.from(`key-${i % 8}`), value: Buffer.from(`value-${i}-${'u'.repeat(30)}`), headers: [['n', Buffer.from(String(i))]], timestamp: base + i });
  for (const k of [3, 5]) out.push({ partition: 0, key: Buffer.from(`key-${k}`), value: null, headers: [['tomb', Buffer.from('yes')]], timestamp: base + 700 + k });
  for (let i = 0; i < 100; i++) out.push({ partition: 0, key: Buffer.from(`filler-${i}`), value: Buffer.from(`f-${'f'.repeat(40)}`), headers: [], timestamp: base + 800 + i });
  return out;
}

/** Produces `out` to an empty topic in batches of 20 (every other one gzip) and checks it got offsets 0..n-1. */
export async function produceWorkload(producer: KafkajsClient, topic: string, out: readonly OutRecord[]): Promise<void> {
  const offsets: number[] = [];
  for (let i = 0; i < out.length; i += 20) {
    const { offsets: got } = await producer.produce({ topic, acks: -1, codec: i % 40 === 0 ? 'gzip' : 'none', idempotent: false, records: out.slice(i, i + 20) });
    offsets.push(...got.map((o) => o as number));
  }
  assert.deepEqual(offsets, out.map((_, i) => i), 'offsets 0..n-1');
}

/** Every record of `out` at its offset, and the compacted view: 6 updated keys, 2 live tombstones, 100 fillers. */
export function expected(out: readonly OutRecord[]): { all: Expected[]; compacted: Expected[] } {
  const all: Expected[] = out.map((r, i) => ({
    offset: i,
    key: r.key?.toString() ?? '',
    value: r.value === null ? null : r.value.toString(),
    timestamp: r.timestamp ?? 0,
    headers: r.headers.map(([k, v]) => [k, v?.toString() ?? '(null)'] as [string, string]),
  }));
  const latest = new Map<string, number>();
  all.forEach((r) => latest.set(r.key, r.offset));
  const compacted = all.filter((r) => latest.get(r.key) === r.offset);
  assert.equal(compacted.length, 6 + 2 + 100);
  assert.equal(compacted.filter((r) => r.value === null).length, 2, 'two live tombstones');
  return { all, compacted };
}
