/**
 * Pass 1 of Kafka's log cleaner over record batches, free of I/O: which offset holds the latest record of
 * each key, and which transactional batches were aborted or are still undecided. Fed the batches of a range
 * oldest first (any number of `add` calls, each with whole batches), it can be asked for the map at any
 * point (`finish`), so a caller may keep feeding it as its range grows. Transactional records count only
 * once their COMMIT marker is seen (then at their own offsets); records of a transaction without a marker
 * yet are "undecided" and supersede nothing; records without a key are never the latest of anything.
 *
 * Used by the broker's log cleaner (broker/log/cleaner/clean-batches.ts) and by the compacted view of a
 * tiered topic (tiering/plugin/compacted-view.ts).
 */
import { decodeRecordBatch } from './record-batch.js';
import { iterateBatches } from './batches.js';

/** Latest offset per key (keys as latin1 strings: one char per byte), and the transactional verdicts. */
export interface OffsetMap {
  readonly latest: Map<string, number>;
  /** Base offsets of transactional data batches that were aborted. */
  readonly aborted: Set<number>;
  /** Base offsets of transactional data batches whose transaction has no marker in the range. */
  readonly undecided: Set<number>;
  /**
   * Base offsets of each idempotent producer's last data batch in the range: kept (empty if need be) so that
   * the producer state rebuilt from the log still knows the producer's last sequence (Kafka's rule).
   */
  readonly producerLast: Set<number>;
}

export function keyOf(key: Buffer): string {
  return key.toString('latin1');
}

interface OpenTxn {
  batches: number[];
  keys: [string, number][];
}

/** Pass 1: feed it the segments of the range in offset order, then call finish(). */
export class OffsetMapBuilder {
  private readonly latest = new Map<string, number>();
  private readonly aborted = new Set<number>();
  private readonly open = new Map<bigint, OpenTxn>();
  private readonly lastOfProducer = new Map<bigint, number>();

  add(segmentBytes: Buffer): void {
    for (const { start } of iterateBatches(segmentBytes)) {
      const b = decodeRecordBatch(segmentBytes, start, { verifyCrc: false });
      const base = Number(b.baseOffset);
      if (b.isControl) {
        const txn = this.open.get(b.producerId);
        this.open.delete(b.producerId);
        if (txn === undefined || b.control?.kind === 'other') continue;
        if (b.control?.kind === 'abort') for (const o of txn.batches) this.aborted.add(o);
        else for (const [k, o] of txn.keys) this.put(k, o);
        continue;
      }
      if (b.producerId >= 0n) this.lastOfProducer.set(b.producerId, base);
      let txn: OpenTxn | undefined;
      if (b.isTransactional) {
        txn = this.open.get(b.producerId);
        if (txn === undefined) this.open.set(b.producerId, (txn = { batches: [], keys: [] }));
        txn.batches.push(base);
      }
      for (const r of b.records) {
        if (r.key === null) continue;
        if (txn !== undefined) txn.keys.push([keyOf(r.key), base + r.offsetDelta]);
        else this.put(keyOf(r.key), base + r.offsetDelta);
      }
    }
  }

  private put(k: string, offset: number): void {
    const prev = this.latest.get(k);
    if (prev === undefined || prev < offset) this.latest.set(k, offset);
  }

  finish(): OffsetMap {
    const undecided = new Set<number>();
    for (const txn of this.open.values()) for (const o of txn.batches) undecided.add(o);
    return { latest: this.latest, aborted: this.aborted, undecided, producerLast: new Set(this.lastOfProducer.values()) };
  }
}
