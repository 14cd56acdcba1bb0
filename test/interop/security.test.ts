// Security with independently written clients, certificates made by openssl:
// - Apache Kafka's CLI (its Java AdminClient): kafka-configs.sh creates SCRAM-SHA-512 and SCRAM-SHA-256
//   users over SASL_SSL (AlterUserScramCredentials), describes them and deletes one;
// - Apache Kafka's Java producer and consumer (kafka-console-producer/consumer.sh) over SASL_SSL with
//   SCRAM-SHA-512 and PLAIN, and over mTLS (SSL, ssl.client.auth=required);
// - kcat (librdkafka, Debian) and confluent-kafka-python (PyPI, current librdkafka) over SASL_SSL with
//   SCRAM-SHA-512 and PLAIN, and over mTLS;
// - kafka-python (Debian; SaslHandshake v0 with raw tokens) over SASL_PLAINTEXT with PLAIN and SCRAM-SHA-256;
// - OAUTHBEARER, not implemented: the Java client asking for it gets UnsupportedSaslMechanismException.
// No password, keystore password or private key appears in the broker's log, its /metrics, status page or
// JSON API, or the broker configs kafka-configs.sh describes (test/helpers/secrets.ts).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { credentialFromPassword } from '../../broker/security/scram.js';
import { startBroker, tempDir, type TestBroker } from '../helpers/broker.js';
import { makeCerts, type TestCerts } from '../helpers/certs.js';
import { venvPython } from '../helpers/peers.js';
import { KAFKA_SCRIPTS, runKafkaScript } from './clients/kafka-cli.js';
import { javaCommand, JavaClient, JavaClientError } from './clients/java.js';
import { assertNoSecrets, captureAdminPages } from '../helpers/secrets.js';

const run = promisify(execFile);
const PW = { admin: 'admin-Pw-31c8', java512: 'java512-Pw-9a7e', java256: 'java256-Pw-c0d2', wrong: 'wrong-Pw-8e6b' };
const TIMEOUT = 60_000;

interface Env {
  dir: string;
  certs: TestCerts;
  b: TestBroker;
  lines: string[];
  saslSsl: string;
  saslPlain: string;
}

async function saslBroker(t: { after(fn: () => unknown): void }): Promise<Env> {
  const dir = await tempDir('floe-sec-interop-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const certs = makeCerts(dir);
  const lines: string[] = [];
  const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="${PW.admin}";`;
  const b = await startBroker(
    [
      '--listeners=PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
      `--ssl.keystore.location=${certs.serverP12}`,
      `--ssl.keystore.password=${certs.keystorePassword}`,
      `--sasl.plain.jaas.config=${jaas}`,
      '--connection.failed.authentication.delay.ms=0',
    ],
    { log: (l) => lines.push(l) },
  );
  t.after(() => b.stop());
  return { dir, certs, b, lines, saslSsl: `127.0.0.1:${b.broker.listenerPort('SASL_SSL')}`, saslPlain: `127.0.0.1:${b.broker.listenerPort('SASL_PLAINTEXT')}` };
}

/** The lines of the sh block in the README's "Security" section. */
async function readmeScramCommands(): Promise<string[]> {
  const section = (await readFile('README.md', 'utf8')).split(/^## /m).find((x) => x.startsWith('Security'));
  assert.ok(section, 'README.md has a section "Security"');
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(block?.[1], 'the Security section has no sh block');
  return block[1].split('\n').filter((l) => l.trim() !== '');
}

function javaProps(env: Env, name: string, mechanism: string, user: string, password: string): string {
  const module = mechanism === 'PLAIN' ? 'org.apache.kafka.common.security.plain.PlainLoginModule' : 'org.apache.kafka.common.security.scram.ScramLoginModule';
  const file = join(env.dir, name);
  writeFileSync(
    file,
    [
      'security.protocol=SASL_SSL',
      `sasl.mechanism=${mechanism}`,
      `sasl.jaas.config=${module} required username="${user}" password="${password}";`,
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${env.certs.caPem}`,
    ].join('\n') + '\n',
  );
  return file;
}

async function cli(env: Env, line: string, bootstrap: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runKafkaScript(line, { bootstrap, cwd: env.dir });
}

/**
 * Every answer an operator can get from the broker: the admin port's metrics, status page and JSON API (with
 * each topic's effective configs), and the broker's configs through Kafka's own kafka-configs.sh.
 */
async function captureServed(env: Env, bs: string): Promise<string[]> {
  assert.ok(env.b.adminUrl);
  const topics = env.b.broker.services.topics.metadata.listTopics().map((t) => `/api/configs/topics/${encodeURIComponent(t.name)}`);
  const answers = await captureAdminPages(env.b.adminUrl, ['/api/tables', ...topics]);
  const brokerConfigs = await cli(env, `kafka-configs.sh ${bs} --describe --entity-type brokers --entity-name 1 --all`, env.saslSsl);
  assert.equal(brokerConfigs.code, 0, brokerConfigs.stderr);
  assert.match(brokerConfigs.stdout, /ssl\.keystore\.password=null sensitive=true/);
  return [...answers, brokerConfigs.stdout, brokerConfigs.stderr];
}

test('kafka-configs.sh manages SCRAM users; the Java client produces and consumes over SASL_SSL with SCRAM-SHA-512 and PLAIN', { timeout: 300_000 }, async (t) => {
  const env = await saslBroker(t);
  const admin = javaProps(env, 'admin.properties', 'PLAIN', 'admin', PW.admin);
  const BS = `--bootstrap-server localhost:9092 --command-config ${admin}`;

  // The README's block first, as written there (its port is the SASL_SSL listener's, its admin.properties ours).
  const readme = await readmeScramCommands();
  assert.equal(readme.length, 3, 'the README shows add, describe and delete');
  const readmeRun = async (line: string) => {
    const r = await cli(env, line.replaceAll('localhost:9093', 'localhost:9092').replace(/'([^']*)'/g, '$1'), env.saslSsl);
    assert.equal(r.code, 0, `${line}\n${r.stderr}`);
    return r.stdout;
  };
  assert.match(await readmeRun(readme[0] ?? ''), /Completed updating config for user alice/);
  assert.ok(env.b.broker.services.metadata.getScramCredential('alice', 'SCRAM-SHA-512'));
  assert.match(await readmeRun(readme[1] ?? ''), /SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-512=iterations=4096/);
  await readmeRun(readme[2] ?? '');
  assert.equal(env.b.broker.services.metadata.getScramCredential('alice', 'SCRAM-SHA-512'), undefined);

  const add = await cli(env, `kafka-configs.sh ${BS} --alter --add-config SCRAM-SHA-512=[password=${PW.java512}] --entity-type users --entity-name javauser`, env.saslSsl);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stdout, /Completed updating config for user javauser/);
  const add256 = await cli(env, `kafka-configs.sh ${BS} --alter --add-config SCRAM-SHA-256=[iterations=8192,password=${PW.java256}] --entity-type users --entity-name pyuser`, env.saslSsl);
  assert.equal(add256.code, 0, add256.stderr);
  const stored = env.b.broker.services.metadata.getScramCredential('javauser', 'SCRAM-SHA-512');
  assert.ok(stored && stored.iterations === 4096 && stored.storedKey.length === 64);
  assert.ok(!readFileSync(join(env.b.dataDir, '__cluster_metadata', 'metadata.json'), 'utf8').includes(PW.java512), 'the password is not stored');

  const described = await cli(env, `kafka-configs.sh ${BS} --describe --entity-type users`, env.saslSsl);
  assert.equal(described.code, 0, described.stderr);
  assert.match(described.stdout, /SCRAM credential configs for user-principal 'javauser' are SCRAM-SHA-512=iterations=4096/);
  assert.match(described.stdout, /SCRAM credential configs for user-principal 'pyuser' are SCRAM-SHA-256=iterations=8192/);

  // The Java producer logs in with the new SCRAM-SHA-512 user; the Java consumer with PLAIN.
  writeFileSync(join(env.dir, 'lines.txt'), 'one\ntwo\nthree\n');
  const producer = javaProps(env, 'producer.properties', 'SCRAM-SHA-512', 'javauser', PW.java512);
  const produced = await cli(env, `kafka-console-producer.sh --bootstrap-server localhost:9092 --topic java-sasl --command-config ${producer} < lines.txt`, env.saslSsl);
  assert.equal(produced.code, 0, produced.stderr);
  const consumed = await cli(env, `kafka-console-consumer.sh --bootstrap-server localhost:9092 --topic java-sasl --from-beginning --max-messages 3 --command-config ${admin}`, env.saslSsl);
  assert.equal(consumed.code, 0, consumed.stderr);
  assert.deepEqual(consumed.stdout.trim().split('\n'), ['one', 'two', 'three']);

  // A wrong password fails the Java client cleanly (non-zero exit, an authentication error, no password echoed).
  const bad = javaProps(env, 'bad.properties', 'SCRAM-SHA-512', 'javauser', PW.wrong);
  const refused = await cli(env, `kafka-configs.sh --bootstrap-server localhost:9092 --command-config ${bad} --describe --entity-type users`, env.saslSsl);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stdout + refused.stderr, /Authentication failed|SaslAuthenticationException/);

  // Delete round-trips: gone from describe, and the user can no longer log in (kcat is refused).
  const del = await cli(env, `kafka-configs.sh ${BS} --alter --delete-config SCRAM-SHA-512 --entity-type users --entity-name javauser`, env.saslSsl);
  assert.equal(del.code, 0, del.stderr);
  const after = await cli(env, `kafka-configs.sh ${BS} --describe --entity-type users`, env.saslSsl);
  assert.doesNotMatch(after.stdout, /javauser/);
  assert.match(after.stdout, /pyuser/);
  await assert.rejects(kcat(env, 'SCRAM-SHA-512', 'javauser', PW.java512, ['-L', '-m', '5']), /Authentication failed|SASL authentication error|exited|Command failed/);

  assertNoSecrets([...env.lines, ...(await captureServed(env, BS))], [...Object.values(PW), env.certs.keystorePassword, 'alice-secret']);
});

function kcatArgs(env: Env, mechanism: string, user: string, password: string): string[] {
  return ['-b', env.saslSsl, '-X', 'security.protocol=SASL_SSL', '-X', `sasl.mechanisms=${mechanism}`, '-X', `sasl.username=${user}`, '-X', `sasl.password=${password}`, '-X', `ssl.ca.location=${env.certs.caPem}`];
}

async function kcat(env: Env, mechanism: string, user: string, password: string, args: string[], input?: string): Promise<string> {
  return kcatRaw([...kcatArgs(env, mechanism, user, password), ...args], input);
}

async function kcatRaw(args: string[], input?: string): Promise<string> {
  const p = run('kcat', ['-q', ...args], { timeout: TIMEOUT });
  if (input !== undefined) {
    p.child.stdin?.end(input);
  } else {
    p.child.stdin?.end();
  }
  return (await p).stdout;
}

const CONFLUENT = `
import json, sys
from confluent_kafka import Producer, Consumer
cfg = json.loads(sys.stdin.read())
topic = cfg.pop('topic')
p = Producer(dict(cfg))
for v in ['a', 'b', 'c']:
    p.produce(topic, v.encode())
if p.flush(30) != 0:
    sys.exit('not delivered')
c = Consumer(dict(cfg, **{'group.id': topic + '-g', 'auto.offset.reset': 'earliest'}))
c.subscribe([topic])
got = []
while len(got) < 3:
    m = c.poll(30)
    if m is None:
        sys.exit('no message within 30 s')
    if m.error():
        sys.exit(str(m.error()))
    got.append(m.value().decode())
c.close()
print(json.dumps(got))
`;

async function confluent(cfg: Record<string, string>): Promise<string[]> {
  const p = run(venvPython(), ['-c', CONFLUENT], { timeout: TIMEOUT });
  p.child.stdin?.end(JSON.stringify(cfg));
  return JSON.parse((await p).stdout) as string[];
}

const KAFKA_PYTHON = `
import json, sys
from kafka import KafkaProducer, KafkaConsumer
cfg = json.loads(sys.stdin.read())
topic = cfg.pop('topic')
p = KafkaProducer(**cfg)
for v in [b'x', b'y']:
    p.send(topic, v).get(timeout=30)
p.close()
c = KafkaConsumer(topic, auto_offset_reset='earliest', consumer_timeout_ms=30000, **cfg)
got = []
for m in c:
    got.append(m.value.decode())
    if len(got) == 2:
        break
c.close()
print(json.dumps(got))
`;

async function kafkaPython(cfg: Record<string, unknown>): Promise<string[]> {
  const p = run('/usr/bin/python3', ['-c', KAFKA_PYTHON], { timeout: TIMEOUT });
  p.child.stdin?.end(JSON.stringify(cfg));
  return JSON.parse((await p).stdout) as string[];
}

test('kcat, confluent-kafka-python and kafka-python over SASL with SCRAM and PLAIN; wrong passwords fail', { timeout: 300_000 }, async (t) => {
  const env = await saslBroker(t);
  await env.b.broker.services.metadata.alterScramCredentials(
    [
      { user: 'scram', mechanism: 'SCRAM-SHA-512', ...credentialFromPassword('SCRAM-SHA-512', PW.java512) },
      { user: 'scram', mechanism: 'SCRAM-SHA-256', ...credentialFromPassword('SCRAM-SHA-256', PW.java256) },
    ],
    [],
  );
  // kcat: produce, then consume what it produced, with each mechanism.
  for (const [mechanism, user, password] of [['SCRAM-SHA-512', 'scram', PW.java512], ['PLAIN', 'admin', PW.admin]] as const) {
    const topic = `kcat-${mechanism.toLowerCase()}`;
    await kcat(env, mechanism, user, password, ['-P', '-t', topic], 'k1\nk2\n');
    const out = await kcat(env, mechanism, user, password, ['-C', '-t', topic, '-o', 'beginning', '-e', '-c', '2']);
    assert.deepEqual(out.trim().split('\n'), ['k1', 'k2'], `kcat ${mechanism}`);
  }
  await assert.rejects(kcat(env, 'SCRAM-SHA-512', 'scram', PW.wrong, ['-L', '-m', '5']));
  await assert.rejects(kcat(env, 'PLAIN', 'nobody', PW.wrong, ['-L', '-m', '5']));

  // confluent-kafka-python (PyPI) over SASL_SSL.
  const base = { 'bootstrap.servers': env.saslSsl, 'security.protocol': 'SASL_SSL', 'ssl.ca.location': env.certs.caPem };
  assert.deepEqual(await confluent({ ...base, 'sasl.mechanisms': 'SCRAM-SHA-512', 'sasl.username': 'scram', 'sasl.password': PW.java512, topic: 'ck-scram' }), ['a', 'b', 'c']);
  assert.deepEqual(await confluent({ ...base, 'sasl.mechanisms': 'PLAIN', 'sasl.username': 'admin', 'sasl.password': PW.admin, topic: 'ck-plain' }), ['a', 'b', 'c']);

  // kafka-python (Debian 2.0.2: SaslHandshake v0, then raw SASL tokens) over SASL_PLAINTEXT.
  const kp = { bootstrap_servers: env.saslPlain, security_protocol: 'SASL_PLAINTEXT' };
  assert.deepEqual(await kafkaPython({ ...kp, sasl_mechanism: 'PLAIN', sasl_plain_username: 'admin', sasl_plain_password: PW.admin, topic: 'kp-plain' }), ['x', 'y']);
  assert.deepEqual(await kafkaPython({ ...kp, sasl_mechanism: 'SCRAM-SHA-256', sasl_plain_username: 'scram', sasl_plain_password: PW.java256, topic: 'kp-scram' }), ['x', 'y']);
  await assert.rejects(kafkaPython({ ...kp, sasl_mechanism: 'SCRAM-SHA-256', sasl_plain_username: 'scram', sasl_plain_password: PW.wrong, topic: 'kp-bad' }));

  assert.ok(env.b.adminUrl);
  assertNoSecrets([...env.lines, ...(await captureAdminPages(env.b.adminUrl))], [...Object.values(PW), env.certs.keystorePassword]);
});

test("OAUTHBEARER is not implemented: Kafka's Java client asking for it is told UNSUPPORTED_SASL_MECHANISM", { timeout: 120_000 }, async (t) => {
  const env = await saslBroker(t);
  const props = join(env.dir, 'oauth.properties');
  // The Java client's own unsecured token (no OAuth server needed); the broker refuses the mechanism at SaslHandshake.
  writeFileSync(props, ['security.protocol=SASL_PLAINTEXT', 'sasl.mechanism=OAUTHBEARER', 'sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="alice";'].join('\n') + '\n');
  const java = new JavaClient(env.saslPlain, props);
  t.after(() => java.close());
  await assert.rejects(java.call('list_topics'), (e: unknown) => {
    assert.ok(e instanceof JavaClientError, String(e));
    assert.equal(e.errorClass, 'UnsupportedSaslMechanismException', e.message);
    assert.match(e.message, /OAUTHBEARER/);
    return true;
  });
});

test('mTLS (SSL listener, ssl.client.auth=required): the Java client, kcat and confluent-kafka-python; an expired client certificate is refused', { timeout: 300_000 }, async (t) => {
  const dir = await tempDir('floe-mtls-interop-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const certs = makeCerts(dir);
  const lines: string[] = [];
  const b = await startBroker(
    ['--listeners=SSL://127.0.0.1:0', '--ssl.keystore.type=PEM', `--ssl.keystore.location=${certs.serverPem}`, `--ssl.truststore.location=${certs.caPem}`, '--ssl.client.auth=required'],
    { log: (l) => lines.push(l) },
  );
  t.after(() => b.stop());
  const bootstrap = `127.0.0.1:${b.port}`;
  const client = certs.client('app');
  const expired = certs.client('old', { expired: true });

  const props = join(dir, 'mtls.properties');
  writeFileSync(props, ['security.protocol=SSL', 'ssl.truststore.type=PEM', `ssl.truststore.location=${certs.caPem}`, 'ssl.keystore.type=PKCS12', `ssl.keystore.location=${client.p12}`, `ssl.keystore.password=${certs.keystorePassword}`].join('\n') + '\n');
  writeFileSync(join(dir, 'lines.txt'), 'm1\nm2\n');
  const env = { dir } as Env;
  const produced = await cli(env, `kafka-console-producer.sh --bootstrap-server localhost:9092 --topic java-mtls --command-config ${props} < lines.txt`, bootstrap);
  assert.equal(produced.code, 0, produced.stderr);
  const consumed = await cli(env, `kafka-console-consumer.sh --bootstrap-server localhost:9092 --topic java-mtls --from-beginning --max-messages 2 --command-config ${props}`, bootstrap);
  assert.deepEqual(consumed.stdout.trim().split('\n'), ['m1', 'm2']);

  const tls = (c: { key: string; cert: string }) => ['-b', bootstrap, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${certs.caPem}`, '-X', `ssl.certificate.location=${c.cert}`, '-X', `ssl.key.location=${c.key}`];
  await kcatRaw([...tls(client), '-P', '-t', 'kcat-mtls'], 'c1\nc2\n');
  assert.deepEqual((await kcatRaw([...tls(client), '-C', '-t', 'kcat-mtls', '-o', 'beginning', '-e', '-c', '2'])).trim().split('\n'), ['c1', 'c2']);
  await assert.rejects(kcatRaw([...tls(expired), '-L', '-m', '5']));

  assert.deepEqual(
    await confluent({ 'bootstrap.servers': bootstrap, 'security.protocol': 'SSL', 'ssl.ca.location': certs.caPem, 'ssl.certificate.location': client.cert, 'ssl.key.location': client.key, topic: 'ck-mtls' }),
    ['a', 'b', 'c'],
  );
  assert.ok(lines.some((l) => l.includes('"principal":"User:CN=app,O=floe,C=US"')));
  // Neither the keystore password nor a line of any private key (the broker's, the clients') is logged or served.
  const keyLine = (file: string) => readFileSync(file, 'utf8').split('\n')[1] ?? 'no-key-line';
  assert.ok(b.adminUrl);
  assertNoSecrets([...lines, ...(await captureAdminPages(b.adminUrl))], [certs.keystorePassword, keyLine(certs.serverKey), keyLine(client.key), keyLine(expired.key)]);
});

test('the Java consumer re-authenticates (KIP-368) on the same connection when connections.max.reauth.ms is set', { timeout: 300_000 }, async (t) => {
  const dir = await tempDir('floe-reauth-java-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const certs = makeCerts(dir);
  const lines: string[] = [];
  const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="${PW.admin}";`;
  const b = await startBroker(['--listeners=SASL_SSL://127.0.0.1:0', '--ssl.keystore.type=PEM', `--ssl.keystore.location=${certs.serverPem}`, `--sasl.plain.jaas.config=${jaas}`, '--connections.max.reauth.ms=1500'], { log: (l) => lines.push(l) });
  t.after(() => b.stop());
  const env = { dir, certs } as Env;
  const props = javaProps({ ...env, saslSsl: '' } as Env, 'reauth.properties', 'PLAIN', 'admin', PW.admin);
  const { cmd, args } = javaCommand(KAFKA_SCRIPTS['kafka-console-consumer.sh'] ?? '', ['--bootstrap-server', `127.0.0.1:${b.port}`, '--topic', 'reauth', '--command-config', props, '--timeout-ms', '240000']);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'ignore'] });
  t.after(() => child.kill('SIGKILL'));
  const reauths = () => lines.filter((l) => l.includes('SASL authentication succeeded') && l.includes('"reauthenticated":true'));
  // Waits until the client has renewed a session (bounded by the test's timeout, not a threshold).
  while (reauths().length === 0) await new Promise((r) => setTimeout(r, 200));
  const conn = /"conn":(\d+)/.exec(reauths()[0] ?? '')?.[1];
  assert.ok(lines.some((l) => l.includes('SASL authentication succeeded') && l.includes(`"conn":${conn},`) && l.includes('"reauthenticated":false')), 'the renewal was on a connection that had logged in before');
  assert.ok(!lines.some((l) => l.includes('expired (connections.max.reauth.ms)')), 'no session expired');
  assertNoSecrets(lines, [PW.admin]);
});
