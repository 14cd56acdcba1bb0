/**
 * Shared checks of the transaction suites: a kafkajs consumer (its own group, from the beginning) that
 * collects record keys until it has seen every key of `until`, and a seeded random source so a failing run
 * can be replayed.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';

export interface Consumed {
  /** Keys in delivery order (per partition order; partitions interleave). */
  readonly seen: string[];
  /** Keys delivered more than once. */
  readonly duplicates: string[];
}

/**
 * Consumes `topic` from the beginning with read_committed (readUncommitted false) or read_uncommitted until
 * every key in `until` was delivered. Bounded by the test's timeout: a key that never arrives is a failure.
 */
export async function consumeKeys(kafka: Kafka, topic: string, opts: { readUncommitted: boolean; until: ReadonlySet<string> }): Promise<Consumed> {
  const consumer = kafka.consumer({ groupId: `verify-${randomUUID()}`, readUncommitted: opts.readUncommitted, maxWaitTimeInMs: 200 });
  await consumer.connect();
  const seen: string[] = [];
  const counts = new Map<string, number>();
  const missing = new Set(opts.until);
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      if (missing.size === 0) resolve();
      consumer
        .run({
          eachMessage: async ({ message }) => {
            const key = message.key?.toString() ?? '';
            seen.push(key);
            counts.set(key, (counts.get(key) ?? 0) + 1);
            missing.delete(key);
            if (missing.size === 0) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return { seen, duplicates: [...counts].filter(([, n]) => n > 1).map(([k]) => k) };
}

/**
 * The keys of `topic` from the beginning up to the end offsets that ListOffsets gave when it started (kafkajs
 * asks with read_committed, so the LSO: with no transaction open that is also the high watermark), in
 * delivery order, duplicates included. A partition is done once a batch ended at or past its end offset
 * (control records and aborted records count, as kafkajs reports a batch's last offset with them).
 */
export async function readToEnd(kafka: Kafka, topic: string, opts: { readUncommitted: boolean }): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
  await admin.disconnect();
  const next = new Map<number, number>();
  const done = (): boolean => [...ends].every(([p, end]) => end === 0 || (next.get(p) ?? 0) >= end);
  const keys: string[] = [];
  const consumer = kafka.consumer({ groupId: `verify-${randomUUID()}`, readUncommitted: opts.readUncommitted, maxWaitTimeInMs: 200 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      if (done()) resolve();
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        next.set(payload.partition, Number(payload.lastOffset) + 1);
        if (done()) resolve();
      });
      consumer.run({ eachMessage: async ({ message }) => void keys.push(message.key?.toString() ?? '') }).catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return keys;
}

/** A deterministic PRNG (mulberry32) in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
