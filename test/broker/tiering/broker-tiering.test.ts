// A tiered topic end to end in one broker: kafkajs produces (gzip, idempotent, null keys, duplicate headers,
// explicit timestamps), the segments go to the table, local retention deletes them, and kcat (librdkafka,
// CRCs checked) still reads every record from offset 0 and from offsets inside the tiered range. And a
// tiered topic whose table is still opening keeps every segment on local disk however small its local
// retention, with an external REST catalog (Floe's own REST server over a warehouse) that answers late.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, rm } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { RestCatalogServer } from '../../../iceberg/rest/server.js';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { waitFor } from '../../helpers/tiered-table.js';

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited with ${code}: ${err}`))));
  });
}

async function kcat(bootstrap: string, topic: string, offset: number): Promise<string[]> {
  const out = await run('kcat', ['-b', bootstrap, '-X', 'check.crcs=true', '-C', '-t', topic, '-p', '0', '-o', String(offset), '-e', '-q', '-Z', '-f', '%o\t%k\t%s\t%T\t%h\n']);
  return out.split('\n').filter((l) => l !== '');
}

test('a tiered topic serves consumers from the table after its local segments are deleted', async (t) => {
  const root = await tempDir('floe-warehouse-');
  const cleanups: (() => Promise<unknown>)[] = [];
  // One hook, newest first: clients and the broker stop before the folders are removed.
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const warehouse = join(root, 'wh');
  const b = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=0', '--log.retention.check.interval.ms=3600000']);
  cleanups.push(() => b.stop());
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-tiering-test', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  await admin.createTopics({
    topics: [{ topic: 'tiered', numPartitions: 1, configEntries: [
      { name: 'remote.storage.enable', value: 'true' },
      { name: 'internal.segment.bytes', value: '2048' },
      { name: 'local.retention.bytes', value: '0' },
      { name: 'iceberg.commit.interval.ms', value: '3600000' },
    ] }],
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  const T = 1_700_000_000_000;
  for (let i = 0; i < 20; i++) {
    await producer.send({
      topic: 'tiered',
      compression: i % 2 === 0 ? CompressionTypes.GZIP : CompressionTypes.None,
      messages: Array.from({ length: 5 }, (_, j) => ({
        key: j === 0 ? null : `k${i}-${j}`,
        value: `v${i}-${j}-${'x'.repeat(40)}`,
        timestamp: String(T + i * 10 + j),
        headers: { h: [`a${j}`, `b${j}`] },
      })),
    });
  }
  const before = await kcat(b.bootstrap, 'tiered', 0);
  assert.equal(before.length, 100);

  const tiering = b.broker.services.tiering;
  assert.ok(tiering, 'tiering runs');
  await tiering.drain();
  const log = b.broker.services.logs.get('tiered', 0);
  assert.ok(log);
  const deleted = await log.enforceRetention();
  assert.ok(deleted > 0, 'local segments were handed off');
  assert.ok(log.logStartOffset > 0);
  assert.equal(tiering.logStartOffset('tiered', 0, log.logStartOffset), 0);

  const offsets = await admin.fetchTopicOffsets('tiered');
  assert.equal(offsets[0]?.low, '0', 'ListOffsets earliest is the remote log start');
  assert.deepEqual(await kcat(b.bootstrap, 'tiered', 0), before);
  for (const from of [1, 7, 33, log.logStartOffset - 1]) assert.deepEqual(await kcat(b.bootstrap, 'tiered', from), before.slice(from), `from ${from}`);
});

/**
 * A proxy in front of a REST catalog. After `failNextThenHold()`, the next request for a table is answered
 * 503 at once and every one after it waits until `release()`, which forwards them all; the rest pass.
 */
async function latePassage(target: string): Promise<{ url: string; failNextThenHold(): void; release(): void; held(): number; close(): Promise<void> }> {
  let mode: 'pass' | 'fail-next' | 'hold' = 'pass';
  const waiting: (() => void)[] = [];
  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const out = request(`${target}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  };
  const server = createServer((req, res) => {
    const forTable = /\/namespaces\/[^/]+\/tables\//.test(req.url ?? '');
    if (mode === 'pass' || !forTable) return forward(req, res);
    if (mode === 'fail-next') {
      mode = 'hold';
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'the catalog is busy', type: 'ServiceUnavailableException', code: 503 } }));
      return;
    }
    req.pause();
    waiting.push(() => forward(req, res));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  assert.ok(address !== null && typeof address !== 'string');
  return {
    url: `http://127.0.0.1:${address.port}`,
    failNextThenHold: () => void (mode = 'fail-next'),
    release: () => {
      mode = 'pass';
      for (const w of waiting.splice(0)) w();
    },
    held: () => waiting.length,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

test('a tiered topic whose table is still opening keeps every segment, however small its local retention', async (t) => {
  const root = await tempDir('floe-opening-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const warehouse = join(root, 'wh');
  const io = new LocalFileIO({ root: warehouse, fsync: false });
  const rest = new RestCatalogServer({ catalog: new WarehouseCatalog({ io, warehouse: `file://${warehouse}` }), host: '127.0.0.1', port: 0 });
  const { url } = await rest.start();
  cleanups.push(() => rest.close());
  const proxy = await latePassage(url);
  cleanups.push(() => proxy.close());

  const warnings: string[] = [];
  const b = await startBroker([
    '--remote.log.storage.system.enable=true',
    '--iceberg.catalog.type=rest',
    `--iceberg.catalog.uri=${proxy.url}`,
    `--iceberg.warehouse=${warehouse}`,
    '--iceberg.rest.port=-1',
    '--log.retention.check.interval.ms=50',
  ], { warnings });
  cleanups.push(() => b.stop());
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-opening-test', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());

  // The open before the topic is visible fails at once; the open after it waits on the catalog.
  proxy.failNextThenHold();
  await admin.createTopics({
    topics: [{ topic: 'opening', numPartitions: 1, configEntries: [
      { name: 'remote.storage.enable', value: 'true' },
      { name: 'internal.segment.bytes', value: '2048' },
      { name: 'local.retention.bytes', value: '0' },
      { name: 'iceberg.commit.interval.ms', value: '100' },
    ] }],
  });
  await waitFor('the table\'s second open to wait on the catalog', async () => (proxy.held() > 0 ? true : undefined), 30_000, 20);
  const producer = kafka.producer();
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  for (let i = 0; i < 30; i++) {
    await producer.send({ topic: 'opening', acks: -1, messages: Array.from({ length: 5 }, (_, j) => ({ key: `k${i}-${j}`, value: `v${i}-${j}-${'x'.repeat(80)}` })) });
  }
  const log = b.broker.services.logs.get('opening', 0);
  assert.ok(log);
  const segments = async (): Promise<number> => (await readdir(join(b.dataDir, 'opening-0'))).filter((n) => n.endsWith('.log')).length;
  // Forty retention passes while the open waits: none may take a segment the table does not hold.
  await new Promise((r) => setTimeout(r, 2000));
  assert.ok(proxy.held() > 0, 'the open still waits on the catalog');
  assert.equal(log.logStartOffset, 0, 'no segment left the disk while the table was opening');
  assert.ok((await segments()) >= 5, 'the records span several closed segments');
  const before = await kcat(b.bootstrap, 'opening', 0);
  assert.deepEqual(before.map((l) => Number(l.split('\t')[0])), Array.from({ length: 150 }, (_, i) => i), 'kcat reads every offset from 0');

  // The catalog answers at last and refuses the table (Floe's own REST server keeps floe.owner for the tables
  // it makes itself, as Nessie 0.99 refuses Floe's partition spec): the segments still stay.
  proxy.release();
  await waitFor('the catalog\'s refusal', async () => (warnings.some((w) => w.includes('cannot open the table of a tiered topic')) ? true : undefined), 30_000);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(log.logStartOffset, 0, 'no segment left the disk after the refusal');
  assert.deepEqual(await kcat(b.bootstrap, 'opening', 0), before, 'kcat reads the same records');
});
