/**
 * The transaction coordinator's durable state: `<log.dirs>/__transaction_state/txn.log`, a compacted log
 * keyed by transactional id (Kafka's `__transaction_state` topic), replayed at start-up.
 *
 * Framing as the committed-offsets log (broker/groups/offset-store.ts): `[u32 length][u32 CRC32C][JSON]`,
 * one record per state change of one transactional id; the last record of an id wins. A write resolves
 * only after its record is fsync'd; concurrent writes share one fsync. Recovery stops at the first torn or
 * corrupt record and truncates there (only an unacknowledged tail can be torn). When the file holds many
 * more records than live ids it is rewritten with one record per id (temp file, fsync, rename).
 *
 * The first record of the file holds the coordinator epoch, bumped at every open: markers carry it, so a
 * marker written after a restart is distinguishable from one written before.
 */
import { crc32c } from '@node-rs/crc32';
import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir } from '../log/files.js';
import { fromStored, toStored, type StoredTxn, type TxnMetadata } from './txn-metadata.js';

export const TXN_STATE_DIR = '__transaction_state';
const LOG_FILE = 'txn.log';
const HEADER = 8;
const DEFAULT_COMPACT_AFTER = 10_000;
/** Key of the coordinator-epoch record (no transactional id can be empty). */
const EPOCH_KEY = '';

type StoredRecord = [string, StoredTxn | null] | [typeof EPOCH_KEY, number];

export class TxnStateStoreError extends Error {
  override readonly name = 'TxnStateStoreError';
  constructor(
    readonly code: 'IO_ERROR' | 'CLOSED',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

interface Pending {
  readonly buf: Buffer;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
}

export class TxnStateStore {
  private readonly txns = new Map<string, StoredTxn>();
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;
  private records = 0;
  private epoch = 0;

  private constructor(
    private readonly dir: string,
    private fh: FileHandle,
    private size: number,
    private readonly compactAfter: number,
  ) {}

  /** Opens (creating if needed) the state log in `dir`, replays it and bumps the coordinator epoch. */
  static async open(dir: string, options: { compactAfterRecords?: number } = {}): Promise<TxnStateStore> {
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
      const store = new TxnStateStore(dir, fh, 0, options.compactAfterRecords ?? DEFAULT_COMPACT_AFTER);
      const valid = store.replay(data);
      store.size = valid;
      if (valid < data.length) {
        await fh.truncate(valid);
        await fh.datasync();
      }
      if (data.length === 0) await syncDir(dir);
      store.epoch++;
      await store.enqueue([EPOCH_KEY, store.epoch]);
      if (store.records > store.compactAfter + store.txns.size) await store.compact();
      return store;
    } catch (err) {
      throw new TxnStateStoreError('IO_ERROR', `cannot open the transaction state log ${path}: ${(err as Error).message}; check the data directory's permissions and free space`, { cause: err });
    }
  }

  /** The coordinator epoch of this run (bumped at every open). */
  get coordinatorEpoch(): number {
    return this.epoch;
  }

  /** Every stored transactional id's metadata, as replayed (fresh copies). */
  loadAll(): TxnMetadata[] {
    return [...this.txns.values()].map(fromStored);
  }

  /** Durably records the metadata of one transactional id; resolves once it is on disk. */
  write(m: TxnMetadata): Promise<void> {
    const stored = toStored(m);
    return this.enqueue([m.transactionalId, stored]).then(() => {
      this.txns.set(m.transactionalId, stored);
    });
  }

  /** Durably forgets a transactional id (transactional.id.expiration.ms). */
  remove(transactionalId: string): Promise<void> {
    return this.enqueue([transactionalId, null]).then(() => {
      this.txns.delete(transactionalId);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing) await this.flushing;
    await this.fh.close();
  }

  private enqueue(record: StoredRecord): Promise<void> {
    if (this.closed) return Promise.reject(new TxnStateStoreError('CLOSED', 'the transaction state log is closed because the broker is stopping; retry against the restarted broker'));
    const buf = frame(record);
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ buf, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.flushing) return;
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
        await this.fh.truncate(this.size).catch(() => undefined);
        const failure = new TxnStateStoreError('IO_ERROR', `cannot write the transaction state log in ${this.dir}: ${(err as Error).message}; check the disk, then retry`, { cause: err });
        for (const p of batch) p.reject(failure);
        continue;
      }
      for (const p of batch) p.resolve();
      if (this.records > this.compactAfter + this.txns.size) {
        try {
          await this.compact();
        } catch {
          // The log stays valid and complete; compaction is retried after the next batch.
        }
      }
    }
  }

  /** Rewrites the log as the epoch record plus one record per live transactional id. */
  private async compact(): Promise<void> {
    const chunks: Buffer[] = [frame([EPOCH_KEY, this.epoch])];
    for (const [id, stored] of this.txns) chunks.push(frame([id, stored]));
    const path = join(this.dir, LOG_FILE);
    const tmp = path + '.compact';
    const out = await open(tmp, 'w+');
    try {
      await out.writev(chunks, 0);
      await out.datasync();
    } catch (err) {
      await out.close();
      throw err;
    }
    await rename(tmp, path);
    await syncDir(this.dir);
    await this.fh.close();
    this.fh = out;
    this.size = chunks.reduce((n, b) => n + b.length, 0);
    this.records = chunks.length;
  }

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
        if (record[0] === EPOCH_KEY) {
          this.epoch = Math.max(this.epoch, record[1] as number);
        } else if (record[1] === null) {
          this.txns.delete(record[0]);
        } else {
          fromStored(record[1] as StoredTxn); // validates
          this.txns.set(record[0], record[1] as StoredTxn);
        }
      } catch {
        break;
      }
      this.records++;
      pos = end;
    }
    return pos;
  }
}

function frame(record: StoredRecord): Buffer {
  const payload = Buffer.from(JSON.stringify(record), 'utf8');
  const buf = Buffer.allocUnsafe(HEADER + payload.length);
  buf.writeUInt32BE(payload.length, 0);
  buf.writeUInt32BE(crc32c(payload), 4);
  payload.copy(buf, HEADER);
  return buf;
}
