import { open, readFile, stat, type FileHandle } from 'node:fs/promises';
import { constants, writev, writevSync } from 'node:fs';
import { BATCH_HEADER_SIZE, BATCH_OFFSETS } from '../../protocol/record-batch/header.js';
import { batchSizeAt, readFully, scanFile } from './batch-scan.js';
import { LogError } from './errors.js';
import { COMPACTED_SUFFIX, INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, segmentPath, unlinkIfExists, writeFileAtomic } from './files.js';
import { OffsetIndex } from './offset-index.js';
import { TimeIndex } from './time-index.js';

/** How many buffers one writev takes at most (Linux's IOV_MAX). */
const MAX_IOV = 1024;

/** int64 read as a JS number; offsets and timestamps stay far below 2^53. */
export function readInt64(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * 4294967296 + buf.readUInt32BE(pos + 4);
}

/** Where a batch sits in a segment, read from its header. */
export interface BatchLocation {
  position: number;
  sizeInBytes: number;
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
}

/** Whole batches read from one segment. */
export interface SegmentRead {
  /** Whole batches, exactly as stored; empty when the first batch exceeded maxBytes and minOneBatch was false. */
  records: Buffer;
  /** Base offset of the first batch returned (it may be below the fetch offset: batches are never split). */
  firstOffset: number;
  /** The offset after the last batch returned: where the next fetch should start. */
  nextOffset: number;
}

const EMPTY = Buffer.alloc(0);
/** Batch attributes bit 3: the timestamps are LogAppendTime. */
const TIMESTAMP_TYPE_BIT = 0x08;
/** Batch attributes bit 6: baseTimestamp holds the cleaner's delete horizon, not the first record's time. */
const DELETE_HORIZON_BIT = 0x40;
/** Bytes of a header needed to know a batch's offsets and max timestamp. */
const HEADER_NEED = BATCH_OFFSETS.maxTimestamp + 8;

/**
 * One segment of a partition log: a `.log` file of record batches v2 stored exactly as received (offsets
 * assigned), with its sparse offset and time indexes. The indexes live in memory and are written to their
 * files when the segment rolls or the log closes. Positional reads work while appends go on: readers never
 * look past `size`, which only grows once a write has completed.
 */
export class LogSegment {
  readonly logPath: string;
  readonly indexPath: string;
  readonly timeIndexPath: string;
  /** Bytes of whole batches in the file. */
  size = 0;
  /** Offset after the last batch; equals baseOffset while the segment is empty. */
  nextOffset: number;
  /** Largest batch max timestamp in the segment, -1 when none. */
  maxTimestamp = -1;
  /** Base offset of the first batch that carries maxTimestamp. */
  offsetOfMaxTimestamp: number;
  /** Clock time from which segment.ms is counted: the first append, or the first batch's timestamp after a reopen. */
  rollBaseMs: number | undefined;
  offsetIndex: OffsetIndex;
  timeIndex: TimeIndex;
  private bytesSinceLastIndexEntry = 0;
  private readers = 0;
  private closed = false;
  private idle: (() => void) | undefined;
  /** True when the index files on disk are not known to match the in-memory indexes. */
  private indexesDirty = true;
  /** Written by the log cleaner: offsets may have gaps between batches. */
  compacted = false;

  private constructor(
    readonly dir: string,
    readonly baseOffset: number,
    private handle: FileHandle,
    private readonly indexIntervalBytes: number,
  ) {
    this.logPath = segmentPath(dir, baseOffset, LOG_SUFFIX);
    this.indexPath = segmentPath(dir, baseOffset, INDEX_SUFFIX);
    this.timeIndexPath = segmentPath(dir, baseOffset, TIME_INDEX_SUFFIX);
    this.nextOffset = baseOffset;
    this.offsetOfMaxTimestamp = baseOffset;
    this.offsetIndex = new OffsetIndex(baseOffset);
    this.timeIndex = new TimeIndex(baseOffset);
  }

  get lastOffset(): number {
    return this.nextOffset - 1;
  }

  get isEmpty(): boolean {
    return this.size === 0;
  }

  /** Creates a new, empty segment (an existing file of the same name is truncated). */
  static async create(dir: string, baseOffset: number, indexIntervalBytes: number): Promise<LogSegment> {
    const path = segmentPath(dir, baseOffset, LOG_SUFFIX);
    const handle = await open(path, constants.O_RDWR | constants.O_CREAT | constants.O_TRUNC, 0o644);
    const seg = new LogSegment(dir, baseOffset, handle, indexIntervalBytes);
    await unlinkIfExists(seg.indexPath);
    await unlinkIfExists(seg.timeIndexPath);
    return seg;
  }

  /**
   * Opens an existing segment. With `recover`, every batch is validated (length, magic, CRC, offsets) and the
   * file is truncated after the last valid one, and the indexes are rebuilt. Without it, the index files are
   * loaded and checked, and only the tail after the last index entry is validated; any inconsistency falls
   * back to a full recovery. Returns how many bytes were truncated and whether the indexes were rebuilt.
   */
  static async open(
    dir: string,
    baseOffset: number,
    indexIntervalBytes: number,
    recover: boolean,
    compacted = false,
    path = segmentPath(dir, baseOffset, LOG_SUFFIX),
  ): Promise<{ segment: LogSegment; truncatedBytes: number; rebuilt: boolean }> {
    const handle = await open(path, constants.O_RDWR);
    const seg = new LogSegment(dir, baseOffset, handle, indexIntervalBytes);
    seg.compacted = compacted;
    try {
      const fileSize = (await handle.stat()).size;
      if (!recover && (await seg.loadIndexes(fileSize))) return { segment: seg, truncatedBytes: 0, rebuilt: false };
      const validEnd = await seg.rebuild(fileSize);
      if (validEnd < fileSize) {
        await handle.truncate(validEnd);
        await handle.datasync();
      }
      return { segment: seg, truncatedBytes: fileSize - validEnd, rebuilt: true };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** Scans the whole file, rebuilding the indexes; returns the end of the last valid batch. */
  private async rebuild(fileSize: number): Promise<number> {
    this.resetState();
    const end = await scanFile(this.handle, 0, fileSize, (pos, b) => {
      // The log assigns offsets itself, so they are contiguous from the segment's base: a jump means the
      // base offset (outside the CRC) is corrupt.
      if (this.compacted ? b.baseOffset < this.nextOffset : b.baseOffset !== this.nextOffset) return false;
      this.observe(pos, b.baseOffset, b.lastOffset, b.sizeInBytes, b.maxTimestamp, true);
      return true;
    });
    this.size = end;
    this.indexesDirty = true;
    return end;
  }

  private resetState(): void {
    this.offsetIndex = new OffsetIndex(this.baseOffset);
    this.timeIndex = new TimeIndex(this.baseOffset);
    this.bytesSinceLastIndexEntry = 0;
    this.nextOffset = this.baseOffset;
    this.maxTimestamp = -1;
    this.offsetOfMaxTimestamp = this.baseOffset;
    this.size = 0;
  }

  /**
   * Loads both index files and validates them against the log: the last offset-index entry must point at a
   * valid batch with that base offset, and every batch after it must be valid up to the end of the file.
   * Returns false (state undefined, caller rebuilds) if anything doesn't fit.
   */
  private async loadIndexes(fileSize: number): Promise<boolean> {
    const [indexBytes, timeBytes] = await Promise.all([readIfExists(this.indexPath), readIfExists(this.timeIndexPath)]);
    if (indexBytes === undefined || timeBytes === undefined) return false;
    const offsetIndex = OffsetIndex.deserialize(this.baseOffset, indexBytes, Math.max(fileSize, 1));
    if (offsetIndex === undefined) return false;
    this.resetState();
    this.offsetIndex = offsetIndex;
    const n = offsetIndex.length;
    const tailStart = n === 0 ? 0 : offsetIndex.positionAt(n - 1);
    const expectedFirst = n === 0 ? undefined : offsetIndex.offsetAt(n - 1);
    let first = true;
    let tailMax = -1;
    let tailMaxOffset = this.baseOffset;
    const end = await scanFile(this.handle, tailStart, fileSize, (pos, b) => {
      if (first ? b.baseOffset !== (expectedFirst ?? b.baseOffset) : this.compacted ? b.baseOffset < this.nextOffset : b.baseOffset !== this.nextOffset) return false;
      if (first && expectedFirst === undefined && !this.compacted && b.baseOffset !== this.baseOffset) return false;
      if (b.maxTimestamp > tailMax) {
        tailMax = b.maxTimestamp;
        tailMaxOffset = b.baseOffset;
      }
      this.observe(pos, b.baseOffset, b.lastOffset, b.sizeInBytes, -1, !first);
      first = false;
      return true;
    });
    if (end !== fileSize) return false;
    this.size = end;
    const timeIndex = TimeIndex.deserialize(this.baseOffset, timeBytes, this.lastOffset);
    if (timeIndex === undefined) return false;
    if (timeIndex.length === 0 && tailStart > 0 && this.offsetIndex.length > 0) {
      // Timestamps before the tail are unknown without a time index; rebuild to be exact.
      if (tailMax < 0) return false;
    }
    this.timeIndex = timeIndex;
    if (timeIndex.lastTimestamp >= tailMax) {
      this.maxTimestamp = timeIndex.lastTimestamp;
      this.offsetOfMaxTimestamp = timeIndex.lastOffset;
    } else {
      this.maxTimestamp = tailMax;
      this.offsetOfMaxTimestamp = tailMaxOffset;
    }
    this.indexesDirty = false;
    return true;
  }

  /**
   * Folds one batch into the in-memory state. An offset-index entry is added for the batch when at least
   * index.interval.bytes were appended since the previous entry (Kafka's rule), together with a time-index
   * entry for the running max timestamp.
   */
  private observe(pos: number, baseOffset: number, lastOffset: number, size: number, maxTimestamp: number, mayIndex: boolean): void {
    if (maxTimestamp > this.maxTimestamp) {
      this.maxTimestamp = maxTimestamp;
      this.offsetOfMaxTimestamp = baseOffset;
    }
    if (mayIndex && this.bytesSinceLastIndexEntry >= this.indexIntervalBytes) {
      this.offsetIndex.append(baseOffset, pos);
      this.timeIndex.maybeAppend(this.maxTimestamp, this.offsetOfMaxTimestamp);
      this.bytesSinceLastIndexEntry = 0;
    }
    this.bytesSinceLastIndexEntry += size;
    this.nextOffset = lastOffset + 1;
  }

  /**
   * Appends whole batches whose offsets are already assigned (one or more buffers of them, in order), with
   * one positional write, then updates the indexes (so no reader sees the bytes before they are written).
   * Called by the partition log only, one call at a time.
   *
   * `inline` makes the write on the calling thread (a synchronous pwritev), otherwise it runs on the thread
   * pool; the partition log chooses (InlineWrites). Durability is the same either way: once this resolves,
   * the bytes survive a kill -9.
   */
  async append(bufs: readonly Buffer[], nowMs: number, inline = false): Promise<void> {
    const pos = this.size;
    const total = inline ? writeAllAtSync(this.handle.fd, bufs, pos) : await writeAllAt(this.handle.fd, bufs, pos);
    let at = pos;
    for (const buf of bufs) {
      let p = 0;
      while (p < buf.length) {
        const size = batchSizeAt(buf, p);
        const base = readInt64(buf, p + BATCH_OFFSETS.baseOffset);
        const last = base + buf.readInt32BE(p + BATCH_OFFSETS.lastOffsetDelta);
        this.observe(at + p, base, last, size, readInt64(buf, p + BATCH_OFFSETS.maxTimestamp), true);
        p += size;
      }
      at += buf.length;
    }
    this.size = pos + total;
    this.indexesDirty = true;
    if (this.rollBaseMs === undefined) this.rollBaseMs = nowMs;
  }

  /** Registers a reader so that close() waits for it; throws if the segment is gone. */
  private enter(): void {
    if (this.closed) {
      throw new LogError('OFFSET_OUT_OF_RANGE', `segment ${this.baseOffset} was deleted or closed during the read; fetch again`);
    }
    this.readers++;
  }

  private leave(): void {
    if (--this.readers === 0 && this.idle !== undefined) this.idle();
  }

  /**
   * Finds the batch that contains `offset` (or the first batch after it, when offsets have gaps), using the
   * offset index to seek and then walking headers. Returns undefined when no batch at or after it exists.
   */
  async locate(offset: number): Promise<BatchLocation | undefined> {
    this.enter();
    try {
      const win = new Window(this.handle, this.size, 64 * 1024);
      const found = await this.walkTo(win, this.offsetIndex.lookup(offset).position, (loc) => loc.lastOffset >= offset);
      return found;
    } finally {
      this.leave();
    }
  }

  /** Walks headers from `pos` until `stop` accepts a batch. */
  private async walkTo(win: Window, pos: number, stop: (loc: BatchLocation) => boolean): Promise<BatchLocation | undefined> {
    const end = win.end;
    while (pos < end) {
      const buf = await win.ensure(pos, Math.min(HEADER_NEED, end - pos));
      const o = pos - win.start;
      if (end - pos < BATCH_HEADER_SIZE) throw this.corrupt(pos);
      const size = batchSizeAt(buf, o);
      if (size < 0 || pos + size > end) throw this.corrupt(pos);
      const baseOffset = readInt64(buf, o);
      const loc: BatchLocation = {
        position: pos,
        sizeInBytes: size,
        baseOffset,
        lastOffset: baseOffset + buf.readInt32BE(o + BATCH_OFFSETS.lastOffsetDelta),
        maxTimestamp: readInt64(buf, o + BATCH_OFFSETS.maxTimestamp),
      };
      if (stop(loc)) return loc;
      pos += size;
    }
    return undefined;
  }

  private corrupt(pos: number): LogError {
    return new LogError('KAFKA_STORAGE_ERROR', `segment ${this.logPath} has an unreadable batch header at position ${pos}; restart the broker to run recovery`);
  }

  /**
   * Reads whole batches starting with the one containing `fetchOffset`, stopping before the first batch whose
   * base offset is >= `upperOffset` or that would take the total over `maxBytes`. The first batch is returned
   * whole even when larger than maxBytes if `minOneBatch` (Kafka's rule, so consumers always progress).
   * Returns undefined when this segment has no batch at or after fetchOffset below upperOffset. The bytes are
   * read into memory from `allocate` (a fresh Buffer by default).
   */
  async read(fetchOffset: number, maxBytes: number, upperOffset: number, minOneBatch: boolean, allocate?: (bytes: number) => Buffer): Promise<SegmentRead | undefined> {
    this.enter();
    try {
      const end = this.size;
      if (fetchOffset >= this.nextOffset) return undefined;
      const startPos = this.offsetIndex.lookup(fetchOffset).position;
      const win = new Window(this.handle, end, Math.max(maxBytes, 0) + this.indexIntervalBytes + 16 * 1024, allocate);
      const first = await this.walkTo(win, startPos, (loc) => loc.lastOffset >= fetchOffset);
      if (first === undefined || first.baseOffset >= upperOffset) return undefined;
      if (first.sizeInBytes > maxBytes) {
        if (!minOneBatch) return { records: EMPTY, firstOffset: first.baseOffset, nextOffset: first.baseOffset };
        const buf = await win.ensure(first.position, first.sizeInBytes);
        const o = first.position - win.start;
        return { records: buf.subarray(o, o + first.sizeInBytes), firstOffset: first.baseOffset, nextOffset: first.lastOffset + 1 };
      }
      const want = Math.min(maxBytes, end - first.position);
      const buf = await win.ensure(first.position, want);
      const o = first.position - win.start;
      const limit = Math.min(o + want, win.length);
      let p = o + first.sizeInBytes;
      let next = first.lastOffset + 1;
      while (p + BATCH_OFFSETS.lastOffsetDelta + 4 <= limit) {
        const size = batchSizeAt(buf, p);
        if (size < 0 || p + size > limit) break;
        const base = readInt64(buf, p);
        if (base >= upperOffset) break;
        next = base + buf.readInt32BE(p + BATCH_OFFSETS.lastOffsetDelta) + 1;
        p += size;
      }
      return { records: buf.subarray(o, p), firstOffset: first.baseOffset, nextOffset: next };
    } finally {
      this.leave();
    }
  }

  /** The first batch whose max timestamp is >= `timestamp`, found through the time index. */
  async findByTimestamp(timestamp: number): Promise<BatchLocation | undefined> {
    if (this.maxTimestamp < timestamp) return undefined;
    this.enter();
    try {
      const from = this.timeIndex.lookup(timestamp);
      const win = new Window(this.handle, this.size, 64 * 1024);
      return await this.walkTo(win, this.offsetIndex.lookup(from).position, (loc) => loc.maxTimestamp >= timestamp);
    } finally {
      this.leave();
    }
  }

  /** Reads the bytes of one batch found by locate() or findByTimestamp(). */
  async readBatch(loc: BatchLocation): Promise<Buffer> {
    this.enter();
    try {
      const buf = Buffer.allocUnsafe(loc.sizeInBytes);
      const n = await readFully(this.handle, buf, loc.sizeInBytes, loc.position);
      if (n !== loc.sizeInBytes) throw this.corrupt(loc.position);
      return buf;
    } finally {
      this.leave();
    }
  }

  /**
   * The timestamp of the first record of a batch found by locate(): its base timestamp, or its max timestamp
   * when the batch uses LogAppendTime (every record then has it). One 14-byte read of the header.
   */
  async firstTimestamp(loc: BatchLocation): Promise<number> {
    this.enter();
    try {
      const from = BATCH_OFFSETS.attributes;
      const buf = Buffer.allocUnsafe(BATCH_OFFSETS.maxTimestamp - from);
      const n = await readFully(this.handle, buf, buf.length, loc.position + from);
      if (n !== buf.length) throw this.corrupt(loc.position);
      const attributes = buf.readInt16BE(0);
      const logAppendTime = (attributes & (TIMESTAMP_TYPE_BIT | DELETE_HORIZON_BIT)) !== 0;
      return logAppendTime ? loc.maxTimestamp : readInt64(buf, BATCH_OFFSETS.baseTimestamp - from);
    } finally {
      this.leave();
    }
  }

  /** Makes sure the time index's last entry holds the segment's max timestamp (done when the segment closes). */
  private sealTimeIndex(): void {
    if (this.maxTimestamp >= 0) this.timeIndex.maybeAppend(this.maxTimestamp, this.offsetOfMaxTimestamp);
  }

  /** Writes both index files atomically if they changed since they were loaded or last written. */
  async persistIndexes(sync: boolean): Promise<void> {
    if (!this.indexesDirty) return;
    this.sealTimeIndex();
    await writeFileAtomic(this.dir, this.indexPath, this.offsetIndex.serialize(), sync);
    await writeFileAtomic(this.dir, this.timeIndexPath, this.timeIndex.serialize(), sync);
    this.indexesDirty = false;
  }

  /** fdatasync of the log file: everything appended so far survives a power loss. */
  async flush(): Promise<void> {
    if (!this.closed) await this.handle.datasync();
  }

  /** Closes the file once in-flight reads finish. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.readers > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    await this.handle.close();
  }

  /** Deletes the segment's files. Reads already running finish on the unlinked file; new ones are refused. */
  async delete(): Promise<void> {
    this.closed = true;
    await Promise.all([unlinkIfExists(this.logPath), unlinkIfExists(this.indexPath), unlinkIfExists(this.timeIndexPath)]);
    await unlinkIfExists(segmentPath(this.dir, this.baseOffset, COMPACTED_SUFFIX));
    await this.retire();
  }

  /**
   * Refuses new reads, waits for running ones and closes the file, leaving the files to the caller: the log
   * cleaner's swap replaces them. A read that started on a retired segment fails; the log retries it.
   */
  async retire(): Promise<void> {
    this.closed = true;
    if (this.readers > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    await this.handle.close();
  }

  /** True once the segment was closed, deleted or retired: reads on it are refused. */
  get retired(): boolean {
    return this.closed;
  }
}

/** A read-ahead window over a file, so walking headers costs one read per window rather than one per batch. */
class Window {
  private buf: Buffer = EMPTY;
  start = 0;
  length = 0;

  constructor(
    private readonly handle: FileHandle,
    readonly end: number,
    private readonly readAhead: number,
    private readonly allocate: (bytes: number) => Buffer = Buffer.allocUnsafe,
  ) {}

  /** Returns the window's buffer holding at least [pos, pos + len); positions in it are relative to `start`. */
  async ensure(pos: number, len: number): Promise<Buffer> {
    if (pos >= this.start && pos + len <= this.start + this.length) return this.buf;
    const want = Math.min(this.end - pos, Math.max(len, this.readAhead));
    // A fresh buffer each time: a caller may still hold a slice of the previous one.
    this.buf = this.allocate(want);
    this.start = pos;
    this.length = await readFully(this.handle, this.buf, want, pos);
    if (this.length < len) {
      throw new LogError('KAFKA_STORAGE_ERROR', `short read at position ${pos} (wanted ${len}, got ${this.length}); the segment file shrank underneath the log`);
    }
    return this.buf;
  }
}

async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export async function fileSize(path: string): Promise<number> {
  return (await stat(path)).size;
}

/**
 * Writes `bufs` back to back at `pos` with positional writev calls on the thread pool, going on after a
 * short write until every byte is written. Resolves with the bytes written.
 */
async function writeAllAt(fd: number, bufs: readonly Buffer[], pos: number): Promise<number> {
  let total = 0;
  for (const b of bufs) total += b.length;
  let rest: readonly Buffer[] = bufs;
  let done = 0;
  while (done < total) {
    const chunk = rest.length > MAX_IOV ? rest.slice(0, MAX_IOV) : rest;
    const n = await new Promise<number>((resolve, reject) => writev(fd, chunk, pos + done, (err, written) => (err ? reject(err) : resolve(written))));
    if (n <= 0) throw new Error(`writev wrote ${n} bytes at ${pos + done}`);
    done += n;
    rest = skipBytes(rest, n);
  }
  return total;
}

/** writeAllAt on the calling thread. */
function writeAllAtSync(fd: number, bufs: readonly Buffer[], pos: number): number {
  let total = 0;
  for (const b of bufs) total += b.length;
  let rest: readonly Buffer[] = bufs;
  let done = 0;
  while (done < total) {
    const n = writevSync(fd, rest.length > MAX_IOV ? rest.slice(0, MAX_IOV) : rest, pos + done);
    if (n <= 0) throw new Error(`writev wrote ${n} bytes at ${pos + done}`);
    done += n;
    rest = skipBytes(rest, n);
  }
  return total;
}

/** `bufs` without their first `n` bytes (views, no copies). */
function skipBytes(bufs: readonly Buffer[], n: number): Buffer[] {
  const out: Buffer[] = [];
  let skip = n;
  for (const b of bufs) {
    if (skip >= b.length) {
      skip -= b.length;
      continue;
    }
    out.push(skip > 0 ? b.subarray(skip) : b);
    skip = 0;
  }
  return out;
}
