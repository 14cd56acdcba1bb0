// Spark SQL (Iceberg's Spark runtime, the README's configuration) reads a topic's `_latest` upsert table
// through Floe's REST catalog: the rows of a Debezium change stream's current state equal the table the test
// folds from the events it produced (test/helpers/cdc-stream.ts), and Spark's `files` metadata table shows
// that every data file it reads is one of the topic table's (the upsert table adds only delete files). The
// topic is created with the README's "Upsert tables" command (Kafka's kafka-topics.sh) and queried with its
// Spark query.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { runKafkaScript } from '../clients/kafka-cli.js';
import { CdcStream, cdcTopicConfigs } from '../../helpers/cdc-stream.js';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { loadTable, upsertCaughtUp } from '../../helpers/tiered-table.js';
import { runVenvPython } from '../../helpers/peers.js';
import { parseJson } from '../../../iceberg/json.js';
import { fileURLToPath } from 'node:url';
import { catalogConf, packageJars, readSparkReadme, sessionConf } from './readme-spark.js';
import { num } from './rows.js';
import { SparkSql } from './spark.js';

const { ConfigResourceTypes, Kafka, logLevel } = kafkajs;
const PYICEBERG = fileURLToPath(new URL('./pyiceberg_driver.py', import.meta.url));
const TOPIC = 'customers';
const PARTITIONS = 1;

/** The README's "Upsert tables" block: its Kafka tool commands (continuation lines joined) and the Spark query. */
async function readmeUpsert(): Promise<{ commands: string[]; query: string }> {
  const section = (await readFile('README.md', 'utf8')).split(/^## /m).find((s) => s.startsWith('Upsert tables'));
  const block = /```bash\n([\s\S]*?)```/.exec(section ?? '')?.[1];
  assert.ok(block, 'README.md has an "Upsert tables" section with a bash block');
  const commands = block.replace(/\\\n\s*/g, '').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
  const query = /in Spark: (SELECT .*)$/m.exec(block)?.[1] ?? '';
  assert.deepEqual(commands.map((c) => c.split(' ')[0]), ['kafka-topics.sh', 'kafka-configs.sh']);
  assert.match(query, /_latest$/);
  return { commands, query };
}

test('Spark reads a Debezium stream\'s _latest table: the reference rows, on the topic table\'s data files', { timeout: 600_000 }, async (t) => {
  const readme = readSparkReadme();
  const starting = SparkSql.start({ ...sessionConf(readme), 'spark.jars': packageJars(readme).join(',') });
  starting.catch(() => undefined);
  t.after(async () => (await starting.catch(() => undefined))?.close());

  const root = await tempDir('floe-spark-upsert-');
  const warehouse = join(root, 'warehouse');
  const broker = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1']);
  t.after(async () => {
    await broker.stop();
    await rm(root, { recursive: true, force: true });
  });
  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'spark-upsert', logLevel: logLevel.NOTHING });
  const { commands, query } = await readmeUpsert();
  const create = await runKafkaScript(commands[0] ?? '', { bootstrap: broker.bootstrap, cwd: root });
  assert.equal(create.stdout.trim(), `Created topic ${TOPIC}.`);
  const alter = await runKafkaScript(commands[1] ?? '', { bootstrap: broker.bootstrap, cwd: root });
  assert.equal(alter.stdout.trim(), `Completed updating config for topic ${TOPIC}.`);
  // Small segments and frequent commits, so the table gets many files and commits (AlterConfigs sets them all).
  const admin = kafka.admin();
  await admin.connect();
  await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: TOPIC, configEntries: cdcTopicConfigs({ 'internal.segment.bytes': '16384', 'iceberg.commit.interval.ms': '300' }) }] });
  await admin.disconnect();
  // The same kind of stream into a second topic whose upsert table is format v3 (deletion vectors).
  const V3 = `${TOPIC}-v3`;
  const admin3 = kafka.admin();
  await admin3.connect();
  await admin3.createTopics({ topics: [{ topic: V3, numPartitions: 2, configEntries: cdcTopicConfigs({ 'iceberg.upsert.format.version': '3', 'internal.segment.bytes': '16384', 'iceberg.commit.interval.ms': '300' }) }] });
  await admin3.disconnect();
  const restUrl = broker.broker.services.tiering?.restCatalogUrl ?? '';
  const producer = kafka.producer();
  await producer.connect();
  const streams = new Map<string, { stream: CdcStream; partitions: number }>([[TOPIC, { stream: new CdcStream(7, 80), partitions: PARTITIONS }], [V3, { stream: new CdcStream(8, 80), partitions: 2 }]]);
  for (const [topic, { stream, partitions }] of streams) {
    let sent = 0;
    for (let round = 0; round < 4; round++) {
      const events = stream.events(200);
      for (let i = 0; i < events.length; i += 50) await producer.send({ topic, acks: -1, messages: events.slice(i, i + 50).map((e) => ({ key: e.key, value: e.value })) });
      sent += events.length;
      await upsertCaughtUp(restUrl, topic, partitions, sent);
    }
  }
  await producer.disconnect();

  const spark = await starting;
  await spark.setConf(catalogConf(readme, { name: 'floe', uri: restUrl, token: 'unused' }));
  const readmeRows = await spark.objects(query);
  assert.equal(readmeRows.length, streams.get(TOPIC)?.stream.expected().length, `${query}: one row per live key`);
  for (const [topic, { stream }] of streams) {
    const table = `floe.kafka.\`${topic}_latest\``;
    const want = stream.expected();
    const { rows } = await spark.sql(`SELECT CAST(kafka.key AS STRING), CAST(value AS STRING) FROM ${table}`);
    assert.deepEqual(rows.map((r) => `${String(r[0])}=${String(r[1])}`).sort(), want, `${topic}: Spark reads the reference table`);
    // count(*) with delete files applied (Iceberg answers it from statistics only without deletes).
    assert.equal(num((await spark.sql(`SELECT count(*) FROM ${table}`)).rows[0]?.[0]), want.length);
    const files = async (name: string): Promise<{ content: number; path: string; format: string; referenced: unknown }[]> =>
      (await spark.objects(`SELECT content, file_path, file_format, referenced_data_file FROM ${name}.files`)).map((f) => ({ content: num(f['content']), path: String(f['file_path']), format: String(f['file_format']), referenced: f['referenced_data_file'] }));
    const topicData = new Set((await files(`floe.kafka.\`${topic}\``)).filter((f) => f.content === 0).map((f) => f.path));
    const latest = await files(table);
    const latestData = latest.filter((f) => f.content === 0);
    const deletes = latest.filter((f) => f.content !== 0);
    assert.ok(latestData.length > 0);
    for (const f of latestData) assert.ok(topicData.has(f.path), `${f.path}: a data file of the upsert table is one of the topic table's`);
    for (const f of deletes) assert.ok(f.path.includes(`/${topic}_latest/`), `${f.path}: the upsert table's delete files are its own`);
    if (topic === V3) {
      // Deletion vectors: Puffin, one per data file, naming it.
      assert.ok(deletes.length > 0 && deletes.every((d) => d.format === 'PUFFIN'), `${topic}: deletes are deletion vectors: ${JSON.stringify(deletes)}`);
      const referenced = deletes.map((d) => String(d.referenced));
      assert.equal(new Set(referenced).size, referenced.length, 'at most one deletion vector per data file');
      for (const r of referenced) assert.ok(latestData.some((f) => f.path === r), `${r}: a deletion vector names a data file of the table`);
      const metadata = (await loadTable(restUrl, `${topic}_latest`))?.['metadata'] as Record<string, unknown> | undefined;
      assert.equal(metadata?.['format-version'], 3, 'the upsert table is format v3');
    } else {
      assert.ok(deletes.every((d) => d.format === 'PARQUET'), `${topic}: deletes are position delete files`);
    }
    // pyiceberg (0.12, pyroaring for deletion vectors) reads the same rows.
    const py = parseJson(await runVenvPython(PYICEBERG, JSON.stringify({ catalog: { type: 'rest', uri: restUrl }, table: `kafka.${topic}_latest`, scans: [{ filter: null }] }))) as unknown as { scans: { rows: [{ key: { b64: string } | null }, { b64: string } | null][] }[] };
    const text = (v: { b64: string } | null): string => (v === null ? 'null' : Buffer.from(v.b64, 'base64').toString());
    assert.deepEqual((py.scans[0]?.rows ?? []).map(([k, v]) => `${text(k.key)}=${text(v)}`).sort(), want, `${topic}: pyiceberg reads the reference table`);
    // Read-only to engines, like the topic table: Floe alone changes it.
    await assert.rejects(spark.sql(`DELETE FROM ${table} WHERE kafka.offset = 0`), /read-only|Forbidden/i);
    t.diagnostic(`${topic}: ${want.length} rows from ${latestData.length} of the topic table's ${topicData.size} data files, with ${deletes.length} delete files`);
  }
});
