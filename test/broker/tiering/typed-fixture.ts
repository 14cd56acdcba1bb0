// A broker with the schema registry and tiering for the typed-table tests, a topic in a schema mode, and
// helpers to tier everything, drop the local segments and read the table's rows (DuckDB over the live files).
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir, type TestBroker } from '../../helpers/broker.js';
import { duck } from '../../helpers/duckdb.js';
import { liveDataFiles, loadTable } from '../../helpers/tiered-table.js';
import { fetchAllBatches } from '../../tiering/e2e/wire.js';

export interface TypedEnv {
  readonly b: TestBroker;
  readonly kafka: Kafka;
  readonly registryUrl: string;
  readonly restUrl: string;
  readonly warehouse: string;
  /** The broker's warn and error log lines, parsed. */
  warnings(): Record<string, unknown>[];
}

type After = { after: (fn: () => Promise<void> | void) => void };

export async function typedEnv(t: After, flags: readonly string[] = []): Promise<TypedEnv> {
  const root = await tempDir('floe-typed-');
  const warehouse = join(root, 'warehouse');
  const warnings: string[] = [];
  const b = await startBroker([
    '--remote.log.storage.system.enable=true',
    `--iceberg.warehouse=${warehouse}`,
    '--iceberg.rest.port=0',
    '--iceberg.rest.host=127.0.0.1',
    '--schema.registry.port=0',
    '--schema.registry.host=127.0.0.1',
    '--log.retention.check.interval.ms=3600000',
    ...flags,
  ], { dataDir: join(root, 'log'), warnings });
  t.after(async () => {
    await b.stop();
    // A table purge (a dropped topic) may still be deleting files under the warehouse: retry as it ends.
    await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'typed', logLevel: logLevel.NOTHING });
  const restUrl = b.broker.services.tiering?.restCatalogUrl?.replace('0.0.0.0', '127.0.0.1');
  assert.ok(restUrl);
  return { b, kafka, registryUrl: `http://127.0.0.1:${b.broker.schemaRegistryPort}`, restUrl, warehouse, warnings: () => warnings.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

export async function createTypedTopic(e: TypedEnv, topic: string, configs: Record<string, string>, partitions = 1): Promise<void> {
  const admin = e.kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{
      topic,
      numPartitions: partitions,
      configEntries: Object.entries({ 'internal.segment.bytes': '4096', 'local.retention.bytes': '0', 'retention.ms': '-1', 'iceberg.commit.interval.ms': '3600000', 'iceberg.compaction.enabled': 'false', ...configs }).map(([name, value]) => ({ name, value })),
    }],
  });
  await admin.disconnect();
}

export async function produce(e: TypedEnv, topic: string, values: readonly (Buffer | null)[], partition = 0): Promise<void> {
  const producer = e.kafka.producer();
  await producer.connect();
  for (let i = 0; i < values.length; i += 20) {
    await producer.send({ topic, acks: -1, messages: values.slice(i, i + 20).map((value, j) => ({ key: `k${i + j}`, value, partition, headers: { n: String(i + j) } })) });
  }
  await producer.disconnect();
}

/** Rolls, tiers and commits everything, then deletes the local segments the table holds. */
export async function tierAll(e: TypedEnv, topic: string, partition = 0): Promise<void> {
  const log = e.b.broker.services.logs.get(topic, partition);
  assert.ok(log);
  await log.roll();
  await e.b.broker.services.tiering?.drain();
  await log.enforceRetention();
}

/** Every value Kafka serves for the partition (null for a tombstone), by offset, from `from`. */
export async function kafkaValues(e: TypedEnv, topic: string, partition = 0, from = 0): Promise<Map<number, Buffer | null>> {
  const out = new Map<number, Buffer | null>();
  for (const served of await fetchAllBatches(e.b.port, topic, partition, from)) {
    const batch = served.batch;
    if (batch.isControl) continue;
    for (const r of batch.records) out.set(Number(batch.baseOffset) + r.offsetDelta, r.value === null ? null : Buffer.from(r.value));
  }
  return out;
}

/** The table's live data files (local paths), listed by icebird from its current snapshot. */
export function tableFiles(e: TypedEnv, table: string): Promise<string[]> {
  return liveDataFiles(e.restUrl, table, e.warehouse);
}

/** Rows of a table's live files as DuckDB reads them (`select` over `t`), ordered as the query says. */
export async function tableQuery(t: After, e: TypedEnv, table: string, select: (from: string) => string): Promise<Record<string, unknown>[]> {
  const files = await tableFiles(e, table);
  if (files.length === 0) return [];
  const q = await duck(t);
  const list = files.map((f) => `'${f.replaceAll("'", "''")}'`).join(', ');
  return q(select(`read_parquet([${list}], union_by_name = true)`));
}

/** The table's current schema's top-level field names and types (from the REST catalog). */
export async function tableSchema(e: TypedEnv, table: string): Promise<{ name: string; type: unknown; id: number }[]> {
  const load = await loadTable(e.restUrl, table);
  assert.ok(load, `table ${table} exists`);
  const md = load['metadata'] as { 'current-schema-id': number; schemas: { 'schema-id': number; fields: { name: string; type: unknown; id: number }[] }[] };
  return md.schemas.find((s) => s['schema-id'] === md['current-schema-id'])!.fields;
}
