/**
 * Worker threads that serve Kafka reads of tiered segments (./read-worker.ts), so decoding Parquet and
 * rebuilding batches never holds the thread serving produce and fetch, and a broker with more cores reads
 * history on them. Each worker runs a SegmentReader (./segment-reader.ts) with its share of the caches and
 * reads ahead: after a fetch it decodes the next one, which a consumer reading forward then takes ready.
 *
 * Object storage stays on this thread: a worker asks for every byte it reads (`get`, `getRange`, `head`)
 * and this thread answers from the caller's FileIO, so retries, credentials and request counts are those of
 * every other read. A local warehouse (LocalFileIO) is the exception: the worker reads its files itself,
 * through a LocalFileIO of its own on the same root. Reads of one partition go to one worker (by a key the caller gives), where its
 * decoded row group, its read-ahead and its cached batches are. A worker that dies fails the reads it had
 * and is replaced on the next one.
 */
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from './worker-thread.js';
import { FileIOError, type FileIO, type FileIOErrorCode } from '../../iceberg/io/file-io.js';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { ParquetError, type ParquetErrorCode } from '../../iceberg/parquet/errors.js';
import { TieringConvertError, type TieringConvertErrorCode } from './errors.js';
import type { CacheCounters, ReaderCacheCounters, SegmentRead, SegmentReadResult } from './segment-reader.js';

/** What every read worker starts with (its workerData): its share of the reader's budgets. */
export interface ReadWorkerSetup {
  readonly batchCacheBytes: number;
  readonly indexCacheBytes: number;
  readonly footerCacheBytes: number;
  readonly readAheadBytes: number;
  /** How long a worker keeps its local read handles open without a read (default 5 s; see read-worker.ts). */
  readonly idleCloseMs?: number;
}

/** An error crossing the thread boundary, rebuilt as its own class on this side (see `revive`). */
export interface SentError {
  readonly name: string;
  readonly message: string;
  readonly code: string | undefined;
}

export type IoOp = { readonly op: 'get'; readonly location: string } | { readonly op: 'getRange'; readonly location: string; readonly offset: number; readonly length: number } | { readonly op: 'head'; readonly location: string };

export type ToReadWorker =
  | { readonly kind: 'read'; readonly id: number; readonly ioId: number; readonly read: SegmentRead; readonly localRoot?: string }
  | { readonly kind: 'io'; readonly rid: number; readonly bytes?: Uint8Array; readonly info?: unknown; readonly error?: SentError };

export type FromReadWorker =
  | ({ readonly kind: 'io'; readonly rid: number; readonly ioId: number } & IoOp)
  | { readonly kind: 'done'; readonly id: number; readonly records: Uint8Array; readonly nextOffset: number; readonly counters: ReaderCacheCounters; readonly readAheadHits: number }
  | { readonly kind: 'error'; readonly id: number; readonly error: SentError; readonly counters: ReaderCacheCounters; readonly readAheadHits: number };

/** The error as sent across threads. */
export function sendError(err: unknown): SentError {
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as { code?: unknown }).code;
  return { name: e.name, message: e.message, code: typeof code === 'string' ? code : undefined };
}

/** The error rebuilt with its class where callers tell errors apart by class (storage, Parquet, index). */
export function revive(e: SentError): Error {
  if (e.name === 'FileIOError' && e.code !== undefined) return new FileIOError(e.code as FileIOErrorCode, e.message);
  if (e.name === 'ParquetError' && e.code !== undefined) return new ParquetError(e.code as ParquetErrorCode, e.message);
  if (e.name === 'TieringConvertError' && e.code !== undefined) return new TieringConvertError(e.code as TieringConvertErrorCode, e.message);
  return Object.assign(new Error(e.message), e.code !== undefined ? { code: e.code } : {});
}

/** The bytes as a Uint8Array owning its whole ArrayBuffer, so it can be transferred (a copy when not). */
export function transferable(b: Uint8Array): Uint8Array {
  return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer ? b : new Uint8Array(b);
}

interface Slot {
  worker: Worker | null;
  counters: ReaderCacheCounters | null;
  readAheadHits: number;
}

interface Pending {
  readonly worker: Worker;
  readonly resolve: (r: SegmentReadResult) => void;
  readonly reject: (err: Error) => void;
}

const NO_COUNTERS: CacheCounters = { hits: 0, misses: 0, bytes: 0, maxBytes: 0, entries: 0 };

export class ReadPool {
  private readonly slots: Slot[];
  private readonly pending = new Map<number, Pending>();
  private readonly ios = new Map<FileIO, number>();
  private readonly ioById = new Map<number, FileIO>();
  private nextId = 1;
  private closed = false;

  constructor(
    readonly size: number,
    private readonly setup: ReadWorkerSetup,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new TieringConvertError('INVALID_OPTION', `a read pool needs at least one worker, got ${size}`);
    this.slots = Array.from({ length: size }, () => ({ worker: null, counters: null, readAheadHits: 0 }));
  }

  /** Reads on the worker `key` maps to (the same key, the same worker). */
  read(io: FileIO, key: string, read: SegmentRead): Promise<SegmentReadResult> {
    if (this.closed) return Promise.reject(new TieringConvertError('INVALID_OPTION', 'the read pool is closed'));
    const slot = this.slots[hash(key) % this.slots.length]!;
    const worker = (slot.worker ??= this.start(slot));
    let ioId = this.ios.get(io);
    if (ioId === undefined) {
      ioId = this.ios.size + 1;
      this.ios.set(io, ioId);
      this.ioById.set(ioId, io);
    }
    const id = this.nextId++;
    // A local warehouse is read by the worker itself (a LocalFileIO of its own on the same root): asking
    // this thread for every range would cost a round trip and this thread's time per read.
    const localRoot = io instanceof LocalFileIO ? io.rootLocation : undefined;
    return new Promise<SegmentReadResult>((resolve, reject) => {
      this.pending.set(id, { worker, resolve, reject });
      // An idle worker does not keep the process alive; one with a read to answer does.
      worker.ref();
      worker.postMessage({ kind: 'read', id, ioId, read, ...(localRoot !== undefined ? { localRoot } : {}) } satisfies ToReadWorker);
    });
  }

  /** The workers' cache counters, summed (as of each worker's last answer). */
  counters(): ReaderCacheCounters {
    const sum = (name: keyof ReaderCacheCounters): CacheCounters =>
      this.slots.reduce((acc, s) => {
        const c = s.counters?.[name] ?? NO_COUNTERS;
        return { hits: acc.hits + c.hits, misses: acc.misses + c.misses, bytes: acc.bytes + c.bytes, maxBytes: acc.maxBytes + c.maxBytes, entries: acc.entries + c.entries };
      }, NO_COUNTERS);
    return { remote_batches: sum('remote_batches'), parquet_footers: sum('parquet_footers'), offset_indexes: sum('offset_indexes') };
  }

  /** Fetches the workers served from a read-ahead (as of each worker's last answer). */
  get readAheadHits(): number {
    return this.slots.reduce((n, s) => n + s.readAheadHits, 0);
  }

  private start(slot: Slot): Worker {
    const w = startWorkerThread('read-worker', this.setup);
    w.unref();
    w.on('message', (m: FromReadWorker) => {
      if (m.kind === 'io') {
        void this.serveIo(w, m);
        return;
      }
      slot.counters = m.counters;
      slot.readAheadHits = m.readAheadHits;
      const p = this.pending.get(m.id);
      if (p === undefined) return;
      this.pending.delete(m.id);
      if (![...this.pending.values()].some((x) => x.worker === w)) w.unref();
      if (m.kind === 'done') p.resolve({ records: Buffer.from(m.records.buffer, m.records.byteOffset, m.records.byteLength), nextOffset: m.nextOffset });
      else p.reject(revive(m.error));
    });
    const fail = (message: string) => {
      if (slot.worker === w) slot.worker = null;
      for (const [id, p] of this.pending) {
        if (p.worker !== w) continue;
        this.pending.delete(id);
        p.reject(new Error(message));
      }
    };
    w.on('error', (err) => fail(`the remote read worker failed: ${err.message}`));
    w.on('exit', (code) => fail(`the remote read worker exited with code ${code}`));
    return w;
  }

  /** Answers a worker's storage read from the FileIO of the read that asked for it. */
  private async serveIo(w: Worker, m: Extract<FromReadWorker, { kind: 'io' }>): Promise<void> {
    let reply: ToReadWorker;
    const transfer: ArrayBuffer[] = [];
    try {
      const io = this.ioById.get(m.ioId);
      if (io === undefined) throw new FileIOError('IO_ERROR', `a read worker asked for storage ${m.ioId}, which this pool never handed out`);
      if (m.op === 'head') reply = { kind: 'io', rid: m.rid, info: await io.head(m.location) };
      else {
        const got = m.op === 'get' ? await io.get(m.location) : await io.getRange(m.location, m.offset, m.length);
        // The bytes read belong to this caller (FileIO), so they move to the worker without a copy unless
        // they are a view into a larger allocation (Node's pool for small buffers).
        const bytes = transferable(got);
        transfer.push(bytes.buffer as ArrayBuffer);
        reply = { kind: 'io', rid: m.rid, bytes };
      }
    } catch (err) {
      reply = { kind: 'io', rid: m.rid, error: sendError(err) };
    }
    // A worker that died in the meantime has nobody waiting for the answer.
    try {
      w.postMessage(reply, transfer);
    } catch {
      // the worker is gone
    }
  }

  /** Stops every worker (reads in flight fail). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker?.terminate()));
  }
}

/** FNV-1a of a string: spreads partitions over workers, the same one each time. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
