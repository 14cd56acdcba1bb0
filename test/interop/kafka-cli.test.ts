// Apache Kafka's command-line tools (kafka-tools 4.4.0 from Maven Central) against Floe: every command of the
// README's "Apache Kafka's command-line tools" block runs here, in the README's order, each in its own JVM,
// and is checked for what an operator expects: its output, and its effect on the broker seen through another
// client (kafkajs's admin, kcat), the broker's metadata or the files on disk. The test fails if the README's block and the
// commands below differ, so the README lists exactly what is tested.
import assert from 'node:assert/strict';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { startBroker, tempDir, type TestBroker } from '../helpers/broker.js';
import { storedBatches } from './clients/broker-view.js';
import { runKafkaScript, type ToolRun } from './clients/kafka-cli.js';
import { KcatClient } from './clients/kcat.js';

const BS = '--bootstrap-server localhost:9092';
const ORDERS_TXT = ['k1:v1', 'k2:v2', 'k3:v3', 'k4:v4', 'k5:v5', 'k6:v6'].join('\n') + '\n';
const DELETE_JSON = '{"version":1,"partitions":[{"topic":"orders","partition":0,"offset":2}]}';

interface Env {
  readonly broker: TestBroker;
  readonly admin: Admin;
  /** Reads by partition and offset without a group (kcat), so the groups the tools list are only theirs. */
  readonly reader: KcatClient;
  /** What the console producer wrote, as kcat read it: partition -> [key, value] in offset order. */
  readonly produced: Map<number, [string, string][]>;
}

type Check = (run: ToolRun, env: Env) => Promise<void>;

const lines = (s: string): string[] => s.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '');
/** The rows of a consumer-groups table whose first column is the group, split on runs of spaces. */
const rows = (s: string, group: string): string[][] => lines(s).filter((l) => l.startsWith(`${group} `)).map((l) => l.trim().split(/\s{2,}|\s+/));

async function endOffsets(env: Env): Promise<Map<number, { low: number; high: number }>> {
  const offs = await env.admin.fetchTopicOffsets('orders');
  return new Map(offs.map((o) => [o.partition, { low: Number(o.low), high: Number(o.high) }]));
}

async function committed(env: Env): Promise<Map<number, number>> {
  const [t] = await env.admin.fetchOffsets({ groupId: 'orders-reader', topics: ['orders'] });
  return new Map((t?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
}

async function segmentBytes(dir: string): Promise<number> {
  let n = 0;
  for (const f of await readdir(dir)) if (f.endsWith('.log')) n += (await stat(join(dir, f))).size;
  return n;
}

/** The README's commands, in its order, each with what the operator must see. */
const COMMANDS: readonly (readonly [string, Check])[] = [
  [`kafka-topics.sh ${BS} --create --topic orders --partitions 3 --config retention.ms=86400000`, async (run, env) => {
    assert.equal(run.stdout.trim(), 'Created topic orders.');
    const md = await env.admin.fetchTopicMetadata({ topics: ['orders'] });
    assert.equal(md.topics[0]?.partitions.length, 3);
    assert.deepEqual(env.broker.broker.services.metadata.getTopic('orders')?.configs, { 'retention.ms': '86400000' });
  }],
  [`kafka-topics.sh ${BS} --list`, async (run, env) => {
    assert.deepEqual(lines(run.stdout), ['orders']);
    assert.deepEqual(await env.admin.listTopics(), ['orders']);
  }],
  [`kafka-topics.sh ${BS} --describe --topic orders`, async (run, env) => {
    const [head, ...parts] = lines(run.stdout);
    const m = /^Topic: orders\tTopicId: (\S+)\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: (.*)$/.exec(head ?? '');
    assert.ok(m, `summary line: ${head}`);
    assert.equal(m[1], env.broker.broker.services.metadata.getTopic('orders')?.id.toString('base64url'));
    assert.equal(m[2], 'retention.ms=86400000', 'the topic\'s own config, and no default');
    const node = env.broker.broker.services.identity.nodeId;
    assert.deepEqual(parts.map((l) => l.split('\t').slice(1, 6).join('\t')), [0, 1, 2].map((p) => `Topic: orders\tPartition: ${p}\tLeader: ${node}\tReplicas: ${node}\tIsr: ${node}`));
  }],
  [`kafka-topics.sh ${BS} --alter --topic orders --partitions 4`, async (_run, env) => {
    const md = await env.admin.fetchTopicMetadata({ topics: ['orders'] });
    assert.equal(md.topics[0]?.partitions.length, 4);
  }],
  [`kafka-configs.sh ${BS} --entity-type topics --entity-name orders --alter --add-config retention.ms=3600000,segment.bytes=1048576`, async (run, env) => {
    assert.equal(run.stdout.trim(), 'Completed updating config for topic orders.');
    const seen = await env.admin.describeConfigs({ resources: [{ type: 2, name: 'orders', configNames: ['retention.ms', 'segment.bytes'] }], includeSynonyms: false });
    const values = Object.fromEntries((seen.resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]));
    assert.deepEqual(values, { 'retention.ms': '3600000', 'segment.bytes': '1048576' });
  }],
  [`kafka-configs.sh ${BS} --entity-type topics --entity-name orders --alter --delete-config segment.bytes`, async (run, env) => {
    assert.equal(run.stdout.trim(), 'Completed updating config for topic orders.');
    assert.deepEqual(env.broker.broker.services.metadata.getTopic('orders')?.configs, { 'retention.ms': '3600000' });
  }],
  [`kafka-configs.sh ${BS} --entity-type topics --entity-name orders --describe`, async (run) => {
    const [head, ...configs] = lines(run.stdout);
    assert.equal(head, 'Dynamic configs for topic orders are:');
    assert.equal(configs.length, 1, run.stdout);
    assert.ok(configs[0]?.startsWith('  retention.ms=3600000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=3600000'), configs[0]);
  }],
  [`kafka-console-producer.sh ${BS} --topic orders --reader-property parse.key=true --reader-property key.separator=: --compression-codec gzip < orders.txt`, async (run, env) => {
    assert.equal(run.stdout.trim(), '');
    const ends = await endOffsets(env);
    let total = 0;
    for (const [p, { high }] of ends) {
      if (high === 0) continue;
      const got = await env.reader.consume('orders', p, 0, high);
      env.produced.set(p, got.map((r) => [r.key?.toString() ?? '', r.value?.toString() ?? '']));
      total += got.length;
      const batches = await storedBatches(env.broker.port, 'orders', p);
      assert.ok(batches.every((b) => b.codec === 'gzip'), `partition ${p} stored ${batches.map((b) => b.codec).join(',')}`);
    }
    assert.equal(total, 6);
    const all = [...env.produced.values()].flat().sort((a, b) => a[0].localeCompare(b[0]));
    assert.deepEqual(all, lines(ORDERS_TXT).map((l) => l.split(':')));
    // Within a partition, the input's order.
    for (const recs of env.produced.values()) assert.deepEqual(recs.map((r) => r[0]), [...recs.map((r) => r[0])].sort());
  }],
  [`kafka-console-consumer.sh ${BS} --topic orders --group orders-reader --from-beginning --max-messages 6 --formatter-property print.key=true --formatter-property print.partition=true`, async (run, env) => {
    const want = [...env.produced].flatMap(([p, recs]) => recs.map(([k, v]) => `Partition:${p}\t${k}\t${v}`));
    assert.deepEqual(lines(run.stdout).sort(), want.sort());
    assert.match(run.stderr, /Processed a total of 6 messages/);
    const ends = await endOffsets(env);
    const offsets = await committed(env);
    for (const [p, recs] of env.produced) assert.equal(offsets.get(p), ends.get(p)?.high, `partition ${p} (${recs.length} records) committed at its end`);
  }],
  [`kafka-consumer-groups.sh ${BS} --list`, async (run, env) => {
    assert.deepEqual(lines(run.stdout), ['orders-reader']);
    assert.deepEqual((await env.admin.listGroups()).groups.map((g) => g.groupId), ['orders-reader']);
  }],
  [`kafka-consumer-groups.sh ${BS} --describe --group orders-reader`, async (run, env) => {
    assert.match(run.stdout + run.stderr, /Consumer group 'orders-reader' has no active members\./);
    const ends = await endOffsets(env);
    const offsets = await committed(env);
    const table = rows(run.stdout, 'orders-reader').map((r) => r.slice(0, 6));
    const want = [...offsets].filter(([, o]) => o >= 0).sort((a, b) => a[0] - b[0]).map(([p, o]) => ['orders-reader', 'orders', String(p), String(o), String(ends.get(p)?.high), String((ends.get(p)?.high ?? 0) - o)]);
    assert.deepEqual(table, want);
    assert.ok(table.some((r) => Number(r[3]) > 0), 'some partition has a committed offset past 0');
  }],
  [`kafka-consumer-groups.sh ${BS} --describe --group orders-reader --state`, async (run, env) => {
    const [row] = rows(run.stdout, 'orders-reader');
    assert.ok(row, run.stdout);
    assert.deepEqual([row[0], row[1], row[2], row.at(-2), row.at(-1)], ['orders-reader', `127.0.0.1:${env.broker.port}`, `(${env.broker.broker.services.identity.nodeId})`, 'Empty', '0']);
  }],
  [`kafka-consumer-groups.sh ${BS} --reset-offsets --group orders-reader --topic orders --to-earliest --execute`, async (run, env) => {
    const table = rows(run.stdout, 'orders-reader');
    assert.deepEqual(table.map((r) => r[3]), ['0', '0', '0', '0'], run.stdout);
    assert.deepEqual([...(await committed(env))].sort((a, b) => a[0] - b[0]), [[0, 0], [1, 0], [2, 0], [3, 0]]);
  }],
  [`kafka-consumer-groups.sh ${BS} --delete-offsets --group orders-reader --topic orders:3`, async (run, env) => {
    assert.match(run.stdout, /Request succeeded for deleting offsets from group orders-reader\./);
    assert.match(run.stdout, /orders\s+3\s+Successful/);
    assert.deepEqual([...(await committed(env))].sort((a, b) => a[0] - b[0]), [[0, 0], [1, 0], [2, 0], [3, -1]]);
  }],
  [`kafka-consumer-groups.sh ${BS} --delete --group orders-reader`, async (run, env) => {
    assert.equal(run.stdout.trim(), "Deletion of requested consumer groups ('orders-reader') was successful.");
    assert.deepEqual((await env.admin.listGroups()).groups, []);
  }],
  [`kafka-get-offsets.sh ${BS} --topic orders`, async (run, env) => {
    const ends = await endOffsets(env);
    assert.deepEqual(lines(run.stdout), [0, 1, 2, 3].map((p) => `orders:${p}:${ends.get(p)?.high}`));
  }],
  [`kafka-delete-records.sh ${BS} --offset-json-file delete.json`, async (run, env) => {
    assert.ok((env.produced.get(0)?.length ?? 0) >= 2, 'partition 0 has the records to delete');
    assert.match(run.stdout, /partition: orders-0\tlow_watermark: 2/);
    assert.equal((await endOffsets(env)).get(0)?.low, 2);
  }],
  [`kafka-get-offsets.sh ${BS} --topic orders --time -2`, async (run) => {
    assert.deepEqual(lines(run.stdout), ['orders:0:2', 'orders:1:0', 'orders:2:0', 'orders:3:0']);
  }],
  [`kafka-log-dirs.sh ${BS} --describe --topic-list orders`, async (run, env) => {
    const json = lines(run.stdout).find((l) => l.startsWith('{'));
    assert.ok(json, run.stdout);
    const out = JSON.parse(json) as { brokers: { broker: number; logDirs: { logDir: string; error: string | null; partitions: { partition: string; size: number; offsetLag: number; isFuture: boolean }[] }[] }[] };
    assert.equal(out.brokers.length, 1);
    const [dir] = out.brokers[0]?.logDirs ?? [];
    assert.equal(dir?.logDir, resolve(env.broker.dataDir));
    assert.equal(dir?.error, null);
    assert.deepEqual(dir?.partitions.map((p) => p.partition).sort(), ['orders-0', 'orders-1', 'orders-2', 'orders-3']);
    for (const p of dir?.partitions ?? []) assert.equal(p.size, await segmentBytes(join(env.broker.dataDir, p.partition)), p.partition);
  }],
  [`kafka-topics.sh ${BS} --delete --topic orders`, async (_run, env) => {
    assert.deepEqual(await env.admin.listTopics(), []);
  }],
];

/** The lines of the README's sh block under "Apache Kafka's command-line tools". */
async function readmeCommands(): Promise<string[]> {
  const readme = await readFile('README.md', 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith("Apache Kafka's command-line tools"));
  assert.ok(section, "README.md has no section \"Apache Kafka's command-line tools\"");
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(block?.[1], 'the section has no sh block');
  return lines(block[1]);
}

test("Apache Kafka's command-line tools work against Floe as the README documents", async (t) => {
  const readme = await readmeCommands();
  assert.deepEqual(readme, COMMANDS.map(([c]) => c), "README's commands and the tested ones differ");
  const readmeText = await readFile('README.md', 'utf8');
  assert.ok(readmeText.includes(DELETE_JSON), "README shows delete.json's content");

  const broker = await startBroker();
  t.after(() => broker.stop());
  const cwd = await tempDir('floe-kafka-cli-');
  t.after(() => rm(cwd, { recursive: true, force: true }));
  await writeFile(join(cwd, 'orders.txt'), ORDERS_TXT);
  await writeFile(join(cwd, 'delete.json'), DELETE_JSON);
  const admin = new Kafka({ clientId: 'floe-cli-check', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  const reader = new KcatClient(broker.bootstrap);
  t.after(() => reader.close());
  const env: Env = { broker, admin, reader, produced: new Map() };

  for (const [line, check] of COMMANDS) {
    await t.test(line.replace(` ${BS}`, ''), async () => {
      const run = await runKafkaScript(line, { bootstrap: broker.bootstrap, cwd });
      assert.equal(run.code, 0, `exit code; stdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
      await check(run, env);
    });
  }
});

test("Apache Kafka's command-line tools report what Floe refuses, with Kafka's errors, and change nothing", async (t) => {
  const broker = await startBroker();
  t.after(() => broker.stop());
  const cwd = await tempDir('floe-kafka-cli-');
  t.after(() => rm(cwd, { recursive: true, force: true }));
  await broker.broker.services.topics.createTopic('orders', 2, -1, { 'retention.ms': '86400000' });
  const run = (line: string) => runKafkaScript(line, { bootstrap: broker.bootstrap, cwd });
  const output = (r: ToolRun) => `${r.stdout}\n${r.stderr}`;

  const exists = await run(`kafka-topics.sh ${BS} --create --topic orders --partitions 2`);
  assert.equal(exists.code, 1);
  assert.match(output(exists), /Topic 'orders' already exists\./);

  const fewer = await run(`kafka-topics.sh ${BS} --alter --topic orders --partitions 1`);
  assert.equal(fewer.code, 1);
  assert.match(output(fewer), /Error while executing topic command/);
  assert.equal(broker.broker.services.metadata.getTopic('orders')?.partitions, 2);

  const bad = await run(`kafka-configs.sh ${BS} --entity-type topics --entity-name orders --alter --add-config retention.ms=soon`);
  assert.equal(bad.code, 1);
  assert.match(output(bad), /InvalidConfigurationException/);
  assert.deepEqual(broker.broker.services.metadata.getTopic('orders')?.configs, { 'retention.ms': '86400000' });
});
