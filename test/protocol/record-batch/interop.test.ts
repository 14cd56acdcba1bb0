// Cross-checks against independently written encoders/decoders: kafkajs' RecordBatch v0 (magic 2) code and
// @platformatic/kafka's records.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Reader, createRecordsBatch, readRecordsBatch } from '@platformatic/kafka';
import { decodeRecordBatch, encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import type { CompressionType } from '../../../protocol/record-batch/compression.js';

const require = createRequire(import.meta.url);

interface KafkajsEncoder {
  buffer: Buffer;
}
type KafkajsRecordBatch = (opts: Record<string, unknown>) => Promise<KafkajsEncoder>;
type KafkajsRecord = (opts: Record<string, unknown>) => unknown;
const kjsBatch = (require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: KafkajsRecordBatch }).RecordBatch;
const kjsRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as KafkajsRecord;
const kjsTypes = (require('kafkajs/src/protocol/message/compression/index.js') as { Types: Record<string, number> }).Types;
const KjsDecoder = require('kafkajs/src/protocol/decoder.js') as new (b: Buffer) => unknown;
const kjsDecodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (d: unknown) => Promise<{
  firstOffset: string;
  records: { key: Buffer | null; value: Buffer | null; headers: Record<string, Buffer | Buffer[]>; offset: string; timestamp: string }[];
}>;

for (const [name, code] of [['none', 'None'], ['gzip', 'GZIP']] as const) {
  test(`kafkajs-encoded batch (${name}) decodes with Floe`, async () => {
    const records = [0, 1, 2, 3].map((i) =>
      kjsRecord({ offsetDelta: i, timestampDelta: i * 5, key: i === 1 ? null : Buffer.from(`k${i}`), value: Buffer.from(`value-${i}`), headers: { h: Buffer.from(`x${i}`), dup: [Buffer.from('a'), Buffer.from('b')] } }),
    );
    const enc = await kjsBatch({ compression: kjsTypes[code], firstTimestamp: 1000, maxTimestamp: 1015, lastOffsetDelta: 3, producerId: 7, producerEpoch: 2, firstSequence: 10, transactional: true, records });
    const b = decodeRecordBatch(enc.buffer);
    assert.equal(b.compression, name);
    assert.equal(b.recordsCount, 4);
    assert.equal(b.maxTimestamp, 1015n);
    assert.equal(b.producerId, 7n);
    assert.equal(b.baseSequence, 10);
    assert.equal(b.isTransactional, true);
    b.records.forEach((r, i) => {
      assert.equal(r.offsetDelta, i);
      assert.equal(r.timestampDelta, i * 5);
      assert.deepEqual(r.key, i === 1 ? null : Buffer.from(`k${i}`));
      assert.deepEqual(r.value, Buffer.from(`value-${i}`));
      assert.deepEqual(r.headers, [
        { key: 'h', value: Buffer.from(`x${i}`) },
        { key: 'dup', value: Buffer.from('a') },
        { key: 'dup', value: Buffer.from('b') },
      ]);
    });
  });

  test(`Floe-encoded batch (${name}) decodes with kafkajs`, async () => {
    const buf = encodeRecordBatch({
      baseOffset: 50n,
      compression: name,
      baseTimestamp: 2000n,
      records: [0, 1, 2].map((i) => ({ timestampDelta: i, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [{ key: 'a', value: Buffer.from(String(i)) }] })),
    });
    const decoded = await kjsDecodeBatch(new KjsDecoder(buf));
    assert.equal(decoded.firstOffset, '50');
    assert.deepEqual(
      decoded.records.map((r) => [r.offset, r.timestamp, r.key?.toString(), r.value?.toString(), r.headers['a']?.toString()]),
      [0, 1, 2].map((i) => [String(50 + i), String(2000 + i), `k${i}`, `v${i}`, String(i)]),
    );
  });
}

const PLATFORMATIC_CODECS: CompressionType[] = ['none', 'gzip', 'snappy', 'lz4'];
for (const compression of PLATFORMATIC_CODECS) {
  test(`@platformatic/kafka batches (${compression}) decode with Floe and the reverse`, () => {
    const messages = [0, 1, 2].map((i) => ({
      topic: 't',
      partition: 0,
      key: Buffer.from(`key${i}`),
      value: Buffer.from(`value${i}`.repeat(20)),
      timestamp: 5000n + BigInt(i),
      headers: new Map([[Buffer.from('hk'), Buffer.from(`hv${i}`)]]),
    }));
    const theirs = createRecordsBatch(messages, { compression, producerId: 3n, producerEpoch: 1 }).buffer;
    const b = decodeRecordBatch(theirs);
    assert.equal(b.compression, compression);
    assert.equal(b.producerId, 3n);
    assert.deepEqual(
      b.records.map((r) => [r.offsetDelta, r.timestampDelta, r.key?.toString(), r.value?.toString(), r.headers[0]?.key, r.headers[0]?.value?.toString()]),
      [0, 1, 2].map((i) => [i, i, `key${i}`, `value${i}`.repeat(20), 'hk', `hv${i}`]),
    );

    const ours = encodeRecordBatch({
      compression,
      baseTimestamp: 5000n,
      records: messages.map((m, i) => ({ timestampDelta: i, key: m.key, value: m.value, headers: [{ key: 'hk', value: Buffer.from(`hv${i}`) }] })),
    });
    const back = readRecordsBatch(Reader.from(ours));
    assert.equal(back.records.length, 3);
    back.records.forEach((r, i) => {
      assert.deepEqual(r.key, messages[i]!.key);
      assert.deepEqual(r.value, messages[i]!.value);
      assert.equal(r.timestampDelta, BigInt(i));
      assert.deepEqual(r.headers.map(([k, v]) => [k?.toString(), v?.toString()]), [['hk', `hv${i}`]]);
    });
  });
}
