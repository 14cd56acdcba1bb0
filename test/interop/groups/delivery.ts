/**
 * The delivery rule of the group-consumer scenario, as a pure function so it is tested on its own:
 * - every produced record is consumed at least once, with the key it was produced with;
 * - nothing committed is consumed twice: a record may be consumed more than once only if it sits on a
 *   partition the killed member owned when it died, at or after that partition's committed offset as the
 *   broker had it once the member was dead (what the member consumed but never committed).
 * Any other duplicate (a record a surviving member consumed twice, or one it consumed after someone had
 * committed past it) breaks the rule.
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
}

export interface DeliveryReport {
  /** Produced records nobody consumed (`partition:offset`). */
  readonly missing: string[];
  /** Consumed records that were never produced or came back with another key. */
  readonly wrong: string[];
  /** Re-consumptions the rule allows (uncommitted work of the killed member). */
  readonly allowedDuplicates: number;
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
  const forbiddenDuplicates: string[] = [];
  for (const [id, list] of byRecord) {
    if (list.length < 2) continue;
    const first = list[0] as Consumption;
    const committed = input.committedAtKill[first.partition] ?? -1;
    const uncommittedWorkOfVictim = input.victimPartitions.includes(first.partition) && first.offset >= committed;
    if (uncommittedWorkOfVictim) allowedDuplicates += list.length - 1;
    else forbiddenDuplicates.push(`${id} consumed by ${list.map((c) => c.member).join(', ')} (committed offset of partition ${first.partition} when the member was killed: ${committed})`);
  }
  return { missing, wrong, allowedDuplicates, forbiddenDuplicates };
}
