// SCRAM server against RFC 7677's SCRAM-SHA-256 example exchange (user "user", password "pencil"), and
// against our own client computation for SCRAM-SHA-512; plus the failures that must not tell users apart.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { test } from 'node:test';
import { credentialFromPassword, credentialFromSalted, saltedPassword, ScramServer } from '../../../broker/security/scram.js';
import { SaslAuthenticationError } from '../../../broker/security/sasl-mechanism.js';

test('RFC 7677 SCRAM-SHA-256 example: the server accepts the proof and sends the expected signature', () => {
  const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
  const cred = credentialFromSalted('SCRAM-SHA-256', saltedPassword('SCRAM-SHA-256', 'pencil', salt, 4096), salt, 4096);
  const server = new ScramServer('SCRAM-SHA-256', (u) => (u === 'user' ? cred : undefined), () => '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0');
  const first = server.step(Buffer.from('n,,n=user,r=rOprNGfwEbeRWgbNEkqO'));
  assert.equal(first.response.toString(), 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096');
  assert.equal(first.done, false);
  const final = server.step(Buffer.from('c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ='));
  assert.equal(final.response.toString(), 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
  assert.equal(final.done, true);
  assert.equal(server.principal, 'user');
});

/** A SCRAM client computation, written from RFC 5802 section 3, to drive the server. */
function clientFinal(hash: 'sha256' | 'sha512', password: string, clientFirstBare: string, serverFirst: string, nonce?: string): string {
  const attrs = new Map(serverFirst.split(',').map((p) => [p[0], p.slice(2)]));
  const salted = saltedPassword(hash === 'sha256' ? 'SCRAM-SHA-256' : 'SCRAM-SHA-512', password, Buffer.from(attrs.get('s') ?? '', 'base64'), Number(attrs.get('i')));
  const clientKey = createHmac(hash, salted).update('Client Key').digest();
  const storedKey = createHash(hash).update(clientKey).digest();
  const withoutProof = `c=biws,r=${nonce ?? attrs.get('r')}`;
  const sig = createHmac(hash, storedKey).update(`${clientFirstBare},${serverFirst},${withoutProof}`).digest();
  const proof = Buffer.from(clientKey.map((b, i) => b ^ (sig[i] ?? 0)));
  return `${withoutProof},p=${proof.toString('base64')}`;
}

test('SCRAM-SHA-512: right password passes, wrong password and unknown user fail alike, tampered nonce fails', () => {
  const cred = credentialFromPassword('SCRAM-SHA-512', 'alice-pw', 4096);
  assert.equal(cred.storedKey.length, 64);
  const lookup = (u: string) => (u === 'alice' ? cred : undefined);
  const run = (user: string, password: string, tamper = false, librdkafkaNonce = false) => {
    const server = new ScramServer('SCRAM-SHA-512', lookup);
    const bare = `n=${user},r=abcdef`;
    const serverFirst = server.step(Buffer.from(`n,,${bare}`)).response.toString();
    let final = clientFinal('sha512', password, bare, serverFirst);
    if (tamper) final = final.replace('r=abcdef', 'r=abcdeX');
    if (librdkafkaNonce) {
      // librdkafka < 2.6.1 repeats its nonce in front of the full one; the proof covers what it sent.
      const nonce = /r=([^,]+)/.exec(serverFirst)?.[1] ?? '';
      final = clientFinal('sha512', password, bare, serverFirst, `abcdef${nonce}`);
    }
    return server.step(Buffer.from(final));
  };
  assert.equal(run('alice', 'alice-pw').done, true);
  assert.throws(() => run('alice', 'wrong'), (err: unknown) => err instanceof SaslAuthenticationError && err.message === 'invalid credentials');
  assert.throws(() => run('mallory', 'x'), (err: unknown) => err instanceof SaslAuthenticationError && err.message === 'invalid credentials');
  assert.throws(() => run('alice', 'alice-pw', true), /nonce does not match/);
  assert.equal(run('alice', 'alice-pw', false, true).done, true);
  assert.throws(() => new ScramServer('SCRAM-SHA-512', lookup).step(Buffer.from('p=tls-unique,,n=alice,r=x')), /channel binding/);
});
