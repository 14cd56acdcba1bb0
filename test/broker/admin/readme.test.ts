// The README's "Metrics and health" section, run: its sh block is executed line by line with curl against
// a broker (localhost:9644 replaced by the test broker's admin port), each answer is checked, and the
// metric tables list exactly the floe_* families /metrics exposes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { parsePrometheus } from './scrape.js';

const run = promisify(execFile);

async function section(): Promise<string> {
  const readme = await readFile('README.md', 'utf8');
  const m = /\n## Metrics and health\n([\s\S]*?)\n## /.exec(readme);
  assert.ok(m?.[1], 'README.md has a section "Metrics and health"');
  return m[1];
}

test('the README\'s metrics commands work as documented and its tables list every floe_ metric', { timeout: 120_000 }, async (t) => {
  const text = await section();
  const block = /```sh\n([\s\S]*?)```/.exec(text)?.[1];
  assert.ok(block, 'the section has an sh block');
  const commands = block.split('\n').filter((l) => l.trim() !== '');
  assert.deepEqual(commands, ['curl -s localhost:9644/health', 'curl -s localhost:9644/ready', 'curl -s localhost:9644/metrics'], 'the README\'s commands are the ones tested here');

  const root = await tempDir('floe-readme-metrics-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const b = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=-1']);
  cleanups.push(() => b.stop());
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-readme-metrics', logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  await producer.send({ topic: 'orders', acks: -1, messages: [{ key: 'k1', value: 'v1' }, { key: 'k2', value: 'v2' }] });
  await b.broker.services.logs.get('orders', 0)?.roll();
  await b.broker.services.tiering?.drain();

  const outputs: string[] = [];
  for (const line of commands) {
    const { stdout } = await run('sh', ['-c', line.replaceAll('localhost:9644', `127.0.0.1:${b.broker.adminPort}`)]);
    outputs.push(stdout);
  }
  assert.deepEqual(JSON.parse(outputs[0] ?? ''), { status: 'alive' });
  assert.equal((JSON.parse(outputs[1] ?? '') as { status: string }).status, 'ready');
  const exposition = outputs[2] ?? '';
  const families = await parsePrometheus(exposition);
  assert.ok(families.some((f) => f.name === 'floe_partition_freshness_lag_records'));

  // Every floe_ family in the exposition is in the README's tables, and every one documented is exposed.
  const exposed = new Set([...exposition.matchAll(/^# TYPE (floe_[a-z_]+) /gm)].map((m) => m[1] as string));
  // The data-quality families are documented with the status page that shows them.
  const status = /\n## Status page and the floe CLI\n([\s\S]*?)\n## /.exec(await readFile('README.md', 'utf8'))?.[1] ?? '';
  const documented = new Set([...`${text}\n${status}`.matchAll(/`(floe_[a-z_]+)`/g)].map((m) => m[1] as string));
  assert.deepEqual([...exposed].filter((n) => !documented.has(n)).sort(), [], 'exposed but not in the README');
  assert.deepEqual([...documented].filter((n) => !exposed.has(n)).sort(), [], 'in the README but not exposed');
});
