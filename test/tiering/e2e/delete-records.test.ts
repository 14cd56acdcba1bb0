// DeleteRecords on a tiered topic: the offset gap it leaves must hold in the remote history as it does in a
// local log. Kafka's rule (KIP-107, and KIP-405 for tiered topics): after DeleteRecords(X) the low watermark
// and ListOffsets earliest are X, a fetch below X is OFFSET_OUT_OF_RANGE, and everything from X on is served
// unchanged, whether X falls in the hot log (before tiering) or inside the tiered range (after hand-off).
//
// The table says the same: Iceberg readers (icebird, DuckDB with the delete files anti-joined) see exactly the
// records from X on, also when X falls inside a batch (whose records below X Kafka still returns with it).
// ListOffsets MAX_TIMESTAMP (-3) answers from the table once the local segments are gone.
//
// Gaps that live INSIDE the stored history (compacted topics, aborted transactions, control records) cannot be
// made through this broker yet (compaction and transactions are refused); the conversion layer covers them:
// test/tiering/convert/segment-fixture.ts builds batches whose offsets skip ranges between and inside batches,
// and parquet-to-batches.test.ts checks that every rebuilt batch keeps its stored offsets and that a fetch at
// an offset inside a gap lands on the next batch.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { createFileIO } from '../../../iceberg/io/registry.js';
import { startBroker, tempDir, type TestBroker } from '../../helpers/broker.js';
import { WireClient } from '../../broker/handlers/wire-client.js';
import { assertSameBatches } from './batches.js';
import { rowView } from './fidelity-scenario.js';
import { icebirdView, readWithDuckDB, readWithIcebird, type TableRow } from './table-readers.js';
import { EARLIEST, EARLIEST_LOCAL, LATEST_TIERED, deleteRecords, fetchAllBatches, fetchOnce, listOffset, type ServedBatch } from './wire.js';

const TOPIC = 'gaps';
const RECORDS = 150;
const OFFSET_OUT_OF_RANGE = 1;

const T0 = 1_700_000_000_000;

interface Tiered {
  readonly b: TestBroker;
  /** The warehouse, for the table readers. */
  readonly io: FileIO;
}

async function tieredTopic(t: TestContext): Promise<Tiered> {
  const root = await tempDir('floe-e2e-gaps-');
  const io = createFileIO(pathToFileURL(join(root, 'wh')).href);
  t.after(() => io.close());
  const b = await startBroker([
    '--remote.log.storage.system.enable=true',
    `--iceberg.warehouse=${join(root, 'wh')}`,
    '--iceberg.rest.port=0',
    '--iceberg.commit.interval.ms=3600000',
    '--log.retention.check.interval.ms=3600000',
    // Tiered offsets are read by read workers, from the local warehouse folder themselves.
    '--remote.log.reader.threads=2',
  ]);
  // Hooks run in the order they are added: the folder goes only once the broker has stopped writing to it.
  t.after(async () => {
    await b.stop();
    await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-e2e-gaps', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic: TOPIC, numPartitions: 1, configEntries: [
      { name: 'iceberg.enabled', value: 'true' },
      { name: 'internal.segment.bytes', value: '1024' },
      { name: 'local.retention.bytes', value: '0' },
      { name: 'local.retention.ms', value: '0' },
      { name: 'iceberg.commit.interval.ms', value: '3600000' },
    ] }],
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  t.after(() => producer.disconnect());
  for (let i = 0; i < RECORDS / 5; i++) {
    await producer.send({ topic: TOPIC, messages: Array.from({ length: 5 }, (_, j) => ({ key: `k${i}`, value: `v${i}-${j}-${'x'.repeat(50)}`, timestamp: String(T0 + i), headers: { h: ['a', 'b'] } })) });
  }
  return { b, io };
}

/** The rows a table reader must show: one per record of `batches` at or after `from`. */
function rowsFrom(batches: readonly ServedBatch[], from: number): TableRow[] {
  const out: TableRow[] = [];
  for (const { batch } of batches) {
    for (const r of batch.records) {
      const offset = Number(batch.baseOffset) + r.offsetDelta;
      if (offset < from) continue;
      out.push({ partition: 0, offset, timestamp: Number(batch.baseTimestamp) + r.timestampDelta, key: r.key, value: r.value, headers: r.headers.map((h) => [h.key, h.value] as const) });
    }
  }
  return out;
}

/** icebird and DuckDB (through the broker's REST catalog) see exactly `want`. */
async function assertTableShows(t: TestContext, { b, io }: Tiered, want: readonly TableRow[], what: string): Promise<void> {
  const url = b.broker.services.tiering?.restCatalogUrl;
  assert.ok(url, 'the REST catalog runs');
  const ice = await readWithIcebird(url, io, ['kafka'], TOPIC);
  assert.deepEqual(ice.map((r) => r.offset), want.map((r) => r.offset), `icebird: ${what}`);
  want.forEach((w, i) => {
    const { got, want: expected } = icebirdView(ice[i], w);
    assert.deepEqual(got, expected, `icebird row ${i}`);
  });
  const duck = await readWithDuckDB(t, url, io, ['kafka'], TOPIC);
  assert.deepEqual(duck.map(rowView), want.map(rowView), `DuckDB: ${what}`);
}

/** ListOffsets MAX_TIMESTAMP (-3): the offset and the timestamp. */
async function maxTimestamp(port: number): Promise<{ offset: number; timestamp: number }> {
  const client = await WireClient.connect(port);
  try {
    const res = await client.request(2, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -3n }] }] });
    const p = (res.topics as { partitions: { errorCode: number; offset: bigint; timestamp: bigint }[] }[])[0]?.partitions[0];
    assert.equal(p?.errorCode, 0);
    return { offset: Number(p?.offset), timestamp: Number(p?.timestamp) };
  } finally {
    client.close();
  }
}

/** Rolls, commits and hands off every local segment; checks the whole log is remote. */
async function tierAll(b: TestBroker): Promise<void> {
  const log = b.broker.services.logs.get(TOPIC, 0);
  const tiering = b.broker.services.tiering;
  assert.ok(log && tiering);
  await log.roll();
  await tiering.drain();
  await log.enforceRetention();
  assert.equal(await listOffset(b.port, TOPIC, 0, LATEST_TIERED), RECORDS - 1);
  assert.equal(await listOffset(b.port, TOPIC, 0, EARLIEST_LOCAL), RECORDS);
}

async function assertBelowIsGone(b: TestBroker, x: number): Promise<void> {
  assert.equal(await listOffset(b.port, TOPIC, 0, EARLIEST), x, 'ListOffsets earliest is the DeleteRecords offset');
  for (const below of [0, Math.floor(x / 2), x - 1]) {
    const r = await fetchOnce(b.port, TOPIC, 0, below);
    assert.equal(r.errorCode, OFFSET_OUT_OF_RANGE, `a fetch at ${below}, below the deleted range's end ${x}, is OFFSET_OUT_OF_RANGE (got ${r.records.length} bytes)`);
  }
}

test('DeleteRecords in the hot log, then tiering: records from X on are served exactly from the table', async (t) => {
  const topic = await tieredTopic(t);
  const { b } = topic;
  const hot = await fetchAllBatches(b.port, TOPIC, 0, 0);
  const x = 37; // inside the batch 35..39
  assert.deepEqual(await deleteRecords(b.port, TOPIC, 0, x), { errorCode: 0, lowWatermark: x });
  await tierAll(b);
  const first = hot.findIndex((h) => x <= Number(h.batch.baseOffset) + h.batch.lastOffsetDelta);
  assert.ok(Number(hot[first]?.batch.baseOffset) < x, 'X falls inside a batch');
  assertSameBatches(hot.slice(first), await fetchAllBatches(b.port, TOPIC, 0, x), `from ${x}`);

  await t.test('and the records below X stay deleted', async () => {
    await assertBelowIsGone(b, x);
  });

  await t.test('and the table shows exactly the records from X on (icebird, DuckDB)', async (tt) => {
    await assertTableShows(tt, topic, rowsFrom(hot, x), `from ${x}`);
  });
});

test('DeleteRecords inside the tiered range: records from X on are still served exactly', async (t) => {
  const topic = await tieredTopic(t);
  const { b } = topic;
  const hot = await fetchAllBatches(b.port, TOPIC, 0, 0);
  await tierAll(b);

  await t.test('ListOffsets MAX_TIMESTAMP answers from the table once the local segments are gone: the earliest record with the largest timestamp', async () => {
    // The last send (offsets 145..149) carries the largest timestamp; its first record is the answer.
    assert.deepEqual(await maxTimestamp(b.port), { offset: RECORDS - 5, timestamp: T0 + RECORDS / 5 - 1 });
  });

  const x = 61; // inside the batch 60..64
  const res = await deleteRecords(b.port, TOPIC, 0, x);
  assert.equal(res.errorCode, 0);
  const first = hot.findIndex((h) => x <= Number(h.batch.baseOffset) + h.batch.lastOffsetDelta);
  assert.ok(Number(hot[first]?.batch.baseOffset) < x, 'X falls inside a batch');
  assertSameBatches(hot.slice(first), await fetchAllBatches(b.port, TOPIC, 0, x), `from ${x}`);

  await t.test('and answers low watermark X, and the records below X are gone', async () => {
    assert.equal(res.lowWatermark, x, 'DeleteRecords answers the new low watermark');
    await assertBelowIsGone(b, x);
  });

  await t.test('and the table shows exactly the records from X on (icebird, DuckDB)', async (tt) => {
    await assertTableShows(tt, topic, rowsFrom(hot, x), `from ${x}`);
  });

  await t.test('and a second DeleteRecords further on hides more, Kafka still reads from there exactly', async (tt) => {
    const y = 98;
    assert.deepEqual(await deleteRecords(b.port, TOPIC, 0, y), { errorCode: 0, lowWatermark: y });
    const from = hot.findIndex((h) => y <= Number(h.batch.baseOffset) + h.batch.lastOffsetDelta);
    assertSameBatches(hot.slice(from), await fetchAllBatches(b.port, TOPIC, 0, y), `from ${y}`);
    await assertTableShows(tt, topic, rowsFrom(hot, y), `from ${y}`);
  });
});
