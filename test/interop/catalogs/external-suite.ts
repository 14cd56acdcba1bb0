/**
 * The external catalog suite, run against each catalog server the tests start (iceberg-rest.test.ts:
 * Apache Iceberg's RESTCatalogServer; a second implementation plugs in as another CatalogUnderTest). One
 * broker (restarted once), one catalog server, their warehouse on moto's S3 server (s3rver cannot store the AWS SDK's aws-chunked uploads
 * that Java catalogs send over http):
 *   - OAuth2 client credentials at the catalog's token endpoint (catalogs that issue tokens): kept, renewed
 *     before expiry and after a refusal;
 *   - tables are created and committed through the external catalog, at the location it chose; Floe's own
 *     REST server serves the same table in front of it; pyiceberg reads through the external catalog the same
 *     rows kcat reads from Kafka (tiered: the local segments are handed off);
 *   - with the catalog stopped: produce, hot fetch and tiered fetch keep working, floe_table_behind_seconds
 *     and the log say the table is behind because the catalog is unreachable; a topic created meanwhile keeps
 *     its segments local; the broker even restarts and serves tiered fetches from the last known metadata
 *     file; once the catalog is back both tables catch up and are exact (pyiceberg, and Spark through the
 *     external catalog, read what Kafka reads);
 *   - a table of the topic's name that Floe did not make is refused (log, metric), never written; the
 *     topic config iceberg.table.name then gives the topic its own table;
 *   - the broker runs with the configuration block of the README's "External Iceberg catalogs" section.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { spawnBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { motoPython } from '../../helpers/peers.js';
import { startMotoS3Server } from '../../helpers/s3-server.js';
import { kcatRead, loadTable, waitFor } from '../../helpers/tiered-table.js';
import { ChildRunner, assertSameRows, localStart, stopBroker, committedOffsets, loadExternal, pyicebergRows, waitForTable } from './external.js';
import type { ExternalCatalogServer } from './iceberg-rest-server.js';
import type { S3TestServer } from '../../helpers/s3-server.js';
import { CatalogError } from '../../../iceberg/catalog/catalog.js';
import { ClientCredentials } from '../../../iceberg/catalog/oauth2.js';
import { RestCatalogClient } from '../../../iceberg/catalog/rest-client.js';
import { SparkSql } from '../engines/spark.js';
import { packageJars, readSparkReadme, sessionConf } from '../engines/readme-spark.js';

const PARTITIONS = 2;
const BUCKET = 'lake';

async function metricsText(b: BrokerProcess): Promise<string> {
  assert.ok(b.adminUrl, 'the admin port runs');
  return (await fetch(`${b.adminUrl}/metrics`)).text();
}

/** A catalog implementation under test. */
export interface CatalogUnderTest {
  /** For the test's title, e.g. "Apache Iceberg RESTCatalogServer". */
  readonly name: string;
  /** Starts the server over `s3` (bucket `bucket`), keeping its state in `dir`. */
  start(s3: S3TestServer, dir: string, bucket: string): Promise<ExternalCatalogServer>;
  /** The server issues OAuth2 tokens at <uri>/v1/oauth/tokens (else the broker sends no credential). */
  readonly oauth: boolean;
}

export function externalCatalogSuite(under: CatalogUnderTest): void {
  test(`an external Iceberg REST catalog (${under.name}, S3 warehouse): commits, outage, restart without it, foreign tables`, { timeout: 420_000 }, async (t) => {
    const root = await tempDir('floe-extcat-');
    const s3 = await startMotoS3Server({ bucket: BUCKET, python: motoPython() });
    assert.ok(typeof s3 !== 'string', `moto's S3 server is needed (scripts/peers/55-moto.sh): ${String(s3)}`);
    const catalog = await under.start(s3, root, BUCKET);
    const runner = new ChildRunner();
    // Spark's JVM starts while the broker works (it reads the table once, at the end).
    const starting = SparkSql.start({ ...sessionConf(readSparkReadme()), 'spark.jars': packageJars(readSparkReadme()).join(',') });
    starting.catch(() => undefined);
    const logDir = join(root, 'log');
    // The broker runs with the README's configuration block, pointed at this catalog and S3 server.
    const readme = await readFile('README.md', 'utf8');
    const section = /\n## External Iceberg catalogs\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';
    const properties = /```properties\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(properties, 'the README\'s external catalog section has a properties block');
    assert.ok(properties.includes('http://catalog.example:8181') && properties.includes('http://s3.example:9000') && properties.includes(`s3://${BUCKET}/wh`));
    const configFile = join(root, 'broker.properties');
    const config = properties.replace('http://catalog.example:8181', catalog.uri).replace('http://s3.example:9000', s3.endpoint);
    await writeFile(configFile, under.oauth ? config : config.replace(/^iceberg\.catalog\.credential=.*\n/m, ''));
    const flags = [
      '--remote.log.storage.system.enable=true',
      `--config=${configFile}`,
      '--iceberg.rest.port=0',
      '--iceberg.rest.host=127.0.0.1',
      '--log.retention.check.interval.ms=200',
    ];
    let broker = await spawnBroker(logDir, flags);
    let clients: { admin: Admin; producer: Producer } | undefined;
    const connect = async () => {
      const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'extcat', logLevel: logLevel.NOTHING });
      const admin = kafka.admin();
      const producer = kafka.producer({ allowAutoTopicCreation: false });
      await admin.connect();
      await producer.connect();
      clients = { admin, producer };
      return clients;
    };
    const disconnect = async () => {
      await clients?.producer.disconnect().catch(() => undefined);
      await clients?.admin.disconnect().catch(() => undefined);
      clients = undefined;
    };
    t.after(async () => {
      if (process.env['EXTCAT_DEBUG']) await writeFile(process.env['EXTCAT_DEBUG'], broker.output() + '\n=== catalog\n' + catalog.output());
      await disconnect();
      await (await starting.catch(() => undefined))?.close();
      runner.killAll();
      await stopBroker(broker);
      await catalog.stop();
      await s3.stop();
      await rm(root, { recursive: true, force: true });
    });
    let { admin, producer } = await connect();
    const topicConfig = [
      { name: 'internal.segment.bytes', value: '2048' },
      { name: 'local.retention.bytes', value: '0' },
      { name: 'iceberg.commit.interval.ms', value: '300' },
    ];
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: PARTITIONS, configEntries: topicConfig }] });
    let round = 0;
    const produce = async (topic = 'orders', count = 60) => {
      round++;
      for (let i = 0; i < count; i += 10) {
        const partition = (i / 10) % PARTITIONS;
        await producer.send({ topic, acks: -1, messages: Array.from({ length: 10 }, (_, j) => ({ partition, key: `r${round}-k${i + j}`, value: `round ${round} record ${i + j} ${'x'.repeat(80)}` })) });
      }
    };
    const ends = async (topic = 'orders') => (await admin.fetchTopicOffsets(topic)).sort((a, b) => a.partition - b.partition).map((o) => Number(o.high));
    const handedOff = async (topic = 'orders') => {
      for (let p = 0; p < PARTITIONS; p++) await waitFor(`${topic}-${p}: local segments handed off to the table`, async () => ((await localStart(logDir, topic, p)) > 0 ? true : undefined));
    };
    const kafkaRows = (topic = 'orders') => Promise.all(Array.from({ length: PARTITIONS }, (_, p) => kcatRead(broker.bootstrap, topic, p, 0)));

    if (under.oauth) await t.test('OAuth2 client credentials at the catalog\'s token endpoint: cached, renewed before expiry and after a refusal', async () => {
      let calls = 0;
      let now = 0;
      const counting: typeof fetch = (input, init) => {
        calls++;
        return fetch(input, init);
      };
      const credentials = new ClientCredentials({ tokenUri: `${catalog.uri}/v1/oauth/tokens`, clientId: 'floe', clientSecret: 'floe-secret', fetch: counting, now: () => now });
      const token = await credentials.accessToken();
      assert.ok(token.length > 0, 'a token');
      assert.equal(await credentials.accessToken(), token);
      assert.equal(calls, 1, 'kept until it is about to expire');
      now += 48 * 3_600_000;
      await credentials.accessToken();
      assert.equal(calls, 2, 'renewed once it is about to expire');
      credentials.invalidate();
      await credentials.accessToken();
      assert.equal(calls, 3, 'renewed after the catalog refused it');
      const client = new RestCatalogClient({ uri: catalog.uri, credential: { clientId: 'floe', clientSecret: 'floe-secret' } });
      assert.ok(Array.isArray(await client.listNamespaces()));
      const wrong = new ClientCredentials({ tokenUri: `${catalog.uri}/v1/no-such-endpoint`, clientId: 'floe', clientSecret: 'floe-secret' });
      await assert.rejects(wrong.accessToken(), (e: unknown) => e instanceof CatalogError && /refused the client credentials of floe/.test(e.message) && /iceberg\.catalog\.credential/.test(e.message) && !e.message.includes('floe-secret'));
    });

    await t.test('tables are created and committed through the external catalog, at its location; pyiceberg reads what Kafka reads', async () => {
      await produce();
      const end1 = await ends();
      await waitForTable(catalog, 'orders', end1);
      const load = await loadExternal(catalog, 'orders');
      const metadata = load?.['metadata'] as { location: string; properties: Record<string, string> };
      assert.ok(metadata.location.startsWith(`${catalog.warehouse}/`), `the catalog chose the location: ${metadata.location}`);
      assert.equal(metadata.properties['floe.owner'], 'floe-tiering');
      assert.equal(metadata.properties['floe.kafka.topic'], 'orders');
      // Floe's own REST catalog runs in front of the external one: the same table, the same metadata file.
      assert.ok(broker.restUrl);
      assert.equal((await loadTable(broker.restUrl, 'orders'))?.['metadata-location'], load?.['metadata-location']);
      await handedOff();
      const kafka = await kafkaRows();
      const rows = await pyicebergRows(runner, s3, catalog, 'orders');
      for (let p = 0; p < PARTITIONS; p++) {
        assert.equal(kafka[p]?.length, end1[p], `kcat reads partition ${p} from offset 0, from the table's Parquet files`);
        assertSameRows(rows, p, kafka[p] ?? []);
      }
    });

    await t.test('catalog stopped: produce, hot and tiered fetch keep working; metric and log say the table is behind and why', async () => {
      const before = await ends();
      await catalog.stop();
      await produce();
      const end2 = await ends();
      assert.ok(end2.every((e, p) => e > (before[p] ?? 0)), 'produce goes on');
      const hot = await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => kcatRead(broker.bootstrap, 'orders', p, before[p] ?? 0)));
      const all = await kafkaRows();
      for (let p = 0; p < PARTITIONS; p++) {
        assert.equal(hot[p]?.length, (end2[p] ?? 0) - (before[p] ?? 0), `partition ${p}: the new records are fetched`);
        assert.deepEqual(all[p]?.map((r) => r.offset), Array.from({ length: end2[p] ?? 0 }, (_, i) => i), `partition ${p}: every offset from 0 (tiered, then local)`);
      }
      await waitFor('floe_table_behind_seconds to name the unreachable catalog', async () => (/floe_table_behind_seconds\{topic="orders",reason="catalog_unreachable"\}/.test(await metricsText(broker)) ? true : undefined));
      const line = broker.output().split('\n').find((l) => l.includes('tiering step failed') && l.includes('"behind":"catalog_unreachable"'));
      assert.ok(line, 'a log line says the table is behind because the catalog is unreachable');
      assert.match(line, /unreachable/);
      // A topic created during the outage has no table yet: it is served from local disk, and waits for one.
      await admin.createTopics({ topics: [{ topic: 'late', numPartitions: PARTITIONS, configEntries: topicConfig }] });
      await produce('late', 40);
      await waitFor('a log line to say the new topic\'s table cannot be opened yet', async () => (broker.output().includes('cannot open the table of a tiered topic') ? true : undefined));
      const late = await kafkaRows('late');
      const lateEnds = await ends('late');
      for (let p = 0; p < PARTITIONS; p++) {
        assert.equal(late[p]?.length, lateEnds[p], `late-${p}: every record is fetched`);
        assert.equal(await localStart(logDir, 'late', p), 0, `late-${p}: no segment left the disk untiered`);
      }
    });

    await t.test('restarted while the catalog is down: the broker starts and serves tiered fetches from the last known metadata', async () => {
      await disconnect();
      await stopBroker(broker);
      broker = await spawnBroker(logDir, flags);
      ({ admin, producer } = await connect());
      const end = await ends();
      const all = await kafkaRows();
      for (let p = 0; p < PARTITIONS; p++) assert.deepEqual(all[p]?.map((r) => r.offset), Array.from({ length: end[p] ?? 0 }, (_, i) => i), `partition ${p}: every offset from 0 after the restart`);
      assert.match(broker.output(), /table loaded from its last known metadata file/);
      await produce();
    });

    await t.test('catalog back: tiering resumes, the table is exact (pyiceberg and Spark), the metric clears', async () => {
      await catalog.start();
      const end = await ends();
      await waitForTable(catalog, 'orders', end);
      await handedOff();
      const kafka = await kafkaRows();
      const rows = await pyicebergRows(runner, s3, catalog, 'orders');
      for (let p = 0; p < PARTITIONS; p++) {
        assert.equal(kafka[p]?.length, end[p]);
        assertSameRows(rows, p, kafka[p] ?? []);
      }
      // Spark (Iceberg's Spark runtime) reads the table through the external catalog: the same rows as Kafka.
      const spark = await starting;
      await spark.setConf({
        'spark.sql.catalog.ext': 'org.apache.iceberg.spark.SparkCatalog',
        'spark.sql.catalog.ext.type': 'rest',
        'spark.sql.catalog.ext.uri': catalog.uri,
        'spark.sql.catalog.ext.io-impl': 'org.apache.iceberg.aws.s3.S3FileIO',
        'spark.sql.catalog.ext.s3.endpoint': s3.endpoint,
        'spark.sql.catalog.ext.s3.path-style-access': 'true',
        'spark.sql.catalog.ext.client.region': s3.region,
        'spark.sql.catalog.ext.s3.access-key-id': s3.credentials.accessKeyId,
        'spark.sql.catalog.ext.s3.secret-access-key': s3.credentials.secretAccessKey,
      });
      const sparkRows = (await spark.sql('SELECT kafka.partition, kafka.offset, kafka.key, value FROM ext.kafka.orders ORDER BY kafka.partition, kafka.offset')).rows;
      const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString() : '');
      const asRows = sparkRows.map(([p, o, k, v]) => ({ partition: Number(p), offset: Number(o), key: text(k), value: text(v) }));
      for (let p = 0; p < PARTITIONS; p++) assertSameRows(asRows, p, kafka[p] ?? []);
      await waitFor('floe_table_behind_seconds to clear', async () => (/floe_table_behind_seconds\{topic="orders"/.test(await metricsText(broker)) ? undefined : true));
      // The topic created during the outage gets its table once the catalog is back (its open is retried).
      const lateEnds = await ends('late');
      await waitForTable(catalog, 'late', lateEnds);
      const lateRows = await pyicebergRows(runner, s3, catalog, 'late');
      const late = await kafkaRows('late');
      for (let p = 0; p < PARTITIONS; p++) assertSameRows(lateRows, p, late[p] ?? []);
    });

    await t.test('a table Floe did not make is never taken over; iceberg.table.name gives the topic its own', async () => {
      const schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] };
      const created = await fetch(`${catalog.tablesBase}/namespaces/kafka/tables`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'legacy', schema, 'stage-create': false }) });
      assert.equal(created.status, 200, await created.text());
      await admin.createTopics({ topics: [{ topic: 'legacy', numPartitions: PARTITIONS, configEntries: topicConfig }] });
      await produce('legacy', 40);
      await waitFor('the broker to refuse the foreign table', async () => (broker.output().includes('FOREIGN_TABLE') || /was not created by Floe/.test(broker.output()) ? true : undefined));
      await waitFor('floe_table_behind_seconds to say foreign_table', async () => (/floe_table_behind_seconds\{topic="legacy",reason="foreign_table"\}/.test(await metricsText(broker)) ? true : undefined));
      const foreign = (await loadExternal(catalog, 'legacy'))?.['metadata'] as { properties: Record<string, string>; 'current-snapshot-id'?: number | null; schemas: unknown[] };
      assert.equal(foreign.properties['floe.owner'], undefined, 'the table is not marked as Floe\'s');
      assert.ok(foreign['current-snapshot-id'] === undefined || foreign['current-snapshot-id'] === null || foreign['current-snapshot-id'] === -1, 'nothing was committed to it');
      const end = await ends('legacy');
      const kafka = await kafkaRows('legacy');
      for (let p = 0; p < PARTITIONS; p++) assert.equal(kafka[p]?.length, end[p], `legacy-${p}: Kafka clients read every record (kept on local disk)`);
      for (let p = 0; p < PARTITIONS; p++) assert.equal(await localStart(logDir, 'legacy', p), 0, `legacy-${p}: no segment left the disk untiered`);
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: 'legacy', configEntries: [...topicConfig, { name: 'iceberg.table.name', value: 'legacy_kafka' }] }] });
      await waitForTable(catalog, 'legacy_kafka', end);
      assert.deepEqual(await committedOffsets(catalog, 'legacy', PARTITIONS), [-1, -1], 'the foreign table is still untouched');
      const rows = await pyicebergRows(runner, s3, catalog, 'legacy_kafka');
      for (let p = 0; p < PARTITIONS; p++) assertSameRows(rows, p, kafka[p] ?? []);
    });
  });
}
