/**
 * The transaction coordinator, modelled on Kafka's TransactionCoordinator: InitProducerId for a
 * transactional id (epoch bumps, fencing, KIP-360 recovery), AddPartitionsToTxn, AddOffsetsToTxn,
 * TxnOffsetCommit, EndTxn, timeouts, and recovery of half-finished transactions at start.
 *
 * Every operation on one transactional id runs after the previous one finished (a queue per id), so a
 * timeout abort can never interleave with the producer's EndTxn. A state change is durable in the
 * TxnStateStore before it takes effect or is answered. Ending a transaction: PrepareCommit/PrepareAbort
 * (durable) → a marker to every partition of the transaction → the committed offsets to the offset store
 * (commit only) → CompleteCommit/CompleteAbort (durable). A crash after Prepare* is completed at the next
 * start (markers are written again: a marker for a transaction a partition has already closed changes
 * nothing); an Ongoing transaction found at start is aborted with a bumped epoch, fencing its producer.
 *
 * Errors are Kafka's codes; `PRODUCER_FENCED` is answered as INVALID_PRODUCER_EPOCH to request versions
 * that predate it (see fencedCode). Storage and markers are injected (TxnServices), so this file knows
 * nothing of sockets, the log layout or the group coordinator.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { Logger } from '../logger.js';
import { txnCrashPoint } from './crash-points.js';
import { cloneMetadata, partitionKey, splitPartitionKey, type PendingOffset, type TxnMetadata, type TxnState } from './txn-metadata.js';
import { TxnStateStoreError, type TxnStateStore } from './txn-state-store.js';

/** Kafka's Short.MaxValue - 1: an epoch this high is exhausted and the producer gets a new id. */
const MAX_EPOCH = 32_766;

export interface Marker {
  readonly producerId: bigint;
  readonly epoch: number;
  readonly commit: boolean;
  readonly coordinatorEpoch: number;
}

export interface TxnServices {
  readonly store: TxnStateStore;
  allocateProducerId(): Promise<bigint>;
  /** Whether the partition exists (AddPartitionsToTxn answers UNKNOWN_TOPIC_OR_PARTITION otherwise). */
  partitionExists(topic: string, partition: number): boolean;
  /** Writes a marker to one partition; resolves false if the partition no longer exists (deleted topic). */
  writeMarker(topic: string, partition: number, marker: Marker): Promise<boolean>;
  /** Durably commits the transaction's offsets for one group (the offset store). */
  commitOffsets(group: string, offsets: readonly PendingOffset[], nowMs: number): Promise<void>;
  readonly clock?: () => number;
}

export interface TxnConfig {
  /** transaction.max.timeout.ms */
  readonly maxTimeoutMs: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms: also how often expired ids are removed */
  readonly abortCheckIntervalMs: number;
  /** transactional.id.expiration.ms */
  readonly idExpirationMs: number;
}

export interface InitResult {
  readonly errorCode: number;
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

export interface TxnSummary {
  readonly transactionalId: string;
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly state: TxnState;
  readonly timeoutMs: number;
  readonly txnStartMs: number;
  readonly partitions: readonly string[];
}

export class TxnCoordinator {
  private readonly txns = new Map<string, TxnMetadata>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | undefined;
  private abortPass: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly services: TxnServices,
    readonly config: TxnConfig,
    private readonly log: Logger,
  ) {
    this.clock = services.clock ?? Date.now;
    for (const m of services.store.loadAll()) this.txns.set(m.transactionalId, m);
  }

  get coordinatorEpoch(): number {
    return this.services.store.coordinatorEpoch;
  }

  /**
   * Finishes what a crash left behind: Prepare* transactions complete, Ongoing ones abort with a bumped
   * epoch. Run once at start, before clients are served.
   */
  async recover(): Promise<void> {
    for (const id of [...this.txns.keys()]) {
      await this.serial(id, async () => {
        const m = this.txns.get(id);
        if (m === undefined) return;
        if (m.state === 'PrepareCommit' || m.state === 'PrepareAbort') {
          this.log.info('completing a transaction prepared before the restart', { transactionalId: id, state: m.state });
          await this.complete(m);
        } else if (m.state === 'Ongoing') {
          this.log.info('aborting a transaction left open by the restart', { transactionalId: id });
          await this.fenceAndAbort(m);
        }
      });
    }
  }

  /** Starts the timer that aborts transactions open longer than their timeout. */
  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setInterval(() => {
      this.abortPass ??= this.abortTimedOut()
        .then(() => this.expireIds())
        .catch((err: unknown) => this.log.error('aborting timed-out transactions failed; retrying at the next interval', { err }))
        .finally(() => (this.abortPass = undefined));
    }, this.config.abortCheckIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for running operations. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.abortPass;
    await Promise.allSettled([...this.queues.values()]);
  }

  // ---------------------------------------------------------------- InitProducerId

  initProducerId(transactionalId: string, timeoutMs: number, expectedPid: bigint, expectedEpoch: number): Promise<InitResult> {
    const fail = (errorCode: number): InitResult => ({ errorCode, producerId: -1n, producerEpoch: -1 });
    if (transactionalId === '') return Promise.resolve(fail(ErrorCode.INVALID_REQUEST));
    if (timeoutMs <= 0 || timeoutMs > this.config.maxTimeoutMs) return Promise.resolve(fail(ErrorCode.INVALID_TRANSACTION_TIMEOUT));
    return this.serial(transactionalId, () => this.init(transactionalId, timeoutMs, expectedPid, expectedEpoch)).catch((err: unknown) => fail(this.storeErrorCode(err, transactionalId)));
  }

  private async init(transactionalId: string, timeoutMs: number, expectedPid: bigint, expectedEpoch: number): Promise<InitResult> {
    const fail = (errorCode: number): InitResult => ({ errorCode, producerId: -1n, producerEpoch: -1 });
    const now = this.clock();
    let m = this.txns.get(transactionalId);
    if (m === undefined) {
      m = {
        transactionalId,
        producerId: await this.services.allocateProducerId(),
        producerEpoch: 0,
        lastProducerId: -1n,
        lastProducerEpoch: -1,
        timeoutMs,
        state: 'Empty',
        partitions: new Set(),
        groups: new Set(),
        pendingOffsets: new Map(),
        txnStartMs: -1,
        lastUpdateMs: now,
      };
      await this.services.store.write(m);
      this.txns.set(transactionalId, m);
      return { errorCode: ErrorCode.NONE, producerId: m.producerId, producerEpoch: m.producerEpoch };
    }
    if (expectedPid >= 0n) {
      const current = expectedPid === m.producerId && expectedEpoch === m.producerEpoch;
      const retry = (expectedPid === m.producerId || expectedPid === m.lastProducerId) && expectedEpoch === m.lastProducerEpoch && m.lastProducerEpoch >= 0;
      if (!current && !retry) return fail(ErrorCode.PRODUCER_FENCED);
      // A retried InitProducerId whose bump already happened: answer the same id and epoch again.
      if (retry && !current && (m.state === 'Empty' || m.state === 'CompleteCommit' || m.state === 'CompleteAbort')) {
        return { errorCode: ErrorCode.NONE, producerId: m.producerId, producerEpoch: m.producerEpoch };
      }
    }
    if (m.state === 'PrepareCommit' || m.state === 'PrepareAbort') return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    if (m.state === 'Ongoing') {
      await this.fenceAndAbort(m);
      m = this.txns.get(transactionalId) as TxnMetadata;
      if (m.state !== 'CompleteAbort') return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    }
    const next = cloneMetadata(m);
    bumpEpoch(next, await this.newIdIfExhausted(next));
    next.timeoutMs = timeoutMs;
    next.state = 'Empty';
    next.partitions.clear();
    next.groups.clear();
    next.pendingOffsets.clear();
    next.txnStartMs = -1;
    next.lastUpdateMs = now;
    await this.commitState(next);
    return { errorCode: ErrorCode.NONE, producerId: next.producerId, producerEpoch: next.producerEpoch };
  }

  // ---------------------------------------------------------------- AddPartitionsToTxn / AddOffsetsToTxn

  /** Adds partitions to the open transaction; error code per "topic\0partition" key, in input order. */
  addPartitions(transactionalId: string, producerId: bigint, epoch: number, partitions: readonly { topic: string; partition: number }[]): Promise<number[]> {
    return this.serial(transactionalId, async () => {
      const all = (code: number) => partitions.map(() => code);
      const m = this.txns.get(transactionalId);
      const error = this.checkProducer(m, producerId, epoch);
      if (error !== ErrorCode.NONE || m === undefined) return all(error);
      if (m.state === 'PrepareCommit' || m.state === 'PrepareAbort') return all(ErrorCode.CONCURRENT_TRANSACTIONS);
      const unknown = partitions.map((p) => !this.services.partitionExists(p.topic, p.partition));
      if (unknown.some(Boolean)) return unknown.map((u) => (u ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.OPERATION_NOT_ATTEMPTED));
      const keys = partitions.map((p) => partitionKey(p.topic, p.partition));
      if (m.state === 'Ongoing' && keys.every((k) => m.partitions.has(k))) return all(ErrorCode.NONE);
      const next = this.toOngoing(m);
      for (const k of keys) next.partitions.add(k);
      return all(await this.commitStateCode(next));
    });
  }

  /** KIP-890 verification: is the partition part of the producer's open transaction? */
  verifyPartition(transactionalId: string | null, producerId: bigint, epoch: number, topic: string, partition: number): number {
    const m = transactionalId === null ? undefined : this.txns.get(transactionalId);
    if (m === undefined || m.producerId !== producerId) return ErrorCode.INVALID_TXN_STATE;
    if (epoch < m.producerEpoch) return ErrorCode.INVALID_PRODUCER_EPOCH;
    if (epoch !== m.producerEpoch || m.state !== 'Ongoing' || !m.partitions.has(partitionKey(topic, partition))) return ErrorCode.INVALID_TXN_STATE;
    return ErrorCode.NONE;
  }

  addOffsets(transactionalId: string, producerId: bigint, epoch: number, groupId: string): Promise<number> {
    return this.serial(transactionalId, async () => {
      const m = this.txns.get(transactionalId);
      const error = this.checkProducer(m, producerId, epoch);
      if (error !== ErrorCode.NONE || m === undefined) return error;
      if (m.state === 'PrepareCommit' || m.state === 'PrepareAbort') return ErrorCode.CONCURRENT_TRANSACTIONS;
      if (m.state === 'Ongoing' && m.groups.has(groupId)) return ErrorCode.NONE;
      const next = this.toOngoing(m);
      next.groups.add(groupId);
      return this.commitStateCode(next);
    });
  }

  /** Records offsets committed inside the transaction; they reach the offset store only when it commits. */
  txnOffsetCommit(transactionalId: string, producerId: bigint, epoch: number, groupId: string, offsets: readonly PendingOffset[]): Promise<number> {
    return this.serial(transactionalId, () => {
      const m = this.txns.get(transactionalId);
      // The group coordinator sees only the producer id and epoch: a stale epoch is INVALID_PRODUCER_EPOCH.
      if (m === undefined || m.producerId !== producerId) return Promise.resolve(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
      if (epoch !== m.producerEpoch) return Promise.resolve(ErrorCode.INVALID_PRODUCER_EPOCH);
      if (m.state !== 'Ongoing' || !m.groups.has(groupId)) return Promise.resolve(ErrorCode.INVALID_TXN_STATE);
      let parts = m.pendingOffsets.get(groupId);
      if (parts === undefined) m.pendingOffsets.set(groupId, (parts = new Map()));
      for (const o of offsets) parts.set(partitionKey(o.topic, o.partition), o);
      m.lastUpdateMs = this.clock();
      return Promise.resolve(ErrorCode.NONE);
    });
  }

  /** Whether an open transaction holds an uncommitted offset for the partition (OffsetFetch requireStable). */
  hasPendingOffset(groupId: string, topic: string, partition: number): boolean {
    const key = partitionKey(topic, partition);
    for (const m of this.txns.values()) {
      if ((m.state === 'Ongoing' || m.state === 'PrepareCommit') && m.pendingOffsets.get(groupId)?.has(key) === true) return true;
    }
    return false;
  }

  // ---------------------------------------------------------------- EndTxn

  endTxn(transactionalId: string, producerId: bigint, epoch: number, commit: boolean): Promise<number> {
    return this.serial(transactionalId, async () => {
      const m = this.txns.get(transactionalId);
      const error = this.checkProducer(m, producerId, epoch);
      if (error !== ErrorCode.NONE || m === undefined) return error;
      switch (m.state) {
        case 'Ongoing':
          break;
        case 'CompleteCommit':
          return commit ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE;
        case 'CompleteAbort':
          return commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.NONE;
        case 'PrepareCommit':
          return commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE;
        case 'PrepareAbort':
          return commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS;
        default:
          return ErrorCode.INVALID_TXN_STATE;
      }
      const next = cloneMetadata(m);
      next.state = commit ? 'PrepareCommit' : 'PrepareAbort';
      if (!commit) next.pendingOffsets.clear();
      next.lastUpdateMs = this.clock();
      const code = await this.commitStateCode(next);
      if (code !== ErrorCode.NONE) return code;
      // The outcome is decided and durable: the client is answered NONE even if markers must be retried.
      await this.completeOrRetry(next);
      return ErrorCode.NONE;
    });
  }

  // ---------------------------------------------------------------- operator views

  list(): TxnSummary[] {
    return [...this.txns.values()].map(summary);
  }

  describe(transactionalId: string): TxnSummary | undefined {
    const m = this.txns.get(transactionalId);
    return m === undefined ? undefined : summary(m);
  }

  // ---------------------------------------------------------------- internals

  /** Aborts transactions open longer than their timeout, bumping the epoch so their producer is fenced. */
  async abortTimedOut(): Promise<void> {
    const now = this.clock();
    for (const m of [...this.txns.values()]) {
      if (m.state !== 'Ongoing' || m.txnStartMs < 0 || now - m.txnStartMs <= m.timeoutMs) continue;
      const id = m.transactionalId;
      await this.serial(id, async () => {
        const current = this.txns.get(id);
        if (current === undefined || current.state !== 'Ongoing' || this.clock() - current.txnStartMs <= current.timeoutMs) return;
        this.log.info('aborting a transaction that exceeded its timeout', { transactionalId: id, timeoutMs: current.timeoutMs, producerId: String(current.producerId) });
        await this.fenceAndAbort(current);
      });
    }
  }

  /** Forgets transactional ids idle longer than transactional.id.expiration.ms with no transaction in progress. */
  async expireIds(): Promise<void> {
    for (const m of [...this.txns.values()]) {
      if (!isIdle(m.state) || this.clock() - m.lastUpdateMs <= this.config.idExpirationMs) continue;
      const id = m.transactionalId;
      await this.serial(id, async () => {
        const current = this.txns.get(id);
        if (current === undefined || !isIdle(current.state) || this.clock() - current.lastUpdateMs <= this.config.idExpirationMs) return;
        await this.services.store.remove(id);
        this.txns.delete(id);
        this.log.info('forgot an expired transactional id', { transactionalId: id, producerId: String(current.producerId) });
      });
    }
  }

  private checkProducer(m: TxnMetadata | undefined, producerId: bigint, epoch: number): number {
    if (m === undefined || m.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (epoch !== m.producerEpoch) return ErrorCode.PRODUCER_FENCED;
    return ErrorCode.NONE;
  }

  private toOngoing(m: TxnMetadata): TxnMetadata {
    const next = cloneMetadata(m);
    const now = this.clock();
    if (m.state !== 'Ongoing') {
      next.state = 'Ongoing';
      next.partitions.clear();
      next.groups.clear();
      next.pendingOffsets.clear();
      next.txnStartMs = now;
    }
    next.lastUpdateMs = now;
    return next;
  }

  /** Aborts an open transaction with a bumped epoch (Kafka's PrepareEpochFence), fencing its producer. */
  private async fenceAndAbort(m: TxnMetadata): Promise<void> {
    const next = cloneMetadata(m);
    // An exhausted epoch cannot be bumped: abort at the current one (the next InitProducerId changes the id).
    if (next.producerEpoch < MAX_EPOCH) {
      next.lastProducerId = next.producerId;
      next.lastProducerEpoch = next.producerEpoch;
      next.producerEpoch++;
    }
    next.state = 'PrepareAbort';
    next.pendingOffsets.clear();
    next.lastUpdateMs = this.clock();
    await this.commitState(next);
    await this.completeOrRetry(next);
  }

  private async completeOrRetry(m: TxnMetadata): Promise<void> {
    try {
      await this.complete(m);
    } catch (err) {
      this.log.error('could not finish a transaction; retrying in the background', { transactionalId: m.transactionalId, state: m.state, err });
      this.retryLater(m.transactionalId);
    }
  }

  private retryLater(id: string): void {
    const t = setTimeout(() => {
      if (this.stopped) return;
      void this.serial(id, async () => {
        const m = this.txns.get(id);
        if (m !== undefined && (m.state === 'PrepareCommit' || m.state === 'PrepareAbort')) await this.completeOrRetry(m);
      });
    }, 1000);
    t.unref();
  }

  /** Writes the markers of a prepared transaction, commits its offsets, and records it complete. */
  private async complete(m: TxnMetadata): Promise<void> {
    const commit = m.state === 'PrepareCommit';
    const marker: Marker = { producerId: m.producerId, epoch: m.producerEpoch, commit, coordinatorEpoch: this.coordinatorEpoch };
    txnCrashPoint('after-prepare');
    const [first, ...rest] = [...m.partitions];
    const write = async (key: string) => {
      const { topic, partition } = splitPartitionKey(key);
      const written = await this.services.writeMarker(topic, partition, marker);
      if (!written) this.log.warn('skipped the marker of a partition that no longer exists', { transactionalId: m.transactionalId, topic, partition });
    };
    if (first !== undefined) {
      await write(first);
      if (rest.length > 0) txnCrashPoint('mid-markers');
    }
    await Promise.all(rest.map(write));
    const now = this.clock();
    if (commit) {
      for (const [group, parts] of m.pendingOffsets) await this.services.commitOffsets(group, [...parts.values()], now);
    }
    txnCrashPoint('after-markers');
    const next = cloneMetadata(m);
    next.state = commit ? 'CompleteCommit' : 'CompleteAbort';
    next.partitions.clear();
    next.groups.clear();
    next.pendingOffsets.clear();
    next.txnStartMs = -1;
    next.lastUpdateMs = now;
    await this.commitState(next);
  }

  private async newIdIfExhausted(m: TxnMetadata): Promise<bigint | undefined> {
    return m.producerEpoch >= MAX_EPOCH ? this.services.allocateProducerId() : undefined;
  }

  private async commitState(next: TxnMetadata): Promise<void> {
    await this.services.store.write(next);
    this.txns.set(next.transactionalId, next);
  }

  private async commitStateCode(next: TxnMetadata): Promise<number> {
    try {
      await this.commitState(next);
      return ErrorCode.NONE;
    } catch (err) {
      return this.storeErrorCode(err, next.transactionalId);
    }
  }

  /** A failed state write: NOT_COORDINATOR while stopping (the client finds the coordinator again), else retriable. */
  private storeErrorCode(err: unknown, transactionalId: string): number {
    if (err instanceof TxnStateStoreError && err.code === 'CLOSED') return ErrorCode.NOT_COORDINATOR;
    this.log.error('transaction state write failed', { transactionalId, err });
    return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  }

  private serial<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(id) ?? Promise.resolve();
    const run = prev.then(fn);
    const tail = run.catch(() => undefined);
    this.queues.set(id, tail);
    void tail.then(() => {
      if (this.queues.get(id) === tail) this.queues.delete(id);
    });
    return run;
  }
}

function isIdle(state: TxnState): boolean {
  return state === 'Empty' || state === 'CompleteCommit' || state === 'CompleteAbort';
}

/** Moves to the next epoch (or a fresh producer id at epoch 0 when the epoch is exhausted). */
function bumpEpoch(m: TxnMetadata, newProducerId: bigint | undefined): void {
  m.lastProducerId = m.producerId;
  m.lastProducerEpoch = m.producerEpoch;
  if (newProducerId !== undefined) {
    m.producerId = newProducerId;
    m.producerEpoch = 0;
  } else {
    m.producerEpoch++;
  }
}

function summary(m: TxnMetadata): TxnSummary {
  return {
    transactionalId: m.transactionalId,
    producerId: m.producerId,
    producerEpoch: m.producerEpoch,
    state: m.state,
    timeoutMs: m.timeoutMs,
    txnStartMs: m.txnStartMs,
    partitions: [...m.partitions],
  };
}

/** PRODUCER_FENCED as the request version understands it: older versions get INVALID_PRODUCER_EPOCH. */
export function fencedCode(code: number, version: number, firstVersionWithFenced: number): number {
  return code === ErrorCode.PRODUCER_FENCED && version < firstVersionWithFenced ? ErrorCode.INVALID_PRODUCER_EPOCH : code;
}
