// SigV4 signing towards an external REST catalog, as AWS Glue's and S3 Tables' Iceberg REST endpoints want
// it. In front of Apache Iceberg's REST catalog server (iceberg-rest-server.ts, over moto's S3 server) runs a
// verifying proxy (sigv4_proxy.py): botocore recomputes the signature of every request Floe sends and only
// requests that match reach the catalog, the others get 403. The broker also holds a bearer token, which
// must travel signed as Original-Authorization, and temporary credentials (a session token).
//   - with a wrong secret every request is refused: produce and fetch work, the segments stay on local disk,
//     the metric and the log name the table that is behind and why (catalog_refused), no table appears, and
//     no secret shows in the log or in DescribeConfigs;
//   - restarted with the right secret, every request verifies, the table catches up and pyiceberg reads what
//     Kafka reads; Floe's own REST catalog serves the same table through the signed client;
//   - the client's escaped paths (a nested namespace, a space) and queries verify as well.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import { spawnBroker, tempDir } from '../../helpers/broker.js';
import { motoPython } from '../../helpers/peers.js';
import { startMotoS3Server } from '../../helpers/s3-server.js';
import { kcatRead, loadTable, waitFor } from '../../helpers/tiered-table.js';
import { ChildRunner, assertSameRows, externalCatalogFlags, localStart, stopBroker, loadExternal, pyicebergRows, waitForTable } from './external.js';
import { startIcebergRestServer } from './iceberg-rest-server.js';
import { CatalogError } from '../../../iceberg/catalog/catalog.js';
import { RestCatalogClient } from '../../../iceberg/catalog/rest-client.js';

const { ConfigResourceTypes, Kafka, logLevel } = kafkajs;
const PROXY = fileURLToPath(new URL('./sigv4_proxy.py', import.meta.url));
const BUCKET = 'signed';
const PARTITIONS = 2;
const REGION = 'eu-west-3';
const SERVICE = 'glue';
const KEY_ID = 'AKIAFLOESIGV4TEST01';
const SECRET = 'floe/sigv4+Secret/Key0123456789abcdefghij';
const WRONG_SECRET = 'floe/sigv4+WRONG/Key0123456789abcdefghij';
const SESSION_TOKEN = 'IQoJb3JpZ2luX2VjEFloeSessionToken//+=';
const BEARER = 'floe-bearer-token-7d1c';

interface ProxyEntry {
  readonly method: string;
  readonly path: string;
  readonly signed?: string[];
  readonly reason?: string;
}

interface SigV4Proxy {
  readonly uri: string;
  stats(): Promise<{ verified: ProxyEntry[]; refused: ProxyEntry[] }>;
  stop(): Promise<void>;
}

/** Starts sigv4_proxy.py (botocore from moto's venv) in front of `upstream`, accepting KEY_ID/SECRET only. */
async function startProxy(upstream: string): Promise<SigV4Proxy> {
  const child = spawn(motoPython(), [PROXY], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = once(child, 'exit');
  child.stdin.end(JSON.stringify({ upstream, region: REGION, service: SERVICE, keys: { [KEY_ID]: { secret: SECRET, token: SESSION_TOKEN } } }));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^listening (\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    void exited.then(() => reject(new Error(`sigv4_proxy.py exited before listening: ${err}`)));
  });
  const uri = `http://127.0.0.1:${port}`;
  return {
    uri,
    stats: async () => (await (await fetch(`${uri}/_sigv4/stats`)).json()) as { verified: ProxyEntry[]; refused: ProxyEntry[] },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

test('SigV4 towards an external REST catalog: a verifying proxy (botocore) refuses a wrong secret, tiering waits, then catches up', { timeout: 300_000 }, async (t) => {
  const root = await tempDir('floe-sigv4-');
  const s3 = await startMotoS3Server({ bucket: BUCKET, python: motoPython() });
  assert.ok(typeof s3 !== 'string', `moto's S3 server is needed (scripts/peers/55-moto.sh): ${String(s3)}`);
  const catalog = await startIcebergRestServer(s3, { dir: root, bucket: BUCKET });
  const proxy = await startProxy(catalog.uri);
  const runner = new ChildRunner();
  const logDir = join(root, 'log');
  const flags = (secret: string) => [
    '--remote.log.storage.system.enable=true',
    ...externalCatalogFlags(s3, proxy, BUCKET, [
      `--iceberg.catalog.token=${BEARER}`,
      '--iceberg.catalog.sigv4.enabled=true',
      `--iceberg.catalog.signing.region=${REGION}`,
      `--iceberg.catalog.access.key.id=${KEY_ID}`,
      `--iceberg.catalog.secret.access.key=${secret}`,
      `--iceberg.catalog.session.token=${SESSION_TOKEN}`,
    ]),
    '--iceberg.rest.port=0',
    '--iceberg.rest.host=127.0.0.1',
    '--log.retention.check.interval.ms=200',
  ];
  let broker = await spawnBroker(logDir, flags(WRONG_SECRET));
  const clients: { disconnect(): Promise<void> }[] = [];
  t.after(async () => {
    for (const c of clients) await c.disconnect().catch(() => undefined);
    runner.killAll();
    await stopBroker(broker);
    await proxy.stop();
    await catalog.stop();
    await s3.stop();
    await rm(root, { recursive: true, force: true });
  });
  const connect = async () => {
    const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'sigv4', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await admin.connect();
    await producer.connect();
    clients.push(admin, producer);
    return { admin, producer };
  };
  let { admin, producer } = await connect();
  const topicConfig = [
    { name: 'internal.segment.bytes', value: '2048' },
    { name: 'local.retention.bytes', value: '0' },
    { name: 'iceberg.commit.interval.ms', value: '300' },
  ];
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: PARTITIONS, configEntries: topicConfig }] });
  let round = 0;
  const produce = async () => {
    round++;
    for (let i = 0; i < 60; i += 10) {
      await producer.send({ topic: 'orders', acks: -1, messages: Array.from({ length: 10 }, (_, j) => ({ partition: (i / 10) % PARTITIONS, key: `r${round}-k${i + j}`, value: `round ${round} record ${i + j} ${'x'.repeat(80)}` })) });
    }
  };
  const ends = async () => (await admin.fetchTopicOffsets('orders')).sort((a, b) => a.partition - b.partition).map((o) => Number(o.high));
  const kafkaRows = () => Promise.all(Array.from({ length: PARTITIONS }, (_, p) => kcatRead(broker.bootstrap, 'orders', p, 0)));
  const metrics = async () => {
    assert.ok(broker.adminUrl, 'the admin port runs');
    return (await fetch(`${broker.adminUrl}/metrics`)).text();
  };

  await t.test('a wrong secret: every request is refused with 403, tiering waits and says which table is behind', async (t) => {
    await produce();
    await waitFor('floe_table_behind_seconds to name the refused table', async () => (/floe_table_behind_seconds\{topic="orders",reason="catalog_refused"\}/.test(await metrics()) ? true : undefined));
    const line = broker.output().split('\n').find((l) => l.includes('cannot open the table of a tiered topic') && l.includes('"topic":"orders"'));
    assert.ok(line, 'a log line names the topic whose table cannot be opened');
    assert.match(line, /"behind":"catalog_refused"/);
    assert.match(line, /403/);
    assert.match(line, /iceberg\.catalog\.secret\.access\.key/, 'the log line says which settings to check');
    const stats = await proxy.stats();
    assert.equal(stats.verified.length, 0, 'no request passed');
    assert.ok(stats.refused.length > 0, 'the broker did send requests');
    assert.ok(stats.refused.every((r) => /signature mismatch/.test(r.reason ?? '')), `refused for their signature: ${JSON.stringify(stats.refused.slice(0, 3))}`);
    assert.equal(await loadExternal(catalog, 'orders'), undefined, 'no table reached the catalog');
    const end = await ends();
    const kafka = await kafkaRows();
    for (let p = 0; p < PARTITIONS; p++) {
      assert.equal(kafka[p]?.length, end[p], `orders-${p}: every record is fetched`);
      assert.equal(await localStart(logDir, 'orders', p), 0, `orders-${p}: no segment left the disk untiered`);
    }
    // Secrets stay secret: the log, and DescribeConfigs (sensitive, no value).
    for (const secret of [WRONG_SECRET, SESSION_TOKEN, BEARER]) assert.ok(!broker.output().includes(secret), 'no secret in the broker log');
    const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '1' }] });
    const entries = described.resources[0]?.configEntries ?? [];
    for (const key of ['iceberg.catalog.access.key.id', 'iceberg.catalog.secret.access.key', 'iceberg.catalog.session.token']) {
      const e = entries.find((c) => c.configName === key);
      assert.ok(e, `${key} is described`);
      assert.equal(e.isSensitive, true, `${key} is sensitive`);
      assert.equal(e.configValue, null, `${key} shows no value`);
    }
    assert.equal(entries.find((c) => c.configName === 'iceberg.catalog.signing.name')?.configValue, 'glue');
    for (const path of ['/', '/api/status', '/api/tables', '/metrics']) {
      const page = await (await fetch(`${broker.adminUrl ?? ''}${path}`)).text();
      for (const secret of [WRONG_SECRET, SESSION_TOKEN, BEARER]) assert.ok(!page.includes(secret), `no secret on the admin port's ${path}`);
    }
    t.diagnostic(line);
  });

  await t.test('the right secret: every request verifies (Original-Authorization, body hash, session token signed), the table catches up', async () => {
    for (const c of clients.splice(0)) await c.disconnect();
    await stopBroker(broker);
    const refusedBefore = (await proxy.stats()).refused.length;
    broker = await spawnBroker(logDir, flags(SECRET));
    ({ admin, producer } = await connect());
    await produce();
    const end = await ends();
    await waitForTable(catalog, 'orders', end);
    for (let p = 0; p < PARTITIONS; p++) await waitFor(`orders-${p}: local segments handed off to the table`, async () => ((await localStart(logDir, 'orders', p)) > 0 ? true : undefined));
    const stats = await proxy.stats();
    assert.equal(stats.refused.length, refusedBefore, `nothing refused with the right secret: ${JSON.stringify(stats.refused.slice(refusedBefore, refusedBefore + 3))}`);
    assert.ok(stats.verified.some((r) => r.method === 'POST' && /\/tables\/orders$/.test(r.path)), 'commits went through the proxy, verified');
    for (const r of stats.verified) {
      for (const h of ['host', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token', 'original-authorization']) assert.ok(r.signed?.includes(h), `${r.method} ${r.path}: ${h} is signed`);
      if (r.method === 'POST') assert.ok(r.signed?.includes('content-type'), `${r.method} ${r.path}: content-type is signed`);
    }
    // Floe's own REST catalog serves the same table through the signed client. Compared until both name the
    // same metadata: a commit (compaction, maintenance) may land between the two loads.
    assert.ok(broker.restUrl);
    const restUrl = broker.restUrl;
    await waitFor("Floe's REST catalog and the external one to name the same table metadata", async () => {
      const ours = (await loadTable(restUrl, 'orders'))?.['metadata-location'];
      return ours !== undefined && ours === (await loadExternal(catalog, 'orders'))?.['metadata-location'] ? true : undefined;
    });
    const kafka = await kafkaRows();
    const rows = await pyicebergRows(runner, s3, catalog, 'orders');
    for (let p = 0; p < PARTITIONS; p++) {
      assert.equal(kafka[p]?.length, end[p], `kcat reads partition ${p} from offset 0, from the table's Parquet files`);
      assertSameRows(rows, p, kafka[p] ?? []);
    }
    await waitFor('floe_table_behind_seconds to clear', async () => (/floe_table_behind_seconds\{topic="orders"/.test(await metrics()) ? undefined : true));
    assert.ok(!broker.output().includes(SECRET) && !broker.output().includes(SESSION_TOKEN), 'no secret in the broker log');
  });

  await t.test('escaped paths and queries verify too: a nested namespace (unit separator), a space, a UTF-8 body', async () => {
    const before = await proxy.stats();
    const client = new RestCatalogClient({ uri: proxy.uri, token: BEARER, sigv4: { region: REGION, service: SERVICE, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET, sessionToken: SESSION_TOKEN } } });
    await client.createNamespace(['kafka', 'raw events'], { owner: 'café ☕' });
    assert.equal(await client.namespaceExists(['kafka', 'raw events']), true);
    assert.deepEqual(await client.listNamespaces(['kafka']), [['kafka', 'raw events']]);
    assert.equal((await client.loadNamespaceProperties(['kafka', 'raw events']))['owner'], 'café ☕', 'a UTF-8 body, signed by its hash');
    assert.equal(await client.namespaceExists(['kafka', 'no such']), false);
    await client.dropNamespace(['kafka', 'raw events']);
    const after = await proxy.stats();
    assert.equal(after.refused.length, before.refused.length, `nothing refused: ${JSON.stringify(after.refused.slice(before.refused.length))}`);
    const paths = after.verified.slice(before.verified.length).map((r) => `${r.method} ${r.path}`);
    assert.ok(paths.includes('HEAD /v1/namespaces/kafka%1Fraw%20events'), `the escaped path was verified: ${paths.join(', ')}`);
    assert.ok(paths.includes('GET /v1/namespaces?parent=kafka'), `the query was verified: ${paths.join(', ')}`);
    // The same client with a wrong secret is refused, with the settings to check and no secret in the message.
    const wrong = new RestCatalogClient({ uri: proxy.uri, sigv4: { region: REGION, service: SERVICE, credentials: { accessKeyId: KEY_ID, secretAccessKey: WRONG_SECRET, sessionToken: SESSION_TOKEN } } });
    await assert.rejects(wrong.listNamespaces(), (e: unknown) => e instanceof CatalogError && e.code === 'FORBIDDEN' && /signature mismatch/.test(e.message) && /iceberg\.catalog\.secret\.access\.key/.test(e.message) && !e.message.includes(WRONG_SECRET));
  });
});
