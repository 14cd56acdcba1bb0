import { join } from 'node:path';
import { assignOffsets, countOffsets, type PendingAppend, type StagedAppend } from './append-batches.js';
import { type LogConfig, type LogTopicConfig, resolveLogConfig } from './config.js';
import { LogError } from './errors.js';
import type { InlineWrites } from './inline-writes.js';
import type { LogObserver } from './log-observer.js';
import { completeSwap, type SwapRange } from './cleaner/segment-swap.js';
import { recoverLog, type RecoveryReport } from './log-recovery.js';
import { CLEAN_SHUTDOWN_FILE, LOG_START_CHECKPOINT_FILE, unlinkIfExists, writeFileAtomic } from './files.js';
import { LogSegment, type SegmentRead } from './segment.js';
import { firstAtOrAfter, firstTimestampFrom, maxTimestamp, readSegments } from './segment-lookups.js';

/**
 * Rewrites a batch for a LogAppendTime topic: sets the timestamp-type attribute and the max timestamp to
 * `timestamp`, and recomputes the CRC. Provided by the record-batch codec (protocol/record-batch); the log
 * calls it once per batch, after assigning the offset, before writing.
 */
export type LogAppendTimeRewriter = (buf: Buffer, position: number, timestamp: number) => void;

/**
 * Finds, inside one batch, the first record whose timestamp is >= target, and returns its offset and
 * timestamp. Provided by the record-batch decoder; without it, offsets-by-timestamp answer at batch level.
 */
export type RecordLocator = (batch: Buffer, targetTimestamp: number) => TimestampOffset | undefined;

/** Gate on physical deletion of a segment (retention, DeleteRecords); the tiering plugin says "not yet tiered". */
export type CanDeleteSegment = (baseOffset: number, lastOffset: number) => boolean | Promise<boolean>;

export interface TimestampOffset {
  offset: number;
  timestamp: number;
}

/** Sent when a segment closes (roll, by size, age or on demand): it will never change again. */
export interface ClosedSegment {
  baseOffset: number;
  lastOffset: number;
  /** Path of the `.log` file; its `.index` and `.timeindex` siblings are written and fsynced. */
  path: string;
  sizeInBytes: number;
  maxTimestamp: number;
}

export interface SegmentInfo extends ClosedSegment {
  active: boolean;
}

export interface PartitionLogOptions {
  /** The partition directory, conventionally `<dataDir>/<topic>-<partition>`; created if missing. */
  dir: string;
  config?: LogTopicConfig;
  /** Milliseconds since the epoch; injectable for tests. */
  clock?: () => number;
  setLogAppendTime?: LogAppendTimeRewriter;
  recordLocator?: RecordLocator;
  canDeleteSegment?: CanDeleteSegment;
  /** Receives errors thrown by segment-closed listeners and by background flushes. Default: process warning. */
  onError?: (err: unknown) => void;
  /** Told how long appends waited, writes took and fsyncs took (the broker's metrics). */
  observer?: LogObserver;
  /** Which writes the broker's thread makes itself; without it every write goes to the thread pool. */
  inlineWrites?: InlineWrites;
}

export interface AppendResult {
  /** Offset assigned to the first record of the first batch. */
  baseOffset: number;
  /** Offset of the last record of the last batch. */
  lastOffset: number;
  /** The timestamp written into the batches for LogAppendTime topics, else -1 (Kafka's convention). */
  logAppendTime: number;
  logStartOffset: number;
}

export interface ReadOptions {
  /** Exclusive upper bound: batches whose base offset is >= this are not returned (high watermark or LSO). */
  maxOffset?: number;
  /** Return the first batch even if it is bigger than maxBytes (default true, Kafka's rule). */
  minOneBatch?: boolean;
  /** Where the bytes are read into (a fresh Buffer by default): a Fetch for a client reads into reusable memory. */
  allocate?: (bytes: number) => Buffer;
}

export interface LogReadResult extends SegmentRead {
  logStartOffset: number;
  logEndOffset: number;
}


const EMPTY = Buffer.alloc(0);
/**
 * A group's write takes appends up to this many bytes (a larger single append goes alone), and the rest wait
 * for the next. Writes of several MiB at once copied into the page cache 3-5x slower than 1 MiB writes on
 * the machine of bench/RESULTS.md (the kernel's copy_folio_from_iter_atomic, 83 % of a profile); the cause
 * was not found. 256 KiB keeps 1 MiB batches as fast as before and groups 16 KiB ones.
 */
const GROUP_WRITE_BYTES = 256 * 1024;
const MAX_RELATIVE_OFFSET = 0x7fffffff;

/**
 * The log of one topic-partition on local disk: a list of segments named by base offset, the last one active.
 *
 * Appends are serialized per partition. Reads run concurrently with appends and see only completed writes.
 *
 * Durability: by default (flush.messages and flush.ms unset, as in Kafka) the log never fsyncs on the produce
 * path. An acknowledged append has been written to the OS page cache, so it survives a crash of the process
 * (including kill -9), but not a power loss or kernel crash unless a flush ran after it. flush.messages=N
 * fsyncs before acknowledging every Nth message; flush.ms=T fsyncs in the background at most T ms after data
 * arrives; flush() fsyncs on demand. Closed segments are fsynced (with their indexes) when they roll, and
 * close() fsyncs everything and writes a clean-shutdown marker so the next open can skip recovery.
 *
 * Offsets and timestamps are JS numbers (exact up to 2^53); convert with BigInt() at the protocol boundary.
 */
export class PartitionLog {
  private config: LogConfig;
  private segments: readonly LogSegment[];
  private startOffset: number;
  private readonly clock: () => number;
  private tail: Promise<unknown> = Promise.resolve();
  /** Positional writes made by appends: fewer than the appends when they were made while others were written. */
  private writes = 0;
  /** The group of appends queued last on `tail`, still taking members until it starts or something queues after it. */
  private openGroup: PendingAppend[] | undefined;
  private closed = false;
  private failure: unknown;
  private unflushedMessages = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly sealing = new Map<LogSegment, Promise<void>>();
  private lastSeal: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<(segment: ClosedSegment) => void>();

  private constructor(
    readonly dir: string,
    private readonly options: PartitionLogOptions,
    segments: LogSegment[],
    startOffset: number,
    readonly recovery: RecoveryReport,
  ) {
    this.config = resolveLogConfig(options.config);
    this.clock = options.clock ?? Date.now;
    this.segments = segments;
    this.startOffset = startOffset;
  }

  /** Opens (or creates) the log in `options.dir`, recovering it if the last shutdown was not clean. */
  static async open(options: PartitionLogOptions): Promise<PartitionLog> {
    const { segments, startOffset, report } = await recoverLog(options.dir, resolveLogConfig(options.config), options.clock ?? Date.now);
    return new PartitionLog(options.dir, options, segments, startOffset, report);
  }

  get logStartOffset(): number {
    return this.startOffset;
  }

  /** The offset the next appended record gets (Kafka's log end offset). */
  get logEndOffset(): number {
    return this.active.nextOffset;
  }

  /** Bytes of all segments. */
  get size(): number {
    let n = 0;
    for (const s of this.segments) n += s.size;
    return n;
  }

  get topicConfig(): LogConfig {
    return this.config;
  }

  private get active(): LogSegment {
    return this.segments[this.segments.length - 1] as LogSegment;
  }

  /** Applies new topic configs (AlterConfigs). index.interval.bytes takes effect for segments created later. */
  updateConfig(config: LogTopicConfig): void {
    this.config = resolveLogConfig(config);
    this.scheduleFlush();
  }

  /** Subscribes to segment closes; returns the unsubscribe function. */
  onSegmentClosed(listener: (segment: ClosedSegment) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** How many positional writes appends have made (one per group of appends written together). */
  get appendWrites(): number {
    return this.writes;
  }

  /** All segments, oldest first; the last one is active. */
  segmentInfos(): SegmentInfo[] {
    const active = this.active;
    return this.segments.map((s) => ({ ...describe(s), active: s === active }));
  }

  /**
   * Runs `fn` after every earlier serialized operation; appends, rolls, retention and close go through here.
   * Whatever is queued after a group of appends comes after it, so the group takes no more members.
   */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    this.openGroup = undefined;
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private checkOpen(): void {
    if (this.closed) throw new LogError('LOG_CLOSED', `partition log ${this.dir} is closed; look the partition up again`);
    if (this.failure !== undefined) {
      throw new LogError('KAFKA_STORAGE_ERROR', `partition log ${this.dir} failed a disk write and is offline; fix the disk and restart the broker`, { cause: this.failure });
    }
  }

  /**
   * Appends one or more validated record batches v2 (concatenated, as in a produce request). Assigns offsets
   * by rewriting each batch's baseOffset in the caller's buffer, writes them, and resolves once the write
   * completed (and was fsynced, if flush.messages says so). Offsets follow the order of the calls.
   *
   * Appends made while earlier ones are still being written are written together, after them, with one
   * write of up to GROUP_WRITE_BYTES (group commit): the thread-pool round trip is paid per group, not per
   * batch. A small write may instead be made on the broker's thread (options.inlineWrites).
   */
  append(batches: Buffer): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      const member: PendingAppend = { buf: batches, calledAt: performance.now(), resolve, reject };
      if (this.openGroup !== undefined) {
        this.openGroup.push(member);
        return;
      }
      const group = [member];
      void this.serial(() => this.appendGroup(group));
      this.openGroup = group;
    });
  }

  /** Stages each member of a group (offsets assigned, rolling where needed), then writes them; never rejects. */
  private async appendGroup(group: PendingAppend[]): Promise<void> {
    if (this.openGroup === group) this.openGroup = undefined;
    let staged: StagedAppend[] = [];
    let stagedBytes = 0;
    let stagedOffsets = 0;
    for (const member of group) {
      try {
        this.checkOpen();
        const now = this.clock();
        if (this.config.messageTimestampType === 'LogAppendTime' && this.options.setLogAppendTime === undefined) {
          throw new LogError('LOG_APPEND_TIME_UNSUPPORTED', `topic of ${this.dir} uses LogAppendTime but the log has no timestamp rewriter; pass setLogAppendTime`);
        }
        const offsets = countOffsets(member.buf, this.config.segmentBytes);
        const full = stagedBytes > 0 && stagedBytes + member.buf.length > GROUP_WRITE_BYTES;
        // A full group, or one that must roll first, is written before this append is staged.
        if (full || this.needsRoll(stagedBytes, stagedOffsets, member.buf.length, offsets, now)) {
          await this.writeStaged(staged, now);
          staged = [];
          stagedBytes = stagedOffsets = 0;
          this.checkOpen();
          if (this.needsRoll(0, 0, member.buf.length, offsets, now)) await this.rollNow();
        }
        staged.push(this.stage(member, offsets, staged, now));
        stagedBytes += member.buf.length;
        stagedOffsets += offsets;
      } catch (err) {
        member.reject(err);
      }
    }
    await this.writeStaged(staged, this.clock());
  }

  /** Assigns an append's offsets after what is staged before it (or the log end). */
  private stage(member: PendingAppend, offsets: number, staged: readonly StagedAppend[], now: number): StagedAppend {
    const last = staged[staged.length - 1];
    const baseOffset = last === undefined ? this.active.nextOffset : last.baseOffset + last.offsets;
    const rewrite = this.config.messageTimestampType === 'LogAppendTime' ? this.options.setLogAppendTime : undefined;
    assignOffsets(member.buf, baseOffset, now, rewrite);
    return { member, baseOffset, offsets, logAppendTime: rewrite === undefined ? -1 : now };
  }

  /** Writes staged appends to the active segment with one write, then settles each of them. */
  private async writeStaged(staged: readonly StagedAppend[], now: number): Promise<void> {
    if (staged.length === 0) return;
    const segment = this.active;
    const observer = this.options.observer;
    try {
      try {
        this.writes++;
        const started = performance.now();
        let bytes = 0;
        for (const s of staged) {
          bytes += s.member.buf.length;
          observer?.appendWaited((started - s.member.calledAt) / 1000);
        }
        const inline = this.options.inlineWrites?.shouldInline(bytes) ?? false;
        await segment.append(staged.map((s) => s.member.buf), now, inline);
        const seconds = (performance.now() - started) / 1000;
        if (inline) this.options.inlineWrites?.wroteInline(seconds);
        observer?.segmentWritten(bytes, seconds, inline);
      } catch (err) {
        this.failure = err;
        throw new LogError('KAFKA_STORAGE_ERROR', `write to ${segment.logPath} failed (${(err as Error).message}); the partition is offline until restart`, { cause: err });
      }
      for (const s of staged) this.unflushedMessages += s.offsets;
      if (this.unflushedMessages >= this.config.flushMessages) await this.flushNow();
      else this.scheduleFlush();
    } catch (err) {
      for (const s of staged) s.member.reject(err);
      return;
    }
    for (const s of staged) {
      s.member.resolve({ baseOffset: s.baseOffset, lastOffset: s.baseOffset + s.offsets - 1, logAppendTime: s.logAppendTime, logStartOffset: this.startOffset });
    }
  }

  /**
   * Whether `bytes` more (taking `offsets` more offsets), after what is staged for the active segment, must
   * go to a new segment: segment.bytes or segment.ms reached, or offsets beyond what the index can hold
   * relative to the base. An empty segment with nothing staged never rolls.
   */
  private needsRoll(stagedBytes: number, stagedOffsets: number, bytes: number, offsets: number, now: number): boolean {
    const seg = this.active;
    if (seg.isEmpty && stagedBytes === 0) return false;
    const { segmentBytes, segmentMs } = this.config;
    return seg.size + stagedBytes + bytes > segmentBytes || now - (seg.rollBaseMs ?? now) >= segmentMs || seg.nextOffset + stagedOffsets + offsets - 1 - seg.baseOffset > MAX_RELATIVE_OFFSET;
  }

  /**
   * Closes the active segment and starts a new one at the log end offset, unless the active segment is empty.
   * The closed segment is fsynced with its indexes in the background; listeners hear about it afterwards.
   * Resolves with the closed segment (undefined if there was nothing to close) once it is sealed, and in
   * either case only after every segment closed before it (by size, age or a roll nobody awaited, such as
   * the commit-interval timer's) has been announced: a caller that rolls and then drains tiering sees them all.
   */
  roll(): Promise<ClosedSegment | undefined> {
    return this.serial(async () => {
      this.checkOpen();
      return this.rollNow();
    }).then(async (closed) => {
      if (closed === undefined) {
        await this.lastSeal;
        return undefined;
      }
      await this.sealing.get(closed.segment);
      return describe(closed.segment);
    });
  }

  private async rollNow(): Promise<{ segment: LogSegment } | undefined> {
    const old = this.active;
    if (old.isEmpty) return undefined;
    const fresh = await LogSegment.create(this.dir, old.nextOffset, this.config.indexIntervalBytes);
    this.segments = [...this.segments, fresh];
    this.unflushedMessages = 0; // the seal below flushes everything appended so far
    // Seals run one after another, so listeners hear about segments in offset order.
    const seal = this.lastSeal.then(() => this.seal(old)).finally(() => this.sealing.delete(old));
    this.lastSeal = seal;
    this.sealing.set(old, seal);
    return { segment: old };
  }

  private async seal(segment: LogSegment): Promise<void> {
    try {
      const started = performance.now();
      await segment.flush();
      await segment.persistIndexes(true);
      this.options.observer?.flushed((performance.now() - started) / 1000);
    } catch (err) {
      this.report(err);
      return;
    }
    const event = describe(segment);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.report(err);
      }
    }
  }

  private report(err: unknown): void {
    if (this.options.onError) this.options.onError(err);
    else process.emitWarning(`partition log ${this.dir}: ${err instanceof Error ? err.message : String(err)}`);
  }

  private scheduleFlush(): void {
    const ms = this.config.flushMs;
    if (this.flushTimer !== undefined || this.unflushedMessages === 0 || !Number.isFinite(ms) || this.closed) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flush().catch((err: unknown) => this.report(err));
    }, Math.min(ms, 0x7fffffff));
    this.flushTimer.unref();
  }

  /** fsyncs everything appended so far (active segment and segments still being sealed). */
  async flush(): Promise<void> {
    this.checkOpen();
    await this.flushNow();
  }

  private async flushNow(): Promise<void> {
    const pending = this.unflushedMessages;
    const started = performance.now();
    // Only the active segment's fsync is timed here: a seal waited on below reports its own.
    const active = this.active.flush().then(() => this.options.observer?.flushed((performance.now() - started) / 1000));
    await Promise.all([active, ...this.sealing.values()]);
    this.unflushedMessages = Math.max(0, this.unflushedMessages - pending);
  }

  /**
   * Reads whole batches from one segment, starting at the batch containing `fetchOffset`, within maxBytes
   * (except the first batch, see ReadOptions.minOneBatch) and below `maxOffset`. Returns a Buffer of the stored
   * bytes (a slice of one positional read; Node has no sendfile for sockets, so a buffer from the page cache
   * is as close to zero-copy as it gets). Empty records at the end of the log. Throws OFFSET_OUT_OF_RANGE
   * below the log start offset or above the log end offset.
   */
  async read(fetchOffset: number, maxBytes: number, options: ReadOptions = {}): Promise<LogReadResult> {
    if (this.closed) throw new LogError('LOG_CLOSED', `partition log ${this.dir} is closed; look the partition up again`);
    const logStartOffset = this.startOffset;
    const logEndOffset = this.logEndOffset;
    if (fetchOffset < logStartOffset || fetchOffset > logEndOffset) {
      throw new LogError('OFFSET_OUT_OF_RANGE', `offset ${fetchOffset} is outside [${logStartOffset}, ${logEndOffset}]; reset to the earliest or latest offset`);
    }
    const upper = Math.min(options.maxOffset ?? logEndOffset, logEndOffset);
    const minOneBatch = options.minOneBatch ?? true;
    for (;;) {
      const segs = this.segments;
      try {
        const r = await readSegments(segs, fetchOffset, maxBytes, upper, minOneBatch, options.allocate);
        return { ...(r ?? { records: EMPTY, firstOffset: fetchOffset, nextOffset: fetchOffset }), logStartOffset, logEndOffset };
      } catch (err) {
        // The log cleaner replaced a segment under this read: read again from the new list.
        if (segs === this.segments || this.closed || !segs.some((s) => s.retired && !this.segments.includes(s))) throw err;
      }
    }
  }

  /**
   * ListOffsets by timestamp: the first batch whose max timestamp is >= `timestamp` (refined to the first such
   * record when a RecordLocator is configured). Undefined when no batch qualifies (Kafka answers offset -1).
   */
  async offsetForTimestamp(timestamp: number): Promise<TimestampOffset | undefined> {
    if (this.closed) throw new LogError('LOG_CLOSED', `partition log ${this.dir} is closed; look the partition up again`);
    return firstAtOrAfter(this.segments, this.startOffset, timestamp, this.options.recordLocator);
  }

  /**
   * ListOffsets MAX_TIMESTAMP: the largest timestamp in the log and the offset carrying it (the batch's base
   * offset, or the exact record with a RecordLocator). Undefined for an empty log.
   */
  async maxTimestampOffset(): Promise<TimestampOffset | undefined> {
    if (this.closed) throw new LogError('LOG_CLOSED', `partition log ${this.dir} is closed; look the partition up again`);
    return maxTimestamp(this.segments, this.startOffset, this.options.recordLocator);
  }

  /**
   * The timestamp of the first record of the batch holding `offset` (or of the first batch after it, across
   * offset gaps), from the batch header: see LogSegment.firstTimestamp. Undefined at or past the log end.
   * Read-only, for metrics (the event time of the oldest record the table does not hold yet).
   */
  async firstTimestampFrom(offset: number): Promise<number | undefined> {
    if (this.closed) return undefined;
    return firstTimestampFrom(this.segments, Math.max(offset, this.startOffset));
  }

  /**
   * Deletes old segments as retention.ms (by each segment's max timestamp) and retention.bytes (oldest first)
   * allow, never the active segment, and only those canDeleteSegment approves (stopping at the first refusal,
   * so the log stays contiguous). Advances the log start offset. Returns how many segments were deleted.
   */
  enforceRetention(): Promise<number> {
    return this.serial(async () => {
      this.checkOpen();
      const now = this.clock();
      const { retentionMs, retentionBytes } = this.config;
      let total = this.size;
      return this.deleteOldest((seg) => {
        const ts = seg.maxTimestamp >= 0 ? seg.maxTimestamp : (seg.rollBaseMs ?? now);
        // With retention on (compact,delete), an empty closed segment (the cleaner removed every record of
        // it) holds nothing to keep; with compact alone the log start never moves.
        const bounded = Number.isFinite(retentionMs) || Number.isFinite(retentionBytes);
        const expired = (bounded && seg.isEmpty) || now - ts > retentionMs || total - seg.size >= retentionBytes;
        if (expired) total -= seg.size;
        return expired;
      });
    });
  }

  /**
   * DeleteRecords: makes `offset` the new log start offset (persisted atomically) and deletes the segments
   * wholly below it, as canDeleteSegment allows. Offsets beyond the log end throw OFFSET_OUT_OF_RANGE.
   * Resolves with the log start offset.
   */
  deleteRecordsBefore(offset: number): Promise<number> {
    return this.serial(async () => {
      this.checkOpen();
      if (offset > this.logEndOffset || offset < 0) {
        throw new LogError('OFFSET_OUT_OF_RANGE', `cannot delete records before ${offset}: the log ends at ${this.logEndOffset}`);
      }
      if (offset > this.startOffset) {
        this.startOffset = offset;
        await this.writeCheckpoint();
      }
      await this.deleteOldest(() => false);
      return this.startOffset;
    });
  }

  /**
   * Moves an empty log (one segment, nothing ever appended) so that it starts at `offset`: log start and log
   * end become `offset`, and the next append gets it. For a partition whose earlier history lives elsewhere:
   * tiered storage recovered from the warehouse after the local disk was lost. Returns false and changes
   * nothing when the log holds records or already starts at or beyond `offset`.
   */
  startEmptyLogAt(offset: number): Promise<boolean> {
    return this.serial(async () => {
      this.checkOpen();
      if (!Number.isSafeInteger(offset) || offset < 0) throw new LogError('OFFSET_OUT_OF_RANGE', `cannot start a log at ${offset}; give a non-negative offset`);
      const only = this.segments.length === 1 ? this.active : undefined;
      if (only === undefined || !only.isEmpty || only.baseOffset >= offset) return false;
      const fresh = await LogSegment.create(this.dir, offset, this.config.indexIntervalBytes);
      // Checkpoint first: a crash before the old segment is gone reopens with the start at `offset`.
      this.startOffset = offset;
      await this.writeCheckpoint();
      this.segments = [fresh];
      await only.delete();
      return true;
    });
  }

  /** Deletes leading segments while `expired` says so or they lie wholly below the log start offset. */
  private async deleteOldest(expired: (seg: LogSegment) => boolean): Promise<number> {
    let deleted = 0;
    const gate = this.options.canDeleteSegment;
    while (this.segments.length > 1) {
      const seg = this.segments[0] as LogSegment;
      const next = this.segments[1] as LogSegment;
      const belowStart = next.baseOffset <= this.startOffset;
      if (!(belowStart || expired(seg))) break;
      // Wholly below the log start (DeleteRecords): its records are deleted, so the gate (not tiered yet) has no say.
      if (!belowStart && gate !== undefined && !(await gate(seg.baseOffset, seg.lastOffset))) break;
      await this.sealing.get(seg);
      // The start moves before the segment leaves the list: a concurrent read of its offsets gets
      // OFFSET_OUT_OF_RANGE (and tiered storage can answer it), never the next segment's batches.
      const moved = next.baseOffset > this.startOffset;
      if (moved) this.startOffset = next.baseOffset;
      this.segments = this.segments.slice(1);
      await seg.delete();
      deleted++;
      if (moved) await this.writeCheckpoint();
    }
    return deleted;
  }

  private async writeCheckpoint(): Promise<void> {
    await writeFileAtomic(this.dir, join(this.dir, LOG_START_CHECKPOINT_FILE), Buffer.from(`${this.startOffset}\n`));
  }

  /**
   * For the log cleaner: the closed segments, oldest first, that are sealed (fsynced) and so will not
   * change until the cleaner itself replaces them. The active segment is never among them.
   */
  cleanableSegments(): readonly LogSegment[] {
    const segs = this.segments;
    const out: LogSegment[] = [];
    for (const s of segs.slice(0, -1)) {
      if (this.sealing.has(s)) break;
      out.push(s);
    }
    return out;
  }

  /**
   * For the log cleaner: replaces `inputs` (consecutive segments of this log) with the cleaned segment held
   * in the swap file at `swapPath` (see cleaner/segment-swap.ts), in memory and on disk. Returns false, and
   * deletes the swap file, when the inputs are no longer all in the log (retention or DeleteRecords ran).
   * Readers of the old segments finish on the old files; reads that start later see the new segment.
   */
  async replaceSegments(inputs: readonly LogSegment[], swapPath: string, range: SwapRange): Promise<boolean> {
    const first = inputs[0];
    if (first === undefined || first.baseOffset !== range.base) throw new LogError('KAFKA_STORAGE_ERROR', `cleaned segment ${swapPath} does not start at its inputs' base offset`);
    const { segment: fresh } = await LogSegment.open(this.dir, range.base, this.config.indexIntervalBytes, true, true, swapPath);
    return this.serial(async () => {
      const at = this.closed || this.failure !== undefined ? -1 : this.segments.indexOf(first);
      const intact = at >= 0 && at + inputs.length < this.segments.length && inputs.every((s, i) => this.segments[at + i] === s);
      if (!intact) {
        await fresh.close();
        await unlinkIfExists(swapPath);
        return false;
      }
      this.segments = [...this.segments.slice(0, at), fresh, ...this.segments.slice(at + inputs.length)];
      await completeSwap(this.dir, range);
      await fresh.persistIndexes(true);
      await Promise.all(inputs.map((s) => s.retire()));
      return true;
    });
  }

  /** Flushes everything, writes the indexes and the clean-shutdown marker, and closes the files. */
  close(): Promise<void> {
    if (this.closed) return this.tail.then(() => undefined);
    return this.serial(async () => {
      if (this.closed) return;
      this.closed = true;
      if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
      await Promise.all(this.sealing.values());
      const healthy = this.failure === undefined;
      if (healthy) {
        await this.active.flush();
        // The active segment's indexes, and those rebuilt by recovery at open (no-op for the others).
        for (const seg of this.segments) await seg.persistIndexes(true);
      }
      await Promise.all(this.segments.map((s) => s.close()));
      if (healthy) await writeFileAtomic(this.dir, join(this.dir, CLEAN_SHUTDOWN_FILE), Buffer.alloc(0));
    });
  }
}

function describe(seg: LogSegment): ClosedSegment {
  return { baseOffset: seg.baseOffset, lastOffset: seg.lastOffset, path: seg.logPath, sizeInBytes: seg.size, maxTimestamp: seg.maxTimestamp };
}
