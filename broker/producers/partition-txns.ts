/**
 * The transactions of one partition, as Kafka's ProducerStateManager and TransactionIndex keep them:
 *
 * - open transactions: per producer id, the first and last offset it wrote in its open transaction. The
 *   **last stable offset** (LSO) is the first offset of the earliest open transaction, else the log end;
 * - aborted transactions (producer id, first offset, last offset = the abort marker's offset), oldest
 *   first, so that read_committed Fetch can tell consumers which batches to drop (Kafka's `.txnindex`).
 *
 * The aborted list is kept in the producer state snapshot and rebuilt from the log after it, so it does not
 * depend on local segments still existing (a range served from tiered storage gets the same answer).
 * Pure data: no I/O.
 */

export interface OpenTxn {
  readonly producerId: bigint;
  /** Offset of the transaction's first batch in this partition. */
  firstOffset: number;
  /** Offset of the last record written so far. */
  lastOffset: number;
  /** Opened by reserve(): firstOffset is only a lower bound until the first batch is recorded. */
  reserved: boolean;
}

export interface AbortedTxn {
  readonly producerId: bigint;
  readonly firstOffset: number;
  /** Offset of the abort marker. */
  readonly lastOffset: number;
}

/** [producerId, firstOffset, lastOffset] */
export type SerializedTxn = [string, number, number];

export class PartitionTxns {
  private readonly open = new Map<bigint, OpenTxn>();
  /** Sorted by lastOffset (markers are appended in offset order). */
  private aborted: AbortedTxn[] = [];

  /** The open transaction of a producer, if it has one here. */
  openTxn(producerId: bigint): Readonly<OpenTxn> | undefined {
    return this.open.get(producerId);
  }

  openTxns(): IterableIterator<Readonly<OpenTxn>> {
    return this.open.values();
  }

  get openCount(): number {
    return this.open.size;
  }

  /** Records a transactional data batch at [first, last]: opens the producer's transaction or extends it. */
  recordData(producerId: bigint, firstOffset: number, lastOffset: number): void {
    const txn = this.open.get(producerId);
    if (txn === undefined) {
      this.open.set(producerId, { producerId, firstOffset, lastOffset, reserved: false });
    } else if (txn.reserved) {
      txn.firstOffset = firstOffset;
      txn.lastOffset = lastOffset;
      txn.reserved = false;
    } else {
      txn.lastOffset = Math.max(txn.lastOffset, lastOffset);
    }
  }

  /**
   * Opens a transaction before its first batch is written, with a first offset that is a lower bound (the
   * log end before the append): the LSO holds back from this moment, so no reader ever sees the batch as
   * stable. Returns an undo for a failed append, or undefined when the producer already had one open.
   */
  reserve(producerId: bigint, atLeastOffset: number): (() => void) | undefined {
    if (this.open.has(producerId)) return undefined;
    const txn: OpenTxn = { producerId, firstOffset: atLeastOffset, lastOffset: atLeastOffset, reserved: true };
    this.open.set(producerId, txn);
    return () => {
      if (this.open.get(producerId) === txn && txn.reserved) this.open.delete(producerId);
    };
  }

  /**
   * A marker for `producerId` at `markerOffset`: closes its open transaction (if any); an abort adds the
   * transaction to the aborted list. A marker without an open transaction (a rewritten marker after a
   * coordinator restart, or a transaction that wrote nothing here) changes nothing.
   */
  recordMarker(producerId: bigint, markerOffset: number, commit: boolean): AbortedTxn | undefined {
    const txn = this.open.get(producerId);
    if (txn === undefined) return undefined;
    this.open.delete(producerId);
    if (commit) return undefined;
    const entry: AbortedTxn = { producerId, firstOffset: txn.firstOffset, lastOffset: markerOffset };
    this.aborted.push(entry);
    return entry;
  }

  /** The first offset of the earliest open transaction, or `logEndOffset` when none is open. */
  lastStableOffset(logEndOffset: number): number {
    let lso = logEndOffset;
    for (const t of this.open.values()) if (t.firstOffset < lso) lso = t.firstOffset;
    return lso;
  }

  /**
   * Aborted transactions that overlap [fromOffset, upperOffset): lastOffset >= fromOffset and
   * firstOffset < upperOffset (Kafka's collectAbortedTransactions), oldest first.
   */
  abortedOverlapping(fromOffset: number, upperOffset: number): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    // First entry whose marker is at or after fromOffset (the list is sorted by lastOffset).
    let lo = 0;
    let hi = this.aborted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.aborted[mid] as AbortedTxn).lastOffset < fromOffset) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.aborted.length; i++) {
      const a = this.aborted[i] as AbortedTxn;
      if (a.firstOffset < upperOffset) out.push(a);
    }
    return out;
  }

  /** Every aborted transaction, oldest first (for tests and operators). */
  allAborted(): readonly AbortedTxn[] {
    return this.aborted;
  }

  /** Drops aborted entries whose marker lies below `offset` (nothing at or above it can need them). */
  truncateAbortedBefore(offset: number): void {
    const keep = this.aborted.findIndex((a) => a.lastOffset >= offset);
    this.aborted = keep < 0 ? [] : this.aborted.slice(keep);
  }

  toJSON(): { open: SerializedTxn[]; aborted: SerializedTxn[] } {
    return {
      open: [...this.open.values()].map((t) => [t.producerId.toString(), t.firstOffset, t.lastOffset]),
      aborted: this.aborted.map((a) => [a.producerId.toString(), a.firstOffset, a.lastOffset]),
    };
  }

  static fromJSON(data: { open?: unknown; aborted?: unknown } | undefined): PartitionTxns {
    const txns = new PartitionTxns();
    if (data === undefined) return txns;
    const parse = (raw: unknown): [bigint, number, number] => {
      if (!Array.isArray(raw) || raw.length !== 3 || typeof raw[0] !== 'string' || !/^\d+$/.test(raw[0]) || !Number.isSafeInteger(raw[1]) || !Number.isSafeInteger(raw[2])) {
        throw new TypeError(`malformed transaction entry ${JSON.stringify(raw)}`);
      }
      return [BigInt(raw[0]), raw[1] as number, raw[2] as number];
    };
    if (!Array.isArray(data.open ?? []) || !Array.isArray(data.aborted ?? [])) throw new TypeError('transaction state must hold arrays');
    for (const raw of (data.open ?? []) as unknown[]) {
      const [producerId, firstOffset, lastOffset] = parse(raw);
      txns.open.set(producerId, { producerId, firstOffset, lastOffset, reserved: false });
    }
    for (const raw of (data.aborted ?? []) as unknown[]) {
      const [producerId, firstOffset, lastOffset] = parse(raw);
      txns.aborted.push({ producerId, firstOffset, lastOffset });
    }
    txns.aborted.sort((a, b) => a.lastOffset - b.lastOffset);
    return txns;
  }
}
