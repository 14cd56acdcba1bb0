// Backfill: a topic with a million records produced while its table was off gets its table turned on with
// `floe config set`; the broker (compiled, as users run it) converts the history oldest first, throttled by
// remote.log.manager.copy.max.bytes.per.second, and reports it: log lines with the share done and the time
// left, `floe table backfill --no-wait`, the backlog metrics. It is killed with kill -9 mid-backfill; after
// the restart `floe table backfill` follows the rest to the end, and pyiceberg finds every record exactly
// once, row by row (each value names its partition and offset).
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { runFloe } from '../../helpers/cli.js';
import { runVenvPython } from '../../helpers/peers.js';
import { waitFor } from '../../helpers/tiered-table.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { WireClient, batchOf, firstPartition, produceBody } from '../handlers/wire-client.js';

const TOPIC = 'events';
const PARTITIONS = 2;
const PER_PARTITION = 500_000;
const BATCH = 10_000;
const CHECK = fileURLToPath(new URL('../../interop/engines/pyiceberg_offsets.py', import.meta.url));

interface BacklogJson {
  segments: number;
  bytes: number;
  progress?: { percent: number; etaSeconds: number | null; bytesPerSecond: number };
}

/** The broker's JSON log lines with this message prefix. */
function logLines(b: BrokerProcess, prefix: string): Record<string, unknown>[] {
  return b
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => typeof l['msg'] === 'string' && l['msg'].startsWith(prefix));
}

test('backfill of a million records: progress while it runs, kill -9 in the middle, and a complete table without duplicates after the restart', { timeout: 420_000 }, async (t) => {
  const root = await tempDir('floe-backfill-');
  const dataDir = join(root, 'data');
  const flags = ['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--iceberg.commit.interval.ms=500', '--log.retention.check.interval.ms=3600000'];
  // Throttled, so that the kill lands in the middle (and the throttle is exercised).
  let broker: BrokerProcess = await spawnBroker(dataDir, [...flags, '--remote.log.manager.copy.max.bytes.per.second=4000000']);
  t.after(async () => {
    broker.child.kill('SIGKILL');
    await broker.exited;
    await rm(root, { recursive: true, force: true });
  });

  const c = await WireClient.connect(broker.port);
  const created = await c.request(19, 5, { topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [{ name: 'iceberg.enabled', value: 'false' }, { name: 'segment.bytes', value: '1048576' }] }], timeoutMs: 5000, validateOnly: false });
  assert.equal((created.topics as { errorCode: number }[])[0]?.errorCode, ErrorCode.NONE);
  for (let p = 0; p < PARTITIONS; p++) {
    for (let from = 0; from < PER_PARTITION; from += BATCH) {
      const res = firstPartition(await c.request(0, 9, produceBody(TOPIC, p, batchOf(Array.from({ length: BATCH }, (_, i) => `v-${p}-${from + i}`)))));
      assert.equal(res.errorCode, ErrorCode.NONE);
      assert.equal(res.baseOffset, BigInt(from));
    }
  }
  c.close();

  const floe = (b: BrokerProcess, ...args: string[]) => runFloe(args, { FLOE_ADMIN_URL: b.adminUrl ?? '' });
  const set = await floe(broker, 'config', 'set', TOPIC, 'iceberg.enabled=true');
  assert.equal(set.code, 0, set.stderr);

  // While it runs: the backlog goes down, with the share done and the time left.
  const seen: BacklogJson[] = [];
  const midway = await waitFor(
    'the backfill to be between 15 % and 85 %',
    async () => {
      const r = await floe(broker, 'table', 'backfill', TOPIC, '--no-wait', '--json');
      if (r.code !== 0) return undefined; // the table is being created
      const b = JSON.parse(r.stdout) as BacklogJson;
      seen.push(b);
      assert.ok(b.segments > 0 || seen.length > 1, `a backlog right after the config change: ${r.stdout}`);
      return b.progress !== undefined && b.progress.percent >= 15 && b.progress.percent <= 85 ? b : undefined;
    },
    120_000,
    200,
  );
  assert.ok(midway.progress && midway.progress.etaSeconds !== null && midway.progress.etaSeconds > 0, `an ETA: ${JSON.stringify(midway)}`);
  const text = await floe(broker, 'table', 'backfill', TOPIC, '--no-wait');
  assert.match(text.stdout, /closed segments \([\d.]+ MiB\) not in the table yet; [\d.]+% of [\d.]+ MiB done at [\d.]+ MiB\/s, ETA \d+ s/);
  const metrics = await (await fetch(`${broker.adminUrl}/metrics`)).text();
  assert.match(metrics, new RegExp(`^floe_tiering_backlog_segments\\{topic="${TOPIC}"\\} [1-9]`, 'm'));
  assert.match(metrics, new RegExp(`^floe_tiering_backlog_eta_seconds\\{topic="${TOPIC}"\\} `, 'm'));
  const started = logLines(broker, 'tiering backlog:');
  assert.equal(started.length, 1, 'one start line');
  assert.ok((started[0]?.['segments'] as number) >= 20, `the start line gives the backlog: ${JSON.stringify(started[0])}`);
  const progress = await waitFor('a progress line', async () => logLines(broker, 'tiering backlog progress').at(0));
  assert.ok(typeof progress['percent'] === 'number' && typeof progress['etaSeconds'] === 'number' && typeof progress['mibPerSecond'] === 'number', JSON.stringify(progress));

  // kill -9 in the middle; the restart (unthrottled) resumes from what the table holds.
  broker.child.kill('SIGKILL');
  await broker.exited;
  broker = await spawnBroker(dataDir, flags);
  const follow = await floe(broker, 'table', 'backfill', TOPIC, '--interval-ms', '200');
  assert.equal(follow.code, 0, follow.stderr);
  assert.match(follow.stdout, /^table kafka\.events: holds every closed segment of events/);
  assert.ok(logLines(broker, 'tiering backlog done').length === 1, 'the restart logged the end of the backlog');

  // The active segments roll on the commit interval, so the table reaches the end of the log.
  await waitFor(
    'the table to hold every record',
    async () => {
      const r = await floe(broker, 'table', 'status', TOPIC, '--json');
      const parts = (JSON.parse(r.stdout) as { partitions: { committedOffset?: number }[] }).partitions;
      return parts.length === PARTITIONS && parts.every((p) => p.committedOffset === PER_PARTITION - 1) ? true : undefined;
    },
    120_000,
    500,
  );
  const report = JSON.parse(await runVenvPython(CHECK, JSON.stringify({ catalog: { type: 'rest', uri: broker.restUrl }, table: `kafka.${TOPIC}` }))) as {
    rows: number;
    partitions: Record<string, { rows: number; min: number; max: number; distinct: number }>;
    mismatches: number;
    example: unknown;
  };
  assert.equal(report.mismatches, 0, `values match their offsets: ${JSON.stringify(report.example)}`);
  assert.equal(report.rows, PARTITIONS * PER_PARTITION);
  for (let p = 0; p < PARTITIONS; p++) {
    assert.deepEqual(report.partitions[String(p)], { rows: PER_PARTITION, min: 0, max: PER_PARTITION - 1, distinct: PER_PARTITION }, `partition ${p}: every offset once`);
  }
});
