/**
 * The worker thread side of segment conversion (./convert-pool.ts is the other): converts one closed
 * segment file at a time with `convertSegment`, off the thread that serves produce and fetch. Each data file
 * goes back to the pool as soon as it is written, its bytes transferred (not copied), and the worker waits
 * for the pool to take the next one, so a worker holds about one file's memory, as the in-thread
 * conversion does. Files stay unuploaded here: the pool's caller owns the FileIO. Typed (schema mode)
 * conversions stay on the main thread, where the schema registry and the table layout live.
 */
import { open } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import { convertSegment, type ConvertOptions, type SegmentSource } from './segment-to-parquet.js';
import { TieringConvertError } from './errors.js';
import { MAX_SPARE_WINDOW_BYTES, type WorkerReply, type WorkerRequest } from './convert-pool.js';

const port = parentPort;
if (port === null) throw new Error('convert-worker.ts runs as a worker thread (see convert-pool.ts)');

/** The window a conversion reads the segment into, reused by the next (as ConvertCodec does in-thread). */
let spare: Buffer | null = null;
/** Resolves the conversion waiting for the pool to take its last file. */
let resume: (() => void) | undefined;

async function convert(job: Extract<WorkerRequest, { kind: 'convert' }>): Promise<void> {
  const fh = await open(job.segmentPath, 'r');
  const window = { buf: spare };
  spare = null;
  try {
    const size = (await fh.stat()).size;
    const source: SegmentSource = { size, read: async (target, offset, length, position) => (await fh.read(target, offset, length, position)).bytesRead };
    for await (const file of convertSegment(source, job.options as ConvertOptions, window)) {
      let parquet: Extract<WorkerReply, { kind: 'file' }>['parquet'] = null;
      const transfer: ArrayBuffer[] = [];
      if (file.parquet !== null) {
        // Copy out of the writer's reusable memory into a buffer of its own, then hand that over.
        const bytes = new Uint8Array(file.parquet.bytes);
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
    await fh.close();
    if (window.buf !== null && window.buf.length <= MAX_SPARE_WINDOW_BYTES) spare = window.buf;
  }
}

port.on('message', (m: WorkerRequest) => {
  if (m.kind === 'next') {
    const r = resume;
    resume = undefined;
    r?.();
    return;
  }
  convert(m).catch((err: unknown) => {
    const e = err instanceof Error ? err : new Error(String(err));
    port.postMessage({ kind: 'error', id: m.id, name: e.name, message: e.message, code: err instanceof TieringConvertError ? err.code : (err as { code?: string }).code } satisfies WorkerReply);
  });
});
