// Every `floe` command run as a child process (the package's bin, dist/broker/cli/floe.js) against a broker
// with a tiered topic: its answer (text and --json), its --help, and its errors with their exit codes:
// 2 bad arguments, 3 broker unreachable, 4 not found, 1 refused. `floe start` starts a broker with the
// broker's flags.
import { test } from 'node:test';
import { waitFor } from '../../helpers/tiered-table.js';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { FLOE_BIN, runFloe } from '../../helpers/cli.js';

/** A port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

test('the package bin is the floe dispatcher', async () => {
  const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { bin: Record<string, string> };
  assert.equal(pkg.bin.floe, 'dist/broker/cli/floe.js');
  const help = await runFloe(['--help']);
  assert.equal(help.code, 0);
  for (const c of ['topics', 'tables', 'table status', 'table compact', 'table expire', 'table hide', 'table rollback', 'table rebuild', 'config get', 'config set']) assert.ok(help.stdout.includes(`floe ${c}`), c);
  assert.match(help.stdout, /Exit codes: 0 ok, 1 .*, 2 bad arguments, 3 broker unreachable, 4 not found/);
  const unknown = await runFloe(['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command 'frobnicate'/);
  const start = await runFloe(['start', '--help']);
  assert.equal(start.code, 0);
  assert.match(start.stdout, /Starts a Floe broker/);
  const badFlag = await runFloe(['--num.partitions=lots']);
  assert.equal(badFlag.code, 2, 'broker flags work without the word start, with the broker\'s exit code');
  assert.match(badFlag.stderr, /num\.partitions must be a whole number/);
});

test('floe start runs the broker with its flags', { timeout: 60_000 }, async (t) => {
  const dir = await tempDir('floe-cli-start-');
  const child = spawn(process.execPath, [FLOE_BIN, 'start', '--listeners=PLAINTEXT://127.0.0.1:0', `--log.dirs=${dir}`, '--admin.port=0', '--admin.host=127.0.0.1', '--remote.log.storage.system.enable=false', '--schema.registry.port=-1', '--log.level=info'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(async () => {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const adminUrl = await waitFor('the broker to start', async () => {
    if (child.exitCode !== null) throw new Error(`floe start exited ${child.exitCode}: ${out}`);
    const m = /"msg":"admin HTTP started"[^\n]*"url":"(http:\/\/[^"]+)"/.exec(out);
    return m && out.includes('"msg":"broker started"') ? m[1] : undefined;
  });
  const topics = await runFloe(['topics', '--json', '--admin-url', adminUrl ?? '']);
  assert.equal(topics.code, 0, topics.stderr);
  assert.deepEqual(JSON.parse(topics.stdout), { topics: [] });
  child.kill('SIGTERM');
  assert.equal(await exited, 0, 'SIGTERM stops it gracefully');
});

test('every admin command against a broker, with its errors and exit codes', { timeout: 180_000 }, async (t) => {
  const root = await tempDir('floe-cli-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const b = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=-1', '--iceberg.commit.interval.ms=500']);
  cleanups.push(() => b.stop());
  const url = b.adminUrl ?? '';
  const env = { FLOE_ADMIN_URL: url };
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-cli', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2, configEntries: [{ name: 'internal.segment.bytes', value: '2048' }] }] });
  const producer = kafka.producer();
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  for (let round = 0; round < 4; round++) {
    await producer.send({ topic: 'orders', messages: Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `v${round}-${i}`.padEnd(100, '.') })) });
  }
  await waitFor('the table to hold every record', async () => {
    const r = await runFloe(['tables', '--json'], env);
    const list = (JSON.parse(r.stdout) as { tables: { records: number; lagRecords: number }[] }).tables;
    return list[0]?.records === 80 && list[0].lagRecords === 0 ? true : undefined;
  });

  // floe topics / tables / table status, as text and JSON; --admin-url wins over FLOE_ADMIN_URL.
  const topics = await runFloe(['topics', '--admin-url', url], { FLOE_ADMIN_URL: 'http://127.0.0.1:1' });
  assert.equal(topics.code, 0, topics.stderr);
  assert.match(topics.stdout, /^topic\s+partitions\s+tiered\s+lag records\s+lag ms\norders\s+2\s+yes\s+0\s+\d+\n$/);
  const tables = await runFloe(['tables'], env);
  assert.equal(tables.code, 0);
  assert.match(tables.stdout, /\nkafka\.orders\s+orders\s+80\s+\d+\s+0\s+\d+\s+\S+\s+0\s+\d+\n$/);
  const status = await runFloe(['table', 'status', 'kafka.orders'], env);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /^table kafka\.orders \(topic orders\)\n  records 80 in \d+ data files/);
  assert.match(status.stdout, /\n  quality: \d+ records\/min \(hour median (\d+|-)\); null keys (\S+%|-) \(hour (\S+%|-)\); null values (\S+%|-) \(hour (\S+%|-)\)\n/);
  assert.match(status.stdout, /\n0\s+40\s+\d+\s+\d+\s+39\s+0\s+\d+\n1\s+40\s+\d+\s+\d+\s+39\s+0\s+\d+\n/, 'one line per partition with its committed offset');
  assert.match(status.stdout, /\n\d+\s+\S+\s+\S+\s+0:39 1:39\s+current\n/, 'the current snapshot with its offsets');
  const statusJson = JSON.parse((await runFloe(['table', 'status', 'orders', '--json'], env)).stdout) as { table: string; snapshots: unknown[] };
  assert.equal(statusJson.table, 'kafka.orders');

  // compact (progress only on a TTY: none here) and expire, with summaries.
  const before = (JSON.parse((await runFloe(['table', 'status', 'orders', '--json'], env)).stdout) as { dataFiles: number }).dataFiles;
  assert.ok(before > 2);
  const compact = await runFloe(['table', 'compact', 'orders', '--min-input-files', '2'], env);
  assert.equal(compact.code, 0, compact.stderr);
  assert.match(compact.stdout, new RegExp(`^compacted 2 of 2 partitions of kafka\\.orders: ${before} files into 2, \\d+ bytes read in [\\d.]+ s\\n$`));
  assert.equal(compact.stderr, '', 'no progress line when stderr is not a terminal');
  const one = await runFloe(['table', 'compact', 'orders', '--partition', '0', '--json'], env);
  assert.equal(one.code, 0);
  assert.deepEqual((JSON.parse(one.stdout) as { results: { partition: number; status: string }[] }).results.map((r) => [r.partition, r.status]), [[0, 'nothing-to-do']]);
  const expire = await runFloe(['table', 'expire', 'orders'], env);
  assert.equal(expire.code, 0, expire.stderr);
  assert.match(expire.stdout, /^expired \d+ snapshots of orders: \d+ files deleted, \d+ left for the next run \(in use\), \d+ orphans removed\n$/);

  // config get / set.
  const all = await runFloe(['config', 'get', 'orders'], env);
  assert.equal(all.code, 0);
  assert.match(all.stdout, /\ninternal\.segment\.bytes\s+2048\s+topic\n/);
  assert.match(all.stdout, /\nretention\.ms\s+\d+\s+default\n/);
  const single = await runFloe(['config', 'get', 'orders', 'internal.segment.bytes'], env);
  assert.deepEqual([single.code, single.stdout], [0, '2048\n']);
  const set = await runFloe(['config', 'set', 'orders', 'retention.ms=86400000', 'iceberg.compaction.min.input.files=3'], env);
  assert.equal(set.code, 0, set.stderr);
  assert.equal(set.stdout, 'updated orders: retention.ms=86400000, iceberg.compaction.min.input.files=3\n');
  const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: 'orders', configNames: ['retention.ms'] }] });
  assert.equal(described.resources[0]?.configEntries[0]?.configValue, '86400000', 'a Kafka client sees it');
  const validate = await runFloe(['config', 'set', 'orders', 'retention.ms=1000', '--validate-only'], env);
  assert.equal(validate.code, 0);
  assert.equal((await runFloe(['config', 'get', 'orders', 'retention.ms'], env)).stdout, '86400000\n', 'validate-only changes nothing');
  const del = await runFloe(['config', 'set', 'orders', '--delete', 'iceberg.compaction.min.input.files'], env);
  assert.equal(del.code, 0, del.stderr);
  assert.match((await runFloe(['config', 'get', 'orders'], env)).stdout, /\niceberg\.compaction\.min\.input\.files\s+5\s+default\n/);
  const invalid = await runFloe(['config', 'set', 'orders', 'retention.ms=soon'], env);
  assert.equal(invalid.code, 1, 'an invalid value is refused by the broker');
  assert.match(invalid.stderr, /retention\.ms/);

  // Not found: exit 4.
  for (const args of [['table', 'status', 'kafka.nope'], ['table', 'compact', 'nope'], ['table', 'expire', 'nope'], ['table', 'hide', 'nope', '--partition', '0', '--from-offset', '0', '--to-offset', '1'], ['table', 'rollback', 'nope', '--to-snapshot', '1'], ['config', 'get', 'nope'], ['config', 'set', 'nope', 'retention.ms=1'], ['config', 'get', 'orders', 'no.such.key'], ['table', 'compact', 'orders', '--partition', '9']]) {
    const r = await runFloe(args, env);
    assert.equal(r.code, 4, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^floe /);
  }
  const rollbackUnknown = await runFloe(['table', 'rollback', 'orders', '--to-snapshot', '12345'], env);
  assert.equal(rollbackUnknown.code, 4, 'an unknown snapshot');
  assert.match(rollbackUnknown.stderr, /no snapshot 12345/);

  // Bad arguments: exit 2, with the usage line.
  for (const args of [['table', 'status'], ['table', 'status', 'a', 'b'], ['table'], ['table', 'frob', 'x'], ['topics', '--bogus'], ['table', 'hide', 'orders', '--partition', '0', '--from-offset', '5'], ['table', 'hide', 'orders', '--partition', 'x', '--from-offset', '0', '--to-offset', '1'], ['table', 'hide', 'orders', '--partition', '0', '--from-offset', '5', '--to-offset', '1'], ['table', 'rollback', 'orders'], ['table', 'rollback', 'orders', '--to-snapshot', 'abc'], ['config', 'set', 'orders'], ['config', 'set', 'orders', 'novalue'], ['config', 'get'], ['table', 'compact', 'orders', '--partition'], ['topics', '--admin-url', 'not a url']]) {
    const r = await runFloe(args, env);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /usage: floe|give a subcommand|not a URL/, args.join(' '));
  }

  // --help for every command: exit 0, its options and the exit codes; no broker needed.
  for (const words of [['topics'], ['tables'], ['table', 'status'], ['table', 'compact'], ['table', 'expire'], ['table', 'hide'], ['table', 'rollback'], ['config', 'get'], ['config', 'set']]) {
    const r = await runFloe([...words, '--help'], { FLOE_ADMIN_URL: 'http://127.0.0.1:1' });
    assert.equal(r.code, 0, words.join(' '));
    assert.ok(r.stdout.startsWith(`floe ${words.join(' ')}`), words.join(' '));
    assert.match(r.stdout, /--admin-url/);
    assert.match(r.stdout, /Exit codes:/);
  }

  // Broker down: exit 3, for every command.
  const down = `http://127.0.0.1:${await deadPort()}`;
  for (const args of [['topics'], ['tables'], ['table', 'status', 'orders'], ['table', 'compact', 'orders'], ['table', 'expire', 'orders'], ['table', 'hide', 'orders', '--partition', '0', '--from-offset', '0', '--to-offset', '1'], ['table', 'rollback', 'orders', '--to-snapshot', '1'], ['config', 'get', 'orders'], ['config', 'set', 'orders', 'retention.ms=1']]) {
    const r = await runFloe([...args, '--admin-url', down]);
    assert.equal(r.code, 3, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /no Floe broker answers at/);
  }
  const notAdmin = await runFloe(['topics', '--admin-url', `${url}/elsewhere`]);
  assert.equal(notAdmin.code, 1, 'a URL that is not an admin port');
});
