// The README's "Status page and the floe CLI" and "Recovery runbook" sections, run: each line of their sh
// blocks runs verbatim in sh, with `floe` on the PATH (a shim for dist/broker/cli/floe.js), FLOE_ADMIN_URL
// pointing at a test broker and localhost:9644 replaced by its admin port. Every line must exit 0, or the
// code its `# exits N` comment says; the runbook's lines change the table as the section describes.
import { test } from 'node:test';
import { waitFor } from '../../helpers/tiered-table.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { FLOE_BIN } from '../../helpers/cli.js';

const run = promisify(execFile);

async function block(title: string): Promise<string[]> {
  const readme = await readFile('README.md', 'utf8');
  const section = new RegExp(`\\n## ${title}\\n([\\s\\S]*?)\\n## `).exec(readme)?.[1];
  assert.ok(section, `README.md has a section "${title}"`);
  const sh = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(sh, `"${title}" has an sh block`);
  return sh.split('\n').filter((l) => l.trim() !== '');
}

test('the README\'s floe CLI and recovery runbook commands work as documented', { timeout: 180_000 }, async (t) => {
  const root = await tempDir('floe-readme-cli-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const b = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=-1', '--iceberg.commit.interval.ms=500']);
  cleanups.push(() => b.stop());
  const adminUrl = b.adminUrl ?? '';
  await writeFile(join(root, 'floe'), `#!/bin/sh\nexec "${process.execPath}" "${FLOE_BIN}" "$@"\n`);
  await chmod(join(root, 'floe'), 0o755);
  const env: NodeJS.ProcessEnv = { PATH: `${root}:${process.env.PATH ?? ''}`, FLOE_ADMIN_URL: adminUrl };
  const sh = async (line: string): Promise<{ code: number; stdout: string; stderr: string }> => {
    try {
      const { stdout, stderr } = await run('sh', ['-c', line.replaceAll('localhost:9644', adminUrl.replace(/^http:\/\//, ''))], { env });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  };
  const expected = (line: string) => Number(/# exits (\d+)/.exec(line)?.[1] ?? 0);

  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-readme-cli', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2, configEntries: [{ name: 'internal.segment.bytes', value: '1024' }] }, { topic: 'payments', numPartitions: 1, configEntries: [{ name: 'internal.segment.bytes', value: '1024' }] }] });
  const producer = kafka.producer();
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  for (let i = 0; i < 40; i += 10) await producer.send({ topic: 'orders', messages: Array.from({ length: 10 }, (_, j) => ({ partition: j % 2, value: `order-${i + j}`.padEnd(60, '.') })) });
  for (let i = 0; i < 120; i += 10) await producer.send({ topic: 'payments', messages: Array.from({ length: 10 }, (_, j) => ({ value: (i >= 50 && i < 60 ? `<<bad ${i + j}>>` : `{"amount":${i + j}}`).padEnd(60, ' ') })) });
  const table = async (name: string) => JSON.parse((await sh(`floe table status ${name} --json`)).stdout) as { records: number; lagRecords: number; deleteFiles: number; snapshots: { snapshotId: string; current: boolean; committedOffsets: Record<string, number> }[] };
  await waitFor('both tables committed', async () => {
    const [o, p] = [await table('orders'), await table('payments')];
    return o.records === 40 && o.lagRecords === 0 && p.records === 120 && p.lagRecords === 0 ? true : undefined;
  });

  for (const line of await block('Status page and the floe CLI')) {
    const r = await sh(line);
    assert.equal(r.code, expected(line), `${line}: ${r.stderr}`);
    assert.notEqual(r.stdout, '', line);
  }
  assert.equal((await sh('floe config get orders retention.ms')).stdout, '604800000\n', 'the README\'s config set took effect');

  const payments = await table('payments');
  env.BEFORE_HIDE = payments.snapshots.find((s) => s.current)?.snapshotId ?? '';
  env.BEFORE_DEPLOY = payments.snapshots.find((s) => (s.committedOffsets['0'] ?? -1) < 50)?.snapshotId ?? '';
  assert.ok(env.BEFORE_HIDE !== '' && env.BEFORE_DEPLOY !== '', 'the table has a snapshot from before the bad records');
  const lines = await block('Recovery runbook');
  for (const line of lines) {
    const r = await sh(line);
    assert.equal(r.code, expected(line), `${line}: ${r.stderr}`);
  }
  assert.ok(lines.some((l) => expected(l) === 1), 'the runbook shows a refused rollback');
  assert.ok((await table('payments')).deleteFiles >= 1, 'the bad range ends hidden');
});
