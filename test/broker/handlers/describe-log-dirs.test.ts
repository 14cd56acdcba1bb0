// DescribeLogDirs against a broker on a temp dir: the log dir is the real (absolute) path, each partition's
// size is the bytes of its segment files on disk, the volume's space is reported from v4, a topic filter
// leaves out what is not asked for or not there, a volume that cannot be read is KAFKA_STORAGE_ERROR, and v0
// (removed in Kafka 4) is not served.
import assert from 'node:assert/strict';
import { readdir, stat, statfs } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeLogDirsHandler } from '../../../broker/handlers/describe-log-dirs.js';
import type { HandlerContext } from '../../../broker/handlers/handler.js';
import { createLogger } from '../../../broker/logger.js';
import { startBroker } from '../../helpers/broker.js';
import { WireClient, batchOf, produceBody, type Body } from './wire-client.js';

interface Result {
  errorCode: number;
  logDir: string;
  topics: { name: string; partitions: { partitionIndex: number; partitionSize: bigint; offsetLag: bigint; isFutureKey: boolean }[] }[];
  totalBytes: bigint;
  usableBytes: bigint;
}

async function segmentBytes(dir: string): Promise<bigint> {
  let n = 0n;
  for (const f of await readdir(dir)) if (f.endsWith('.log')) n += BigInt((await stat(join(dir, f))).size);
  return n;
}

test('DescribeLogDirs reports the log dir and the on-disk size of every partition', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic('sized', 2);
  await b.broker.services.topics.createTopic('other', 1);
  const c = await WireClient.connect(b.port);
  t.after(() => c.close());
  for (let i = 0; i < 3; i++) {
    const res = await c.request(0, 9, produceBody('sized', 0, batchOf([`value-${i}`.repeat(50)])));
    assert.equal(((res.responses as Body[])[0]?.partitionResponses as Body[])[0]?.errorCode, 0);
  }

  const all = await c.request(35, 4, { topics: null });
  assert.equal(all.errorCode, 0);
  const [dir, ...more] = all.results as Result[];
  assert.ok(dir);
  assert.equal(more.length, 0, 'one log dir');
  assert.equal(dir.errorCode, 0);
  assert.equal(dir.logDir, resolve(b.dataDir));
  const sizes = Object.fromEntries(dir.topics.flatMap((tp) => tp.partitions.map((p) => [`${tp.name}-${p.partitionIndex}`, p.partitionSize])));
  assert.deepEqual(Object.keys(sizes).sort(), ['other-0', 'sized-0', 'sized-1']);
  assert.ok((sizes['sized-0'] ?? 0n) > 0n);
  for (const name of Object.keys(sizes)) assert.equal(sizes[name], await segmentBytes(join(b.dataDir, name)), `${name}: size of its segment files`);
  assert.ok(dir.topics.every((tp) => tp.partitions.every((p) => p.offsetLag === 0n && !p.isFutureKey)));
  const fs = await statfs(b.dataDir);
  assert.equal(dir.totalBytes, BigInt(fs.blocks * fs.bsize));
  assert.ok(dir.usableBytes > 0n && dir.usableBytes <= dir.totalBytes);

  const some = (await c.request(35, 4, { topics: [{ topic: 'sized', partitions: [1, 7] }, { topic: 'absent', partitions: [0] }] })).results as Result[];
  assert.deepEqual(some[0]?.topics.map((tp) => [tp.name, tp.partitions.map((p) => p.partitionIndex)]), [['sized', [1]]]);

  const v1 = (await c.request(35, 1, { topics: null })).results as Result[];
  assert.equal(v1[0]?.logDir, resolve(b.dataDir));
  assert.equal(v1[0]?.totalBytes, -1n, 'v1 has no volume space');

  assert.ok(!b.broker.router.apiVersions().some((a) => a.apiKey === 35 && a.minVersion === 0), 'v0 is not advertised');
  const v0 = await WireClient.connect(b.port);
  t.after(() => v0.close());
  await assert.rejects(v0.request(35, 0, { topics: null }), /connection closed/);
});

test('DescribeLogDirs: a volume that cannot be read is KAFKA_STORAGE_ERROR for the dir', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  const dir = { path: '/gone', volume: () => Promise.reject(new Error('ENOENT')) };
  const handler = new DescribeLogDirsHandler(b.broker.services.topics, dir, createLogger('silent'));
  const res = await handler.handle({ topics: null }, {} as HandlerContext);
  const [r] = res.results as Result[];
  assert.equal(r?.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
  assert.equal(r?.logDir, '/gone');
});
