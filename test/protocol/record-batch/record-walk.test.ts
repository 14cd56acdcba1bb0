import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateBatch, type ValidateOptions } from '../../../protocol/record-batch/validate.js';
import { walkRecords } from '../../../protocol/record-batch/record-walk.js';
import { checkBatchBounds, encodeRecordBatch, recordsSection } from '../../../protocol/record-batch/record-batch.js';
import { RecordBatchError } from '../../../protocol/record-batch/errors.js';
import { assertBatchCrc, writeBatchCrc } from '../../../protocol/record-batch/crc.js';
import { BATCH_HEADER_SIZE, BATCH_OFFSETS, readBatchHeader } from '../../../protocol/record-batch/header.js';
import { DEFAULT_MAX_DECOMPRESSED_BYTES, compressionOf, type CompressionType } from '../../../protocol/record-batch/compression.js';
import { decodeRecords, type RecordInput } from '../../../protocol/record-batch/records.js';

/**
 * The validator as it was before the record walk: decode every record into objects, then check the deltas.
 * Kept here as the oracle the fast validator must agree with, verdict for verdict.
 */
function referenceValidate(buf: Buffer, options: ValidateOptions = {}): bigint {
  const end = checkBatchBounds(buf, 0);
  if (end !== buf.length) throw new RecordBatchError('INVALID_LENGTH', `batchLength says the batch ends at byte ${end} but ${buf.length} bytes were sent; send exactly one batch per partition`, { offset: end });
  if (options.maxBytes !== undefined && buf.length > options.maxBytes) throw new RecordBatchError('BATCH_TOO_LARGE', 'too large');
  assertBatchCrc(buf, 0);
  const header = readBatchHeader(buf, 0);
  const compression = compressionOf(header.attributes);
  if (header.recordsCount < 0) throw new RecordBatchError('RECORD_COUNT_MISMATCH', `batch declares ${header.recordsCount} records`, { offset: BATCH_OFFSETS.recordsCount });
  const data = recordsSection(buf, 0, end, compression, options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES);
  const records = decodeRecords(data, header.recordsCount);
  const strict = options.strictOffsets ?? true;
  let maxDelta = 0;
  let previous = -1;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    if (i === 0 || r.timestampDelta > maxDelta) maxDelta = r.timestampDelta;
    const ok = strict ? r.offsetDelta === i : r.offsetDelta > previous && r.offsetDelta <= header.lastOffsetDelta;
    if (!ok) {
      throw new RecordBatchError(
        'INVALID_OFFSET_DELTA',
        `record ${i} has offsetDelta ${r.offsetDelta}; ${strict ? `expected ${i}` : `expected more than ${previous} and at most lastOffsetDelta ${header.lastOffsetDelta}`}`,
      );
    }
    previous = r.offsetDelta;
  }
  if (strict && header.lastOffsetDelta !== records.length - 1) {
    throw new RecordBatchError('INVALID_OFFSET_DELTA', `lastOffsetDelta is ${header.lastOffsetDelta} but the batch holds ${records.length} records`, { offset: BATCH_OFFSETS.lastOffsetDelta });
  }
  return header.baseTimestamp + BigInt(maxDelta);
}

type Verdict = { ok: true; maxRecordTimestamp: bigint } | { ok: false; code: string; message: string; offset: number | undefined };

function verdictOf(fn: () => bigint): Verdict {
  try {
    return { ok: true, maxRecordTimestamp: fn() };
  } catch (e) {
    if (!(e instanceof RecordBatchError)) throw e;
    // BATCH_TOO_LARGE's text is not the point here; every other message must match exactly.
    return { ok: false, code: e.code, message: e.code === 'BATCH_TOO_LARGE' ? '' : e.message, offset: e.code === 'BATCH_TOO_LARGE' ? undefined : e.offset };
  }
}

/** Deterministic PRNG (mulberry32), so a failure names a reproducible seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomRecords(rand: () => number): RecordInput[] {
  const n = 1 + Math.floor(rand() * 6);
  const out: RecordInput[] = [];
  for (let i = 0; i < n; i++) {
    const headers = [];
    const hn = Math.floor(rand() * 3);
    for (let h = 0; h < hn; h++) headers.push({ key: `h${h}é`, value: rand() < 0.3 ? null : Buffer.alloc(Math.floor(rand() * 5), h) });
    out.push({
      attributes: 0,
      timestampDelta: Math.floor(rand() * 2000) - 100,
      key: rand() < 0.3 ? null : Buffer.alloc(Math.floor(rand() * 8), 1),
      value: rand() < 0.2 ? null : Buffer.alloc(Math.floor(rand() * 40), 2),
      headers,
    });
  }
  return out;
}

/** Mutates the records section of an uncompressed batch (or header counts) and re-signs it, so the CRC passes. */
function mutate(good: Buffer, rand: () => number): Buffer {
  const buf = Buffer.from(good);
  const kind = rand();
  if (kind < 0.6) {
    const flips = 1 + Math.floor(rand() * 3);
    for (let f = 0; f < flips; f++) {
      const at = BATCH_HEADER_SIZE + Math.floor(rand() * (buf.length - BATCH_HEADER_SIZE));
      buf[at] = rand() < 0.5 ? Math.floor(rand() * 256) : buf[at]! ^ (1 << Math.floor(rand() * 8));
    }
  } else if (kind < 0.75) {
    buf.writeInt32BE(buf.readInt32BE(BATCH_OFFSETS.recordsCount) + Math.floor(rand() * 5) - 2, BATCH_OFFSETS.recordsCount);
  } else if (kind < 0.9) {
    buf.writeInt32BE(buf.readInt32BE(BATCH_OFFSETS.lastOffsetDelta) + Math.floor(rand() * 5) - 2, BATCH_OFFSETS.lastOffsetDelta);
  } else {
    // Cut or extend the records section, fixing batchLength so only the records are wrong.
    const delta = Math.floor(rand() * 7) - 3;
    const len = Math.max(BATCH_HEADER_SIZE, buf.length + delta);
    const out = Buffer.alloc(len, 0x80);
    buf.copy(out, 0, 0, Math.min(len, buf.length));
    out.writeInt32BE(len - 12, BATCH_OFFSETS.batchLength);
    writeBatchCrc(out);
    return out;
  }
  writeBatchCrc(buf);
  return buf;
}

test('the record walk agrees with decode-then-check on thousands of mutated batches (strict and relaxed)', () => {
  const rand = rng(20261201);
  const tally = { accepted: 0, rejected: 0 };
  const codes = new Set<string>();
  for (let n = 0; n < 4000; n++) {
    const good = encodeRecordBatch({ baseTimestamp: 1_700_000_000_000n, records: randomRecords(rand) });
    const buf = n % 10 === 0 ? good : mutate(good, rand);
    for (const strictOffsets of [true, false]) {
      const options = { strictOffsets };
      const expected = verdictOf(() => referenceValidate(buf, options));
      const actual = verdictOf(() => validateBatch(buf, options).maxRecordTimestamp);
      assert.deepEqual(actual, expected, `case ${n}, strict ${strictOffsets}, bytes ${buf.toString('hex')}`);
      if (expected.ok) tally.accepted++;
      else {
        tally.rejected++;
        codes.add(expected.code);
      }
    }
  }
  // The fuzz must exercise both verdicts and the record-level codes, or it proves nothing.
  assert.ok(tally.accepted > 400, `accepted ${tally.accepted}`);
  assert.ok(tally.rejected > 2000, `rejected ${tally.rejected}`);
  for (const code of ['INVALID_RECORD', 'RECORD_COUNT_MISMATCH', 'INVALID_OFFSET_DELTA']) assert.ok(codes.has(code), `no ${code} among ${[...codes].join(', ')}`);
});

test('compressed batches: the walk runs over the decompressed records with the same verdicts', () => {
  const rand = rng(7);
  const codecs: CompressionType[] = ['gzip', 'snappy', 'lz4', 'zstd'];
  for (let n = 0; n < 200; n++) {
    const compression = codecs[n % codecs.length]!;
    const records = randomRecords(rand).map((r, i) => (n % 3 === 1 && i === 1 ? { ...r, offsetDelta: 5 } : r));
    const buf = encodeRecordBatch({ baseTimestamp: 5n, compression, records });
    for (const options of [{}, { strictOffsets: false }, { maxDecompressedBytes: 16 }]) {
      assert.deepEqual(verdictOf(() => validateBatch(buf, options).maxRecordTimestamp), verdictOf(() => referenceValidate(buf, options)), `case ${n} ${compression}`);
    }
  }
});

test('a decoding error after a bad offset delta wins, as when all records were decoded first', () => {
  const records = [0, 1, 2].map((i) => ({ value: Buffer.from(`v${i}`), offsetDelta: i === 1 ? 9 : i }));
  const buf = encodeRecordBatch({ baseTimestamp: 0n, records });
  const bad = Buffer.from(buf);
  bad[bad.length - 1] = 0x02; // last record: header count 1 with no header bytes
  writeBatchCrc(bad);
  assert.throws(() => validateBatch(bad), (e: unknown) => e instanceof RecordBatchError && e.code === 'INVALID_RECORD');
  assert.throws(() => validateBatch(buf), (e: unknown) => e instanceof RecordBatchError && e.code === 'INVALID_OFFSET_DELTA' && /record 1 has offsetDelta 9/.test(e.message));
});

test('walkRecords reports the largest timestamp delta and the first bad offset delta without throwing for it', () => {
  const buf = encodeRecordBatch({ baseTimestamp: 0n, records: [{ timestampDelta: 3 }, { timestampDelta: 40, offsetDelta: 4 }, { timestampDelta: -2, offsetDelta: 7 }] });
  const data = recordsSection(buf, 0, buf.length, 'none', 1 << 20);
  assert.deepEqual(walkRecords(data, 3, true, 2), { maxTimestampDelta: 40, badIndex: 1, badOffsetDelta: 4, badPrevious: 0 });
  assert.deepEqual(walkRecords(data, 3, false, 7), { maxTimestampDelta: 40, badIndex: -1, badOffsetDelta: 0, badPrevious: -1 });
  assert.deepEqual(walkRecords(data, 3, false, 6), { maxTimestampDelta: 40, badIndex: 2, badOffsetDelta: 7, badPrevious: 4 });
});
