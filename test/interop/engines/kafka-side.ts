/**
 * The Kafka side of the engine tests: a broker with tiering on one warehouse, topics written by real Kafka
 * clients, everything tiered into the topics' tables, and what the table must show, taken from the batches
 * the broker served over the wire before tiering (CRCs checked, and equal to what the clients sent).
 *
 * - `events` (3 partitions): kafkajs and confluent-kafka-python each produce records from the interop
 *   scenario (binary and text keys and values, null keys, null values, empty bytes, duplicate header keys,
 *   null header values, explicit timestamps, one older than the record before it), with two codecs each,
 *   idempotently and not, in two rounds, each tiered in its own commit, so the table has a snapshot that
 *   holds only the first round (for time travel);
 * - `audit` (1 partition, `message.timestamp.type=LogAppendTime`): the broker's clock decides the
 *   timestamps, so the table's timestamp_type is 1 and timestamp_delta is kept;
 * - `orders` (1 partition): text keys and values for the README's example query.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { RestCatalogClient } from '../../../iceberg/catalog/rest-client.js';
import type { TableMetadata } from '../../../iceberg/table-metadata.js';
import { startBroker, type TestBroker } from '../../helpers/broker.js';
import { recordsOf } from '../../tiering/e2e/batches.js';
import { EARLIEST_LOCAL, LATEST, LATEST_TIERED, fetchAllBatches, listOffset } from '../../tiering/e2e/wire.js';
import { KafkajsClient } from '../clients/kafkajs.js';
import { PythonClient } from '../clients/python.js';
import { PARTITIONS, TopicModel, recordsFor, view } from '../clients/scenario.js';
import type { InteropClient } from '../clients/types.js';
import { kafkaRows, type KafkaRow } from './trino-rows.js';

export const ORDERS_T0 = Date.UTC(2023, 10, 14, 22, 13, 10); // 10 s before the README query's bound

export interface KafkaSide {
  readonly broker: TestBroker;
  readonly restUrl: string;
  readonly token: string | undefined;
  readonly rest: RestCatalogClient;
  /** `events` after round 1 and after round 2, by (partition, offset). */
  readonly round1: readonly KafkaRow[];
  readonly events: readonly KafkaRow[];
  /** The `events` snapshots holding exactly round 1 and exactly rounds 1 and 2. */
  readonly snapshot1: bigint;
  readonly snapshot2: bigint;
  readonly audit: readonly KafkaRow[];
  readonly orders: readonly KafkaRow[];
  metadata(table: string): Promise<TableMetadata>;
}

const tableConfigs = [
  { name: 'iceberg.enabled', value: 'true' },
  { name: 'internal.segment.bytes', value: '8192' },
  { name: 'local.retention.bytes', value: '0' },
  { name: 'local.retention.ms', value: '0' },
  { name: 'iceberg.commit.interval.ms', value: '500' },
  // The engines are compared with the snapshots and files Floe committed; a background compaction would add
  // its own snapshot between two queries. Engines reading compacted tables: test/tiering/soak.test.ts.
  { name: 'iceberg.compaction.enabled', value: 'false' },
];

/** Rolls every partition of `topic`, commits and hands off: the whole log is in the table, none is local. */
async function tierAll(b: TestBroker, topic: string, partitions: number): Promise<void> {
  const tiering = b.broker.services.tiering;
  assert.ok(tiering, 'the broker runs tiering');
  for (let p = 0; p < partitions; p++) await b.broker.services.logs.get(topic, p)?.roll();
  await tiering.drain();
  for (let p = 0; p < partitions; p++) {
    await b.broker.services.logs.get(topic, p)?.enforceRetention();
    const end = await listOffset(b.port, topic, p, LATEST);
    assert.equal(await listOffset(b.port, topic, p, LATEST_TIERED), end - 1, `${topic}[${p}]: the table holds every record`);
    assert.equal(await listOffset(b.port, topic, p, EARLIEST_LOCAL), end, `${topic}[${p}]: no local record is left`);
  }
}

/** Starts the broker, writes and tiers the three topics. */
export async function kafkaSide(t: TestContext, warehouseFlags: readonly string[], token?: string): Promise<KafkaSide> {
  const b = await startBroker([
    '--remote.log.storage.system.enable=true',
    ...warehouseFlags,
    ...(token === undefined ? [] : [`--iceberg.rest.token=${token}`]),
    '--iceberg.rest.port=0',
    '--iceberg.rest.host=127.0.0.1',
    '--iceberg.commit.interval.ms=500',
    '--log.retention.check.interval.ms=3600000',
    `--num.partitions=${PARTITIONS}`,
  ]);
  t.after(() => b.stop());
  const restUrl = b.broker.services.tiering?.restCatalogUrl;
  assert.ok(restUrl, 'the REST catalog runs');
  const rest = new RestCatalogClient({ uri: restUrl, ...(token === undefined ? {} : { token }) });
  t.after(() => rest.close());
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-engines', logLevel: logLevel.NOTHING });
  const admin: Admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic: 'events', numPartitions: PARTITIONS, configEntries: tableConfigs },
      { topic: 'audit', numPartitions: 1, configEntries: [...tableConfigs, { name: 'message.timestamp.type', value: 'LogAppendTime' }] },
      { topic: 'orders', numPartitions: 1, configEntries: tableConfigs },
    ],
  });
  const clients: InteropClient[] = [new KafkajsClient(b.bootstrap), await PythonClient.create('confluent-kafka-python', b.bootstrap)];
  for (const c of clients) t.after(() => c.close());
  const metadata = async (table: string): Promise<TableMetadata> => (await rest.loadTable({ namespace: ['kafka'], name: table })).metadata;
  const currentSnapshot = async (table: string): Promise<bigint> => {
    const id = (await metadata(table))['current-snapshot-id'];
    assert.ok(id !== undefined, `${table} has a snapshot`);
    return id;
  };

  // `events`, in two rounds: what each round's batches say, read over the wire before they are tiered.
  const model = new TopicModel();
  const rows: KafkaRow[][] = Array.from({ length: PARTITIONS }, () => []);
  const round = async (n: number): Promise<void> => {
    const from = model.partitions.map((p) => p.length);
    for (const [ci, client] of clients.entries()) {
      const compressed = client.capabilities.codecs.filter((c) => c !== 'none');
      for (const [k, codec] of ['none' as const, ...compressed.slice(n % compressed.length, n % compressed.length + 1)].entries()) {
        const idempotent = client.capabilities.idempotent && (k + ci + n) % 2 === 1;
        const records = recordsFor(client.capabilities, 100 * n + 10 * ci + k);
        const before = Date.now();
        await client.produce({ topic: 'events', acks: -1, codec, idempotent, records });
        model.add(records, [before, Date.now()]);
      }
    }
    for (let p = 0; p < PARTITIONS; p++) {
      const batches = await fetchAllBatches(b.port, 'events', p, from[p] ?? 0);
      const stored = recordsOf(p, batches);
      model.settleTimestamps(p, stored);
      assert.deepEqual(stored.map(view), (model.partitions[p] ?? []).slice(from[p]).map(view), `events[${p}] round ${n}: the broker stored what the clients sent`);
      rows[p]?.push(...kafkaRows(p, batches));
    }
    await tierAll(b, 'events', PARTITIONS);
  };
  await round(0);
  const round1 = rows.flat();
  const snapshot1 = await currentSnapshot('events');
  await round(1);
  const events = rows.flat();
  const snapshot2 = await currentSnapshot('events');
  assert.notEqual(snapshot1, snapshot2, 'round 2 made a new snapshot');

  // `audit`: LogAppendTime, so the broker sets the timestamps.
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  t.after(() => producer.disconnect());
  for (let i = 0; i < 3; i++) {
    await producer.send({ topic: 'audit', messages: Array.from({ length: 4 }, (_, j) => ({ key: j === 0 ? null : `user-${j}`, value: `login ${i}.${j}`, timestamp: String(ORDERS_T0 - j * 1000), headers: { via: ['web', 'api'] } })) });
  }
  const auditBatches = await fetchAllBatches(b.port, 'audit', 0, 0);
  assert.ok(auditBatches.every((s) => s.batch.timestampType === 'log-append'), 'audit batches are LogAppendTime');
  await tierAll(b, 'audit', 1);

  // `orders`: text, one record a second from ORDERS_T0.
  await producer.send({ topic: 'orders', messages: Array.from({ length: 20 }, (_, i) => ({ key: `customer-${i % 3}`, value: `{"order":${i},"total":${(i * 7) % 50}}`, timestamp: String(ORDERS_T0 + i * 1000) })) });
  const ordersBatches = await fetchAllBatches(b.port, 'orders', 0, 0);
  await tierAll(b, 'orders', 1);

  return { broker: b, restUrl, token, rest, round1, events, snapshot1, snapshot2, audit: kafkaRows(0, auditBatches), orders: kafkaRows(0, ordersBatches), metadata };
}
