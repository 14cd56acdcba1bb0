/**
 * Baseline servers, run as their own process (like the broker) so the load client never shares their event
 * loop. Each speaks Kafka framing and answers every request frame with a minimal frame carrying its
 * correlation id, in order, so the same LoadClient drives them and Floe.
 *
 *   sink:   reads and discards each request (the socket ceiling).
 *   ingest: socket -> frame -> parse Produce v9 -> CRC32C of each batch -> positional append to one file per
 *           partition, answered when the writes complete (the raw ingest path of ../shared/measurements.md,
 *           hand-written, no validation of records, no indexes).
 *   memory: answers a request [correlationId int32][n int32] with n bytes from a buffer in memory (the
 *           ceiling for serving a fetch).
 *
 * Usage: node --import tsx bench/lib/baseline-server.ts <sink|ingest|memory> [dir]. Prints "listening PORT".
 */
import { createServer, type Socket } from 'node:net';
import { closeSync, openSync, unlinkSync, write } from 'node:fs';
import { join } from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { FrameReader } from './frames.js';

const mode = process.argv[2];
const dir = process.argv[3] ?? '.';

function ack(correlationId: number): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeInt32BE(4, 0);
  b.writeInt32BE(correlationId, 4);
  return b;
}

function sink(socket: Socket): void {
  const reader = new FrameReader((frame) => socket.write(ack(frame.readInt32BE(4))));
  socket.on('data', (c: Buffer) => reader.push(c));
}

const MEMORY_BYTES = 64 * 1024 * 1024;

function memory(socket: Socket): void {
  // One buffer per connection, filled once and reused: the next request comes only after the client read
  // the whole response, so the previous write is finished when the header is rewritten.
  let buf: Buffer | undefined;
  const reader = new FrameReader((frame) => {
    const correlationId = frame.readInt32BE(0);
    const n = Math.min(frame.readInt32BE(4), MEMORY_BYTES);
    buf ??= Buffer.alloc(MEMORY_BYTES + 8, 0x61);
    buf.writeInt32BE(4 + n, 0);
    buf.writeInt32BE(correlationId, 4);
    socket.write(buf.subarray(0, 8 + n));
  });
  socket.on('data', (c: Buffer) => reader.push(c));
}

/** A partition's current file and where its next batch goes. */
interface PartitionFile {
  readonly fd: number;
  readonly path: string;
  pos: number;
  pending: number;
  retired: boolean;
}

/** Files roll at this size and the old one is deleted (like a log with retention), so disk use stays bounded. */
const ROLL_BYTES = 1024 * 1024 * 1024;
const files = new Map<string, PartitionFile>();
let fileSeq = 0;

function openFile(key: string): PartitionFile {
  const path = join(dir, `${key}.${fileSeq++}.log`);
  return { fd: openSync(path, 'w'), path, pos: 0, pending: 0, retired: false };
}

function fileFor(topic: string, partition: number, bytes: number): PartitionFile {
  const key = `${topic}-${partition}`;
  let f = files.get(key);
  if (f === undefined || f.pos + bytes > ROLL_BYTES) {
    if (f !== undefined) {
      f.retired = true;
      unlinkSync(f.path);
      if (f.pending === 0) closeSync(f.fd);
    }
    f = openFile(key);
    files.set(key, f);
  }
  return f;
}

function append(f: PartitionFile, records: Buffer): Promise<void> {
  const pos = f.pos;
  f.pos += records.length;
  f.pending++;
  return new Promise<void>((resolve, reject) =>
    write(f.fd, records, 0, records.length, pos, (err) => {
      if (--f.pending === 0 && f.retired) closeSync(f.fd);
      if (err) reject(err);
      else resolve();
    }),
  );
}

class Cursor {
  constructor(
    readonly buf: Buffer,
    public pos: number,
  ) {}
  int16(): number {
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  int32(): number {
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  uvarint(): number {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = this.buf[this.pos++];
      if (b === undefined) throw new Error('truncated varint');
      v += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return v;
      shift += 7;
    }
  }
  skipTags(): void {
    for (let n = this.uvarint(); n > 0; n--) {
      this.uvarint();
      this.pos += this.uvarint();
    }
  }
  compactBytes(): Buffer | null {
    const n = this.uvarint() - 1;
    if (n < 0) return null;
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

/** Parses a Produce v9 frame, checks each batch's CRC and starts its append; returns the pending writes. */
function ingestFrame(frame: Buffer): { correlationId: number; writes: Promise<void>[] } {
  const c = new Cursor(frame, 0);
  const apiKey = c.int16();
  const version = c.int16();
  const correlationId = c.int32();
  if (apiKey !== 0 || version !== 9) throw new Error(`ingest baseline takes Produce v9 only, got key ${apiKey} v${version}`);
  const clientIdLength = c.int16();
  if (clientIdLength > 0) c.pos += clientIdLength;
  c.skipTags();
  c.compactBytes(); // transactionalId
  c.int16(); // acks
  c.int32(); // timeoutMs
  const writes: Promise<void>[] = [];
  for (let t = c.uvarint() - 1; t > 0; t--) {
    const topic = (c.compactBytes() ?? Buffer.alloc(0)).toString('latin1');
    for (let p = c.uvarint() - 1; p > 0; p--) {
      const partition = c.int32();
      const records = c.compactBytes();
      c.skipTags();
      if (records === null || records.length < 61) throw new Error('missing record batch');
      if (crc32c(records.subarray(21)) !== records.readUInt32BE(17)) throw new Error(`corrupt batch for ${topic}-${partition}`);
      writes.push(append(fileFor(topic, partition, records.length), records));
    }
    c.skipTags();
  }
  return { correlationId, writes };
}

function ingest(socket: Socket): void {
  let tail: Promise<void> = Promise.resolve();
  const reader = new FrameReader((frame) => {
    const { correlationId, writes } = ingestFrame(frame);
    const done = writes.length === 1 ? (writes[0] as Promise<void>) : Promise.all(writes);
    tail = Promise.all([tail, done]).then(() => {
      socket.write(ack(correlationId));
    });
    tail.catch((err: unknown) => {
      process.stderr.write(`ingest baseline: ${String(err)}\n`);
      socket.destroy();
    });
  });
  socket.on('data', (c: Buffer) => {
    try {
      reader.push(c);
    } catch (err) {
      process.stderr.write(`ingest baseline: ${String(err)}\n`);
      socket.destroy();
    }
  });
}

const handlers: Record<string, (s: Socket) => void> = { sink, ingest, memory };
const handler = mode === undefined ? undefined : handlers[mode];
if (handler === undefined) {
  process.stderr.write(`usage: baseline-server <sink|ingest|memory> [dir]\n`);
  process.exit(2);
}
const server = createServer((socket) => {
  socket.setNoDelay(true);
  socket.on('error', () => undefined);
  handler(socket);
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening ${typeof addr === 'object' && addr !== null ? addr.port : 0}\n`);
});
process.once('SIGTERM', () => process.exit(0));
