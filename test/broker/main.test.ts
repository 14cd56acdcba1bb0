/**
 * The process entry point, run exactly as `npm start` runs it (`node dist/broker/main.js` after the build),
 * so the README's start command is backed by a test: it starts with embedded defaults plus a free port,
 * serves a real client, and stops cleanly on SIGTERM; --help and bad configuration exit with clear output.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { spawnBroker, tempDir } from '../helpers/broker.js';

const run = promisify(execFile);

test('npm start runs the compiled entry point', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  assert.equal(pkg.scripts.start, 'npm run build && node dist/broker/main.js');
});

test('the broker starts, serves a client, and exits 0 on SIGTERM with its data kept', async (t) => {
  const dir = await tempDir();
  t.after(() => rm(dir, { recursive: true, force: true }));
  const first = await spawnBroker(dir);
  t.after(() => first.child.kill('SIGKILL'));
  const kafka = new Kafka({ brokers: [first.bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: 'start-test', messages: [{ key: 'k', value: 'v1' }, { value: 'v2' }] });
  await producer.disconnect();
  first.child.kill('SIGTERM');
  assert.equal(await first.exited, 0, first.output());
  assert.match(first.output(), /"msg":"broker stopped"/);

  const second = await spawnBroker(dir);
  t.after(() => second.child.kill('SIGKILL'));
  const admin = new Kafka({ brokers: [second.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets('start-test');
  await admin.disconnect();
  assert.deepEqual(
    offsets.map((o) => [o.partition, o.low, o.high]),
    [[0, '0', '2']],
  );
  second.child.kill('SIGTERM');
  assert.equal(await second.exited, 0);
});

test('--help prints every setting; a bad setting exits 2 naming it', async () => {
  const help = await run(process.execPath, ['dist/broker/main.js', '--help']);
  assert.match(help.stdout, /Usage: floe/);
  assert.match(help.stdout, /--log\.dirs/);
  await assert.rejects(run(process.execPath, ['dist/broker/main.js', '--num.partitions=lots']), (err: { code?: number; stderr?: string }) => {
    assert.equal(err.code, 2);
    assert.match(err.stderr ?? '', /num\.partitions must be a whole number, got 'lots'/);
    return true;
  });
});
