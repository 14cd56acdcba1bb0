/**
 * The delivery rule of the group-consumer scenario, as a pure function so it is tested on its own:
 * - every produced record is consumed at least once, with the key it was produced with;
 * - nothing committed is consumed twice. A record may be consumed again only if the member that consumed it
 *   before had no acknowledged commit past it in the generation it consumed it in: it was killed or stopped
 *   first, or its commit was refused or still in flight when a rebalance moved the partition (at-least-once
 *   delivery allows that re-read; a client that retries the commit in the next generation gets it
 *   acknowledged too late to count). For a member that reports no commits (kcat auto-commits in the
 *   background) the rule falls back to the killed member's partitions: a duplicate there is allowed at or
 *   after the partition's committed offset as the broker had it once the member was dead.
 * - a fenced member may hand out records it fetched in the generation it lost (a member frozen past its
 *   session and thawed polls its prefetched records before it learns it was removed). No broker can stop
 *   that; what the broker must do is refuse the zombie's commit. So a read the caller marks as a zombie read
 *   is allowed when its commit did not land, whoever read the record before.
 * Any other duplicate breaks the rule.
 */
import type { Consumption } from './member-process.js';

export interface DeliveryInput {
  /** `partition:offset` -> key, for every acknowledged produced record. */
  readonly produced: ReadonlyMap<string, string>;
  readonly consumed: readonly Consumption[];
  /** Partitions assigned to the killed member in the generation it died in. */
  readonly victimPartitions: readonly number[];
  /** The group's committed offset per partition (-1 for none), read after the member was killed. */
  readonly committedAtKill: readonly number[];
  /** Marks reads a fenced member made from the generation it lost (see the rule above). */
  readonly zombieRead?: (c: Consumption) => boolean;
}

export interface DeliveryReport {
  /** Produced records nobody consumed (`partition:offset`). */
  readonly missing: string[];
  /** Consumed records that were never produced or came back with another key. */
  readonly wrong: string[];
  /** Re-consumptions the rule allows (records nobody had committed when their partition moved). */
  readonly allowedDuplicates: number;
  /** Of those, re-reads by a fenced member whose commit the broker refused. */
  readonly zombieReads: number;
  /** Re-consumptions the rule forbids, with who consumed them. */
  readonly forbiddenDuplicates: string[];
}

export function checkDelivery(input: DeliveryInput): DeliveryReport {
  const byRecord = new Map<string, Consumption[]>();
  const wrong: string[] = [];
  for (const c of input.consumed) {
    const id = `${c.partition}:${c.offset}`;
    const key = input.produced.get(id);
    if (key !== c.key) wrong.push(`${id} consumed by ${c.member} with key ${c.key}, produced with ${key ?? '(never produced)'}`);
    const list = byRecord.get(id);
    if (list) list.push(c);
    else byRecord.set(id, [c]);
  }
  const missing = [...input.produced.keys()].filter((id) => !byRecord.has(id));
  let allowedDuplicates = 0;
  let zombieReads = 0;
  const isZombieRead = (c: Consumption) => c.committed === false && (input.zombieRead?.(c) ?? false);
  const forbiddenDuplicates: string[] = [];
  for (const [id, list] of byRecord) {
    if (list.length < 2) continue;
    const ordered = [...list].sort((x, y) => (x.at ?? 0) - (y.at ?? 0));
    const first = ordered[0] as Consumption;
    const committed = input.committedAtKill[first.partition] ?? -1;
    // Each re-consumption is judged by the consumptions before it.
    const forbidden = ordered.slice(1).some((later, i) =>
      !isZombieRead(later) && ordered.slice(0, i + 1).some((earlier) =>
        earlier.committed === undefined ? !(input.victimPartitions.includes(earlier.partition) && earlier.offset >= committed) : earlier.committed,
      ),
    );
    if (!forbidden) {
      allowedDuplicates += list.length - 1;
      zombieReads += ordered.slice(1).filter(isZombieRead).length;
    } else forbiddenDuplicates.push(`${id} consumed by ${ordered.map((c) => `${c.member}${c.committed === true ? ' (committed it)' : ''}`).join(', ')} (committed offset of partition ${first.partition} when the member was killed: ${committed})`);
  }
  return { missing, wrong, allowedDuplicates, zombieReads, forbiddenDuplicates };
}
