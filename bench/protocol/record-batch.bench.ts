// Record batch v2 encode/decode of ~1 MiB of ~500-byte records, with and without 2 headers per record,
// as a ratio to Buffer.copy of the same bytes measured in the same run.
// Run: npx tsx bench/protocol/record-batch.bench.ts
import { decodeRecordBatch, encodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import type { RecordInput } from '../../protocol/record-batch/records.js';
import { measure } from '../lib/throughput.js';


function makeRecords(withHeaders: boolean): RecordInput[] {
  const out: RecordInput[] = [];
  let total = 0;
  for (let i = 0; total < 1 << 20; i++) {
    const value = Buffer.from(JSON.stringify({ id: i, user: `user-${i % 1000}`, pad: 'x'.repeat(440) }));
    const rec: RecordInput = {
      key: Buffer.from(`key-${i}`),
      value,
      timestampDelta: i,
      ...(withHeaders ? { headers: [{ key: 'trace-id', value: Buffer.from(`t-${i}`) }, { key: 'source', value: Buffer.from('bench') }] } : {}),
    };
    out.push(rec);
    total += value.length + 20;
  }
  return out;
}

for (const withHeaders of [false, true]) {
  const records = makeRecords(withHeaders);
  const batch = encodeRecordBatch({ baseTimestamp: 0n, records });
  const target = Buffer.allocUnsafe(batch.length);
  const copy = measure(() => batch.copy(target), batch.length);
  const enc = measure(() => encodeRecordBatch({ baseTimestamp: 0n, records }), batch.length);
  const dec = measure(() => decodeRecordBatch(batch), batch.length);
  const decNoCrc = measure(() => decodeRecordBatch(batch, 0, { verifyCrc: false }), batch.length);
  console.log(`${records.length} records, ${batch.length} bytes, ${withHeaders ? '2 headers' : 'no headers'} per record (medians of 7 runs)`);
  console.log(`  Buffer.copy            ${copy.toFixed(0).padStart(6)} MB/s`);
  console.log(`  encode (+CRC)          ${enc.toFixed(0).padStart(6)} MB/s  ${(enc / copy).toFixed(3)}x copy`);
  console.log(`  decode (+CRC)          ${dec.toFixed(0).padStart(6)} MB/s  ${(dec / copy).toFixed(3)}x copy`);
  console.log(`  decode (no CRC check)  ${decNoCrc.toFixed(0).padStart(6)} MB/s  ${(decNoCrc / copy).toFixed(3)}x copy`);
}
