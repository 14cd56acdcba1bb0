// The `_latest` upsert table of a Debezium change stream, read by pyiceberg, icebird and DuckDB and compared
// with the table the test computes from the events it produced (cdc-stream.ts): creates, updates, deletes
// with their tombstones, late events ordered by ts_ms, keyless heartbeats. Its data files are the topic
// table's own (no copy); it follows the topic table through compaction (which merges the files it names)
// and through a broker restart (its key index is rebuilt from the table), then more events.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs, { type Kafka as KafkaClient, type Producer } from 'kafkajs';
const { ConfigResourceTypes, Kafka, logLevel } = kafkajs;
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { parseJson } from '../../../iceberg/json.js';
import { runVenvPython } from '../../helpers/peers.js';
import { startBroker, tempDir, type TestBroker } from '../../helpers/broker.js';
import { loadTable, upsertCaughtUp, waitFor } from '../../helpers/tiered-table.js';
import { tableEntries } from '../../interop/transactions/table-entries.js';
import { CdcStream, cdcTopicConfigs, type CdcEvent } from '../../helpers/cdc-stream.js';

const TOPIC = 'customers';
const PARTITIONS = 2;
const PYICEBERG = fileURLToPath(new URL('../../interop/engines/pyiceberg_driver.py', import.meta.url));

/** Data files each table's current snapshot plans, by pyiceberg (path, and the delete files it applies). */
async function plannedFiles(restUrl: string, table: string): Promise<{ path: string; deletes: string[] }[]> {
  const out = await runVenvPython(PYICEBERG, JSON.stringify({ catalog: { type: 'rest', uri: restUrl }, table: `kafka.${table}`, scans: [{ filter: null, columns: ['kafka'] }] }));
  return (parseJson(out) as unknown as { scans: { files: { path: string; deletes: string[] }[] }[] }).scans[0]?.files ?? [];
}

/** The broker's count of upsert partition syncs by kind, from /metrics. */
async function upsertSyncs(broker: TestBroker): Promise<{ append: number; rebuild: number }> {
  const text = await (await fetch(`${broker.adminUrl ?? ''}/metrics`)).text();
  const count = (kind: string): number => Number(new RegExp(`^floe_upsert_partition_syncs_total\\{topic="${TOPIC}",kind="${kind}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { append: count('append'), rebuild: count('rebuild') };
}

async function send(producer: Producer, events: readonly CdcEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += 50) {
    await producer.send({ topic: TOPIC, acks: -1, messages: events.slice(i, i + 50).map((e) => ({ key: e.key, value: e.value })) });
  }
}

/** The upsert table equals the expected one for every reader, and names only the topic table's data files. */
async function check(t: TestContext, restUrl: string, io: LocalFileIO, warehouse: string, stream: CdcStream, phase: string): Promise<void> {
  const want = stream.expected();
  // Compaction of the topic table may still be merging files: the upsert table follows in its next sync.
  const files = await waitFor(`${phase}: the upsert table to name only the topic table's live data files`, async () => {
    const [topicFiles, latestFiles] = await Promise.all([plannedFiles(restUrl, TOPIC), plannedFiles(restUrl, `${TOPIC}_latest`)]);
    const live = new Set(topicFiles.map((f) => f.path));
    return latestFiles.every((f) => live.has(f.path)) ? { topicFiles, latestFiles } : undefined;
  }, 90_000, 1000);
  for (const f of files.latestFiles) {
    assert.ok(!f.path.includes(`/${TOPIC}_latest/`), `${phase}: ${f.path} is a data file of the upsert table's own`);
    for (const d of f.deletes) assert.ok(d.includes(`/${TOPIC}_latest/`), `${phase}: delete file ${d} applied to the upsert table is its own`);
  }
  const entries = await tableEntries(t, restUrl, io, `${TOPIC}_latest`);
  for (const [reader, rows] of Object.entries(entries)) assert.deepEqual([...rows].sort(), want, `${phase}: ${reader} reads the expected upsert table`);
  t.diagnostic(`${phase}: ${want.length} rows; the topic table plans ${files.topicFiles.length} data files, the upsert table ${files.latestFiles.length} of them with ${new Set(files.latestFiles.flatMap((f) => f.deletes)).size} delete files; warehouse ${warehouse}`);
}

test('a Debezium stream makes a _latest table equal to the reference, on the topic table\'s own data files, across compaction and a restart', { timeout: 600_000 }, async (t) => {
  const root = await tempDir('floe-upsert-');
  const warehouse = join(root, 'warehouse');
  const dataDir = join(root, 'log');
  const flags = ['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1'];
  let broker: TestBroker = await startBroker(flags, { dataDir, keepData: true });
  t.after(async () => {
    await broker.stop();
    await rm(root, { recursive: true, force: true });
  });
  const io = new LocalFileIO({ root: warehouse, fsync: false });
  const kafka = (): KafkaClient => new Kafka({ brokers: [broker.bootstrap], clientId: 'upsert-test', logLevel: logLevel.NOTHING });
  const admin = kafka().admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic: TOPIC, numPartitions: PARTITIONS, configEntries: cdcTopicConfigs({
      'iceberg.enabled': 'true',
      'internal.segment.bytes': '16384',
      'iceberg.commit.interval.ms': '300',
      'iceberg.compaction.min.input.files': '3',
    }) }],
  });
  await admin.disconnect();
  const restUrl = (): string => broker.broker.services.tiering?.restCatalogUrl ?? '';
  const stream = new CdcStream(16, 60);
  let sent = 0;

  let producer = kafka().producer();
  await producer.connect();
  // Rounds that each reach the table before the next: the upsert table applies them one on top of another.
  for (let round = 0; round < 6; round++) {
    const events = stream.events(150);
    await send(producer, events);
    sent += events.length;
    await upsertCaughtUp(restUrl(), TOPIC, PARTITIONS, sent);
  }
  await producer.disconnect();
  await check(t, restUrl(), io, warehouse, stream, 'first events');

  // Compaction merges the topic table's small files: the upsert table is rebuilt on the merged ones.
  await waitFor('the topic table to be compacted', async () => {
    const load = await loadTable(restUrl(), TOPIC);
    const snapshots = ((load?.['metadata'] as { snapshots?: { summary: { operation: string } }[] } | undefined)?.snapshots ?? []);
    return snapshots.some((s) => s.summary.operation === 'replace') ? true : undefined;
  }, 90_000, 500);
  await check(t, restUrl(), io, warehouse, stream, 'after compaction');
  // Both ways of keeping up ran: new segments applied on top, and partitions rebuilt on the merged files.
  const syncs = await upsertSyncs(broker);
  t.diagnostic(`upsert syncs before the restart: ${JSON.stringify(syncs)}`);
  assert.ok(syncs.append > 0 && syncs.rebuild > 0, `partition syncs by kind: ${JSON.stringify(syncs)}`);

  // A restart: the key index comes back from the tables, and the next events apply on top of it.
  await broker.stop();
  broker = await startBroker(flags, { dataDir, keepData: true });
  producer = kafka().producer();
  await producer.connect();
  const second = stream.events(600);
  await send(producer, second);
  sent += second.length;
  await producer.disconnect();
  await upsertCaughtUp(restUrl(), TOPIC, PARTITIONS, sent);
  await check(t, restUrl(), io, warehouse, stream, 'after a restart and more events');

  // Turning upsert off drops the upsert table (it would otherwise name files the topic table may delete)
  // with its own files; the topic table keeps every data file and row.
  const topicFiles = (await plannedFiles(restUrl(), TOPIC)).map((f) => f.path).sort();
  const admin2 = kafka().admin();
  await admin2.connect();
  await admin2.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: TOPIC, configEntries: [{ name: 'iceberg.upsert.enabled', value: 'false' }] }] });
  await admin2.disconnect();
  await waitFor('the upsert table to be dropped', async () => ((await loadTable(restUrl(), `${TOPIC}_latest`)) === undefined ? true : undefined), 30_000, 200);
  // Its files go after the catalog entry.
  const filesLeft = async (): Promise<string[]> => (await readdir(join(warehouse, 'kafka', `${TOPIC}_latest`), { recursive: true, withFileTypes: true }).catch(() => [])).filter((d) => d.isFile()).map((d) => d.name);
  await waitFor('no file of the upsert table to be left in the warehouse', async () => ((await filesLeft()).length === 0 ? true : undefined), 30_000, 200).catch(async (err: unknown) => {
    throw new Error(`${String(err)}: ${(await filesLeft()).join(', ')}`);
  });
  assert.deepEqual((await plannedFiles(restUrl(), TOPIC)).map((f) => f.path).sort(), topicFiles, 'the topic table keeps its data files');
  for (const f of topicFiles) await stat(f.replace(/^file:\/\//, ''));
});
