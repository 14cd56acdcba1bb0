// Client quotas with Apache Kafka's own tools (kafka-tools from Maven Central, each in its own JVM):
// kafka-configs.sh sets and describes producer_byte_rate and consumer_byte_rate for a client id and the
// default user (AlterClientQuotas, DescribeClientQuotas); kafka-producer-perf-test.sh (Kafka's Java
// producer) under the quota is throttled (its produce-throttle-time metric is above 0, which it only sees
// from throttle_time_ms) and its rate stays near the quota, while the same run under another client id is
// not throttled; the quotas are still there after a restart. The README's Security > Quotas block lists
// exactly these kafka-configs.sh commands.
//
// The broker runs with quota.window.num=3 (windows of 1 s): Kafka measures a first burst over
// (quota.window.num - 1) windows, so fewer windows make a short run show the steady rate.
import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { test } from 'node:test';
import { startBroker, tempDir } from '../helpers/broker.js';
import { runKafkaScript, type ToolRun } from './clients/kafka-cli.js';

const BS = '--bootstrap-server localhost:9092';
const QUOTA = 204800; // bytes per second
const RECORDS = 1000;
const RECORD_SIZE = 1000;

/** The README's commands, in its order, each with what the operator must see. */
const CONFIGS: readonly (readonly [string, (run: ToolRun) => void])[] = [
  [`kafka-configs.sh ${BS} --alter --add-config producer_byte_rate=${QUOTA} --entity-type clients --entity-name ingest`, (run) => {
    assert.equal(run.stdout.trim(), 'Completed updating config for client ingest.');
  }],
  [`kafka-configs.sh ${BS} --alter --add-config consumer_byte_rate=1048576 --entity-type users --entity-default`, (run) => {
    assert.match(run.stdout.trim(), /^Completed updating default config for user/, run.stdout);
  }],
  [`kafka-configs.sh ${BS} --describe --entity-type clients --entity-name ingest`, (run) => {
    assert.equal(run.stdout.trim(), `Quota configs for client-id 'ingest' are producer_byte_rate=${QUOTA}.0`, run.stdout);
  }],
  [`kafka-configs.sh ${BS} --describe --entity-type users`, (run) => {
    assert.match(run.stdout, /Quota configs for the default user-principal are consumer_byte_rate=1048576\.0/, run.stdout);
  }],
];

async function readmeCommands(): Promise<string[]> {
  const readme = await readFile('README.md', 'utf8');
  const section = readme.split(/^### /m).find((s) => s.startsWith('Quotas'));
  assert.ok(section, 'README.md has no section "### Quotas"');
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(block?.[1], 'the Quotas section has no sh block');
  return block[1].split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

interface PerfRun {
  /** Bytes per second the producer achieved, from its summary line. */
  readonly bytesPerSecond: number;
  /** The producer's produce-throttle-time-max metric: the largest throttle_time_ms it was told. */
  readonly throttleMaxMs: number;
}

function parsePerf(run: ToolRun): PerfRun {
  assert.equal(run.code, 0, run.stderr);
  const summary = new RegExp(`^${RECORDS} records sent, ([\\d.]+) records/sec`, 'm').exec(run.stdout);
  assert.ok(summary, run.stdout);
  const throttle = /^producer-metrics:produce-throttle-time-max:\{client-id=[^}]*\}\s*:\s*([\d.NaN-]+)/m.exec(run.stdout);
  assert.ok(throttle, `no produce-throttle-time-max in\n${run.stdout}`);
  const max = Number(throttle[1]);
  return { bytesPerSecond: Number(summary[1]) * RECORD_SIZE, throttleMaxMs: Number.isNaN(max) ? 0 : max };
}

test('kafka-configs.sh sets and describes client quotas; Kafka\'s Java producer is held near its producer_byte_rate', { timeout: 300_000 }, async (t) => {
  assert.deepEqual(await readmeCommands(), CONFIGS.map(([c]) => c), "README's Quotas commands and the tested ones differ");
  const dataDir = await tempDir();
  const cwd = await tempDir('floe-quotas-');
  const flags = ['--quota.window.num=3', '--quota.window.size.seconds=1'];
  let broker = await startBroker(flags, { dataDir });
  t.after(async () => {
    await broker.stop();
    await rm(dataDir, { recursive: true, force: true });
    await rm(cwd, { recursive: true, force: true });
  });
  const run = (line: string) => runKafkaScript(line, { bootstrap: broker.bootstrap, cwd });
  await broker.broker.services.topics.createTopic('quota-perf', 1);

  for (const [line, check] of CONFIGS) {
    const r = await run(line);
    assert.equal(r.code, 0, `${line}\n${r.stdout}\n${r.stderr}`);
    check(r);
  }

  const perf = (clientId: string) =>
    run(`kafka-producer-perf-test.sh --topic quota-perf --num-records ${RECORDS} --record-size ${RECORD_SIZE} --throughput -1 --print-metrics --producer-props bootstrap.servers=localhost:9092 client.id=${clientId} acks=1`);
  const throttled = parsePerf(await perf('ingest'));
  assert.ok(throttled.throttleMaxMs > 0, 'the producer under the quota was told a throttle time');
  assert.ok(throttled.bytesPerSecond < 3 * QUOTA, `under a quota of ${QUOTA} B/s the producer sent ${throttled.bytesPerSecond.toFixed(0)} B/s`);
  const free = parsePerf(await perf('unlimited'));
  assert.equal(free.throttleMaxMs, 0, 'a client id without a quota is never throttled');
  t.diagnostic(`quota ${QUOTA} B/s: throttled producer ${throttled.bytesPerSecond.toFixed(0)} B/s (max throttle ${throttled.throttleMaxMs} ms), unthrottled ${free.bytesPerSecond.toFixed(0)} B/s`);

  await broker.stop();
  broker = await startBroker(flags, { dataDir });
  const after = await run(`kafka-configs.sh ${BS} --describe --entity-type clients --entity-name ingest`);
  assert.equal(after.stdout.trim(), `Quota configs for client-id 'ingest' are producer_byte_rate=${QUOTA}.0`, 'the quota survives a restart');
});
