// SASL on Kafka listeners, with kafkajs (npm) as the client over SASL_SSL (certificates made by openssl) and
// SASL_PLAINTEXT: PLAIN from a users file, SCRAM-SHA-256 and SCRAM-SHA-512 from stored credentials. Wrong
// passwords and unknown users fail cleanly while others keep being served; requests out of SASL order close
// the connection, as Kafka closes it; and no password shows up in anything the broker logged.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { credentialFromPassword } from '../../../broker/security/scram.js';
import { startBroker, tempDir, type TestBroker } from '../../helpers/broker.js';
import { makeCerts } from '../../helpers/certs.js';
import { assertNoSecrets, captureAdminPages } from '../../helpers/secrets.js';
import { WireClient } from '../handlers/wire-client.js';

const PASSWORDS = { plain: 'plain-Pw-7c1e', scram256: 'scram256-Pw-2b9d', scram512: 'scram512-Pw-e41f', wrong: 'wrong-Pw-55aa' };

async function secureBroker(t: { after(fn: () => unknown): void }, lines: string[]): Promise<{ b: TestBroker; ca: string }> {
  const dir = await tempDir('floe-sasl-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const certs = makeCerts(dir);
  const users = `${dir}/plain-users`;
  writeFileSync(users, `# PLAIN users\nalice=${PASSWORDS.plain}\n`);
  const b = await startBroker(
    [
      '--listeners=PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
      '--ssl.keystore.type=PEM',
      `--ssl.keystore.location=${certs.serverPem}`,
      `--sasl.plain.users.file=${users}`,
      '--connection.failed.authentication.delay.ms=0',
    ],
    { log: (line) => lines.push(line) },
  );
  t.after(() => b.stop());
  await b.broker.services.metadata.alterScramCredentials(
    [
      { user: 'bob', mechanism: 'SCRAM-SHA-256', ...credentialFromPassword('SCRAM-SHA-256', PASSWORDS.scram256) },
      { user: 'carol', mechanism: 'SCRAM-SHA-512', ...credentialFromPassword('SCRAM-SHA-512', PASSWORDS.scram512, 8192) },
    ],
    [],
  );
  return { b, ca: readFileSync(certs.caPem, 'utf8') };
}

function client(port: number, sasl: SASLOptions, ca?: string): Kafka {
  return new Kafka({ clientId: 'sasl-test', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 0 }, sasl, ...(ca ? { ssl: { ca: [ca] } } : {}) });
}

async function roundTrip(kafka: Kafka, topic: string): Promise<string[]> {
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({ topic, messages: [{ key: 'k1', value: 'v1' }, { key: 'k2', value: 'v2' }] });
  } finally {
    await producer.disconnect();
  }
  const consumer = kafka.consumer({ groupId: `${topic}-group` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const got: string[] = [];
    await new Promise<void>((resolve, reject) => {
      consumer.run({ eachMessage: async ({ message }) => {
        got.push(String(message.value));
        if (got.length === 2) resolve();
      } }).catch(reject);
    });
    return got;
  } finally {
    await consumer.disconnect();
  }
}

test('kafkajs produces and consumes over SASL_SSL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and SASL_PLAINTEXT; bad credentials fail cleanly; no password is logged', async (t) => {
  const lines: string[] = [];
  const { b, ca } = await secureBroker(t, lines);
  const sslPort = b.broker.listenerPort('SASL_SSL');
  const plainPort = b.broker.listenerPort('SASL_PLAINTEXT');

  assert.deepEqual(await roundTrip(client(sslPort, { mechanism: 'plain', username: 'alice', password: PASSWORDS.plain }, ca), 'ssl-plain'), ['v1', 'v2']);
  assert.deepEqual(await roundTrip(client(sslPort, { mechanism: 'scram-sha-256', username: 'bob', password: PASSWORDS.scram256 }, ca), 'ssl-scram256'), ['v1', 'v2']);
  assert.deepEqual(await roundTrip(client(sslPort, { mechanism: 'scram-sha-512', username: 'carol', password: PASSWORDS.scram512 }, ca), 'ssl-scram512'), ['v1', 'v2']);
  assert.deepEqual(await roundTrip(client(plainPort, { mechanism: 'scram-sha-512', username: 'carol', password: PASSWORDS.scram512 }), 'plain-scram512'), ['v1', 'v2']);

  // Metadata names the listener the client came in on.
  const admin = client(sslPort, { mechanism: 'plain', username: 'alice', password: PASSWORDS.plain }, ca).admin();
  await admin.connect();
  const cluster = await admin.describeCluster();
  await admin.disconnect();
  assert.deepEqual(cluster.brokers.map((x) => x.port), [sslPort]);

  for (const [sasl, what] of [
    [{ mechanism: 'plain', username: 'alice', password: PASSWORDS.wrong }, 'PLAIN wrong password'],
    [{ mechanism: 'plain', username: 'nobody', password: PASSWORDS.wrong }, 'PLAIN unknown user'],
    [{ mechanism: 'scram-sha-512', username: 'carol', password: PASSWORDS.wrong }, 'SCRAM-SHA-512 wrong password'],
    [{ mechanism: 'scram-sha-256', username: 'nobody', password: PASSWORDS.wrong }, 'SCRAM-SHA-256 unknown user'],
    [{ mechanism: 'scram-sha-256', username: 'carol', password: PASSWORDS.scram512 }, 'SCRAM user without a SHA-256 credential'],
  ] as [SASLOptions, string][]) {
    const producer = client(sslPort, sasl, ca).producer();
    await assert.rejects(producer.connect(), (err: Error) => {
      assert.match(err.message, /SASL_AUTHENTICATION_FAILED|Authentication failed/, what);
      assert.doesNotMatch(err.message, new RegExp(PASSWORDS.wrong), what);
      return true;
    });
    await producer.disconnect();
  }
  // ... and the broker goes on serving the others.
  assert.deepEqual(await roundTrip(client(sslPort, { mechanism: 'plain', username: 'alice', password: PASSWORDS.plain }, ca), 'after-failures'), ['v1', 'v2']);
  assert.ok((b.broker.services.sasl?.failures ?? 0) >= 5);
  // The metrics count them by listener, mechanism and result.
  assert.ok(b.adminUrl);
  const metrics = await (await fetch(`${b.adminUrl}/metrics`)).text();
  const count = (labels: string) => Number(new RegExp(`^floe_sasl_authentications_total\\{${labels}\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
  assert.ok(count('listener="SASL_SSL",mechanism="PLAIN",result="failure"') >= 2, metrics.split('\n').filter((l) => l.startsWith('floe_sasl')).join('\n'));
  assert.ok(count('listener="SASL_SSL",mechanism="SCRAM-SHA-512",result="success"') >= 1);
  assert.ok(count('listener="SASL_PLAINTEXT",mechanism="SCRAM-SHA-512",result="success"') >= 1);

  // The PLAIN users file is re-read when it changes.
  const usersPath = b.broker.services.config['sasl.plain.users.file'];
  writeFileSync(usersPath, `alice=${PASSWORDS.plain}\ndave=${PASSWORDS.plain}-dave\n`);
  assert.deepEqual(await roundTrip(client(plainPort, { mechanism: 'plain', username: 'dave', password: `${PASSWORDS.plain}-dave` }), 'users-file-reload'), ['v1', 'v2']);

  assert.ok(lines.some((l) => l.includes('SASL authentication failed')));
  assertNoSecrets([...lines, ...(await captureAdminPages(b.adminUrl))], Object.values(PASSWORDS));
});

test('a client asking for OAUTHBEARER (not implemented) is told UNSUPPORTED_SASL_MECHANISM and the enabled ones', async (t) => {
  const { b, ca } = await secureBroker(t, []);
  const producer = client(b.broker.listenerPort('SASL_SSL'), { mechanism: 'oauthbearer', oauthBearerProvider: () => Promise.resolve({ value: 'a-token-of-some-kind' }) }, ca).producer();
  // kafkajs sends SaslHandshake with the mechanism and throws the error code of the answer.
  await assert.rejects(producer.connect(), (err: Error & { type?: string }) => {
    assert.equal(err.type, 'UNSUPPORTED_SASL_MECHANISM', `${err.name}: ${err.message}`);
    return true;
  });
  await producer.disconnect();
  assert.deepEqual(await roundTrip(client(b.broker.listenerPort('SASL_SSL'), { mechanism: 'plain', username: 'alice', password: PASSWORDS.plain }, ca), 'after-oauthbearer'), ['v1', 'v2'], 'the others are still served');
});

test('before authentication a SASL listener serves only ApiVersions and SaslHandshake, and closes on anything else', async (t) => {
  const { b } = await secureBroker(t, []);
  const port = b.broker.listenerPort('SASL_PLAINTEXT');

  // A Metadata request before authenticating: the connection is closed, no answer.
  const c1 = await WireClient.connect(port);
  t.after(() => c1.close());
  await assert.rejects(c1.request(3, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }), /connection closed/);

  // ApiVersions is allowed; a mechanism that is not enabled gets UNSUPPORTED_SASL_MECHANISM, then the close.
  const c2 = await WireClient.connect(port);
  t.after(() => c2.close());
  const versions = await c2.request(18, 3, { clientSoftwareName: 'wire', clientSoftwareVersion: '1' });
  assert.equal(versions.errorCode, 0);
  const hs = await c2.request(17, 1, { mechanism: 'GSSAPI' });
  assert.equal(hs.errorCode, ErrorCode.UNSUPPORTED_SASL_MECHANISM);
  assert.deepEqual(hs.mechanisms, ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']);
  await c2.closed;

  // SaslAuthenticate before SaslHandshake: closed.
  const c3 = await WireClient.connect(port);
  t.after(() => c3.close());
  await assert.rejects(c3.request(36, 2, { authBytes: Buffer.from('\0alice\0x') }), /connection closed/);

  // A wrong PLAIN password through SaslAuthenticate: SASL_AUTHENTICATION_FAILED with Kafka's fixed message, then the close.
  const c4 = await WireClient.connect(port);
  t.after(() => c4.close());
  assert.equal((await c4.request(17, 1, { mechanism: 'PLAIN' })).errorCode, ErrorCode.NONE);
  const auth = await c4.request(36, 2, { authBytes: Buffer.from(`\0alice\0${PASSWORDS.wrong}`) });
  assert.equal(auth.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
  assert.equal(auth.errorMessage, 'Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN');
  await c4.closed;

  // The right one: authenticated, then everything is open; a second handshake is out of order.
  const c5 = await WireClient.connect(port);
  t.after(() => c5.close());
  assert.equal((await c5.request(17, 1, { mechanism: 'PLAIN' })).errorCode, ErrorCode.NONE);
  const ok = await c5.request(36, 1, { authBytes: Buffer.from(`\0alice\0${PASSWORDS.plain}`) });
  assert.equal(ok.errorCode, ErrorCode.NONE);
  assert.equal(ok.sessionLifetimeMs, 0n);
  const md = await c5.request(3, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  assert.deepEqual((md.brokers as { port: number }[]).map((x) => x.port), [port]);
  assert.equal((await c5.request(17, 1, { mechanism: 'PLAIN' })).errorCode, ErrorCode.ILLEGAL_SASL_STATE);

  // The PLAINTEXT listener is unaffected: no authentication, Metadata answers with its own port.
  const c6 = await WireClient.connect(b.broker.listenerPort('PLAINTEXT'));
  t.after(() => c6.close());
  const md6 = await c6.request(3, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  assert.deepEqual((md6.brokers as { port: number }[]).map((x) => x.port), [b.port]);
});

test('re-authentication (KIP-368): v1+ tells the session lifetime, the same user may renew, another user may not, and an expired session is closed', async (t) => {
  const dir = await tempDir('floe-reauth-');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const users = `${dir}/users`;
  writeFileSync(users, `alice=${PASSWORDS.plain}\nbob=${PASSWORDS.plain}\n`);
  const start = async (reauthMs: number) => {
    const b = await startBroker(['--listeners=SASL_PLAINTEXT://127.0.0.1:0', `--sasl.plain.users.file=${users}`, `--connections.max.reauth.ms=${reauthMs}`, '--connection.failed.authentication.delay.ms=0']);
    t.after(() => b.stop());
    return b;
  };
  const login = async (c: WireClient, user: string) => {
    assert.equal((await c.request(17, 1, { mechanism: 'PLAIN' })).errorCode, ErrorCode.NONE);
    return c.request(36, 2, { authBytes: Buffer.from(`\0${user}\0${PASSWORDS.plain}`) });
  };
  const metadata = { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false };

  const b = await start(3_600_000);
  const c = await WireClient.connect(b.port);
  t.after(() => c.close());
  const first = await login(c, 'alice');
  assert.equal(first.errorCode, ErrorCode.NONE);
  assert.equal(first.sessionLifetimeMs, 3_600_000n);
  assert.equal((await login(c, 'alice')).errorCode, ErrorCode.NONE, 'renewed by the same user');
  assert.equal(((await c.request(3, 12, metadata)).brokers as unknown[]).length, 1);
  assert.equal((await login(c, 'bob')).errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED, 'a re-authentication may not change the principal');
  await c.closed;

  // A 1 ms session: once it has passed, the next request (other than a renewal) closes the connection.
  const b2 = await start(1);
  const c2 = await WireClient.connect(b2.port);
  t.after(() => c2.close());
  assert.equal((await login(c2, 'alice')).errorCode, ErrorCode.NONE);
  await new Promise((r) => setTimeout(r, 20));
  await assert.rejects(c2.request(3, 12, metadata), /connection closed/);
});
