/**
 * Committed offsets and group membership, durable: an append-only log
 * `<log.dirs>/__consumer_offsets/offsets.log` plus the in-memory view rebuilt from it at start-up (Kafka keeps
 * both in its __consumer_offsets topic).
 *
 * Each record is `[u32 payload length][u32 CRC32C of payload][payload: JSON]`. Two kinds of payload, told
 * apart by their shape as Kafka tells its record kinds apart by key version:
 * - an array `[group, changes | null]` (the original format, unchanged): every offset change of one request
 *   for one group (so a multi-partition commit is all-or-nothing after a crash), or with null the deletion of
 *   the whole group (its offsets and its membership);
 * - an object `{ "type": "group", "version": 1, "group": ..., "value": GroupMetadataValue | null }`: the
 *   group's membership (group-metadata.ts), replacing the previous one, or with null removing it.
 * A record of a kind or version this broker does not know (written by a newer one) stops the start-up with
 * an error instead of being cut off as a torn tail.
 *
 * A write is acknowledged only after its record is fsync'd; writes that arrive while an fsync is running share
 * the next one (group commit), so many groups committing at once cost one fsync per batch, not per request. The
 * in-memory view changes only after the record is durable, so OffsetFetch never shows an offset that a crash
 * could lose.
 *
 * Recovery reads records until the first torn or corrupt one and truncates the file there (a crash can only
 * tear the tail, which was never acknowledged). When the log holds many more records than live groups, it is
 * compacted: the live offsets and memberships are written to a temp file, fsync'd and renamed over the log.
 */
import { crc32c } from '@node-rs/crc32';
import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir } from '../log/files.js';
import type { GroupMetadataValue } from './group-metadata.js';

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
interface StoredMetadataRecord {
  type: 'group';
  version: 1;
  group: string;
  value: GroupMetadataValue | null;
}

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
  private readonly metadata = new Map<string, GroupMetadataValue>();
  /** Membership writes per group that are queued or being written, so a group deletion does not miss them. */
  private readonly metadataInFlight = new Map<string, number>();
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
      if (store.needsCompaction()) await store.compact();
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

  /** The group's stored membership, if any. */
  groupMetadata(group: string): GroupMetadataValue | undefined {
    return this.metadata.get(group);
  }

  /** Groups with stored membership. */
  metadataGroups(): IterableIterator<string> {
    return this.metadata.keys();
  }

  /** Durably replaces (or, with null, removes) a group's membership; resolves once it is on disk. */
  writeGroupMetadata(group: string, value: GroupMetadataValue | null): Promise<void> {
    if (value === null && !this.metadata.has(group) && !this.metadataInFlight.has(group)) return Promise.resolve();
    this.metadataInFlight.set(group, (this.metadataInFlight.get(group) ?? 0) + 1);
    const settled = () => {
      const n = (this.metadataInFlight.get(group) ?? 1) - 1;
      if (n > 0) this.metadataInFlight.set(group, n);
      else this.metadataInFlight.delete(group);
    };
    const written = this.enqueue({ type: 'group', version: 1, group, value }, () => this.applyMetadata(group, value));
    written.then(settled, settled);
    return written;
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

  /** Durably removes every offset and the membership of a group. */
  deleteGroup(group: string): Promise<void> {
    if (!this.offsets.has(group) && !this.metadata.has(group) && !this.metadataInFlight.has(group)) return Promise.resolve();
    return this.enqueue([group, null], () => this.dropGroup(group));
  }

  /** Waits for acknowledged writes to finish, then closes the file. Later writes fail with CLOSED. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing) await this.flushing;
    await this.fh.close();
  }

  private enqueue(record: StoredRecord | StoredMetadataRecord, apply: () => void): Promise<void> {
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
      if (this.needsCompaction()) {
        try {
          await this.compact();
        } catch {
          // The log stays valid and complete; compaction is retried after the next batch.
        }
      }
    }
  }

  private needsCompaction(): boolean {
    return this.records > this.compactAfter + this.offsets.size + this.metadata.size;
  }

  /** Rewrites the log as one offsets record per group with offsets and one membership record per group with one. */
  private async compact(): Promise<void> {
    const chunks: Buffer[] = [];
    let records = 0;
    const push = (record: StoredRecord | StoredMetadataRecord) => {
      const payload = Buffer.from(JSON.stringify(record), 'utf8');
      const header = Buffer.allocUnsafe(HEADER);
      header.writeUInt32BE(payload.length, 0);
      header.writeUInt32BE(crc32c(payload), 4);
      chunks.push(header, payload);
      records++;
    };
    for (const [group, value] of this.metadata) push({ type: 'group', version: 1, group, value });
    for (const [group, topics] of this.offsets) {
      const changes: StoredChange[] = [];
      for (const [topic, parts] of topics) {
        for (const [partition, v] of parts) {
          changes.push([topic, partition, String(v.offset), v.leaderEpoch, v.metadata, v.commitTimestamp, v.expireTimestamp]);
        }
      }
      push([group, changes]);
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
      let record: StoredRecord | StoredMetadataRecord;
      try {
        record = JSON.parse(payload.toString('utf8')) as StoredRecord | StoredMetadataRecord;
      } catch {
        break;
      }
      if (Array.isArray(record)) {
        const [group, changes] = record;
        if (changes === null) this.dropGroup(group);
        else this.applyChanges(group, changes);
      } else if (record.type === 'group' && record.version === 1) {
        this.applyMetadata(record.group, record.value);
      } else {
        throw new Error(`record at byte ${pos} is of a kind this broker does not know (${JSON.stringify({ type: record.type, version: record.version })}); it was written by a newer Floe`);
      }
      this.records++;
      pos = end;
    }
    return pos;
  }

  private dropGroup(group: string): void {
    this.offsets.delete(group);
    this.metadata.delete(group);
  }

  private applyMetadata(group: string, value: GroupMetadataValue | null): void {
    if (value === null) this.metadata.delete(group);
    else this.metadata.set(group, value);
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
