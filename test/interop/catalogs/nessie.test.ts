/**
 * Floe with Project Nessie's server (nessie-quarkus 0.99.0 from Maven Central, on a Java 21+; its Iceberg REST
 * API under /iceberg, a RocksDB version store, its warehouse on moto's S3 server) as the external catalog, the
 * broker configured with the README's "External Iceberg catalogs" block (without the OAuth2 credential: Nessie
 * issues no tokens of its own).
 *
 * The external catalog suite (external-suite.ts) cannot run against it: Nessie 0.99.0 refuses every table
 * whose partition spec has a nested source field, and Floe's tables are partitioned by `kafka.partition`.
 * (Its NessieModelIceberg collects only a schema's top-level fields when it resolves a spec's source ids,
 * after renumbering the fields depth-first: "Source field with ID 2 for partition spec with ID 0 does not
 * exist". Fixed in Nessie 0.102.0, which Maven Central has no runner jar of.) This test pins that down and
 * checks what Floe does about it: the table is never half-made, the topic's segments stay on local disk, Kafka
 * clients read every record, and the metric and the log say the catalog refused the table and why. A control
 * table partitioned by a top-level field shows the refusal is that bug, not the setup.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { spawnBroker, tempDir } from '../../helpers/broker.js';
import { motoPython } from '../../helpers/peers.js';
import { startMotoS3Server } from '../../helpers/s3-server.js';
import { kcatRead, waitFor } from '../../helpers/tiered-table.js';
import { loadExternal } from './external.js';
import { startNessieServer } from './nessie-server.js';

const BUCKET = 'lake';
const PARTITIONS = 2;

test('Project Nessie 0.99.0 as the external catalog: it refuses Floe\'s table (nested partition source), and Floe keeps every record readable', { timeout: 240_000 }, async (t) => {
  const root = await tempDir('floe-nessie-');
  const s3 = await startMotoS3Server({ bucket: BUCKET, python: motoPython() });
  assert.ok(typeof s3 !== 'string', `moto's S3 server is needed (scripts/peers/55-moto.sh): ${String(s3)}`);
  t.after(() => s3.stop());
  const catalog = await startNessieServer(s3, { dir: root, bucket: BUCKET });
  t.after(() => catalog.stop());
  const readme = await readFile('README.md', 'utf8');
  const section = /\n## External Iceberg catalogs\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';
  const properties = /```properties\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(properties, 'the README\'s external catalog section has a properties block');
  const configFile = join(root, 'broker.properties');
  const config = properties.replace('http://catalog.example:8181', catalog.uri).replace('http://s3.example:9000', s3.endpoint);
  await writeFile(configFile, config.replace(/^iceberg\.catalog\.credential=.*\n/m, ''));
  const logDir = join(root, 'log');
  const broker = await spawnBroker(logDir, ['--remote.log.storage.system.enable=true', `--config=${configFile}`, '--iceberg.rest.port=-1', '--log.retention.check.interval.ms=200']);
  t.after(async () => {
    if (process.env['EXTCAT_DEBUG']) await writeFile(process.env['EXTCAT_DEBUG'], broker.output() + '\n=== catalog\n' + catalog.output());
    if (broker.child.exitCode === null && broker.child.signalCode === null) {
      broker.child.kill('SIGTERM');
      await broker.exited;
    }
    await rm(root, { recursive: true, force: true });
  });
  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'nessie', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await admin.connect();
  await producer.connect();
  t.after(async () => {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  });
  const topicConfig = [
    { name: 'internal.segment.bytes', value: '2048' },
    { name: 'local.retention.bytes', value: '0' },
    { name: 'iceberg.commit.interval.ms', value: '300' },
  ];
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: PARTITIONS, configEntries: topicConfig }] });
  for (let i = 0; i < 60; i += 10) {
    await producer.send({ topic: 'orders', acks: -1, messages: Array.from({ length: 10 }, (_, j) => ({ partition: (i / 10) % PARTITIONS, key: `k${i + j}`, value: `record ${i + j} ${'x'.repeat(80)}` })) });
  }

  // Floe asked Nessie for the table; Nessie refused it, naming the partition spec's source field.
  const refused = await waitFor('a log line saying Nessie refused the table', async () => broker.output().split('\n').find((l) => l.includes('cannot open the table of a tiered topic') && l.includes('"behind":"catalog_refused"')));
  assert.match(refused, /create table orders failed \(400 IllegalArgumentException\): Source field with ID \d+ for partition spec with ID 0 does not exist/);
  assert.ok(broker.adminUrl);
  await waitFor('floe_table_behind_seconds to say catalog_refused', async () => (/floe_table_behind_seconds\{topic="orders",reason="catalog_refused"\}/.test(await (await fetch(`${broker.adminUrl}/metrics`)).text()) ? true : undefined));
  assert.equal(await loadExternal(catalog, 'orders'), undefined, 'Nessie holds no table orders');

  // Kafka clients read every record, all still on local disk (nothing was handed off to a table).
  const ends = (await admin.fetchTopicOffsets('orders')).sort((a, b) => a.partition - b.partition).map((o) => Number(o.high));
  for (let p = 0; p < PARTITIONS; p++) {
    const rows = await kcatRead(broker.bootstrap, 'orders', p, 0);
    assert.deepEqual(rows.map((r) => r.offset), Array.from({ length: ends[p] ?? 0 }, (_, i) => i), `orders-${p}: every offset from 0`);
    const segments = (await readdir(join(logDir, `orders-${p}`))).filter((n) => n.endsWith('.log')).map((n) => Number(n.slice(0, -4)));
    assert.equal(Math.min(...segments), 0, `orders-${p}: no segment left the disk`);
  }

  // The control: the same Nessie creates a table partitioned by a top-level field in the same namespace.
  const schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'p', required: true, type: 'int' }, { id: 2, name: 'k', required: true, type: { type: 'struct', fields: [{ id: 3, name: 'q', required: true, type: 'int' }] } }] };
  const create = (name: string, sourceId: number) =>
    fetch(`${catalog.tablesBase}/namespaces/kafka/tables`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, schema, 'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': sourceId, 'field-id': 1000, name: 'part', transform: 'identity' }] }, 'stage-create': false }),
    });
  const top = await create('top_level', 1);
  assert.equal(top.status, 200, await top.text());
  const nested = await create('nested', 3);
  assert.equal(nested.status, 400, 'a nested source field is refused, whatever the client');
  assert.match(await nested.text(), /Source field with ID \d+ for partition spec with ID 0 does not exist/);
});
