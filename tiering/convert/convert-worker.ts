/**
 * The worker thread side of segment conversion (./convert-pool.ts is the other): converts one closed
 * segment file at a time with `convertSegment`, off the thread that serves produce and fetch; for table
 * compaction it first rebuilds that file from tiered segments (./rebuild-segments.ts). Each data file
 * goes back to the pool as soon as it is written, its bytes transferred (not copied), and the worker waits
 * for the pool to take the next one, so a worker holds about one file's memory, as the in-thread
 * conversion does, plus the memory the pool gives back once a file is uploaded, which the next file is
 * copied into (./convert-pool.ts says why). Files stay unuploaded here: the pool's caller owns the FileIO.
 * Typed (schema mode) conversions stay on the main thread, where the schema registry and the table layout
 * live.
 */
import { closeSync, fstatSync, openSync, readSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { convertSegment, type ConvertOptions, type SegmentSource } from './segment-to-parquet.js';
import { TieringConvertError } from './errors.js';
import { MAX_SPARE_WINDOW_BYTES, type WorkerReply, type WorkerRequest, type WorkerSetup } from './convert-pool.js';
import { LocalFileIO } from '../../iceberg/io/local.js';
import { rebuildSegments } from './rebuild-segments.js';

const port = parentPort;
if (port === null) throw new Error('convert-worker.ts runs as a worker thread (see convert-pool.ts)');
lowerPriority((workerData as WorkerSetup | null)?.nice ?? 0);

/**
 * Gives this thread the nice value `nice` (Linux: the nice value is per thread, and /proc/thread-self names
 * this thread's id), so the scheduler runs the broker's thread first when they compete for a core and the
 * conversion gets every core nothing else wants. Elsewhere the worker keeps the broker's priority.
 */
function lowerPriority(nice: number): void {
  if (nice === 0 || process.platform !== 'linux') return;
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), nice);
  } catch {
    // Without /proc (a container without it mounted) the worker runs at the broker's priority.
  }
}

/** The window a conversion reads the segment into, reused by the next (as ConvertCodec does in-thread). */
let spare: Buffer | null = null;
/** Memory of a data file sent earlier, back from the pool once uploaded: the next file goes into it. */
let fileSpare: ArrayBuffer | null = null;
/** Resolves the conversion waiting for the pool to take its last file. */
let resume: (() => void) | undefined;

/** Rebuilds the merged segment file of a compaction from local copies of its inputs, then converts it. */
async function rebuild(job: Extract<WorkerRequest, { kind: 'rebuild' }>): Promise<void> {
  const io = new LocalFileIO({ root: job.rebuild.root, fsync: false });
  let size: number;
  try {
    size = await rebuildSegments(io, { segments: job.rebuild.segments, path: job.rebuild.segmentPath, where: job.rebuild.where });
  } finally {
    await io.close();
  }
  await convert({ kind: 'convert', id: job.id, segmentPath: job.rebuild.segmentPath, options: { ...job.options, targetFileBytes: Math.max(1, size + 1) } });
}

async function convert(job: Extract<WorkerRequest, { kind: 'convert' }>): Promise<void> {
  // Synchronous reads: this thread has nothing else to do meanwhile, and the copy out of the page cache then
  // runs here, at the worker's priority, instead of on libuv's thread pool, which the broker's log writes
  // share (a pool thread woken for a segment read competes with the broker's thread for a core).
  const fd = openSync(job.segmentPath, 'r');
  const window = { buf: spare };
  spare = null;
  try {
    const size = fstatSync(fd).size;
    const source: SegmentSource = { size, read: (target, offset, length, position) => Promise.resolve(readSync(fd, target, offset, length, position)) };
    for await (const file of convertSegment(source, job.options as ConvertOptions, window)) {
      let parquet: Extract<WorkerReply, { kind: 'file' }>['parquet'] = null;
      const transfer: ArrayBuffer[] = [];
      if (file.parquet !== null) {
        // Copy out of the writer's reusable memory into a buffer of its own (the last one the pool gave back
        // when it is large enough), then hand that over.
        const src = file.parquet.bytes;
        const bytes = fileSpare !== null && fileSpare.byteLength >= src.length ? new Uint8Array(fileSpare, 0, src.length) : new Uint8Array(src.length);
        fileSpare = null;
        bytes.set(src);
        file.parquet.release();
        parquet = { bytes, metrics: file.parquet.metrics, splitOffsets: file.parquet.splitOffsets };
        transfer.push(bytes.buffer as ArrayBuffer);
      }
      const indexBytes = new Uint8Array(file.indexBytes);
      transfer.push(indexBytes.buffer as ArrayBuffer);
      const taken = new Promise<void>((resolve) => (resume = resolve));
      port!.postMessage({ kind: 'file', id: job.id, dataPath: file.dataPath, parquet, indexPath: file.indexPath, indexBytes } satisfies WorkerReply, transfer);
      await taken;
    }
    port!.postMessage({ kind: 'done', id: job.id } satisfies WorkerReply);
  } finally {
    closeSync(fd);
    if (window.buf !== null && window.buf.length <= MAX_SPARE_WINDOW_BYTES) spare = window.buf;
  }
}

port.on('message', (m: WorkerRequest) => {
  if (m.kind === 'next') {
    if (m.spare !== undefined && m.spare.byteLength <= MAX_SPARE_WINDOW_BYTES) fileSpare = m.spare;
    const r = resume;
    resume = undefined;
    r?.();
    return;
  }
  (m.kind === 'rebuild' ? rebuild(m) : convert(m)).catch((err: unknown) => {
    const e = err instanceof Error ? err : new Error(String(err));
    port.postMessage({ kind: 'error', id: m.id, name: e.name, message: e.message, code: err instanceof TieringConvertError ? err.code : (err as { code?: string }).code } satisfies WorkerReply);
  });
});
