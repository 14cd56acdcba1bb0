/**
 * A Floe broker with one tiered topic, `orders` (3 partitions), for the query-engine tests (Spark, pyiceberg):
 * records produced by real Kafka clients, committed to the topic's table in known rounds, and the Kafka side
 * of every record as the engines must show it.
 *
 * - The warehouse is a local folder or an s3rver bucket (test/helpers/s3-server.ts); the REST catalog listens
 *   on 127.0.0.1, port 0, and requires a bearer token.
 * - `round()` has kafkajs and confluent-kafka-python (librdkafka) each produce one call of the interop
 *   scenario's records (binary and text bytes, null keys, null values, empty bytes, duplicate header keys, a
 *   null header value, explicit timestamps), then rolls every partition, commits (one snapshot: one data file
 *   per partition) and hands the local segments off, so every record is below the local log start.
 * - `kafkaRows()` is the Kafka side: what confluent-kafka-python consumes from each partition's log start
 *   (checked against what the clients were asked to send), joined by offset with the batch each record was
 *   stored in (fetched over the wire before tiering by our decoder, CRCs checked) for the `kafka.batch`
 *   columns, whose `attributes` keep the producer's codec bits.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TestContext } from 'node:test';
import { icebergManifests } from 'icebird';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { parseJson } from '../../../iceberg/json.js';
import { createFileIO } from '../../../iceberg/io/registry.js';
import { S3FileIO } from '../../../iceberg/io/s3.js';
import type { RowBatchFields } from '../../../tiering/convert/columns.js';
import { startBroker, tempDir, type TestBroker } from '../../helpers/broker.js';
import { installWarehouseFetch } from '../../helpers/file-fetch.js';
import { s3WarehouseFlags, startS3Server, type S3TestServer } from '../../helpers/s3-server.js';
import { EARLIEST, EARLIEST_LOCAL, LATEST_TIERED, deleteRecords, fetchAllBatches, listOffset, type ServedBatch } from '../../tiering/e2e/wire.js';
import { KafkajsClient } from '../clients/kafkajs.js';
import { PythonClient } from '../clients/python.js';
import { PARTITIONS, TopicModel, recordsFor, view, type Expected } from '../clients/scenario.js';
import type { Codec, Header, InteropClient } from '../clients/types.js';

export const TOPIC = 'orders';
export { PARTITIONS };
export const REST_TOKEN = 'floe-engines-token';

export interface Warehouse {
  readonly kind: 'local' | 's3';
  readonly flags: readonly string[];
  /** The same warehouse for our own readers. */
  readonly io: FileIO;
  /** Set for an S3 warehouse. */
  readonly s3?: S3TestServer;
}

export async function localWarehouse(t: TestContext): Promise<Warehouse> {
  const root = await tempDir('floe-engines-wh-');
  t.after(() => rm(root, { recursive: true, force: true }));
  const dir = join(root, 'wh');
  const io = createFileIO(pathToFileURL(dir).href);
  t.after(() => io.close());
  return { kind: 'local', flags: [`--iceberg.warehouse=${dir}`], io };
}

export async function s3Warehouse(t: TestContext): Promise<Warehouse> {
  const s3 = await startS3Server({ bucket: 'floe-engines' });
  t.after(() => s3.stop());
  const io = new S3FileIO(s3.fileIOOptions());
  t.after(() => io.close());
  return {
    kind: 's3',
    flags: [
      ...s3WarehouseFlags(s3),
    ],
    io,
    s3,
  };
}

/** One record as the table must show it: the `kafka` struct's columns and `value`. */
export interface KafkaRow {
  readonly partition: number;
  readonly offset: number;
  /** Milliseconds since the epoch. */
  readonly timestamp: number;
  /** 0 CreateTime, 1 LogAppendTime. */
  readonly timestampType: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: readonly Header[];
  /** The `kafka.batch` struct, the same fields the converter writes on each row. */
  readonly batch: RowBatchFields;
  /** The record's attributes byte when non-zero, else null. */
  readonly recordAttributes: number | null;
}

interface Round {
  readonly client: InteropClient;
  readonly codec: Codec;
  readonly idempotent: boolean;
}

export class EngineTopic {
  readonly model = new TopicModel();
  /** After each round, every partition's log end offset. */
  readonly roundEnds: (readonly number[])[] = [];
  /** Per partition, every batch as stored before tiering (Kafka serves batches rebuilt from the table uncompressed). */
  private readonly stored: ServedBatch[][] = Array.from({ length: PARTITIONS }, () => []);
  private roundsDone = 0;

  private constructor(
    readonly broker: TestBroker,
    readonly warehouse: Warehouse,
    private readonly admin: Admin,
    private readonly producers: readonly [KafkajsClient, PythonClient],
    private readonly reader: PythonClient,
  ) {}

  /** `flags`: more broker settings (e.g. the REST catalog's authentication). */
  static async start(t: TestContext, warehouse: Warehouse, flags: readonly string[] = []): Promise<EngineTopic> {
    const b = await startBroker([
      ...flags,
      '--remote.log.storage.system.enable=true',
      ...warehouse.flags,
      '--iceberg.rest.port=0',
      '--iceberg.rest.host=127.0.0.1',
      `--iceberg.rest.token=${REST_TOKEN}`,
      // Commits happen when the test says (round()), so snapshots and data files are known.
      '--iceberg.commit.interval.ms=3600000',
      '--log.retention.check.interval.ms=3600000',
    ]);
    t.after(() => b.stop());
    const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-engines', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    t.after(() => admin.disconnect());
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{
        topic: TOPIC,
        numPartitions: PARTITIONS,
        configEntries: [
          { name: 'iceberg.enabled', value: 'true' },
          { name: 'local.retention.bytes', value: '0' },
          { name: 'local.retention.ms', value: '0' },
          { name: 'iceberg.commit.interval.ms', value: '3600000' },
        ],
      }],
    });
    const kafkajs = new KafkajsClient(b.bootstrap);
    const confluent = await PythonClient.create('confluent-kafka-python', b.bootstrap);
    t.after(() => kafkajs.close());
    t.after(() => confluent.close());
    return new EngineTopic(b, warehouse, admin, [kafkajs, confluent], confluent);
  }

  get restUrl(): string {
    const url = this.broker.broker.services.tiering?.restCatalogUrl;
    assert.ok(url, 'the REST catalog runs');
    return url;
  }

  /**
   * Both clients produce one call each (round n: kafkajs gzip, then confluent zstd or lz4; idempotent every
   * other round), then everything is committed in one snapshot and the local segments are deleted. Resolves
   * with the table's current snapshot id.
   */
  async round(): Promise<bigint> {
    const n = this.roundsDone++;
    const [kafkajs, confluent] = this.producers;
    const plan: Round[] = [
      { client: kafkajs, codec: 'gzip', idempotent: n % 2 === 0 },
      { client: confluent, codec: n % 2 === 0 ? 'zstd' : 'lz4', idempotent: n % 2 === 1 },
    ];
    for (const [i, r] of plan.entries()) {
      assert.ok(r.client.capabilities.codecs.includes(r.codec), `${r.client.name} can compress with ${r.codec}`);
      const records = recordsFor(r.client.capabilities, 10 * n + i + 1);
      const outcome = await r.client.produce({ topic: TOPIC, acks: -1, codec: r.codec, idempotent: r.idempotent, records });
      const expected = this.model.add(records, [0, 0]);
      outcome.offsets.forEach((o, j) => {
        if (o !== null) assert.equal(o, expected[j]?.offset, `${r.client.name} record ${j}: offset`);
      });
    }
    for (let p = 0; p < PARTITIONS; p++) this.stored[p]?.push(...(await fetchAllBatches(this.broker.port, TOPIC, p, this.roundEnds.at(-1)?.[p] ?? 0)));
    const tiering = this.broker.broker.services.tiering;
    assert.ok(tiering, 'the broker runs tiering');
    for (let p = 0; p < PARTITIONS; p++) await this.broker.broker.services.logs.get(TOPIC, p)?.roll();
    await tiering.drain();
    for (let p = 0; p < PARTITIONS; p++) {
      await this.broker.broker.services.logs.get(TOPIC, p)?.enforceRetention();
      const end = this.model.partitions[p]?.length ?? 0;
      assert.equal(await listOffset(this.broker.port, TOPIC, p, LATEST_TIERED), end - 1, `partition ${p}: the table holds every record`);
      assert.equal(await listOffset(this.broker.port, TOPIC, p, EARLIEST_LOCAL), end, `partition ${p}: no local record is left`);
    }
    this.roundEnds.push(this.model.partitions.map((p) => p.length));
    const id = (await this.metadata())['current-snapshot-id'];
    assert.ok(typeof id === 'number' || typeof id === 'bigint', 'the table has a current snapshot');
    return BigInt(id);
  }

  /** DeleteRecords before `offset` in `partition` (Kafka's low watermark moves there). */
  async deleteBefore(partition: number, offset: number): Promise<void> {
    assert.deepEqual(await deleteRecords(this.broker.port, TOPIC, partition, offset), { errorCode: 0, lowWatermark: offset });
  }

  /**
   * Every record from each partition's log start as Kafka shows it (see the file comment), ordered by
   * partition and offset.
   */
  async kafkaRows(): Promise<KafkaRow[]> {
    const out: KafkaRow[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const start = await listOffset(this.broker.port, TOPIC, p, EARLIEST);
      const sent: Expected[] = (this.model.partitions[p] ?? []).slice(start);
      const read = await this.reader.consume(TOPIC, p, start, sent.length);
      assert.deepEqual(read.map(view), sent.map(view), `partition ${p}: confluent-kafka-python reads what was produced`);
      const batches = this.stored[p] ?? [];
      for (const r of read) {
        const stored = batches.find(({ batch }) => Number(batch.baseOffset) <= r.offset && r.offset <= Number(batch.baseOffset) + batch.lastOffsetDelta)?.batch;
        assert.ok(stored, `partition ${p} offset ${r.offset}: the broker served its batch before tiering`);
        const rec = stored.records.find((x) => Number(stored.baseOffset) + x.offsetDelta === r.offset);
        assert.ok(rec, `partition ${p} offset ${r.offset}: the batch holds the record`);
        out.push({
          ...r,
          timestampType: stored.timestampType === 'log-append' ? 1 : 0,
          batch: {
            baseOffset: Number(stored.baseOffset),
            lastOffsetDelta: stored.lastOffsetDelta,
            partitionLeaderEpoch: stored.partitionLeaderEpoch,
            attributes: stored.attributes,
            baseTimestamp: Number(stored.baseTimestamp),
            maxTimestamp: Number(stored.maxTimestamp),
            producerId: Number(stored.producerId),
            producerEpoch: stored.producerEpoch,
            baseSequence: stored.baseSequence,
            recordsCount: stored.recordsCount,
          },
          recordAttributes: rec.attributes === 0 ? null : rec.attributes,
        });
      }
    }
    return out;
  }

  /** The table's metadata as the REST catalog serves it (LoadTableResult.metadata). */
  async metadata(): Promise<Record<string, unknown>> {
    const res = await fetch(`${this.restUrl}/v1/namespaces/kafka/tables/${TOPIC}`, { headers: { authorization: `Bearer ${REST_TOKEN}` } });
    const text = await res.text();
    assert.equal(res.status, 200, `load table: ${text}`);
    return (parseJson(text) as { metadata: Record<string, unknown> }).metadata;
  }
}

/** A manifest of the current snapshot and its entries, read by icebird (an independent Avro reader). */
export interface ManifestView {
  readonly path: string;
  readonly entries: readonly {
    readonly status: number;
    readonly snapshotId: bigint | null;
    readonly content: number;
    readonly filePath: string;
    readonly recordCount: number;
    readonly fileSizeInBytes: number;
    readonly partition: number | null;
  }[];
}

/** The current snapshot's manifests as icebird reads them from the metadata the REST catalog serves. */
export async function currentManifests(topic: EngineTopic): Promise<ManifestView[]> {
  const metadata = await topic.metadata();
  const restore = installWarehouseFetch(topic.warehouse.io);
  try {
    const list = await icebergManifests(metadata as never);
    return list.map(({ url, entries }) => ({
      path: url,
      entries: entries.map((e) => {
        const f = e.data_file as unknown as { content?: number; file_path: string; record_count: bigint | number; file_size_in_bytes: bigint | number; partition?: { kafka_partition?: number | null } };
        const sid = (e as unknown as { snapshot_id?: bigint | number | null }).snapshot_id;
        return {
          status: Number(e.status),
          snapshotId: sid === undefined || sid === null ? null : BigInt(sid),
          content: Number(f.content ?? 0),
          filePath: f.file_path,
          recordCount: Number(f.record_count),
          fileSizeInBytes: Number(f.file_size_in_bytes),
          partition: f.partition?.kafka_partition ?? null,
        };
      }),
    }));
  } finally {
    restore();
  }
}

/** Facts about the records that make a comparison worth something: each awkward case is really there. */
export function assertCoversTheHardCases(rows: readonly KafkaRow[]): void {
  const notText = (b: Buffer | null): boolean => b !== null && !Buffer.from(b.toString('utf8'), 'utf8').equals(b);
  assert.ok(rows.some((r) => r.key === null), 'a null key');
  assert.ok(rows.some((r) => r.value === null), 'a null value');
  assert.ok(rows.some((r) => r.value?.length === 0 && r.key?.length === 0), 'empty key and value');
  assert.ok(rows.some((r) => notText(r.value)) && rows.some((r) => notText(r.key)), 'keys and values that are not UTF-8');
  assert.ok(rows.some((r) => r.headers.some(([, v]) => v === null)), 'a null header value');
  assert.ok(rows.some((r) => r.headers.some(([, v]) => notText(v))), 'a binary header value');
  assert.ok(rows.some((r) => new Set(r.headers.map(([k]) => k)).size < r.headers.length), 'duplicate header keys');
  assert.ok(rows.some((r) => r.batch.producerId >= 0) && rows.some((r) => r.batch.producerId < 0), 'idempotent and plain batches');
  assert.ok(new Set(rows.map((r) => r.batch.attributes & 7)).size >= 3, 'batches of several codecs');
}
