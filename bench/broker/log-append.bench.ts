// Partition log append throughput vs a raw positional fs append of the same bytes, in the same run.
// Run: npx tsx bench/broker/log-append.bench.ts [totalMiB]
// Prints MB/s for both and the ratio log/raw. No fsync on either side (Kafka's default flush policy).
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { PartitionLog } from '../../broker/log/partition-log.js';

const totalBytes = Number(process.argv[2] ?? 512) * 1024 * 1024;

function batch(size: number): Buffer {
  const buf = Buffer.alloc(size, 0x61);
  buf.writeBigInt64BE(0n, 0);
  buf.writeInt32BE(size - 12, 8);
  buf.writeInt32BE(0, 12);
  buf.writeInt8(2, 16);
  buf.writeInt16BE(0, 21);
  buf.writeInt32BE(0, 23); // one "record" spanning the payload: the log never decodes records
  buf.writeBigInt64BE(BigInt(Date.now()), 27);
  buf.writeBigInt64BE(BigInt(Date.now()), 35);
  buf.writeBigInt64BE(-1n, 43);
  buf.writeInt16BE(-1, 51);
  buf.writeInt32BE(-1, 53);
  buf.writeInt32BE(1, 57);
  buf.writeUInt32BE(crc32c(buf.subarray(21)), 17);
  return buf;
}

async function rawAppend(dir: string, buf: Buffer, count: number): Promise<number> {
  const h = await open(join(dir, 'raw.bin'), 'w');
  const t0 = process.hrtime.bigint();
  let pos = 0;
  for (let i = 0; i < count; i++) {
    await h.write(buf, 0, buf.length, pos);
    pos += buf.length;
  }
  const ns = Number(process.hrtime.bigint() - t0);
  await h.close();
  return (pos / 1e6) / (ns / 1e9);
}

async function logAppend(dir: string, buf: Buffer, count: number): Promise<number> {
  const log = await PartitionLog.open({ dir: join(dir, 'log-0') });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await log.append(buf);
  const ns = Number(process.hrtime.bigint() - t0);
  await log.close();
  return ((buf.length * count) / 1e6) / (ns / 1e9);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

for (const size of [1024 * 1024, 16 * 1024]) {
  const buf = batch(size);
  const count = Math.max(1, Math.floor(totalBytes / size));
  const raw: number[] = [];
  const viaLog: number[] = [];
  for (let run = 0; run < 6; run++) {
    const dir = await mkdtemp(join(tmpdir(), 'floe-bench-'));
    try {
      // Alternate the order so neither side always gets the warmer page cache; run 0 is warm-up.
      const r = run % 2 === 0 ? [await rawAppend(dir, buf, count), await logAppend(dir, buf, count)] : [0, 0];
      if (run % 2 === 1) {
        r[1] = await logAppend(dir, buf, count);
        r[0] = await rawAppend(dir, buf, count);
      }
      if (run > 0) {
        raw.push(r[0] as number);
        viaLog.push(r[1] as number);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const rm_ = median(raw);
  const lm = median(viaLog);
  console.log(`${(size / 1024).toString().padStart(5)} KiB batches, ${(count * size / 1048576).toFixed(0)} MiB: raw fs ${rm_.toFixed(0)} MB/s, PartitionLog.append ${lm.toFixed(0)} MB/s, ratio ${(lm / rm_).toFixed(2)}`);
}
