/**
 * Idempotent-producer state of one partition, checked the way Kafka's ProducerStateManager checks it
 * (ProducerAppendInfo.checkProducerEpoch / checkSequence, ProducerStateEntry.findDuplicateBatch):
 *
 * - per producer id: the current epoch and the metadata of the last 5 appended batches (first/last sequence,
 *   first/last offset), which is as many as a producer may have in flight;
 * - a batch whose epoch and sequence range equal a cached batch is a duplicate: it is answered with the
 *   original offsets and not appended again;
 * - an older epoch is INVALID_PRODUCER_EPOCH (Kafka replaced PRODUCER_FENCED with it for produce in 2.7);
 * - a newer epoch must start at sequence 0, else OUT_OF_ORDER_SEQUENCE_NUMBER;
 * - in the same epoch the next batch must start right after the last one (sequences wrap at Int32.MAX);
 *   a batch that lies before the cached window was already written and is DUPLICATE_SEQUENCE_NUMBER
 *   (the Java producer treats that as success); anything else is a gap, OUT_OF_ORDER_SEQUENCE_NUMBER;
 * - a producer id with no state (new, or expired) is accepted at any sequence, as Kafka does since KIP-360
 *   (it no longer answers UNKNOWN_PRODUCER_ID).
 *
 * Pure data: no I/O. Persistence is in producer-state-store.ts.
 */
import { ErrorCode, KafkaError } from '../../protocol/error-codes.js';
import { PartitionTxns } from './partition-txns.js';

/** Batches remembered per producer: the most a producer keeps in flight (max.in.flight.requests <= 5). */
export const MAX_CACHED_BATCHES = 5;
const INT32_MAX = 0x7fffffff;
const SEQUENCE_SPACE = 0x80000000;

export interface BatchMetadata {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
}

export interface ProducerEntry {
  readonly producerId: bigint;
  epoch: number;
  /** Oldest first, at most MAX_CACHED_BATCHES. */
  batches: BatchMetadata[];
  /** Wall-clock time of the last append, for expiring idle producers. */
  lastAppendMs: number;
  /** Epoch of the transaction coordinator that wrote this producer's last marker, or -1. */
  coordinatorEpoch: number;
}

/** What the sequence check needs from a batch header. */
export interface ProducerBatch {
  readonly producerId: bigint;
  readonly epoch: number;
  readonly firstSeq: number;
  /** Number of offsets the batch spans (lastOffsetDelta + 1). */
  readonly offsetCount: number;
  /** Attribute bit 4: the batch belongs to a transaction. */
  readonly transactional?: boolean;
}

export type SequenceCheck = { readonly kind: 'append' } | { readonly kind: 'duplicate'; readonly batch: BatchMetadata };

const APPEND: SequenceCheck = Object.freeze({ kind: 'append' });

/** Kafka's DefaultRecordBatch.incrementSequence: sequences wrap from Int32.MAX to 0. */
export function incrementSequence(sequence: number, increment: number): number {
  if (sequence > INT32_MAX - increment) return increment - (INT32_MAX - sequence) - 1;
  return sequence + increment;
}

/** The last sequence of a batch. */
export function lastSequenceOf(b: ProducerBatch): number {
  return incrementSequence(b.firstSeq, b.offsetCount - 1);
}

function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === INT32_MAX);
}

/** True when `seq` lies at or before `lastSeq` (within half the sequence space, so wrapping is handled). */
function atOrBefore(seq: number, lastSeq: number): boolean {
  const distance = (((lastSeq - seq) % SEQUENCE_SPACE) + SEQUENCE_SPACE) % SEQUENCE_SPACE;
  return distance < SEQUENCE_SPACE / 2;
}

export class ProducerStateTable {
  private readonly producers = new Map<bigint, ProducerEntry>();
  /** Open and aborted transactions of the partition. */
  readonly txns: PartitionTxns;

  constructor(txns: PartitionTxns = new PartitionTxns()) {
    this.txns = txns;
  }

  get size(): number {
    return this.producers.size;
  }

  get(producerId: bigint): Readonly<ProducerEntry> | undefined {
    return this.producers.get(producerId);
  }

  entries(): IterableIterator<Readonly<ProducerEntry>> {
    return this.producers.values();
  }

  /**
   * Decides whether a batch may be appended. Returns 'duplicate' with the original batch for a retry of a
   * cached batch; throws KafkaError with Kafka's code when the batch must be rejected.
   */
  check(b: ProducerBatch, where = 'this partition'): SequenceCheck {
    const entry = this.producers.get(b.producerId);
    if (b.transactional !== true && this.txns.openTxn(b.producerId) !== undefined) {
      throw new KafkaError(
        ErrorCode.INVALID_TXN_STATE,
        `Producer ${b.producerId} sent a non-transactional batch to ${where} while its transaction there is open; commit or abort the transaction first.`,
      );
    }
    if (entry === undefined) return APPEND;
    const lastSeq = lastSequenceOf(b);
    if (b.epoch < entry.epoch) {
      throw new KafkaError(
        ErrorCode.INVALID_PRODUCER_EPOCH,
        `Producer ${b.producerId} sent epoch ${b.epoch} but ${where} has seen epoch ${entry.epoch}; a newer instance of this producer took over, so stop using this one.`,
      );
    }
    if (b.epoch > entry.epoch) {
      if (b.firstSeq !== 0) {
        throw new KafkaError(
          ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
          `Producer ${b.producerId} started epoch ${b.epoch} at sequence ${b.firstSeq} in ${where}; a new epoch must start at sequence 0.`,
        );
      }
      return APPEND;
    }
    for (const cached of entry.batches) {
      if (cached.firstSeq === b.firstSeq && cached.lastSeq === lastSeq) return { kind: 'duplicate', batch: cached };
    }
    const last = entry.batches[entry.batches.length - 1];
    if (last === undefined || inSequence(last.lastSeq, b.firstSeq)) return APPEND;
    if (atOrBefore(b.firstSeq, last.lastSeq)) {
      throw new KafkaError(
        ErrorCode.DUPLICATE_SEQUENCE_NUMBER,
        `Producer ${b.producerId} epoch ${b.epoch} resent sequences ${b.firstSeq}-${lastSeq} in ${where}, which were written before the last ${MAX_CACHED_BATCHES} batches; the batch is already in the log.`,
      );
    }
    throw new KafkaError(
      ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
      `Producer ${b.producerId} epoch ${b.epoch} sent sequence ${b.firstSeq} in ${where} but the next expected is ${incrementSequence(last.lastSeq, 1)}; batches were lost in between, so reset the producer.`,
    );
  }

  /** Records an appended batch (after check() allowed it, or when replaying the log). */
  record(b: ProducerBatch, firstOffset: number, lastOffset: number, appendMs: number): void {
    const meta: BatchMetadata = { firstSeq: b.firstSeq, lastSeq: lastSequenceOf(b), firstOffset, lastOffset };
    const entry = this.producers.get(b.producerId);
    if (b.transactional === true) this.txns.recordData(b.producerId, firstOffset, lastOffset);
    if (entry === undefined) {
      this.producers.set(b.producerId, { producerId: b.producerId, epoch: b.epoch, batches: [meta], lastAppendMs: appendMs, coordinatorEpoch: -1 });
      return;
    }
    if (b.epoch !== entry.epoch) {
      entry.epoch = b.epoch;
      entry.batches = [];
    }
    entry.batches.push(meta);
    if (entry.batches.length > MAX_CACHED_BATCHES) entry.batches.shift();
    entry.lastAppendMs = Math.max(entry.lastAppendMs, appendMs);
  }

  /**
   * Checks a marker before it is written (Kafka's ProducerAppendInfo.checkProducerEpoch for control
   * batches): an epoch older than the producer's is INVALID_PRODUCER_EPOCH, a coordinator epoch older than
   * the one of its last marker is TRANSACTION_COORDINATOR_FENCED (a stale coordinator, or an admin tool
   * with old information).
   */
  checkMarker(producerId: bigint, epoch: number, coordinatorEpoch: number, where = 'this partition'): void {
    const entry = this.producers.get(producerId);
    if (entry === undefined) return;
    if (epoch < entry.epoch) {
      throw new KafkaError(ErrorCode.INVALID_PRODUCER_EPOCH, `Marker for producer ${producerId} in ${where} has epoch ${epoch} but the producer is at epoch ${entry.epoch}; describe the producer again.`);
    }
    if (coordinatorEpoch < entry.coordinatorEpoch) {
      throw new KafkaError(
        ErrorCode.TRANSACTION_COORDINATOR_FENCED,
        `Marker for producer ${producerId} in ${where} has coordinator epoch ${coordinatorEpoch} but the last marker had ${entry.coordinatorEpoch}; a newer coordinator owns this transaction.`,
      );
    }
  }

  /**
   * Records a transaction marker the coordinator wrote at `offset` for `producerId`: ends its open
   * transaction here, and moves the producer to the marker's epoch (a bumped epoch after a fence or a
   * timeout: later batches of the older epoch are INVALID_PRODUCER_EPOCH, and the new epoch starts over).
   */
  recordMarker(producerId: bigint, epoch: number, offset: number, commit: boolean, coordinatorEpoch: number, appendMs: number): void {
    this.txns.recordMarker(producerId, offset, commit);
    const entry = this.producers.get(producerId);
    if (entry === undefined) {
      this.producers.set(producerId, { producerId, epoch, batches: [], lastAppendMs: appendMs, coordinatorEpoch });
      return;
    }
    if (epoch > entry.epoch) {
      entry.epoch = epoch;
      entry.batches = [];
    }
    entry.coordinatorEpoch = coordinatorEpoch;
    entry.lastAppendMs = Math.max(entry.lastAppendMs, appendMs);
  }

  /** Forgets producers idle since before `cutoffMs` (Kafka's producer.id.expiration.ms). Returns how many. */
  expire(cutoffMs: number): number {
    let n = 0;
    for (const [id, entry] of this.producers) {
      // A producer with an open transaction holds the LSO: it stays until its marker arrives.
      if (entry.lastAppendMs < cutoffMs && this.txns.openTxn(id) === undefined) {
        this.producers.delete(id);
        n++;
      }
    }
    return n;
  }

  /** A deep copy, for snapshots taken while appends continue. */
  toJSON(): SerializedProducer[] {
    return [...this.producers.values()].map((e) => ({
      producerId: e.producerId.toString(),
      epoch: e.epoch,
      lastAppendMs: e.lastAppendMs,
      batches: e.batches.map((m) => [m.firstSeq, m.lastSeq, m.firstOffset, m.lastOffset]),
      ...(e.coordinatorEpoch >= 0 ? { coordinatorEpoch: e.coordinatorEpoch } : {}),
    }));
  }

  /** Rebuilds a table from toJSON() output; throws TypeError on malformed input. */
  static fromJSON(data: unknown, txns?: PartitionTxns): ProducerStateTable {
    if (!Array.isArray(data)) throw new TypeError('producer state must be an array');
    const table = new ProducerStateTable(txns);
    for (const raw of data as unknown[]) {
      const p = raw as Partial<SerializedProducer>;
      if (typeof p.producerId !== 'string' || !/^\d+$/.test(p.producerId) || !Number.isInteger(p.epoch) || !Number.isFinite(p.lastAppendMs) || !Array.isArray(p.batches)) {
        throw new TypeError(`malformed producer entry ${JSON.stringify(raw)}`);
      }
      const batches = p.batches.map((b): BatchMetadata => {
        if (!Array.isArray(b) || b.length !== 4 || !b.every((n) => Number.isSafeInteger(n))) throw new TypeError(`malformed batch ${JSON.stringify(b)}`);
        const [firstSeq, lastSeq, firstOffset, lastOffset] = b as [number, number, number, number];
        return { firstSeq, lastSeq, firstOffset, lastOffset };
      });
      const id = BigInt(p.producerId);
      const coordinatorEpoch = Number.isInteger(p.coordinatorEpoch) ? (p.coordinatorEpoch as number) : -1;
      table.producers.set(id, { producerId: id, epoch: p.epoch as number, lastAppendMs: p.lastAppendMs as number, batches: batches.slice(-MAX_CACHED_BATCHES), coordinatorEpoch });
    }
    return table;
  }
}

export interface SerializedProducer {
  producerId: string;
  epoch: number;
  lastAppendMs: number;
  batches: [number, number, number, number][];
  coordinatorEpoch?: number;
}
