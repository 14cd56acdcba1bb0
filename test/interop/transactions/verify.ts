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
