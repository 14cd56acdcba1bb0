/**
 * The end-to-end fidelity run for a tiered topic (issue 6, "What it must show"), for any warehouse:
 *
 * 1. every client (kcat, confluent-kafka-python from Debian and from PyPI, kafka-python, kafkajs, @platformatic/kafka) produces to ONE
 *    3-partition topic with `iceberg.enabled`, with every codec it has here, idempotently and not, with null
 *    keys and values, empty bytes, duplicate header keys and explicit timestamps (kcat: its own clock);
 * 2. the stored batches are read over the wire before tiering (our decoder, CRCs checked) and must hold exactly
 *    what the clients were asked to send;
 * 3. everything is tiered and the local segments handed off: ListOffsets -4 (earliest local) > 0 equals the
 *    log end and -5 (latest tiered) + 1, while -2 (earliest) is still 0;
 * 4. the batches the broker now rebuilds from Parquet equal the stored ones (boundaries, header fields,
 *    producer fields, records bytes; CRCs checked), from offset 0 and from seeded random offsets;
 * 5. each client consumes every partition from offset 0 and from seeded random offsets and reads
 *    byte-identical keys, values, headers (order, duplicates), offsets and timestamps (kcat with librdkafka's
 *    check.crcs=true);
 * 6. icebird and DuckDB read the table and see exactly one row per record, identical.
 *
 * DeleteRecords gaps are not part of this run: see delete-records.test.ts for why.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { startBroker, type TestBroker } from '../../helpers/broker.js';
import { KafkajsClient } from '../../interop/clients/kafkajs.js';
import { KcatClient } from '../../interop/clients/kcat.js';
import { PlatformaticClient } from '../../interop/clients/platformatic.js';
import { PythonClient } from '../../interop/clients/python.js';
import { PARTITIONS, assertReads, recordsFor, TopicModel, view, type Expected } from '../../interop/clients/scenario.js';
import type { Codec, InteropClient } from '../../interop/clients/types.js';
import { assertSameBatches, recordsOf } from './batches.js';
import { icebirdView, readWithDuckDB, readWithIcebird, type TableRow } from './table-readers.js';
import { EARLIEST, EARLIEST_LOCAL, LATEST, LATEST_TIERED, fetchAllBatches, fetchOnce, listOffset, type ServedBatch } from './wire.js';

export interface FidelityOptions {
  /** Broker flags naming the warehouse (`--iceberg.warehouse=...` and, for S3, its endpoint and keys). */
  readonly warehouseFlags: readonly string[];
  /** A FileIO on the same warehouse, for the table readers. */
  readonly io: FileIO;
  /** Random start offsets per partition and client (seeded). */
  readonly randomReads: number;
  readonly seed: number;
}

export const TOPIC = 'fidelity';

/** Deterministic PRNG (mulberry32), so a failing random offset can be replayed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Makes every kcat this process starts verify the CRC of each batch it consumes (librdkafka `check.crcs`):
 * the kcat driver does not set it, and kcat reads its default properties from the file $KCAT_CONFIG names.
 */
async function checkCrcsInKcat(t: TestContext): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-e2e-kcat-'));
  const file = join(dir, 'kcat.conf');
  await writeFile(file, 'check.crcs=true\n');
  const before = process.env['KCAT_CONFIG'];
  process.env['KCAT_CONFIG'] = file;
  t.after(async () => {
    if (before === undefined) delete process.env['KCAT_CONFIG'];
    else process.env['KCAT_CONFIG'] = before;
    await rm(dir, { recursive: true, force: true });
  });
}

interface ProduceCase {
  readonly client: InteropClient;
  readonly codec: Codec;
  readonly idempotent: boolean;
  readonly expected: Expected[];
}

export async function runFidelity(t: TestContext, options: FidelityOptions): Promise<void> {
  const b: TestBroker = await startBroker([
    '--remote.log.storage.system.enable=true',
    ...options.warehouseFlags,
    '--iceberg.rest.port=0',
    '--iceberg.commit.interval.ms=500',
    '--log.segment.bytes=8192',
    '--log.local.retention.bytes=0',
    '--log.local.retention.ms=0',
    '--log.retention.check.interval.ms=3600000',
    `--num.partitions=${PARTITIONS}`,
  ]);
  t.after(() => b.stop());
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-e2e-fidelity', logLevel: logLevel.NOTHING });
  const admin: Admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  const clients: InteropClient[] = [
    new KcatClient(b.bootstrap),
    await PythonClient.create('confluent-kafka-python', b.bootstrap),
    await PythonClient.create('confluent-kafka-pypi', b.bootstrap),
    await PythonClient.create('kafka-python', b.bootstrap),
    new KafkajsClient(b.bootstrap),
    new PlatformaticClient(b.bootstrap),
  ];
  for (const c of clients) t.after(() => c.close());
  await checkCrcsInKcat(t);
  const model = new TopicModel();
  const cases: ProduceCase[] = [];
  const hot: ServedBatch[][] = [];

  await t.test('every client produces to one tiered topic with each of its codecs, idempotently and not', async () => {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{
        topic: TOPIC,
        numPartitions: PARTITIONS,
        configEntries: [
          { name: 'iceberg.enabled', value: 'true' },
          { name: 'internal.segment.bytes', value: '8192' },
          { name: 'local.retention.bytes', value: '0' },
          { name: 'local.retention.ms', value: '0' },
          { name: 'iceberg.commit.interval.ms', value: '500' },
        ],
      }],
    });
    for (const [ci, client] of clients.entries()) {
      // Every record must be readable by every client: text header values (kcat prints text) and no null
      // header values (kafkajs and kafka-python cannot carry them).
      const caps = { ...client.capabilities, nullHeaderValues: false };
      for (const [k, codec] of caps.codecs.entries()) {
        const idempotent = caps.idempotent && (k + ci) % 2 === 1;
        const records = recordsFor(caps, 1000 * ci + k, false);
        const before = Date.now();
        const outcome = await client.produce({ topic: TOPIC, acks: idempotent || k % 2 === 0 ? -1 : 1, codec, idempotent, records });
        const expected = model.add(records, [before, Date.now()]);
        outcome.offsets.forEach((o, j) => {
          if (o !== null) assert.equal(o, expected[j]?.offset, `${client.name} ${codec} record ${j}: reported offset`);
        });
        cases.push({ client, codec, idempotent, expected });
      }
    }
    const codecs = new Set(cases.map((c) => c.codec));
    assert.deepEqual([...codecs].sort(), ['gzip', 'lz4', 'none', 'snappy', 'zstd'], 'every codec was produced by some client');
    assert.ok(cases.some((c) => c.idempotent), 'some produce was idempotent');
  });

  await t.test('before tiering, the stored batches hold exactly what the clients sent', async () => {
    for (let p = 0; p < PARTITIONS; p++) {
      const batches = await fetchAllBatches(b.port, TOPIC, p, 0);
      hot.push(batches);
      const stored = recordsOf(p, batches);
      model.settleTimestamps(p, stored);
      assert.deepEqual(stored.map(view), (model.partitions[p] ?? []).map(view), `partition ${p}`);
      assert.ok(stored.every((r) => r.timestampType === 'create'));
    }
    for (const c of cases) {
      const batches = c.expected.flatMap((e) => (hot[e.partition] ?? []).filter((h) => Number(h.batch.baseOffset) <= e.offset && e.offset <= Number(h.batch.baseOffset) + h.batch.lastOffsetDelta));
      const label = `${c.client.name} ${c.codec}${c.idempotent ? ' idempotent' : ''}`;
      // A client may leave a batch uncompressed when compression would not shrink it, never use another codec.
      assert.ok(batches.some((h) => h.batch.compression === c.codec), `${label}: stored codecs ${batches.map((h) => h.batch.compression).join(',')}`);
      assert.ok(batches.every((h) => h.batch.compression === c.codec || h.batch.compression === 'none'), `${label}: stored codecs`);
      assert.ok(batches.every((h) => (h.batch.producerId >= 0n) === c.idempotent), `${label}: producer ids ${batches.map((h) => h.batch.producerId).join(',')}`);
    }
  });

  await t.test('everything is tiered and the local segments are deleted', async () => {
    const tiering = b.broker.services.tiering;
    assert.ok(tiering, 'the broker runs tiering');
    for (let p = 0; p < PARTITIONS; p++) await b.broker.services.logs.get(TOPIC, p)?.roll();
    await tiering.drain();
    for (let p = 0; p < PARTITIONS; p++) {
      const log = b.broker.services.logs.get(TOPIC, p);
      assert.ok(log);
      await log.enforceRetention();
      const end = model.partitions[p]?.length ?? 0;
      assert.equal(await listOffset(b.port, TOPIC, p, LATEST), end, `partition ${p}: log end`);
      assert.equal(await listOffset(b.port, TOPIC, p, LATEST_TIERED), end - 1, `partition ${p}: the table holds every record`);
      assert.equal(await listOffset(b.port, TOPIC, p, EARLIEST_LOCAL), end, `partition ${p}: no local record is left (earliest local = end of the tiered range)`);
      assert.equal(await listOffset(b.port, TOPIC, p, EARLIEST), 0, `partition ${p}: the remote log starts at 0`);
    }
  });

  await t.test('the batches rebuilt from Parquet equal the stored ones, from offset 0 and from random offsets', async () => {
    const rnd = seeded(options.seed);
    for (let p = 0; p < PARTITIONS; p++) {
      const stored = hot[p] ?? [];
      assertSameBatches(stored, await fetchAllBatches(b.port, TOPIC, p, 0), `partition ${p} from 0`);
      const end = model.partitions[p]?.length ?? 0;
      for (let i = 0; i < 4 * options.randomReads; i++) {
        const from = Math.floor(rnd() * end);
        const first = stored.findIndex((h) => from <= Number(h.batch.baseOffset) + h.batch.lastOffsetDelta);
        assertSameBatches(stored.slice(first), await fetchAllBatches(b.port, TOPIC, p, from, 1 + Math.floor(rnd() * 8192)), `partition ${p} from ${from}`);
      }
      const past = await fetchOnce(b.port, TOPIC, p, end + 1);
      assert.equal(past.errorCode, 1, `partition ${p}: a fetch past the end is OFFSET_OUT_OF_RANGE`);
    }
  });

  for (const client of clients) {
    await t.test(`${client.name} reads every record from offset 0 and from random offsets, byte for byte`, async () => {
      const rnd = seeded(options.seed + client.name.length);
      for (let p = 0; p < PARTITIONS; p++) {
        const all = model.partitions[p] ?? [];
        await assertReads(client, TOPIC, p, all, 'the tiered topic from 0');
        for (let i = 0; i < options.randomReads; i++) {
          const from = Math.floor(rnd() * all.length);
          await assertReads(client, TOPIC, p, all.slice(from, from + 1 + Math.floor(rnd() * 6)), `the tiered topic from random offset ${from}`);
        }
      }
    });
  }

  const expectedRows = (): TableRow[] =>
    model.partitions.flat().map((e) => ({ partition: e.partition, offset: e.offset, timestamp: e.timestamp, key: e.key, value: e.value, headers: e.headers }));

  await t.test('icebird reads the table: one row per record, identical', async () => {
    const url = b.broker.services.tiering?.restCatalogUrl;
    assert.ok(url, 'the REST catalog runs');
    const rows = await readWithIcebird(url, options.io, ['kafka'], TOPIC);
    const want = expectedRows();
    assert.equal(rows.length, want.length, 'one row per record');
    want.forEach((w, i) => {
      const { got, want: expected } = icebirdView(rows[i], w);
      assert.deepEqual(got, expected, `row ${i}`);
    });
  });

  await t.test('DuckDB reads the table\'s live data files: one row per record, identical', async (tt) => {
    const url = b.broker.services.tiering?.restCatalogUrl;
    assert.ok(url, 'the REST catalog runs');
    const rows = await readWithDuckDB(tt, url, options.io, ['kafka'], TOPIC);
    assert.deepEqual(rows.map(rowView), expectedRows().map(rowView));
  });
}

const hex = (b: Buffer | null): string | null => (b === null ? null : b.toString('hex'));

/** Comparable form of a table row, ordered by (partition, offset) by the callers. */
export function rowView(r: TableRow): Record<string, unknown> {
  return { partition: r.partition, offset: r.offset, timestamp: r.timestamp, key: hex(r.key), value: hex(r.value), headers: r.headers.map(([k, v]) => [k, hex(v)]) };
}
