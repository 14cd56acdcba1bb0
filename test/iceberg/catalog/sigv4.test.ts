/**
 * SigV4Signer (iceberg/catalog/sigv4.ts) against botocore, the AWS SDK for Python: the requests a REST
 * catalog client sends (config with a warehouse, paged lists, a namespace with the unit separator, HEAD, a
 * commit with a JSON body, DELETE with a query, a bearer token, a session token, https with and without a
 * port) are signed by both at the same instant with the same key, and every header botocore adds, the
 * Authorization header first, must be byte-identical. botocore runs from moto's venv
 * (scripts/peers/55-moto.sh, which pins it). Then what Iceberg's RESTSigV4Signer does beyond plain SigV4:
 * the bearer token moves to Original-Authorization, the body's SHA-256 is signed, and the credentials come
 * from the AWS default chain when none are configured.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { motoPython } from '../../helpers/peers.js';
import { SigV4Signer, type AwsCredentials } from '../../../iceberg/catalog/sigv4.js';

const BOTOCORE = fileURLToPath(new URL('../../interop/catalogs/sigv4_botocore.py', import.meta.url));
// The example key of AWS's SigV4 documentation and test suite.
const KEY: AwsCredentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const WHEN = new Date(Date.UTC(2015, 7, 30, 12, 36, 0));

interface Case {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  readonly region: string;
  readonly service: string;
  readonly token?: string;
}

const CASES: Case[] = [
  { method: 'GET', url: 'http://127.0.0.1:8181/v1/config?warehouse=s3%3A%2F%2Flake%2Fwh', headers: { accept: 'application/json' }, body: undefined, region: 'us-east-1', service: 'glue' },
  { method: 'GET', url: 'https://glue.us-east-1.amazonaws.com/iceberg/v1/catalogs/123456789012/namespaces?parent=kafka%1Fsub&pageToken=ab%2Bc%2F%3D', headers: { accept: 'application/json' }, body: undefined, region: 'us-east-1', service: 'glue' },
  { method: 'HEAD', url: 'http://127.0.0.1:8181/v1/namespaces/kafka%1Fsub/tables/orders', headers: { accept: 'application/json', authorization: 'Bearer tok-123' }, body: undefined, region: 'eu-central-1', service: 'execute-api' },
  {
    method: 'POST',
    url: 'https://s3tables.eu-west-3.amazonaws.com/iceberg/v1/arn%3Aaws%3As3tables%3Aeu-west-3%3A123456789012%3Abucket%2Flake/namespaces/kafka/tables/orders',
    headers: { accept: 'application/json', 'content-type': 'application/json', authorization: 'Bearer tok-123' },
    body: JSON.stringify({ identifier: { namespace: ['kafka'], name: 'orders' }, updates: [{ action: 'set-properties', updates: { note: 'café ☕', id: '9007199254740993' } }] }),
    region: 'eu-west-3',
    service: 's3tables',
    token: 'FwoGZXIvYXdzEXAMPLESESSIONTOKEN//+=',
  },
  { method: 'DELETE', url: 'https://catalog.example:8443/v1/namespaces/kafka/tables/a%20b?purgeRequested=false', headers: { accept: 'application/json' }, body: undefined, region: 'us-west-2', service: 'glue' },
];

function botocore(requests: readonly Case[]): Promise<Record<string, string>[]> {
  const python = motoPython();
  assert.ok(existsSync(python), `botocore comes with moto's venv (bash scripts/peers/55-moto.sh): no ${python}`);
  const input = requests.map((r) => ({
    method: r.method, url: r.url, body: r.body ?? null, time: '20150830T123600Z', key: KEY.accessKeyId, secret: KEY.secretAccessKey, token: r.token ?? null, region: r.region, service: r.service,
    // Iceberg's signer relocates the bearer token before signing: botocore gets the request in that shape.
    headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k === 'authorization' ? 'Original-Authorization' : k, v])),
  }));
  return new Promise((resolve, reject) => {
    const child = spawn(python, [BOTOCORE], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as Record<string, string>[]) : reject(new Error(`sigv4_botocore.py exited ${code}: ${err}`))));
    child.stdin.end(JSON.stringify(input));
  });
}

test('SigV4: the headers Floe signs a REST catalog request with are the ones botocore computes', async () => {
  const expected = await botocore(CASES);
  for (const [i, c] of CASES.entries()) {
    const signer = new SigV4Signer({ region: c.region, service: c.service, credentials: { ...KEY, ...(c.token !== undefined ? { sessionToken: c.token } : {}) }, now: () => WHEN });
    const mine = await signer.sign(c.method, c.url, c.headers, c.body);
    const theirs = expected[i] ?? {};
    assert.match(theirs['authorization'] ?? '', /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20150830\//, 'botocore signed');
    assert.equal(mine['authorization'], theirs['authorization'], `${c.method} ${c.url}: the same Authorization header`);
    assert.deepEqual(mine, theirs, `${c.method} ${c.url}: the same headers`);
  }
});

test('SigV4: a bearer token moves to Original-Authorization and is signed; the body hash is signed; host is left to fetch', async () => {
  const signer = new SigV4Signer({ region: 'us-east-1', service: 'glue', credentials: KEY, now: () => WHEN });
  const body = '{"namespace":["kafka"],"properties":{}}';
  const h = await signer.sign('POST', 'http://127.0.0.1:9/v1/namespaces', { Authorization: 'Bearer tok', 'Content-Type': 'application/json', 'X-Amz-Date': '19990101T000000Z' }, body);
  assert.equal(h['original-authorization'], 'Bearer tok');
  assert.equal(h['original-x-amz-date'], '19990101T000000Z', 'a header the signer sets is relocated, not overwritten unseen');
  assert.equal(h['x-amz-date'], '20150830T123600Z');
  assert.equal(h['x-amz-content-sha256'], createHash('sha256').update(body).digest('hex'));
  assert.equal(h['host'], undefined);
  const signed = /SignedHeaders=([^,]+),/.exec(h['authorization'] ?? '')?.[1]?.split(';');
  assert.deepEqual(signed, ['content-type', 'host', 'original-authorization', 'original-x-amz-date', 'x-amz-content-sha256', 'x-amz-date']);
  const empty = await signer.sign('GET', 'http://127.0.0.1:9/v1/config', {}, undefined);
  assert.equal(empty['x-amz-content-sha256'], createHash('sha256').update('').digest('hex'), 'no body: the empty string\'s hash');
  // A different body, a different signature.
  const other = await signer.sign('POST', 'http://127.0.0.1:9/v1/namespaces', { Authorization: 'Bearer tok', 'Content-Type': 'application/json', 'X-Amz-Date': '19990101T000000Z' }, body.replace('kafka', 'kafkb'));
  assert.notEqual(other['authorization'], h['authorization']);
});

test('SigV4: without configured keys the AWS default credential chain signs (here: the environment)', async (t) => {
  const saved = { ...process.env };
  t.after(() => {
    for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });
  // The chain's first link, the environment (a profile would take precedence: none is set).
  delete process.env['AWS_PROFILE'];
  process.env['AWS_ACCESS_KEY_ID'] = 'AKIDFROMENVIRONMENT';
  process.env['AWS_SECRET_ACCESS_KEY'] = KEY.secretAccessKey;
  process.env['AWS_SESSION_TOKEN'] = 'session-from-env';
  const signer = new SigV4Signer({ region: 'us-east-1', service: 'glue', now: () => WHEN });
  const h = await signer.sign('GET', 'http://127.0.0.1:9/v1/config', { accept: 'application/json' }, undefined);
  assert.match(h['authorization'] ?? '', /^AWS4-HMAC-SHA256 Credential=AKIDFROMENVIRONMENT\/20150830\/us-east-1\/glue\/aws4_request, SignedHeaders=accept;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, /);
  assert.equal(h['x-amz-security-token'], 'session-from-env');
  // The same request signed with the same key given explicitly: the same signature.
  const explicit = await new SigV4Signer({ region: 'us-east-1', service: 'glue', credentials: { accessKeyId: 'AKIDFROMENVIRONMENT', secretAccessKey: KEY.secretAccessKey, sessionToken: 'session-from-env' }, now: () => WHEN }).sign('GET', 'http://127.0.0.1:9/v1/config', { accept: 'application/json' }, undefined);
  assert.equal(h['authorization'], explicit['authorization']);
});
