// The HTTP services with TLS and authentication on, one broker, certificates made by openssl: the Iceberg REST
// catalog, the schema registry and the admin port all serve HTTPS with the broker's PEM keystore and need a
// Floe user (PLAIN from sasl.plain.jaas.config, SCRAM from the metadata store) or a bearer token.
// - pyiceberg (PyPI) over HTTPS: with `credential` (OAuth2 client credentials) and with a `token` it lists
//   and reads kafka.orders; without credentials or with a wrong password it is refused; a user without READ on
//   the topic neither sees the table in lists nor loads it (ForbiddenException).
// - Spark SQL (Iceberg's Spark runtime, the README's catalog settings) over HTTPS, the JVM trusting the test's
//   CA: a catalog with carol's OAuth2 token (`token`) reads kafka.orders row for row as Kafka serves it, one
//   with a wrong token is refused (NotAuthorizedException).
// - curl: the registry answers 401 with WWW-Authenticate without credentials; subject orders-value follows
//   the topic's ACLs (WRITE to register, READ to read, hidden from lists otherwise); the admin port serves
//   /health to anyone, /metrics only to a principal with DESCRIBE on the cluster (Basic or bearer).
// - A new keystore file reaches all three services without a restart.
// - No password, token or key appears in any log line or response the test saw.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, readFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { readFile, rm } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import kafkajsModule from 'kafkajs';
import { Kafka, logLevel } from 'kafkajs';
import { credentialFromPassword } from '../../broker/security/scram.js';
import { startBroker, tempDir } from '../helpers/broker.js';
import { makeCerts } from '../helpers/certs.js';
import { venvPython } from '../helpers/peers.js';
import { assertNoSecrets } from '../helpers/secrets.js';
import { waitFor } from '../helpers/tiered-table.js';
import { ChildRunner } from './clients/process.js';
import { catalogConf, packageJars, readSparkReadme, sessionConf } from './engines/readme-spark.js';
import { num } from './engines/rows.js';
import { SparkSql } from './engines/spark.js';
import { recordsOf } from '../tiering/e2e/batches.js';
import { fetchAllBatches } from '../tiering/e2e/wire.js';

const { AclOperationTypes: Op, AclPermissionTypes: Perm, AclResourceTypes: Res, ResourcePatternTypes: Pat } = kafkajsModule;
const run = promisify(execFile);
const DRIVER = fileURLToPath(new URL('./python/pyiceberg_auth.py', import.meta.url));
const SR_DRIVER = fileURLToPath(new URL('./python/schema_registry_auth.py', import.meta.url));
const FLOE_BIN = fileURLToPath(new URL('../../broker/cli/floe.js', import.meta.url));
// alice: PLAIN, READ on orders; bob: PLAIN, nothing; carol: SCRAM-SHA-512, READ and WRITE on orders, DESCRIBE on the cluster.
// The README's example passwords, so that its commands run as written.
const PW = { alice: 'alice-secret', bob: 'bob-Pw-91cd', carol: 'carol-secret', wrong: 'wrong-Pw-c0de' };
/** A bearer token the catalog never issued. */
const WRONG_TOKEN = 'not-issued-9d41c7e2';

/**
 * One Spark session with Iceberg's jars (scripts/peers/30-spark.sh) whose JVM trusts `caPem`: Java reads no PEM
 * truststore, so keytool (from the JDK Spark runs on) puts the CA into a PKCS#12 one, and Iceberg's REST client
 * (HttpClient with system properties) picks it up from javax.net.ssl.trustStore.
 */
function startSparkTrusting(caPem: string, dir: string): Promise<SparkSql> {
  const store = `${dir}/spark-truststore.p12`;
  const storePassword = 'truststore-pw';
  execFileSync('keytool', ['-importcert', '-noprompt', '-alias', 'floe-test-ca', '-file', caPem, '-keystore', store, '-storetype', 'PKCS12', '-storepass', storePassword], { stdio: 'pipe' });
  const readme = readSparkReadme();
  return SparkSql.start({
    ...sessionConf(readme),
    'spark.jars': packageJars(readme).join(','),
    'spark.driver.extraJavaOptions': `-Djavax.net.ssl.trustStore=${store} -Djavax.net.ssl.trustStoreType=PKCS12 -Djavax.net.ssl.trustStorePassword=${storePassword}`,
  });
}

/** The lines of the sh block under "### HTTP services" in the README's Security section. */
async function readmeHttpCommands(): Promise<string[]> {
  const readme = await readFile('README.md', 'utf8');
  const section = readme.split(/^### /m).find((x) => x.startsWith('HTTP services'));
  assert.ok(section, 'README.md has a subsection "### HTTP services"');
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(block?.[1], 'the HTTP services subsection has no sh block');
  return block[1].split('\n').filter((l) => l.trim() !== '');
}

/** The fingerprint of the certificate an HTTPS port presents to a new connection. */
async function presented(port: string, caFile: string): Promise<string> {
  const sock = tlsConnect({ host: '127.0.0.1', port: Number(port), ca: readFileSync(caFile), servername: 'localhost' });
  await once(sock, 'secureConnect');
  const fp = sock.getPeerX509Certificate()?.fingerprint256 ?? '';
  sock.destroy();
  return fp;
}

interface Curl {
  readonly status: number;
  readonly headers: string;
  readonly body: string;
}

test('HTTPS and authentication on the REST catalog, the schema registry and the admin port', async (t) => {
  const dir = await tempDir('floe-http-sec-');
  const certs = makeCerts(dir);
  // The JVM starts while the broker is set up.
  const sparkStarting = startSparkTrusting(certs.caPem, dir);
  sparkStarting.catch(() => undefined);
  t.after(async () => (await sparkStarting.catch(() => undefined))?.close());
  const lines: string[] = [];
  const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="${PW.alice}" user_bob="${PW.bob}";`;
  const b = await startBroker(
    [
      '--remote.log.storage.system.enable=true',
      `--iceberg.warehouse=${dir}/warehouse`,
      '--iceberg.rest.port=0',
      '--iceberg.rest.host=127.0.0.1',
      '--iceberg.commit.interval.ms=3600000',
      '--schema.registry.port=0',
      '--schema.registry.host=127.0.0.1',
      '--ssl.keystore.type=PEM',
      `--ssl.keystore.location=${certs.serverPem}`,
      '--ssl.reload.check.interval.ms=200',
      ...['iceberg.rest', 'schema.registry', 'admin'].flatMap((s) => [`--${s}.ssl.enabled=true`, `--${s}.authentication.method=BASIC`]),
      `--sasl.plain.jaas.config=${jaas}`,
      '--authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      // The test's own Kafka clients use the PLAINTEXT listener, as ANONYMOUS.
      '--super.users=User:ANONYMOUS',
    ],
    { log: (l) => lines.push(l) },
  );
  t.after(async () => {
    await b.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const runner = new ChildRunner();
  t.after(() => runner.killAll());
  const services = b.broker.services;
  await services.metadata.alterScramCredentials([{ user: 'carol', mechanism: 'SCRAM-SHA-512', ...credentialFromPassword('SCRAM-SHA-512', PW.carol) }], []);

  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'http-security', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic: 'orders', numPartitions: 1 }, { topic: 'secret', numPartitions: 1 }] });
  const allow = (principal: string, operation: number, resourceType = Res.TOPIC, resourceName = 'orders') => ({
    resourceType,
    resourceName,
    resourcePatternType: Pat.LITERAL,
    principal,
    host: '*',
    operation,
    permissionType: Perm.ALLOW,
  });
  await admin.createAcls({ acl: [allow('User:alice', Op.READ), allow('User:carol', Op.READ), allow('User:carol', Op.WRITE), allow('User:carol', Op.DESCRIBE, Res.CLUSTER, 'kafka-cluster')] });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: 'orders', messages: [{ value: 'a' }, { value: 'b' }, { value: 'c' }] });
  await producer.disconnect();
  await services.logs.get('orders', 0)?.roll();
  await services.tiering?.drain();

  const restUrl = services.tiering?.restCatalogUrl ?? '';
  const registryUrl = `https://127.0.0.1:${services.schemaRegistry?.port ?? 0}`;
  const adminUrl = `https://127.0.0.1:${b.broker.adminPort}`;
  assert.match(restUrl, /^https:\/\/127\.0\.0\.1:\d+$/, 'the REST catalog says it serves HTTPS');
  const seen: string[] = [];
  const curl = async (url: string, args: readonly string[] = []): Promise<Curl> => {
    const { stdout } = await run('curl', ['-sS', '--cacert', certs.caPem, '-D', '-', '-w', '\n%{http_code}', ...args, url]);
    seen.push(stdout);
    const status = Number(stdout.slice(stdout.lastIndexOf('\n') + 1));
    const rest = stdout.slice(0, stdout.lastIndexOf('\n'));
    const split = rest.indexOf('\r\n\r\n');
    return { status, headers: rest.slice(0, split).toLowerCase(), body: rest.slice(split + 4) };
  };
  const basic = (user: keyof typeof PW, pw = PW[user]) => ['-u', `${user}:${pw}`];

  // An OAuth2 token for carol, as Iceberg clients ask for one (client credentials in the form body).
  const tokenAnswer = await curl(`${restUrl}/v1/oauth/tokens`, ['-d', 'grant_type=client_credentials', '-d', 'client_id=carol', '-d', `client_secret=${PW.carol}`, '-d', 'scope=catalog']);
  assert.equal(tokenAnswer.status, 200, tokenAnswer.body);
  const issued = JSON.parse(tokenAnswer.body) as { access_token: string; token_type: string; expires_in: number };
  assert.equal(issued.token_type, 'bearer');
  assert.ok(issued.expires_in > 0 && issued.expires_in <= 3600);
  const refusedToken = await curl(`${restUrl}/v1/oauth/tokens`, ['-d', 'grant_type=client_credentials', '-d', 'client_id=carol', '-d', `client_secret=${PW.wrong}`]);
  assert.equal(refusedToken.status, 401);
  assert.equal((JSON.parse(refusedToken.body) as { error: string }).error, 'invalid_client');

  await t.test('pyiceberg reads a table over HTTPS with a credential or a token, and is refused without, with a wrong password or without READ', async () => {
    const attempts = [
      { name: 'alice-credential', auth: { credential: `alice:${PW.alice}` } },
      { name: 'carol-token', auth: { token: issued.access_token } },
      { name: 'none', auth: {} },
      { name: 'wrong-password', auth: { credential: `alice:${PW.wrong}` } },
      { name: 'bob-credential', auth: { credential: `bob:${PW.bob}` } },
    ];
    const { stdout } = await runner.run(venvPython(), [DRIVER], JSON.stringify({ uri: restUrl, cabundle: certs.caPem, table: 'kafka.orders', attempts }), 120_000);
    seen.push(stdout.toString());
    const out = JSON.parse(stdout.toString()) as Record<string, { tables?: string[]; rows?: number; error?: string; load_error?: string }>;
    assert.deepEqual(out['alice-credential'], { tables: ['kafka.orders'], rows: 3 }, 'alice may read orders, not secret');
    assert.deepEqual(out['carol-token'], { tables: ['kafka.orders'], rows: 3 });
    assert.equal(out['none']?.error, 'UnauthorizedError', JSON.stringify(out['none']));
    assert.equal(out['wrong-password']?.error, 'OAuthError', JSON.stringify(out['wrong-password']));
    assert.deepEqual(out['bob-credential']?.tables, [], 'bob sees no table');
    assert.equal(out['bob-credential']?.load_error, 'ForbiddenError', JSON.stringify(out['bob-credential']));
  });

  await t.test('Spark reads kafka.orders over HTTPS with an OAuth2 token, and a catalog with a wrong token is refused', async () => {
    const spark = await sparkStarting;
    const logFrom = lines.length;
    const readme = readSparkReadme();
    await spark.setConf(catalogConf(readme, { name: 'floe_token', uri: restUrl, token: issued.access_token }));
    await spark.setConf(catalogConf(readme, { name: 'floe_wrong', uri: restUrl, token: WRONG_TOKEN }));
    const kafkaHolds = recordsOf(0, await fetchAllBatches(b.port, 'orders', 0, 0));
    assert.equal(kafkaHolds.length, 3);
    const got = await spark.objects('SELECT kafka.offset AS offset, kafka.timestamp AS ts, kafka.key AS key, value FROM floe_token.kafka.orders ORDER BY kafka.offset');
    assert.deepEqual(
      got.map((r) => ({ offset: num(r['offset']), us: r['ts'], key: r['key'], value: r['value'] })),
      kafkaHolds.map((r) => ({ offset: r.offset, us: BigInt(r.timestamp) * 1000n, key: r.key, value: r.value })),
    );
    const refused = await spark.sql('SELECT count(*) FROM floe_wrong.kafka.orders').then(
      () => assert.fail('a wrong token read the table'),
      (err: Error) => err.message,
    );
    seen.push(refused);
    assert.match(refused, /org\.apache\.iceberg\.exceptions\.NotAuthorizedException: Not authorized: The credentials are not valid/, 'the 401 Floe answers at GET /v1/config');
    const logged = lines.slice(logFrom);
    assert.ok(logged.some((l) => l.includes('HTTP authentication failed')), 'the refused token is logged');
    assertNoSecrets(logged, [issued.access_token, WRONG_TOKEN]);
  });

  await t.test('curl: the schema registry needs a user, and subject <topic>-value follows the topic ACLs', async () => {
    const schema = ['-H', 'content-type: application/vnd.schemaregistry.v1+json', '-d', JSON.stringify({ schema: '{"type":"string"}' })];
    const anonymous = await curl(`${registryUrl}/subjects`);
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers, /www-authenticate: basic realm="floe"/);
    assert.equal((JSON.parse(anonymous.body) as { error_code: number }).error_code, 401);
    assert.equal((await curl(`${registryUrl}/subjects`, basic('alice', PW.wrong))).status, 401);
    const byAlice = await curl(`${registryUrl}/subjects/orders-value/versions`, [...basic('alice'), ...schema]);
    assert.equal(byAlice.status, 403, 'alice lacks WRITE on orders');
    assert.equal((JSON.parse(byAlice.body) as { error_code: number }).error_code, 40301);
    const byCarol = await curl(`${registryUrl}/subjects/orders-value/versions`, [...basic('carol'), ...schema]);
    assert.equal(byCarol.status, 200, byCarol.body);
    assert.deepEqual(JSON.parse((await curl(`${registryUrl}/subjects`, basic('alice'))).body), ['orders-value']);
    assert.equal((await curl(`${registryUrl}/subjects/orders-value/versions/latest`, basic('alice'))).status, 200);
    assert.deepEqual(JSON.parse((await curl(`${registryUrl}/subjects`, basic('bob'))).body), [], 'bob may not read orders');
    assert.equal((await curl(`${registryUrl}/subjects/orders-value/versions/latest`, basic('bob'))).status, 403);
  });

  await t.test("confluent-kafka-python's SchemaRegistryClient with basic.auth.user.info over HTTPS", async () => {
    const attempts = [
      { name: 'carol', user_info: `carol:${PW.carol}` },
      { name: 'alice', user_info: `alice:${PW.alice}` },
      { name: 'none', user_info: null },
    ];
    const { stdout } = await runner.run(venvPython(), [SR_DRIVER], JSON.stringify({ url: registryUrl, ca: certs.caPem, attempts }), 60_000);
    seen.push(stdout.toString());
    const out = JSON.parse(stdout.toString()) as Record<string, Record<string, unknown>>;
    assert.equal(typeof out['carol']?.['registered'], 'number', JSON.stringify(out['carol']));
    assert.deepEqual(out['carol']?.['subjects'], ['orders-key', 'orders-value']);
    assert.deepEqual(out['alice'], { register_status: 403, register_code: 40301, subjects: ['orders-key', 'orders-value'] }, 'READ but no WRITE on orders');
    assert.deepEqual(out['none'], { register_status: 401, register_code: 401, list_status: 401, list_code: 401 });
  });

  await t.test('curl: the admin port serves probes to anyone and metrics to a principal with DESCRIBE on the cluster', async () => {
    assert.equal((await curl(`${adminUrl}/health`)).status, 200);
    const anonymous = await curl(`${adminUrl}/metrics`);
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers, /www-authenticate: basic/);
    assert.equal((await curl(`${adminUrl}/metrics`, basic('alice'))).status, 403, 'alice has no DESCRIBE on the cluster');
    const carol = await curl(`${adminUrl}/metrics`, basic('carol'));
    assert.equal(carol.status, 200);
    assert.match(carol.body, /floe_ready 1/);
    assert.equal((await curl(`${adminUrl}/metrics`, ['-H', `authorization: Bearer ${issued.access_token}`])).status, 200, 'the catalog token works on the admin port');
    assert.equal((await curl(`${adminUrl}/metrics`, ['-H', 'authorization: Bearer not-a-token'])).status, 401);
    await assert.rejects(run('curl', ['-sS', '-o', '/dev/null', `${adminUrl.replace('https:', 'http:')}/health`]), 'plain HTTP on the HTTPS port fails');
  });

  await t.test('the floe CLI reaches the authenticated HTTPS admin port with the user in --admin-url', async () => {
    const env = { ...process.env, NODE_EXTRA_CA_CERTS: certs.caPem };
    const url = adminUrl.replace('https://', `https://carol:${PW.carol}@`);
    const { stdout } = await run(process.execPath, [FLOE_BIN, 'topics', '--json', '--admin-url', url], { env });
    assert.ok(stdout.includes('"orders"'), stdout);
    const refused = await run(process.execPath, [FLOE_BIN, 'topics', '--admin-url', url.replace(PW.carol, PW.wrong)], { env }).then(
      () => undefined,
      (err: { stderr: string }) => err.stderr,
    );
    assert.ok(refused !== undefined && !refused.includes(PW.wrong), `refused without showing the password: ${refused}`);
    assert.match(refused, /credentials are not valid/);
  });

  await t.test("the README's commands run as written (ports aside)", async () => {
    const readme = await readmeHttpCommands();
    assert.equal(readme.length, 3, 'a token, the subjects, the metrics');
    const ports: Record<string, string> = { 'localhost:8181': new URL(restUrl).host, 'localhost:8081': new URL(registryUrl).host, 'localhost:9644': new URL(adminUrl).host };
    const outputs: string[] = [];
    for (const line of readme) {
      const cmd = line.replace(/localhost:(8181|8081|9644)/, (m) => ports[m] ?? m);
      const { stdout } = await run('sh', ['-c', cmd], { cwd: dir });
      outputs.push(stdout);
    }
    assert.equal((JSON.parse(outputs[0] ?? '') as { token_type: string }).token_type, 'bearer');
    assert.ok((JSON.parse(outputs[1] ?? '[]') as string[]).includes('orders-value'), outputs[1]);
    assert.match(outputs[2] ?? '', /floe_ready 1/);
    seen.push(outputs[1] ?? '', outputs[2] ?? '');
  });

  await t.test('a new keystore reaches all three HTTPS services without a restart', async () => {
    const next = certs.newServerPem();
    const want = new X509Certificate(readFileSync(next.cert)).fingerprint256;
    copyFileSync(next.pem, certs.serverPem);
    for (const url of [restUrl, registryUrl, adminUrl]) {
      await waitFor(`${url} to present the new certificate`, async () => ((await presented(new URL(url).port, certs.caPem)) === want ? true : undefined), 30_000);
    }
    assert.equal((await curl(`${adminUrl}/metrics`, basic('carol'))).status, 200, 'the new certificate verifies with the same CA');
  });

  await t.test('no password or token in any log line or response', async () => {
    // The admin port's operator pages too, as carol (DESCRIBE on the cluster) sees them.
    for (const path of ['/', '/api/status', '/api/topics', '/api/tables']) {
      const page = await curl(`${adminUrl}${path}`, basic('carol'));
      assert.equal(page.status, 200, `${path}: ${page.body.slice(0, 200)}`);
    }

    const secrets = [...Object.values(PW), issued.access_token, WRONG_TOKEN, readFileSync(certs.serverKey, 'utf8').split('\n')[1] ?? 'no-key-line'];
    // Every response but the token endpoint's own answer, which carries the token it issues.
    const responses = seen.filter((s) => !s.includes('"access_token"'));
    assert.equal(responses.length, seen.length - 1);
    assertNoSecrets([...lines, ...responses], secrets);
    assert.ok(lines.some((l) => l.includes('HTTP authentication failed')), 'failed attempts are logged');
  });
});
