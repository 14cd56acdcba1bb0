/**
 * The worker thread side of remote reads (./read-pool.ts is the other): a SegmentReader (./segment-reader.ts)
 * with read-ahead serves each read it is sent, and reads storage through the pool, which answers from the
 * broker's FileIO (a local warehouse it reads itself). The records go back transferred, not copied.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { FileIOError, type FileIO, type ObjectInfo } from '../../iceberg/io/file-io.js';
import { revive, sendError, transferable, type FromReadWorker, type IoOp, type ReadWorkerSetup, type ToReadWorker } from './read-pool.js';
import { SegmentReader } from './segment-reader.js';
import { LocalFileIO } from '../../iceberg/io/local.js';

const port = parentPort;
if (port === null) throw new Error('read-worker.ts runs as a worker thread (see read-pool.ts)');
const setup = workerData as ReadWorkerSetup;

const reader = new SegmentReader(setup);

/** Storage reads waiting for the pool's answer. */
const waiting = new Map<number, { resolve: (m: Extract<ToReadWorker, { kind: 'io' }>) => void }>();
let nextRid = 1;

function ask(ioId: number, op: IoOp): Promise<Extract<ToReadWorker, { kind: 'io' }>> {
  const rid = nextRid++;
  return new Promise((resolve) => {
    waiting.set(rid, { resolve });
    port!.postMessage({ kind: 'io', rid, ioId, ...op } satisfies FromReadWorker);
  });
}

async function bytesOf(ioId: number, op: IoOp): Promise<Buffer> {
  const m = await ask(ioId, op);
  if (m.error !== undefined) throw revive(m.error);
  const b = m.bytes!;
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** The broker's FileIO, read through the pool; a reader only reads. */
function storage(ioId: number): FileIO {
  const readOnly = (): never => {
    throw new FileIOError('UNSUPPORTED', 'a remote read worker only reads storage');
  };
  return {
    get: (location) => bytesOf(ioId, { op: 'get', location }),
    getRange: (location, offset, length) => bytesOf(ioId, { op: 'getRange', location, offset, length }),
    head: async (location) => {
      const m = await ask(ioId, { op: 'head', location });
      if (m.error !== undefined) throw revive(m.error);
      return m.info as ObjectInfo | undefined;
    },
    put: readOnly,
    putIfAbsent: readOnly,
    putIfMatch: readOnly,
    list: readOnly,
    delete: readOnly,
    close: async () => {},
  };
}

/** One FileIO per broker FileIO (a proxy, or a LocalFileIO of this worker's own), reused from read to read. */
const storages = new Map<number, FileIO>();

/**
 * A LocalFileIO of this worker keeps read handles open, and only the broker's own FileIO sees the deletes
 * of retention and compaction: a handle on a deleted data file would hold its disk space. So once no read
 * has come for `idleCloseMs`, the worker closes its LocalFileIOs (handles in use close when their read ends)
 * and opens fresh ones for the next reads.
 */
let idle: NodeJS.Timeout | undefined;
function closeLocalWhenIdle(): void {
  clearTimeout(idle);
  idle = setTimeout(() => {
    for (const [id, io] of storages) {
      if (!(io instanceof LocalFileIO)) continue;
      storages.delete(id);
      void io.close();
    }
  }, setup.idleCloseMs ?? 5000);
  idle.unref();
}

async function serve(m: Extract<ToReadWorker, { kind: 'read' }>): Promise<void> {
  let io = storages.get(m.ioId);
  if (io === undefined) storages.set(m.ioId, (io = m.localRoot !== undefined ? new LocalFileIO({ root: m.localRoot, fsync: false }) : storage(m.ioId)));
  closeLocalWhenIdle();
  try {
    const r = await reader.read(io, m.read);
    const records = transferable(r.records);
    port!.postMessage({ kind: 'done', id: m.id, records, nextOffset: r.nextOffset, counters: reader.counters(), readAheadHits: reader.readAheadHits } satisfies FromReadWorker, [records.buffer as ArrayBuffer]);
  } catch (err) {
    port!.postMessage({ kind: 'error', id: m.id, error: sendError(err), counters: reader.counters(), readAheadHits: reader.readAheadHits } satisfies FromReadWorker);
  }
}

port.on('message', (m: ToReadWorker) => {
  if (m.kind === 'io') {
    const w = waiting.get(m.rid);
    waiting.delete(m.rid);
    w?.resolve(m);
    return;
  }
  void serve(m);
});
