// Test helpers for the log cleaner: keyed batches, a log of updates over few keys, reading a log back.
import assert from 'node:assert/strict';
import type { LogTopicConfig } from '../../../../broker/log/config.js';
import { LogManager } from '../../../../broker/log/log-manager.js';
import type { PartitionLog } from '../../../../broker/log/partition-log.js';
import { iterateBatches } from '../../../../protocol/record-batch/batches.js';
import { decodeRecordBatch, encodeRecordBatch } from '../../../../protocol/record-batch/record-batch.js';
import { closeBeforeRemoving } from '../batches.js';

export const T0 = 1_700_000_000_000;

export interface LogRecord {
  offset: number;
  key: string | null;
  value: string | null;
  timestamp: number;
}

/** One batch of keyed records; a null value is a tombstone. */
export function keyed(records: { key: string; value: string | null }[], ts = T0): Buffer {
  return encodeRecordBatch({
    baseTimestamp: BigInt(ts),
    records: records.map((r, i) => ({ offsetDelta: i, timestampDelta: i, key: Buffer.from(r.key), value: r.value === null ? null : Buffer.from(r.value) })),
  });
}

/** Every record of the log from `from`, read with small fetches as a consumer would. */
export async function readLog(log: PartitionLog, from = log.logStartOffset, maxBytes = 700): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  let offset = from;
  while (offset < log.logEndOffset) {
    const r = await log.read(offset, maxBytes);
    if (r.records.length === 0) break;
    for (const b of iterateBatches(r.records)) {
      const batch = decodeRecordBatch(r.records, b.start);
      for (const rec of batch.records) {
        const o = Number(batch.baseOffset) + rec.offsetDelta;
        if (o >= offset) out.push({ offset: o, key: rec.key?.toString() ?? null, value: rec.value?.toString() ?? null, timestamp: Number(batch.baseTimestamp) + rec.timestampDelta });
      }
    }
    assert.ok(r.nextOffset > offset, `read at ${offset} made progress`);
    offset = r.nextOffset;
  }
  return out;
}

/** What a clean of everything below `end` must leave: the latest record per key below it, and all from it on. */
export function reference(all: readonly LogRecord[], end: number, tombstonesGone = false): LogRecord[] {
  const latest = new Map<string, number>();
  for (const r of all) if (r.offset < end && r.key !== null) latest.set(r.key, r.offset);
  return all.filter((r) => r.offset >= end || (r.key !== null && latest.get(r.key) === r.offset && !(tombstonesGone && r.value === null)));
}

/** A LogManager in `dir` whose topic `t` has the given config, and its partition 0. */
export async function openCompacted(dir: string, config: LogTopicConfig, clock?: () => number): Promise<{ logs: LogManager; log: PartitionLog }> {
  const logs = await LogManager.open({ dataDir: dir, configFor: () => config, ...(clock ? { clock } : {}) });
  closeBeforeRemoving(dir, () => logs.close());
  const log = await logs.getOrCreate('t', 0, config);
  return { logs, log };
}

/** Appends `n` single-record batches of updates round-robin over `keys` keys; returns what was written. */
export async function writeUpdates(log: PartitionLog, n: number, keys: number, ts: (i: number) => number = () => T0, tag = 'v'): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  for (let i = 0; i < n; i++) {
    const key = `k${i % keys}`;
    const value = `${tag}${i}-${'x'.repeat(20)}`;
    const r = await log.append(keyed([{ key, value }], ts(i)));
    out.push({ offset: r.baseOffset, key, value, timestamp: ts(i) });
  }
  await log.flush(); // closed segments are sealed: only those are cleanable
  return out;
}
