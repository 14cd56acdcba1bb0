/**
 * The one way records enter a partition log: appends are queued per partition, and for idempotent batches
 * the sequence check, the append and the state update run as one step of that queue, so nothing can
 * interleave between check and append. Different partitions append concurrently.
 *
 * Producer state is loaded lazily, the first time an idempotent batch reaches a partition (snapshot plus a
 * replay of the log after it, see producer-state-store.ts), and snapshotted when a segment rolls, every
 * `snapshotEveryBytes` appended, and on close. Listeners hear about every append (Fetch long polls).
 */
import { controlMarkerRecord, encodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import type { AppendResult, PartitionLog } from '../log/partition-log.js';
import type { Logger } from '../logger.js';
import { ProducerStateTable, type BatchMetadata, type ProducerBatch } from './producer-state.js';
import { loadProducerState, writeProducerSnapshot } from './producer-state-store.js';

export interface AppendOutcome extends AppendResult {
  /** The batch repeated a cached one: nothing was appended and the offsets are the original ones. */
  readonly duplicate: boolean;
}

export interface PartitionAppenderOptions {
  readonly log: Logger;
  readonly clock?: () => number;
  /** Snapshot a partition's producer state after this many appended bytes (default 64 MiB). */
  readonly snapshotEveryBytes?: number;
  /** Forget producers idle this long (Kafka's producer.id.expiration.ms, default 1 day). */
  readonly producerIdExpirationMs?: number;
  /**
   * The partition's log start offset, remote data included (Kafka's log start offset), default the local
   * one: aborted transactions wholly below it are dropped at each snapshot, as Kafka drops a segment's
   * `.txnindex` with it. A tiered partition still needs them for the records its table keeps.
   */
  readonly logStartOffset?: (log: PartitionLog) => number;
}

interface PartitionState {
  queue: Promise<unknown>;
  state: Promise<ProducerStateTable> | undefined;
  /** The table once `state` resolved. */
  loaded: ProducerStateTable | undefined;
  bytesSinceSnapshot: number;
  snapshotWrite: Promise<void>;
  unsubscribe: () => void;
}

export class PartitionAppender {
  private readonly partitions = new Map<PartitionLog, PartitionState>();
  private readonly listeners = new Set<(log: PartitionLog) => void>();
  private readonly clock: () => number;
  private readonly snapshotEveryBytes: number;
  private readonly expirationMs: number;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: PartitionAppenderOptions) {
    this.clock = options.clock ?? Date.now;
    this.snapshotEveryBytes = options.snapshotEveryBytes ?? 64 * 1024 * 1024;
    this.expirationMs = options.producerIdExpirationMs ?? 24 * 60 * 60 * 1000;
  }

  /** Subscribes to appends (called after each successful append); returns the unsubscribe function. */
  onAppend(listener: (log: PartitionLog) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Appends one validated batch. `producer` is set for idempotent batches (producerId >= 0): they are checked
   * against the producer state first; a duplicate resolves with the original offsets and `duplicate: true`.
   * Rejections throw KafkaError; storage failures throw LogError.
   */
  append(log: PartitionLog, batch: Buffer, producer: ProducerBatch | undefined, where: string): Promise<AppendOutcome> {
    const p = this.partition(log);
    if (producer === undefined) {
      // No producer state to check or update: the queue goes on once the log has the append in its order,
      // so that appends made while it is written are written together with the next group.
      const staged = p.queue.then(() => ({ written: log.append(batch) }));
      p.queue = staged;
      return staged.then(async ({ written }): Promise<AppendOutcome> => {
        const result = await written;
        p.bytesSinceSnapshot += batch.length;
        for (const listener of this.listeners) listener(log);
        return { ...result, duplicate: false };
      });
    }
    const run = p.queue.then(async (): Promise<AppendOutcome> => {
      let table: ProducerStateTable | undefined;
      let undo: (() => void) | undefined;
      if (producer !== undefined) {
        table = await this.stateOf(log, p);
        const verdict = table.check(producer, where);
        if (verdict.kind === 'duplicate') return duplicateOutcome(verdict.batch, log);
        // The LSO holds back before the batch becomes readable, not after the append resolves.
        if (producer.transactional === true) undo = table.txns.reserve(producer.producerId, log.logEndOffset);
      }
      let result: AppendResult;
      try {
        result = await log.append(batch);
      } catch (err) {
        undo?.();
        throw err;
      }
      table?.record(producer as ProducerBatch, result.baseOffset, result.lastOffset, this.clock());
      p.bytesSinceSnapshot += batch.length;
      // Written in the background: the state and offset are captured now, the fsync need not delay produce.
      if (table !== undefined && p.bytesSinceSnapshot >= this.snapshotEveryBytes) void this.writeSnapshot(log, p, table);
      for (const listener of this.listeners) listener(log);
      return { ...result, duplicate: false };
    });
    p.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Appends a transaction marker (a control batch: commit or abort) for `producerId` at `epoch`, as the
   * transaction coordinator does for every partition of a transaction, and ends the producer's open
   * transaction in the partition's state in the same step. Resolves with the marker's offset; a stale
   * epoch or coordinator epoch is refused with KafkaError (see ProducerStateTable.checkMarker).
   */
  appendMarker(log: PartitionLog, marker: { producerId: bigint; epoch: number; commit: boolean; coordinatorEpoch: number }): Promise<number> {
    const p = this.partition(log);
    const run = p.queue.then(async (): Promise<number> => {
      const table = await this.stateOf(log, p);
      table.checkMarker(marker.producerId, marker.epoch, marker.coordinatorEpoch, log.dir);
      const now = this.clock();
      const batch = encodeRecordBatch({
        baseTimestamp: BigInt(now),
        isTransactional: true,
        isControl: true,
        producerId: marker.producerId,
        producerEpoch: marker.epoch,
        baseSequence: -1,
        records: [controlMarkerRecord(marker.commit ? 'commit' : 'abort', marker.coordinatorEpoch)],
      });
      const result = await log.append(batch);
      table.recordMarker(marker.producerId, marker.epoch, result.baseOffset, marker.commit, marker.coordinatorEpoch, now);
      p.bytesSinceSnapshot += batch.length;
      if (p.bytesSinceSnapshot >= this.snapshotEveryBytes) void this.writeSnapshot(log, p, table);
      for (const listener of this.listeners) listener(log);
      return result.baseOffset;
    });
    p.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * The producer state of a partition for readers (LSO, aborted transactions): loads it if needed but does
   * not wait behind queued appends. The table is updated synchronously with each append, so what a reader
   * sees is always consistent with the log end it reads next.
   */
  readState(log: PartitionLog): Promise<ProducerStateTable> {
    return this.stateOf(log, this.partition(log));
  }

  /** The producer state if it is loaded already (no I/O), else undefined. */
  loadedState(log: PartitionLog): ProducerStateTable | undefined {
    return this.partitions.get(log)?.loaded;
  }

  /** The producer state of a partition (loading it if needed), after every queued append. */
  producerState(log: PartitionLog): Promise<ProducerStateTable> {
    const p = this.partition(log);
    const run = p.queue.then(() => this.stateOf(log, p));
    p.queue = run.catch(() => undefined);
    return run;
  }

  /** Writes a snapshot of a partition's producer state now (if it was loaded), after queued appends. */
  snapshot(log: PartitionLog): Promise<void> {
    const p = this.partition(log);
    const run = p.queue.then(async () => {
      if (p.state !== undefined) await this.writeSnapshot(log, p, await p.state);
    });
    p.queue = run.catch(() => undefined);
    return run;
  }

  /** Waits for queued appends and snapshots every loaded partition. Call before closing the logs. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const all = [...this.partitions.entries()];
      await Promise.allSettled(all.map(([log]) => this.snapshot(log)));
      for (const [, p] of all) {
        await p.snapshotWrite;
        p.unsubscribe();
      }
      this.partitions.clear();
    })();
    return this.closing;
  }

  private partition(log: PartitionLog): PartitionState {
    let p = this.partitions.get(log);
    if (p === undefined) {
      const state: PartitionState = { queue: Promise.resolve(), state: undefined, loaded: undefined, bytesSinceSnapshot: 0, snapshotWrite: Promise.resolve(), unsubscribe: () => undefined };
      // A rolled segment bounds the replay after a crash: snapshot at every roll, in queue order.
      state.unsubscribe = log.onSegmentClosed(() => {
        if (state.state !== undefined) void this.snapshot(log);
      });
      this.partitions.set(log, state);
      p = state;
    }
    return p;
  }

  private stateOf(log: PartitionLog, p: PartitionState): Promise<ProducerStateTable> {
    if (p.state === undefined) {
      const started = this.clock();
      const loading = loadProducerState(log, started).then((loaded) => {
        if (loaded.discarded !== undefined) this.options.log.warn('ignored producer state snapshot; rebuilt it from the log', { dir: log.dir, reason: loaded.discarded });
        this.options.log.debug('loaded producer state', {
          dir: log.dir,
          producers: loaded.table.size,
          snapshotOffset: loaded.snapshotOffset,
          replayedBatches: loaded.replayedBatches,
          ms: this.clock() - started,
        });
        p.loaded = loaded.table;
        return loaded.table;
      });
      // A failed load (disk error) is retried by the next idempotent append.
      p.state = loading;
      loading.catch(() => {
        if (p.state === loading) p.state = undefined;
      });
    }
    return p.state;
  }

  /**
   * Captures state and log end offset together (the caller is inside the partition's queue, so they match),
   * then writes them after any earlier snapshot write. Resolves when written; never rejects.
   */
  private writeSnapshot(log: PartitionLog, p: PartitionState, table: ProducerStateTable): Promise<void> {
    table.expire(this.clock() - this.expirationMs);
    table.txns.truncateAbortedBefore(this.options.logStartOffset?.(log) ?? log.logStartOffset);
    const offset = log.logEndOffset;
    const producers = table.toJSON();
    const txns = table.txns.toJSON();
    p.bytesSinceSnapshot = 0;
    p.snapshotWrite = p.snapshotWrite
      .then(() => writeProducerSnapshot(log.dir, offset, producers, txns))
      .catch((err: unknown) => this.options.log.warn('could not write the producer state snapshot; the next start replays more of the log', { dir: log.dir, err }));
    return p.snapshotWrite;
  }
}

function duplicateOutcome(batch: BatchMetadata, log: PartitionLog): AppendOutcome {
  return { baseOffset: batch.firstOffset, lastOffset: batch.lastOffset, logAppendTime: -1, logStartOffset: log.logStartOffset, duplicate: true };
}
