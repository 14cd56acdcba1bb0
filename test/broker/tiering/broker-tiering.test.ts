// A tiered topic end to end in one broker: kafkajs produces (gzip, idempotent, null keys, duplicate headers,
// explicit timestamps), the segments go to the table, local retention deletes them, and kcat (librdkafka,
// CRCs checked) still reads every record from offset 0 and from offsets inside the tiered range.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';

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
