// max.connections.per.ip and its overrides: parsing as Kafka's config does, the per-address count shared by
// every listener, hostnames resolved at start, and a broker that closes the connection one past the limit
// at once (before reading a byte), counts it in floe_connections_refused_total, and takes new connections
// again once one closes.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { test } from 'node:test';
import { loadConfig } from '../../../broker/config/config.js';
import { ConnectionLimits, normalizeAddress, parseConnectionOverrides, resolveConnectionOverrides } from '../../../broker/server/connection-limits.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { startBroker } from '../../helpers/broker.js';
import { WireClient, batchOf, firstPartition, produceBody } from '../handlers/wire-client.js';

test('overrides parse as host:count pairs; bad entries and a zero limit without overrides are refused at start', async () => {
  assert.deepEqual([...parseConnectionOverrides(' 127.0.0.1:5, ci-runner:50,[::1]:7 ').overrides], [['127.0.0.1', 5], ['ci-runner', 50], ['::1', 7]]);
  assert.equal(normalizeAddress('::ffff:10.1.2.3'), '10.1.2.3');
  for (const bad of ['127.0.0.1', 'host:-1', ':5', 'host:many']) {
    assert.throws(() => loadConfig({ argv: [`--max.connections.per.ip.overrides=${bad}`], env: {} }), /max\.connections\.per\.ip\.overrides: .* is not host:count/, bad);
  }
  assert.throws(() => loadConfig({ argv: ['--max.connections.per.ip=0'], env: {} }), /max\.connections\.per\.ip can be 0 only with max\.connections\.per\.ip\.overrides/);
  assert.throws(() => loadConfig({ argv: ['--max.connections.per.ip=-1'], env: {} }), /max\.connections\.per\.ip must be at least 0/);
  const ok = loadConfig({ argv: ['--max.connections.per.ip=0', '--max.connections.per.ip.overrides=127.0.0.1:2'], env: {} });
  assert.ok(!ok.help && ok.config['max.connections.per.ip'] === 0);

  const resolved = await resolveConnectionOverrides(new Map([['10.0.0.9', 3], ['app-host', 4]]), async (h) => (h === 'app-host' ? ['10.0.0.1', '::ffff:10.0.0.2'] : []));
  assert.deepEqual([...resolved], [['10.0.0.9', 3], ['10.0.0.1', 4], ['10.0.0.2', 4]]);
  await assert.rejects(resolveConnectionOverrides(new Map([['nowhere', 1]]), async () => Promise.reject(new Error('ENOTFOUND'))), /names nowhere, which does not resolve/);
});

test('the count is per address and across listeners; a slot comes back when its connection closes', () => {
  const limits = new ConnectionLimits(2, new Map([['10.0.0.5', 0]]));
  assert.ok(limits.tryAcquire('10.0.0.1', 'A'));
  assert.ok(limits.tryAcquire('::ffff:10.0.0.1', 'B'), 'the same client through a dual-stack socket on another listener');
  assert.ok(!limits.tryAcquire('10.0.0.1', 'B'));
  assert.ok(limits.tryAcquire('10.0.0.2', 'A'), 'another address has its own count');
  assert.ok(!limits.tryAcquire('10.0.0.5', 'A'), 'an override of 0 refuses that address');
  limits.release('10.0.0.1');
  assert.ok(limits.tryAcquire('10.0.0.1', 'A'));
  assert.deepEqual([...limits.refused()], [['B', 1], ['A', 1]]);
});

async function raw(port: number): Promise<{ sock: Socket; closedBy: Promise<boolean> }> {
  const sock = connect(port, '127.0.0.1');
  sock.on('error', () => undefined);
  await once(sock, 'connect');
  const closedBy = Promise.race([once(sock, 'close').then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 1500))]);
  return { sock, closedBy };
}

test('a broker with max.connections.per.ip=3 closes the fourth connection from 127.0.0.1 at once and counts it', async (t) => {
  const b = await startBroker(['--max.connections.per.ip=3', '--num.partitions=1']);
  t.after(() => b.stop());
  const clients = [await WireClient.connect(b.port), await WireClient.connect(b.port), await WireClient.connect(b.port)];
  t.after(() => clients.forEach((c) => c.close()));
  for (const c of clients) assert.equal(firstPartition(await c.request(0, 9, produceBody('limits', 0, batchOf(['x'])))).errorCode, ErrorCode.NONE);
  const fourth = await raw(b.port);
  assert.equal(await fourth.closedBy, true, 'the fourth connection is closed by the broker');
  clients.pop()?.close();
  // The slot comes back once the broker has seen the close.
  let accepted: number | undefined;
  for (let i = 0; i < 50 && accepted === undefined; i++) {
    const again = await WireClient.connect(b.port);
    try {
      accepted = firstPartition(await again.request(0, 9, produceBody('limits', 0, batchOf(['y'])))).errorCode;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      again.close();
    }
  }
  assert.equal(accepted, ErrorCode.NONE, 'a new connection is served after one closed');
  assert.ok(b.adminUrl);
  const metrics = await (await fetch(`${b.adminUrl}/metrics`)).text();
  const refused = /^floe_connections_refused_total\{listener="PLAINTEXT"\} (\d+)$/m.exec(metrics);
  assert.ok(refused && Number(refused[1]) >= 1, `refusals are counted:\n${metrics.split('\n').filter((l) => l.includes('refused')).join('\n')}`);
});
