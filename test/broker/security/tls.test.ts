// TLS on Kafka listeners with certificates made by openssl: PKCS#12 and PEM keystores, mTLS with
// ssl.client.auth=required (the principal is the certificate's subject DN), refusals of expired, untrusted
// and missing client certificates and of plaintext clients, a TLS client on a PLAINTEXT listener, the
// certificate reloaded without a restart, and start-up errors for bad files that name no password.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { copyFileSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import { connect as tlsConnect } from 'node:tls';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { makeCerts, type TestCerts } from '../../helpers/certs.js';
import { assertNoSecrets, captureAdminPages } from '../../helpers/secrets.js';
import { WireClient } from '../handlers/wire-client.js';

async function certsFor(t: { after(fn: () => unknown): void }): Promise<TestCerts> {
  const dir = await tempDir('floe-tls-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  return makeCerts(dir);
}

async function produceAndCount(kafka: Kafka, topic: string): Promise<number> {
  const producer = kafka.producer();
  await producer.connect();
  try {
    const [r] = await producer.send({ topic, messages: [{ value: 'a' }, { value: 'b' }] });
    return Number(r?.baseOffset ?? -1) + 2;
  } finally {
    await producer.disconnect();
  }
}

/** The certificate a TLS listener presents to a new connection. */
async function presented(port: number, ca: string): Promise<string> {
  const sock = tlsConnect({ host: '127.0.0.1', port, ca, servername: 'localhost', rejectUnauthorized: false });
  await once(sock, 'secureConnect');
  const fp = sock.getPeerX509Certificate()?.fingerprint256 ?? '';
  sock.destroy();
  return fp;
}

test('mTLS: PKCS#12 keystore, client certificates required; expired, untrusted and missing ones and plaintext clients are refused while others are served', async (t) => {
  const certs = await certsFor(t);
  const lines: string[] = [];
  const b = await startBroker(
    [
      '--listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0',
      `--ssl.keystore.location=${certs.serverP12}`,
      `--ssl.keystore.password=${certs.keystorePassword}`,
      `--ssl.truststore.location=${certs.caPem}`,
      '--ssl.client.auth=required',
    ],
    { log: (l) => lines.push(l) },
  );
  t.after(() => b.stop());
  const port = b.broker.listenerPort('SSL');
  const ca = readFileSync(certs.caPem, 'utf8');
  const kafka = (cert?: { key: string; cert: string }) =>
    new Kafka({
      clientId: 'tls-test',
      brokers: [`127.0.0.1:${port}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
      connectionTimeout: 5000,
      ssl: { ca: [ca], servername: 'localhost', ...(cert ? { key: readFileSync(cert.key, 'utf8'), cert: readFileSync(cert.cert, 'utf8') } : {}) },
    });

  const alice = certs.client('alice');
  assert.equal(await produceAndCount(kafka(alice), 'mtls'), 2);
  assert.ok(lines.some((l) => l.includes('"principal":"User:CN=alice,O=floe,C=US"')), 'the principal is the subject DN, most specific first');

  for (const [what, cert] of [
    ['expired', certs.client('old', { expired: true })],
    ['untrusted CA', certs.client('eve', { untrusted: true })],
    ['no certificate', undefined],
  ] as const) {
    const producer = kafka(cert).producer();
    await assert.rejects(producer.connect(), what);
    await producer.disconnect();
  }
  // A plaintext client on the TLS listener gets nothing back and is dropped.
  const plain = await WireClient.connect(port);
  t.after(() => plain.close());
  await assert.rejects(plain.request(18, 3, { clientSoftwareName: 'wire', clientSoftwareVersion: '1' }), /connection closed/);
  // A TLS client on the PLAINTEXT listener fails its handshake.
  const wrong = tlsConnect({ host: '127.0.0.1', port: b.port, ca, servername: 'localhost' });
  const [outcome] = await Promise.race([once(wrong, 'error').then(() => ['error']), once(wrong, 'close').then(() => ['close'])]);
  assert.ok(outcome === 'error' || outcome === 'close');
  wrong.destroy();
  // The refusals on the TLS listener are counted (expired, untrusted, missing certificates, the plaintext client).
  assert.ok(b.adminUrl);
  const metrics = await (await fetch(`${b.adminUrl}/metrics`)).text();
  const refused = /^floe_tls_handshake_failures_total\{listener="SSL"\} (\d+)$/m.exec(metrics);
  assert.ok(refused && Number(refused[1]) >= 3, metrics.split('\n').filter((l) => l.startsWith('floe_tls')).join('\n'));

  // DescribeConfigs of the broker: secrets come back null and sensitive, as in Kafka.
  const admin = new Kafka({ clientId: 'cfg', brokers: [`127.0.0.1:${b.port}`], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const described = await admin.describeConfigs({ resources: [{ type: 4, name: '1' }], includeSynonyms: false });
  await admin.disconnect();
  const entries = new Map((described.resources[0]?.configEntries ?? []).map((e) => [e.configName, e]));
  assert.equal(entries.get('ssl.keystore.password')?.configValue, null);
  assert.equal(entries.get('ssl.keystore.password')?.isSensitive, true);
  assert.equal(entries.get('ssl.keystore.location')?.configValue, certs.serverP12);
  // Neither the keystore password nor the server's private key shows in the configs, the log or the admin pages.
  const keyLine = readFileSync(certs.serverKey, 'utf8').split('\n')[1] ?? 'no-key-line';
  assertNoSecrets([JSON.stringify(described), ...lines, ...(await captureAdminPages(b.adminUrl))], [certs.keystorePassword, keyLine]);

  // ... and the broker still serves good clients on both listeners.
  assert.equal(await produceAndCount(kafka(alice), 'mtls'), 4);
  const pt = new Kafka({ clientId: 'pt', brokers: [`127.0.0.1:${b.port}`], logLevel: logLevel.NOTHING });
  assert.equal(await produceAndCount(pt, 'mtls'), 6);
});

test('PEM keystore reloads without a restart: new connections get the new certificate', async (t) => {
  const certs = await certsFor(t);
  const live = `${certs.dir}/live-keystore.pem`;
  copyFileSync(certs.serverPem, live);
  const b = await startBroker(['--listeners=SSL://127.0.0.1:0', '--ssl.keystore.type=PEM', `--ssl.keystore.location=${live}`, '--ssl.reload.check.interval.ms=50']);
  t.after(() => b.stop());
  const ca = readFileSync(certs.caPem, 'utf8');
  const before = await presented(b.port, ca);
  assert.equal(before, new X509Certificate(readFileSync(certs.serverCert)).fingerprint256);
  const next = certs.newServerPem();
  copyFileSync(next.pem, live);
  const want = new X509Certificate(readFileSync(next.cert)).fingerprint256;
  assert.notEqual(want, before);
  // Polls until the reload applied (the test's own timeout bounds it; no timing threshold).
  while ((await presented(b.port, ca)) !== want) await new Promise((r) => setTimeout(r, 50));
  const kafka = new Kafka({ clientId: 'reload', brokers: [`127.0.0.1:${b.port}`], logLevel: logLevel.NOTHING, ssl: { ca: [ca], servername: 'localhost' } });
  assert.equal(await produceAndCount(kafka, 'reloaded'), 2);
});

test('bad TLS files stop start-up with a message that names the setting and no password', async (t) => {
  const certs = await certsFor(t);
  await assert.rejects(startBroker(['--listeners=SSL://127.0.0.1:0', `--ssl.keystore.location=${certs.dir}/missing.p12`]), /ssl\.keystore\.location .*missing\.p12: cannot read it \(ENOENT\)/);
  await assert.rejects(startBroker(['--listeners=SSL://127.0.0.1:0', `--ssl.keystore.location=${certs.serverP12}`, '--ssl.keystore.password=not-The-Pw-123']), (err: Error) => {
    assert.match(err.message, /ssl\.keystore\.location .* with ssl\.keystore\.password does not load/);
    assert.ok(!err.message.includes('not-The-Pw-123'));
    return true;
  });
  await assert.rejects(startBroker(['--listeners=SSL://127.0.0.1:0', '--ssl.keystore.type=PEM', `--ssl.keystore.location=${certs.serverCert}`]), /expected one PEM private key, found 0/);
});

test('ssl.client.auth=requested: clients without a certificate are served, a valid one names the principal, an untrusted one is refused', async (t) => {
  const certs = await certsFor(t);
  const lines: string[] = [];
  const b = await startBroker(
    ['--listeners=SSL://127.0.0.1:0', '--ssl.keystore.type=PEM', `--ssl.keystore.location=${certs.serverPem}`, `--ssl.truststore.location=${certs.caPem}`, '--ssl.client.auth=requested'],
    { log: (l) => lines.push(l) },
  );
  t.after(() => b.stop());
  const ca = readFileSync(certs.caPem, 'utf8');
  const kafka = (cert?: { key: string; cert: string }) =>
    new Kafka({
      clientId: 'requested',
      brokers: [`127.0.0.1:${b.port}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
      ssl: { ca: [ca], servername: 'localhost', ...(cert ? { key: readFileSync(cert.key, 'utf8'), cert: readFileSync(cert.cert, 'utf8') } : {}) },
    });
  assert.equal(await produceAndCount(kafka(), 'requested'), 2);
  assert.ok(!lines.some((l) => l.includes('TLS client certificate accepted')));
  assert.equal(await produceAndCount(kafka(certs.client('bob')), 'requested'), 4);
  assert.ok(lines.some((l) => l.includes('"principal":"User:CN=bob,O=floe,C=US"')));
  const producer = kafka(certs.client('eve', { untrusted: true })).producer();
  await assert.rejects(producer.connect());
  await producer.disconnect();
  assert.ok(lines.some((l) => l.includes('TLS client certificate refused')));
});
