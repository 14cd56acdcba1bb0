/**
 * Committed offsets, durable: an append-only log `<log.dirs>/__consumer_offsets/offsets.log` plus the
 * in-memory view rebuilt from it at start-up.
 *
 * Each record is `[u32 payload length][u32 CRC32C of payload][payload: JSON]` and holds every change of one
 * request for one group (so a multi-partition commit is all-or-nothing after a crash). A write is
 * acknowledged only after its record is fsync'd; writes that arrive while an fsync is running share the next
 * one (group commit), so many groups committing at once cost one fsync per batch, not per request. The
 * in-memory view changes only after the record is durable, so OffsetFetch never shows an offset that a crash
 * could lose.
 *
 * Recovery reads records until the first torn or corrupt one and truncates the file there (a crash can only
 * tear the tail, which was never acknowledged). When the log holds many more records than live groups, it is
 * compacted: the live offsets are written to a temp file, fsync'd and renamed over the log.
 */
import { crc32c } from '@node-rs/crc32';
import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir } from '../log/files.js';

export interface CommittedOffset {
  readonly offset: bigint;
  /** The leader epoch the consumer saw at this offset, or -1. */
  readonly leaderEpoch: number;
  readonly metadata: string | null;
  /** When the commit was accepted (ms since the epoch). */
  readonly commitTimestamp: number;
  /** An explicit expiry time from OffsetCommit v2-4 `retentionTimeMs`, or -1 to follow offsets.retention.minutes. */
  readonly expireTimestamp: number;
}

/** One change to a group's offsets: a commit, or a deletion when `value` is null. */
export interface OffsetWrite {
  readonly topic: string;
  readonly partition: number;
  readonly value: CommittedOffset | null;
}

export type GroupOffsets = ReadonlyMap<string, ReadonlyMap<number, CommittedOffset>>;

export class OffsetStoreError extends Error {
  override readonly name = 'OffsetStoreError';
  constructor(
    readonly code: 'IO_ERROR' | 'CLOSED',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface OffsetStoreOptions {
  /** Compact once the log holds this many records more than there are live groups. */
  readonly compactAfterRecords?: number;
}

/** [group, [[topic, partition, offset|null, leaderEpoch, metadata, commitTs, expireTs], ...]] or [group, null] to drop the group. */
type StoredChange = [string, number, string | null, number, string | null, number, number];
type StoredRecord = [string, StoredChange[] | null];

const HEADER = 8;
const LOG_FILE = 'offsets.log';
const DEFAULT_COMPACT_AFTER = 10_000;

interface Pending {
  readonly buf: Buffer;
  readonly apply: () => void;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
}

export class OffsetStore {
  private readonly offsets = new Map<string, Map<string, Map<number, CommittedOffset>>>();
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;
  private records = 0;

  private constructor(
    private readonly dir: string,
    private fh: FileHandle,
    private size: number,
    private readonly compactAfter: number,
  ) {}

  /** Opens (creating if needed) the offsets log in `dir` and replays it. */
  static async open(dir: string, options: OffsetStoreOptions = {}): Promise<OffsetStore> {
    const path = join(dir, LOG_FILE);
    try {
      await mkdir(dir, { recursive: true });
      let data: Buffer;
      try {
        data = await readFile(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        data = Buffer.alloc(0);
      }
      const fh = await open(path, data.length === 0 ? 'w+' : 'r+');
      const store = new OffsetStore(dir, fh, 0, options.compactAfterRecords ?? DEFAULT_COMPACT_AFTER);
      const valid = store.replay(data);
      store.size = valid;
      if (valid < data.length) {
        await fh.truncate(valid);
        await fh.datasync();
      }
      if (data.length === 0) await syncDir(dir);
      if (store.records > store.compactAfter + store.offsets.size) await store.compact();
      return store;
    } catch (err) {
      throw new OffsetStoreError('IO_ERROR', `cannot open the committed-offsets log ${path}: ${(err as Error).message}; check the data directory's permissions and free space`, { cause: err });
    }
  }

  get(group: string, topic: string, partition: number): CommittedOffset | undefined {
    return this.offsets.get(group)?.get(topic)?.get(partition);
  }

  /** Every committed offset of a group, by topic and partition (empty when it has none). */
  groupOffsets(group: string): GroupOffsets {
    return this.offsets.get(group) ?? new Map();
  }

  hasOffsets(group: string): boolean {
    return this.offsets.has(group);
  }

  /** Groups that have committed offsets. */
  groups(): IterableIterator<string> {
    return this.offsets.keys();
  }

  /** Durably applies commits and deletions for one group; resolves once they are on disk and visible. */
  write(group: string, writes: readonly OffsetWrite[]): Promise<void> {
    if (writes.length === 0) return Promise.resolve();
    const changes: StoredChange[] = writes.map((w) => [
      w.topic,
      w.partition,
      w.value ? String(w.value.offset) : null,
      w.value?.leaderEpoch ?? -1,
      w.value?.metadata ?? null,
      w.value?.commitTimestamp ?? 0,
      w.value?.expireTimestamp ?? -1,
    ]);
    return this.enqueue([group, changes], () => this.applyChanges(group, changes));
  }

  /** Durably removes every offset of a group. */
  deleteGroup(group: string): Promise<void> {
    if (!this.offsets.has(group)) return Promise.resolve();
    return this.enqueue([group, null], () => this.offsets.delete(group));
  }

  /** Waits for acknowledged writes to finish, then closes the file. Later writes fail with CLOSED. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing) await this.flushing;
    await this.fh.close();
  }

  private enqueue(record: StoredRecord, apply: () => void): Promise<void> {
    if (this.closed) return Promise.reject(new OffsetStoreError('CLOSED', 'the committed-offsets log is closed because the broker is stopping; retry against the restarted broker'));
    const payload = Buffer.from(JSON.stringify(record), 'utf8');
    const buf = Buffer.allocUnsafe(HEADER + payload.length);
    buf.writeUInt32BE(payload.length, 0);
    buf.writeUInt32BE(crc32c(payload), 4);
    payload.copy(buf, HEADER);
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ buf, apply, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.flushing) return;
    // A write queued after the loop saw an empty queue, but before this runs, is picked up here.
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = undefined;
      if (this.pending.length > 0) this.kick();
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        const bufs = batch.map((p) => p.buf);
        const bytes = bufs.reduce((n, b) => n + b.length, 0);
        await this.fh.writev(bufs, this.size);
        await this.fh.datasync();
        this.size += bytes;
        this.records += batch.length;
      } catch (err) {
        // Cut off whatever part of the batch reached the file, so later appends follow intact records.
        await this.fh.truncate(this.size).catch(() => undefined);
        const failure = new OffsetStoreError('IO_ERROR', `cannot write the committed-offsets log in ${this.dir}: ${(err as Error).message}; check the disk, then retry the commit`, { cause: err });
        for (const p of batch) p.reject(failure);
        continue;
      }
      for (const p of batch) {
        p.apply();
        p.resolve();
      }
      if (this.records > this.compactAfter + this.offsets.size) {
        try {
          await this.compact();
        } catch {
          // The log stays valid and complete; compaction is retried after the next batch.
        }
      }
    }
  }

  /** Rewrites the log as one record per live group. */
  private async compact(): Promise<void> {
    const chunks: Buffer[] = [];
    let records = 0;
    for (const [group, topics] of this.offsets) {
      const changes: StoredChange[] = [];
      for (const [topic, parts] of topics) {
        for (const [partition, v] of parts) {
          changes.push([topic, partition, String(v.offset), v.leaderEpoch, v.metadata, v.commitTimestamp, v.expireTimestamp]);
        }
      }
      const payload = Buffer.from(JSON.stringify([group, changes] satisfies StoredRecord), 'utf8');
      const header = Buffer.allocUnsafe(HEADER);
      header.writeUInt32BE(payload.length, 0);
      header.writeUInt32BE(crc32c(payload), 4);
      chunks.push(header, payload);
      records++;
    }
    const path = join(this.dir, LOG_FILE);
    const tmp = path + '.compact';
    const out = await open(tmp, 'w+');
    let size = 0;
    try {
      if (chunks.length > 0) await out.writev(chunks, 0);
      size = chunks.reduce((n, b) => n + b.length, 0);
      await out.datasync();
    } catch (err) {
      await out.close();
      throw err;
    }
    await rename(tmp, path);
    await syncDir(this.dir);
    await this.fh.close();
    this.fh = out;
    this.size = size;
    this.records = records;
  }

  /** Replays records from the start of `data`; returns the length of the valid prefix. */
  private replay(data: Buffer): number {
    let pos = 0;
    while (pos + HEADER <= data.length) {
      const len = data.readUInt32BE(pos);
      const end = pos + HEADER + len;
      if (end > data.length) break;
      const payload = data.subarray(pos + HEADER, end);
      if (crc32c(payload) !== data.readUInt32BE(pos + 4)) break;
      let record: StoredRecord;
      try {
        record = JSON.parse(payload.toString('utf8')) as StoredRecord;
      } catch {
        break;
      }
      const [group, changes] = record;
      if (changes === null) this.offsets.delete(group);
      else this.applyChanges(group, changes);
      this.records++;
      pos = end;
    }
    return pos;
  }

  private applyChanges(group: string, changes: readonly StoredChange[]): void {
    let topics = this.offsets.get(group);
    for (const [topic, partition, offset, leaderEpoch, metadata, commitTimestamp, expireTimestamp] of changes) {
      if (offset === null) {
        const parts = topics?.get(topic);
        parts?.delete(partition);
        if (parts && parts.size === 0) topics?.delete(topic);
        continue;
      }
      if (!topics) this.offsets.set(group, (topics = new Map()));
      let parts = topics.get(topic);
      if (!parts) topics.set(topic, (parts = new Map()));
      parts.set(partition, Object.freeze({ offset: BigInt(offset), leaderEpoch, metadata, commitTimestamp, expireTimestamp }));
    }
    if (topics && topics.size === 0) this.offsets.delete(group);
  }
}
