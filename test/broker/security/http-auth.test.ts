// HTTP authentication against the broker's users: Basic with a PLAIN user and with SCRAM users (the password
// checked against the stored credential, which holds no password), issued bearer tokens that expire, the
// static token as User:ANONYMOUS, and failures logged without the secret.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, RateLimitedLog } from '../../../broker/logger.js';
import { SaslAuthenticator } from '../../../broker/security/sasl-authenticator.js';
import { credentialFromPassword, type ScramMechanism } from '../../../broker/security/scram.js';
import { ANONYMOUS_PRINCIPAL, HttpAuthenticator, parseBasic, TokenIssuer } from '../../../broker/security/http-auth.js';
import { topicOfSubject, topicOfTable } from '../../../broker/security/http-services.js';
import { assertNoSecrets } from '../../helpers/secrets.js';

const PW = { plain: 'plain-Pw-4f1a', s256: 's256-Pw-90be', s512: 's512-Pw-77c3', wrong: 'wrong-Pw-1d2e', token: 'static-Tok-e5f6' };

function setup(now: () => number) {
  const scram = new Map<string, ReturnType<typeof credentialFromPassword>>([
    ['bob/SCRAM-SHA-256', credentialFromPassword('SCRAM-SHA-256', PW.s256)],
    ['carol/SCRAM-SHA-512', credentialFromPassword('SCRAM-SHA-512', PW.s512)],
  ]);
  const lines: string[] = [];
  const log = createLogger('debug', (l) => lines.push(l));
  const users = new SaslAuthenticator(
    {
      'sasl.enabled.mechanisms': ['PLAIN'],
      'sasl.plain.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="${PW.plain}";`,
      'sasl.plain.users.file': '',
      'connection.failed.authentication.delay.ms': 0,
      'connections.max.reauth.ms': 0,
    },
    {
      getScramCredential: (user: string, m: ScramMechanism) => {
        const c = scram.get(`${user}/${m}`);
        return c && { user, mechanism: m, ...c };
      },
    },
    log,
  );
  return { auth: new HttpAuthenticator(users, new TokenIssuer(60_000, now), new RateLimitedLog(log)), lines };
}

const basic = (user: string, pw: string) => `Basic ${Buffer.from(`${user}:${pw}`).toString('base64')}`;

test('Basic with PLAIN and SCRAM users, whatever sasl.enabled.mechanisms says; wrong passwords and unknown users fail', () => {
  const { auth, lines } = setup(Date.now);
  assert.equal(auth.authenticate('t', basic('alice', PW.plain), '127.0.0.1'), 'User:alice');
  assert.equal(auth.authenticate('t', basic('bob', PW.s256), '127.0.0.1'), 'User:bob');
  assert.equal(auth.authenticate('t', basic('carol', PW.s512), '127.0.0.1'), 'User:carol');
  for (const header of [basic('alice', PW.wrong), basic('carol', PW.s256), basic('nobody', PW.plain), 'Basic !!!', 'Digest x', '']) {
    assert.equal(auth.authenticate('t', header, '127.0.0.1'), undefined, header);
  }
  assert.equal(auth.failures, 5, 'an empty header is no attempt');
  assert.deepEqual(parseBasic(basic('u', 'p:with:colons')), { user: 'u', password: 'p:with:colons' });
  assert.ok(lines.some((l) => l.includes('HTTP authentication failed') && l.includes('"user":"alice"')));
  assertNoSecrets(lines, Object.values(PW));
});

test('issued tokens name their user until they expire; the static token is ANONYMOUS; wrong credentials get no token', () => {
  let now = 1_000_000;
  const { auth } = setup(() => now);
  const issued = auth.issueToken('t', 'carol', PW.s512, '127.0.0.1');
  assert.ok(issued);
  assert.equal(issued.expiresInS, 60);
  assert.equal(auth.issueToken('t', 'carol', PW.wrong, '127.0.0.1'), undefined);
  assert.equal(auth.authenticate('t', `Bearer ${issued.token}`, '127.0.0.1'), 'User:carol');
  assert.equal(auth.authenticate('t', `Bearer ${PW.token}`, '127.0.0.1', PW.token), ANONYMOUS_PRINCIPAL);
  assert.equal(auth.authenticate('t', `Bearer ${PW.token}`, '127.0.0.1'), undefined, 'no static token configured');
  now += 60_000;
  assert.equal(auth.authenticate('t', `Bearer ${issued.token}`, '127.0.0.1'), undefined, 'expired');
  assert.equal(auth.tokens.size, 0, 'an expired token is forgotten');
});

test('which topic a table or a subject follows', () => {
  assert.equal(topicOfTable('orders'), 'orders');
  assert.equal(topicOfTable('orders~dlq'), 'orders');
  assert.equal(topicOfSubject('orders-value'), 'orders');
  assert.equal(topicOfSubject('my-orders-key'), 'my-orders');
  assert.equal(topicOfSubject('com.acme.Order'), undefined);
});
