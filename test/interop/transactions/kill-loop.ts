/**
 * The kill -9 driver shared by the transactional clients' kill tests (java-kill, confluent-kill,
 * kafkajs-kill). A client's consume-transform-produce loop (offsets sent in the transaction, random aborts)
 * runs as a child process against the compiled broker, also a child process. The driver feeds the input,
 * then kills the loop and the broker with kill -9, alternately, each at a random (seeded) moment after the
 * loop has written something new, and restarts them: a killed loop restarts with the same transactional.id
 * (which fences and aborts whatever it left open), and a loop that exits on its own before the input is done
 * (the broker's restart aborted its transaction and fenced it, or its retries ran out while the broker was
 * down) is restarted too, as an application would be. Each broker kill also waits for the loop's
 * transaction to be Ongoing (DescribeTransactions), so the restarted broker has an open transaction to abort;
 * the diagnostics say what each restart recovered. Once a run has gone to the end of the input:
 *
 * - a read_committed consumer of the hot log sees each input's result exactly once and no aborted attempt;
 * - the same, once every output segment is in the topic's table and gone from local disk (an in-process
 *   broker on the same data rolls, drains and hands off, so Kafka reads are served from the table);
 * - the output topic's table holds exactly the committed records, read by pyiceberg (through the REST
 *   catalog), icebird and DuckDB.
 *
 * The loop program's contract: `spawnLoop(args)` runs it with LoopArgs; it reads `input` with read_committed
 * in group `group`, writes `key -> value|VALUE` to `output`, aborts about `abortRate` of its transactions
 * (seeded by `seed`), and exits 0 once the group's committed offsets reach the end of the input.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestContext } from 'node:test';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { spawnBroker, startBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { WireClient } from '../../broker/handlers/wire-client.js';
import { tableEntries } from './table-entries.js';
import { seededRandom } from './verify.js';

/** A loop (or any client) running as a child process that can be killed. */
export interface LoopRun {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  /** What it printed so far, stdout and stderr. */
  output(): string;
}

export interface LoopArgs {
  readonly bootstrap: string;
  readonly input: string;
  readonly output: string;
  readonly group: string;
  readonly transactionalId: string;
  readonly abortRate: number;
  /** Differs per run, so a restarted run does not replay the same aborts. */
  readonly seed: number;
}

export type Isolation = 'read_committed' | 'read_uncommitted';

export interface KillLoopOptions {
  /** Prefix of the topics, the group and the transactional id. */
  readonly name: string;
  /** Seeds the kill moments (and, through LoopArgs.seed, the loops' aborts). */
  readonly seed: number;
  readonly inputs?: number;
  readonly abortRate?: number;
  spawnLoop(args: LoopArgs): LoopRun;
  /** The keys of `topic`, read from the beginning to its end offsets (the LSO for read_committed). */
  readKeys(bootstrap: string, topic: string, isolation: Isolation): Promise<string[]>;
}

/** `cmd args` as a LoopRun. */
export function spawnLoopProcess(cmd: string, args: readonly string[]): LoopRun {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => out };
}

const PARTITIONS_OUT = 3;
const tail = (run: LoopRun): string => run.output().slice(-4000);
const sum = async (admin: Admin, topic: string): Promise<number> => (await admin.fetchTopicOffsets(topic)).reduce((a, p) => a + Number(p.high), 0);

/** The run's exit code, or 'late' when it is still running after `ms` (the timer does not outlive the wait). */
async function exitedWithin(run: LoopRun, ms: number): Promise<number | null | 'late'> {
  const timer = new AbortController();
  try {
    return await Promise.race([run.exited, sleep(Math.max(0, ms), 'late' as const, { signal: timer.signal })]);
  } finally {
    timer.abort();
  }
}

/**
 * Polls DescribeTransactions until the transactional id's transaction is Ongoing, for up to 5 s (the loop may
 * be between transactions, rebalancing or restarting; the kill then lands wherever it is).
 */
async function untilOngoing(port: number, transactionalId: string): Promise<void> {
  const c = await WireClient.connect(port, 'kill-loop-describe');
  try {
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      const res = await c.request(65, 0, { transactionalIds: [transactionalId] });
      const [state] = res['transactionStates'] as { transactionState: string }[];
      if (state?.transactionState === 'Ongoing') return;
    }
  } finally {
    c.close();
  }
}

export async function runKillLoop(t: TestContext, opts: KillLoopOptions): Promise<void> {
  const INPUT = `${opts.name}-in`;
  const OUTPUT = `${opts.name}-out`;
  const count = opts.inputs ?? 4000;
  const root = await tempDir(`floe-${opts.name}-`);
  const dataDir = join(root, 'log');
  const warehouse = join(root, 'wh');
  const flags = ['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--log.retention.check.interval.ms=3600000'];
  let broker: BrokerProcess | undefined = await spawnBroker(dataDir, flags);
  const port = broker.port;
  const brokers = [broker];
  const runs: LoopRun[] = [];
  t.after(async () => {
    for (const r of runs) r.child.kill('SIGKILL');
    await Promise.all(runs.map((r) => r.exited));
    broker?.child.kill('SIGKILL');
    await broker?.exited;
    await rm(root, { recursive: true, force: true });
  });

  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: `${opts.name}-setup`, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: INPUT, numPartitions: 2 },
      {
        topic: OUTPUT,
        numPartitions: PARTITIONS_OUT,
        configEntries: [
          { name: 'remote.storage.enable', value: 'true' },
          { name: 'internal.segment.bytes', value: '16384' },
          { name: 'iceberg.commit.interval.ms', value: '500' },
        ],
      },
    ],
  });
  const producer = kafka.producer();
  await producer.connect();
  const values = new Map<string, string>(Array.from({ length: count }, (_, i) => [`in-${i}`, `v${i}`]));
  const valueOf = (key: string): string => values.get(key) ?? '';
  const inputs = [...values.keys()];
  for (let i = 0; i < inputs.length; i += 200) {
    await producer.send({ topic: INPUT, acks: -1, messages: inputs.slice(i, i + 200).map((key, j) => ({ key, value: valueOf(key), partition: (i + j) % 2 })) });
  }
  await producer.disconnect();
  await admin.disconnect();

  const transactionalId = `${opts.name}-tx`;
  const start = (): LoopRun => {
    const run = opts.spawnLoop({
      bootstrap: `127.0.0.1:${port}`,
      input: INPUT,
      output: OUTPUT,
      group: `${opts.name}-eos`,
      transactionalId,
      abortRate: opts.abortRate ?? 0.2,
      seed: opts.seed * 100 + runs.length + 1,
    });
    runs.push(run);
    return run;
  };
  const random = seededRandom(opts.seed);
  let loop = start();
  const restarts = { client: 0, broker: 0, exited: 0 };
  for (let cycle = 0; cycle < 4; cycle++) {
    // Wait until the loop has written something new through the current broker, then kill at a random moment.
    const watch = new Kafka({ brokers: [`127.0.0.1:${port}`], clientId: `${opts.name}-watch`, logLevel: logLevel.NOTHING }).admin();
    await watch.connect();
    const before = await sum(watch, OUTPUT);
    const deadline = Date.now() + 120_000;
    while ((await sum(watch, OUTPUT)) <= before + 20) {
      assert.ok(Date.now() < deadline, `cycle ${cycle}: the loop wrote nothing:\n${tail(loop)}`);
      const code = await exitedWithin(loop, 200);
      if (code !== 'late') {
        assert.notEqual(code, 0, `the loop finished before the kills:\n${tail(loop)}`);
        restarts.exited++;
        loop = start();
      }
    }
    await watch.disconnect();
    await sleep(100 + Math.floor(random() * 700));
    if (cycle % 2 === 0) {
      loop.child.kill('SIGKILL');
      await loop.exited;
      restarts.client++;
      loop = start();
    } else {
      // Into an open transaction, when the loop has one within a few seconds: the restart must abort it.
      await untilOngoing(port, transactionalId);
      broker.child.kill('SIGKILL');
      await broker.exited;
      restarts.broker++;
      broker = await spawnBroker(dataDir, flags, port);
      brokers.push(broker);
    }
  }

  // The last run goes to the end of the input (restarted while it exits early).
  const lastDeadline = Date.now() + 180_000;
  for (;;) {
    const current = loop;
    const code = await exitedWithin(current, lastDeadline - Date.now());
    assert.notEqual(code, 'late', `the last loop run did not finish within 3 minutes:\n${tail(current)}`);
    if (code === 0) break;
    restarts.exited++;
    assert.ok(restarts.exited < 10, `the loop keeps failing:\n${tail(current)}`);
    loop = start();
  }
  // What each restarted broker found: transactions it aborted (left open by the kill) or completed (prepared).
  const recovered = brokers.slice(1).map((bp) => {
    const found = (re: RegExp) => bp.output().split('\n').filter((l) => re.test(l)).length;
    return `${found(/left open by the restart/)} aborted, ${found(/prepared before the restart/)} completed`;
  });
  t.diagnostic(`broker restarts recovered transactions: ${recovered.join('; ')}`);
  t.diagnostic(`${runs.length} loop runs: ${restarts.client} killed, ${restarts.broker} broker kills, ${restarts.exited} runs exited early (fenced or out of retries)`);
  for (const [i, r] of runs.entries()) {
    // How each run ended: its summary, else the last error it printed (client logs follow a traceback).
    const lines = r.output().trim().split('\n');
    const end = lines.filter((l) => /"committed"|Error|Exception|failed/.test(l)).slice(-1)[0] ?? lines.slice(-1)[0] ?? '';
    t.diagnostic(`run ${i + 1} (exit ${r.child.exitCode ?? r.child.signalCode}): ${end}`.slice(0, 300));
  }

  const expected = [...inputs].sort();
  const hot = await opts.readKeys(broker.bootstrap, OUTPUT, 'read_committed');
  assert.deepEqual([...hot].sort(), expected, 'hot log: each input exactly once, nothing aborted');
  const all = await opts.readKeys(broker.bootstrap, OUTPUT, 'read_uncommitted');
  assert.ok(all.length > inputs.length, `read_uncommitted sees the aborted attempts too (${all.length} for ${inputs.length})`);

  // Everything to the table, then Kafka reads from the table: an in-process broker on the same data.
  broker.child.kill('SIGTERM');
  await broker.exited;
  broker = undefined;
  const b = await startBroker(flags, { dataDir, keepData: true });
  const io = new LocalFileIO({ root: warehouse, fsync: false });
  try {
    for (let p = 0; p < PARTITIONS_OUT; p++) await b.broker.services.logs.get(OUTPUT, p)?.roll();
    await b.broker.services.tiering?.drain();
    await b.broker.services.topics.alterConfigs(OUTPUT, { 'local.retention.bytes': '0' }, false);
    for (let p = 0; p < PARTITIONS_OUT; p++) {
      const log = b.broker.services.logs.get(OUTPUT, p);
      assert.ok(log);
      await log.enforceRetention();
      assert.ok(log.logStartOffset >= log.logEndOffset - 1, `partition ${p} is read from the table (local start ${log.logStartOffset}, end ${log.logEndOffset})`);
    }
    const cold = await opts.readKeys(b.bootstrap, OUTPUT, 'read_committed');
    assert.deepEqual([...cold].sort(), expected, 'from the table: each input exactly once, nothing aborted');

    const restUrl = b.broker.services.tiering?.restCatalogUrl;
    assert.ok(restUrl);
    const want = inputs.map((k) => `${k}=${valueOf(k)}|${valueOf(k).toUpperCase()}`).sort();
    for (const [reader, entries] of Object.entries(await tableEntries(t, restUrl, io, OUTPUT))) {
      assert.deepEqual([...entries].sort(), want, `${reader}: the output table holds exactly the committed records`);
    }
  } finally {
    await io.close();
    await b.stop();
  }
}
