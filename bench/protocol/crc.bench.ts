// CRC32C validation of a 1 MiB batch, next to baselines measured in the same run: Buffer.copy of the same
// bytes (memory-bandwidth ceiling) and a pure-JS slice-by-8 CRC32C. Run: npx tsx bench/protocol/crc.bench.ts
import { encodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import { assertBatchCrc } from '../../protocol/record-batch/crc.js';
import { measure } from '../lib/throughput.js';

const records = [];
for (let i = 0; size(records) < 1 << 20; i++) records.push({ key: Buffer.from(`key-${i}`), value: Buffer.from(JSON.stringify({ i, pad: 'x'.repeat(470) })) });
function size(rs: { value: Buffer }[]): number {
  return rs.reduce((n, r) => n + r.value.length + 20, 0);
}
const batch = encodeRecordBatch({ baseTimestamp: 0n, records });
const target = Buffer.allocUnsafe(batch.length);

// Pure-JS slice-by-8 CRC32C (Castagnoli, reflected 0x82F63B78), the second reference.
const T = Array.from({ length: 8 }, () => new Int32Array(256));
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  T[0]![n] = c;
}
for (let n = 0; n < 256; n++) for (let t = 1; t < 8; t++) T[t]![n] = (T[t - 1]![n]! >>> 8) ^ T[0]![T[t - 1]![n]! & 0xff]!;
const [t0, t1, t2, t3, t4, t5, t6, t7] = T as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];
function jsCrc32c(b: Buffer, start: number, end: number): number {
  let c = -1;
  let p = start;
  for (; p + 8 <= end; p += 8) {
    const a = c ^ (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24));
    c = t7[a & 0xff]! ^ t6[(a >>> 8) & 0xff]! ^ t5[(a >>> 16) & 0xff]! ^ t4[a >>> 24]! ^ t3[b[p + 4]!]! ^ t2[b[p + 5]!]! ^ t1[b[p + 6]!]! ^ t0[b[p + 7]!]!;
  }
  for (; p < end; p++) c = t0[(c ^ b[p]!) & 0xff]! ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
if (jsCrc32c(batch, 21, batch.length) !== batch.readUInt32BE(17)) throw new Error('JS reference CRC disagrees with the batch CRC');


const copy = measure(() => batch.copy(target), batch.length);
const native = measure(() => assertBatchCrc(batch), batch.length);
const js = measure(() => jsCrc32c(batch, 21, batch.length), batch.length);
console.log(`batch ${batch.length} bytes, medians of 7 runs`);
console.log(`Buffer.copy (ceiling)      ${copy.toFixed(0).padStart(7)} MB/s`);
console.log(`assertBatchCrc (native)    ${native.toFixed(0).padStart(7)} MB/s  = ${(native / copy).toFixed(2)}x copy, ${(native / js).toFixed(1)}x pure JS`);
console.log(`pure-JS slice-by-8 CRC32C  ${js.toFixed(0).padStart(7)} MB/s  = ${(js / copy).toFixed(2)}x copy`);
