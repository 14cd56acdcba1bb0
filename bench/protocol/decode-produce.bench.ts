/**
 * Decoding a Produce request carrying ~1 MiB of record batches over many partitions, against two
 * baselines measured in the same run on the same bytes:
 *   - memcpy: Buffer.copy of the whole frame into a reused buffer (the floor of any decoder that copies);
 *   - platformatic: @platformatic/kafka's Reader reading the same fields (hand-written per version).
 * Floe's decoder returns the records as views of the frame, so it should run at or above memcpy speed.
 *
 *   npx tsx bench/protocol/decode-produce.bench.ts
 */
import { Reader as PltReader } from '@platformatic/kafka';
import { decodeRequest, encodeRequest } from '../../protocol/index.js';

const TOPICS = 8;
const PARTITIONS = 16;
const RECORDS_BYTES = 8 * 1024; // per partition: 8 x 16 x 8 KiB = 1 MiB
const RUNS = 7;
const TARGET_MS = 300;

function makeFrame(apiVersion: number): Buffer {
  let seed = 12345;
  const topicData = [];
  for (let t = 0; t < TOPICS; t++) {
    const partitionData = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const records = Buffer.allocUnsafe(RECORDS_BYTES);
      for (let i = 0; i < records.length; i++) {
        seed = (seed * 1103515245 + 12345) >>> 0;
        records[i] = seed >>> 24;
      }
      partitionData.push({ index: p, records });
    }
    topicData.push({ name: `topic-${t}`, partitionData });
  }
  const sized = encodeRequest({ apiKey: 0, apiVersion, correlationId: 1, clientId: 'bench' }, { transactionalId: null, acks: -1, timeoutMs: 30000, topicData });
  return Buffer.from(sized.subarray(4));
}

/** The same fields read with @platformatic/kafka's Reader (request header v1/v2, then the body). */
function platformaticDecode(frame: Buffer, flexible: boolean): number {
  const r = PltReader.from(frame);
  r.readInt16();
  r.readInt16();
  r.readInt32();
  r.readNullableString(false);
  if (flexible) r.readTaggedFields();
  r.readNullableString(flexible);
  r.readInt16();
  r.readInt32();
  const topics = r.readArray(
    (t) => ({
      name: t.readString(flexible),
      partitionData: t.readArray((p) => ({ index: p.readInt32(), records: p.readNullableBytes(flexible) }), flexible, flexible),
    }),
    flexible,
    flexible,
  );
  if (flexible) r.readTaggedFields();
  return topics.length;
}

function measure(name: string, bytes: number, fn: () => unknown): number {
  // Warm up, then size a batch of iterations to ~TARGET_MS and take the median of RUNS.
  let iterations = 1;
  for (;;) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (ms > TARGET_MS / 4) {
      iterations = Math.max(1, Math.round((iterations * TARGET_MS) / ms));
      break;
    }
    iterations *= 2;
  }
  const rates: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    rates.push((bytes * iterations) / seconds / 1e6);
  }
  rates.sort((a, b) => a - b);
  const median = rates[Math.floor(rates.length / 2)] as number;
  console.log(`  ${name.padEnd(28)} ${median.toFixed(0).padStart(8)} MB/s   (${iterations} iterations x ${RUNS} runs)`);
  return median;
}

for (const apiVersion of [3, 9]) {
  const flexible = apiVersion >= 9;
  const frame = makeFrame(apiVersion);
  const target = Buffer.allocUnsafe(frame.length);
  // Check that every decoder reads the whole thing before timing it.
  const decoded = decodeRequest(frame);
  const topics = decoded.body.topicData as { partitionData: unknown[] }[];
  if (topics.length !== TOPICS || topics.some((t) => t.partitionData.length !== PARTITIONS)) throw new Error('bench frame did not decode');
  if (platformaticDecode(frame, flexible) !== TOPICS) throw new Error('platformatic reader did not decode the bench frame');

  console.log(`Produce v${apiVersion} (${flexible ? 'flexible' : 'classic'}): ${(frame.length / 1024 / 1024).toFixed(2)} MiB frame, ${TOPICS * PARTITIONS} partitions of ${RECORDS_BYTES} B`);
  const memcpy = measure('memcpy (Buffer.copy)', frame.length, () => frame.copy(target));
  const plt = measure('@platformatic/kafka Reader', frame.length, () => platformaticDecode(frame, flexible));
  const floe = measure('floe decodeRequest', frame.length, () => decodeRequest(frame));
  console.log(`  ratios: floe/memcpy ${(floe / memcpy).toFixed(2)}x, floe/platformatic ${(floe / plt).toFixed(2)}x`);
}
