// /health and /ready through a whole start-up. The warehouse is on S3 (s3rver) behind a gate: the broker's
// second start is held inside table attach (its S3 requests wait at the closed gate), and while it is, the
// admin port already answers: /health 200, /ready 503 naming the steps still pending. Once the gate opens,
// start-up finishes and /ready answers 200. Shutdown turns readiness off first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../../broker/broker.js';
import { loadConfig } from '../../../broker/config/config.js';
import type { BrokerConfig } from '../../../broker/config/settings.js';
import { createLogger, type LogLevel } from '../../../broker/logger.js';
import { tempDir } from '../../helpers/broker.js';
import { s3WarehouseFlags, startS3Server } from '../../helpers/s3-server.js';
import { waitFor } from '../../helpers/tiered-table.js';

/** An HTTP proxy that forwards while open and holds every request while closed, until it opens again. */
async function startGate(upstream: string) {
  const target = new URL(upstream);
  let openNow = true;
  let waiting: (() => void)[] = [];
  let held = 0;
  const sockets = new Set<Socket>();
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers });
    req.pipe(up);
    up.on('error', () => req.socket.destroy());
    up.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
  };
  const server = createServer((req, res) => {
    if (openNow) return forward(req, res);
    held++;
    waiting.push(() => forward(req, res));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Requests held since the gate last closed. */
    held: () => held,
    close() {
      openNow = false;
      held = 0;
    },
    open() {
      openNow = true;
      const go = waiting;
      waiting = [];
      for (const w of go) w();
    },
    async stop() {
      const closed = once(server, 'close');
      server.close();
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

function config(flags: string[]): BrokerConfig {
  const loaded = loadConfig({ argv: flags, env: {} });
  if (loaded.help) throw new Error('unexpected --help');
  return loaded.config;
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown>; contentType: string | null }> {
  const res = await fetch(url);
  return { status: res.status, contentType: res.headers.get('content-type'), body: (await res.json()) as Record<string, unknown> };
}

test('/ready is 503 while start-up recovery runs and 200 once it is done; /health is 200 throughout', { timeout: 120_000 }, async (t) => {
  const root = await tempDir('floe-ready-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const s3 = await startS3Server();
  cleanups.push(() => s3.stop());
  const gate = await startGate(s3.endpoint);
  cleanups.push(() => gate.stop());
  const log = createLogger((process.env.FLOE_TEST_LOG_LEVEL ?? 'silent') as LogLevel);
  const cfg = config([
    '--listeners=PLAINTEXT://127.0.0.1:0',
    `--log.dirs=${join(root, 'log')}`,
    '--admin.port=0',
    '--admin.host=127.0.0.1',
    '--schema.registry.port=-1',
    '--remote.log.storage.system.enable=true',
    '--iceberg.rest.port=-1',
    ...s3WarehouseFlags(s3, { endpoint: gate.endpoint }),
  ]);

  // First run: a tiered topic with records, so that the next start has a table to attach.
  const first = await Broker.start(cfg, log);
  const kafka = (port: number) => new Kafka({ brokers: [`127.0.0.1:${port}`], clientId: 'floe-ready', logLevel: logLevel.NOTHING, retry: { retries: 2 } });
  const p1 = kafka(first.port).producer();
  await p1.connect();
  await p1.send({ topic: 'events', acks: -1, messages: [{ value: 'a' }, { value: 'b' }] });
  await p1.disconnect();
  assert.equal(first.ready, true);
  await first.stop();
  assert.equal(first.ready, false, 'a stopped broker is not ready');

  // Second run, held inside start-up by the closed gate.
  gate.close();
  const listening = new Promise<string>((resolve) => {
    const starting = Broker.start(cfg, log, { onAdminListening: resolve });
    cleanups.push(async () => {
      gate.open();
      await (await starting).stop();
    });
  });
  const adminUrl = await listening;
  await waitFor('start-up to reach the warehouse', async () => (gate.held() > 0 ? true : undefined));

  const health = await getJson(`${adminUrl}/health`);
  assert.equal(health.status, 200, '/health: the process is alive');
  assert.equal(health.contentType, 'application/json; charset=utf-8');
  assert.deepEqual(health.body, { status: 'alive' });
  const starting = await getJson(`${adminUrl}/ready`);
  assert.equal(starting.status, 503, '/ready: not before start-up is done');
  assert.equal(starting.body['status'], 'starting');
  const pending = starting.body['pending'] as string[];
  assert.ok(pending.includes('tiering-attach'), `table attach is pending (${pending.join(', ')})`);
  assert.ok(pending.includes('kafka-listener'), 'the Kafka listener is not bound yet');
  assert.ok((starting.body['done'] as string[]).includes('metadata'));
  const early = await fetch(`${adminUrl}/metrics`);
  assert.equal(early.status, 200, '/metrics answers during start-up too');
  assert.match(await early.text(), /^floe_ready 0$/m, 'and says not ready');

  gate.open();
  const broker = await waitFor('start-up to finish', async () => {
    const r = await getJson(`${adminUrl}/ready`);
    if (r.status === 503) {
      assert.equal(r.body['status'], 'starting');
      return undefined;
    }
    return r;
  });
  assert.equal(broker.status, 200);
  assert.deepEqual(broker.body, { status: 'ready', pending: [], done: ['metadata', 'log-recovery', 'groups', 'transactions', 'tiering-attach', 'kafka-listener'] });
  assert.equal((await getJson(`${adminUrl}/health`)).status, 200);
  assert.match(await (await fetch(`${adminUrl}/metrics`)).text(), /^floe_ready 1$/m);
});

test('the admin port: 404 and 405 with JSON bodies, HEAD, a port in use, and -1 turning it off', { timeout: 60_000 }, async (t) => {
  const root = await tempDir('floe-admin-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const log = createLogger('silent');
  const base = ['--listeners=PLAINTEXT://127.0.0.1:0', '--remote.log.storage.system.enable=false', '--schema.registry.port=-1', '--admin.host=127.0.0.1'];
  const b = await Broker.start(config([...base, `--log.dirs=${join(root, 'a')}`, '--admin.port=0']), log);
  cleanups.push(() => b.stop());
  const url = `http://127.0.0.1:${b.adminPort}`;
  assert.ok(b.adminPort > 0);

  const missing = await fetch(`${url}/nope?x=1`);
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get('content-type'), 'application/json; charset=utf-8');
  const body = (await missing.json()) as { error: string; message: string };
  assert.equal(body.error, 'not_found');
  assert.match(body.message, /\/metrics/, 'the 404 names the endpoints there are');
  for (const [method, path] of [['POST', '/metrics'], ['DELETE', '/ready'], ['PUT', '/health']] as const) {
    const res = await fetch(`${url}${path}`, { method, body: method === 'DELETE' ? null : 'x' });
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.equal(res.headers.get('allow'), 'GET, HEAD');
    assert.equal(((await res.json()) as { error: string }).error, 'method_not_allowed');
  }
  const head = await fetch(`${url}/metrics`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), '', 'HEAD has no body');
  const withQuery = await fetch(`${url}/ready?verbose=1`);
  assert.equal(withQuery.status, 200, 'a query string does not change the route');
  await withQuery.text();

  // The admin port of another broker in use: start-up fails and says which setting to change.
  await assert.rejects(Broker.start(config([...base, `--log.dirs=${join(root, 'b')}`, `--admin.port=${b.adminPort}`]), log), /admin\.port/);

  const off = await Broker.start(config([...base, `--log.dirs=${join(root, 'c')}`, '--admin.port=-1']), log);
  cleanups.push(() => off.stop());
  assert.equal(off.adminPort, -1, 'admin.port=-1: no admin port');
  assert.equal(off.ready, true);
});
