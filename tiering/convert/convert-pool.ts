/**
 * Worker threads that convert closed segments to Parquet (./convert-worker.ts), so conversion never holds
 * the thread that serves produce and fetch, and a broker with more cores converts on them. `convert` hands
 * a segment file to an idle worker (queueing when all are busy) and yields its data files one at a time,
 * as `convertSegment` does in-thread; the worker writes the next file only once the caller pulls it.
 * `rebuild` does the same for table compaction: the worker first rebuilds the merged segment file from
 * tiered segments (./rebuild-segments.ts, over local copies of their files), then converts it. A worker
 * that dies fails its job (the plugin retries it) and is replaced on the next use.
 *
 * A data file's bytes arrive here transferred, not copied. Once the caller has uploaded them it calls the
 * file's `release()`, and the memory goes back to the worker with the request for the next file, where the
 * file after it is written into it. So the broker's thread never owns more than the files in flight: memory
 * it received and dropped would count against V8's external-memory budget, and every 64 MiB of that
 * started a full collection on the thread that serves produce and fetch (three mark-compacts of 5-9 ms
 * within 0.1 s in one busy phase of bench/tiering/busy-latency.bench.ts; bench/RESULTS.md).
 */
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from './worker-thread.js';
import type { DataFileMetrics } from '../../iceberg/metrics.js';
import { TieringConvertError, type TieringConvertErrorCode } from './errors.js';
import type { ConvertOptions } from './segment-to-parquet.js';
import type { RebuildSegment } from './rebuild-segments.js';

/**
 * Largest buffer a converter keeps for reuse: a segment window for its next conversion (a window is about one
 * data file), or, in a worker, a data file's memory back from the pool.
 */
export const MAX_SPARE_WINDOW_BYTES = 128 * 1024 * 1024;

/**
 * A worker's young generation, in MiB (V8's default lets it grow to 48). A conversion's garbage dies young
 * (views, Arrow wrappers, per-record ranges), and V8 starts marking the whole heap once the old generation's
 * headroom falls below the young generation's size: with the default, a worker ran a full
 * mark-compact for every one or two segments it converted, whose concurrent marking kept V8's helper
 * threads busy. With 6 MiB it ran none, and the broker spent about 5 % less CPU per MB converted
 * (bench/RESULTS.md, `bash bench/peer/run.sh connect --floe-only`).
 */
const YOUNG_GENERATION_MB = 6;

/** Conversion options a worker can take: everything but the typed (schema mode) state. */
export type WorkerConvertOptions = Omit<ConvertOptions, 'typed'>;

/** What every worker starts with (its workerData). */
export interface WorkerSetup {
  /** Nice value of the worker's thread, 0-19 (Linux; 0 keeps the broker's priority). */
  readonly nice: number;
}

/** A compaction rebuild for a worker: `segments` name files under `root`, a local folder (file:// URL). */
export interface WorkerRebuild {
  readonly root: string;
  readonly segments: readonly RebuildSegment[];
  /** The merged segment file the worker writes, then converts. */
  readonly segmentPath: string;
  readonly where: string;
}

export type WorkerRequest =
  | { readonly kind: 'convert'; readonly id: number; readonly segmentPath: string; readonly options: WorkerConvertOptions }
  | { readonly kind: 'rebuild'; readonly id: number; readonly rebuild: WorkerRebuild; readonly options: WorkerConvertOptions }
  /** Write the next file; `spare` is the previous file's memory, released by the caller, to write it into. */
  | { readonly kind: 'next'; readonly spare?: ArrayBuffer };

export type WorkerReply =
  | {
      readonly kind: 'file';
      readonly id: number;
      readonly dataPath: string | null;
      readonly parquet: { readonly bytes: Uint8Array; readonly metrics: DataFileMetrics; readonly splitOffsets: bigint[] } | null;
      readonly indexPath: string;
      readonly indexBytes: Uint8Array;
    }
  | { readonly kind: 'done'; readonly id: number }
  | { readonly kind: 'error'; readonly id: number; readonly name: string; readonly message: string; readonly code: string | undefined };

type FileReply = Extract<WorkerReply, { kind: 'file' }>;

/**
 * A converted file from a worker. `parquet.release()` says its bytes are no longer used (uploaded): they go
 * back to the worker when the caller asks for the next file, and the view is empty from then on. Without
 * it the caller keeps the bytes.
 */
export type WorkerFile = Omit<FileReply, 'parquet'> & { readonly parquet: (NonNullable<FileReply['parquet']> & { readonly release: () => void }) | null };

export interface ConvertPoolOptions {
  /**
   * Nice value of the workers' threads, 0-19 (default 0): above 0 the scheduler prefers the broker's
   * thread when both want a core (bench/tiering/busy-latency.bench.ts). Linux only.
   */
  readonly nice?: number;
}

interface Slot {
  worker: Worker | null;
  busy: boolean;
}

/** Async queue of one conversion's replies. */
class Replies {
  private readonly items: WorkerReply[] = [];
  private wake: (() => void) | undefined;
  push(r: WorkerReply): void {
    this.items.push(r);
    this.wake?.();
  }
  async next(): Promise<WorkerReply> {
    while (this.items.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
    return this.items.shift()!;
  }
}

export class ConvertPool {
  private readonly slots: Slot[];
  private readonly waiting: ((slot: Slot) => void)[] = [];
  private readonly jobs = new Map<number, { readonly replies: Replies; worker: Worker | null }>();
  private nextId = 1;
  private closed = false;

  private readonly setup: WorkerSetup;

  constructor(
    readonly size: number,
    options: ConvertPoolOptions = {},
  ) {
    if (!Number.isInteger(size) || size < 1) throw new TieringConvertError('INVALID_OPTION', `a conversion pool needs at least one worker, got ${size}`);
    const nice = options.nice ?? 0;
    if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new TieringConvertError('INVALID_OPTION', `a conversion worker's nice value is 0-19, got ${nice}`);
    this.setup = { nice };
    this.slots = Array.from({ length: size }, () => ({ worker: null, busy: false }));
  }

  private start(slot: Slot): Worker {
    const w = startWorkerThread('convert-worker', this.setup, { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB });
    w.unref();
    w.on('message', (r: WorkerReply) => this.jobs.get(r.id)?.replies.push(r));
    const fail = (message: string) => {
      if (slot.worker === w) slot.worker = null;
      // The conversion on this worker fails; the slot starts a fresh worker next time.
      for (const [id, job] of this.jobs) if (job.worker === w) job.replies.push({ kind: 'error', id, name: 'Error', message, code: undefined });
    };
    w.on('error', (err) => fail(`the conversion worker failed: ${err.message}`));
    w.on('exit', (code) => fail(`the conversion worker exited with code ${code}`));
    return w;
  }

  private async acquire(): Promise<Slot> {
    const idle = this.slots.find((s) => !s.busy);
    if (idle) {
      idle.busy = true;
      return idle;
    }
    return new Promise<Slot>((resolve) => this.waiting.push(resolve));
  }

  private release(slot: Slot): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else slot.busy = false;
  }

  /** Converts the segment file on a worker; yields its files in offset order. */
  convert(segmentPath: string, options: WorkerConvertOptions): AsyncGenerator<WorkerFile, void, void> {
    return this.run((id) => ({ kind: 'convert', id, segmentPath, options }));
  }

  /**
   * Rebuilds tiered segments into one segment file on a worker and converts it (its size, plus one, is the
   * target file size, so it becomes one data file); yields its files in offset order.
   */
  rebuild(rebuild: WorkerRebuild, options: WorkerConvertOptions): AsyncGenerator<WorkerFile, void, void> {
    return this.run((id) => ({ kind: 'rebuild', id, rebuild, options }));
  }

  private async *run(request: (id: number) => Exclude<WorkerRequest, { kind: 'next' }>): AsyncGenerator<WorkerFile, void, void> {
    if (this.closed) throw new TieringConvertError('INVALID_OPTION', 'the conversion pool is closed');
    const slot = await this.acquire();
    const id = this.nextId++;
    const replies = new Replies();
    const job: { replies: Replies; worker: Worker | null } = { replies, worker: null };
    this.jobs.set(id, job);
    // Whether the worker ended the conversion (done, or failed and said so): it is then idle and reusable.
    let finished = false;
    try {
      slot.worker ??= this.start(slot);
      const worker = slot.worker;
      job.worker = worker;
      worker.postMessage(request(id) satisfies WorkerRequest);
      for (;;) {
        const r = await replies.next();
        if (r.kind !== 'file') finished = true;
        if (r.kind === 'done') return;
        if (r.kind === 'error') {
          if (r.name === 'TieringConvertError') throw new TieringConvertError(r.code as TieringConvertErrorCode, r.message);
          throw Object.assign(new Error(r.message), r.code !== undefined ? { code: r.code } : {});
        }
        let spare: ArrayBuffer | undefined;
        const parquet = r.parquet;
        yield { ...r, parquet: parquet === null ? null : { ...parquet, release: () => (spare = parquet.bytes.buffer as ArrayBuffer) } };
        worker.postMessage({ kind: 'next', ...(spare !== undefined ? { spare } : {}) } satisfies WorkerRequest, spare !== undefined ? [spare] : []);
      }
    } finally {
      this.jobs.delete(id);
      // A conversion abandoned mid-way (its caller stopped pulling, or failed) leaves the worker waiting for
      // 'next': replace it rather than reuse it.
      if (slot.worker !== null && !finished) {
        void slot.worker.terminate();
        slot.worker = null;
      }
      this.release(slot);
    }
  }

  /** Stops every worker (conversions in flight fail). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker?.terminate()));
  }
}
