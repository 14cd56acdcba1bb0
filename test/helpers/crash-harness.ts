/**
 * The kill -9 harness of the tiering crash tests, shared by the local-warehouse run
 * (test/broker/tiering/crash.test.ts) and the S3 one (test/tiering/faults/crash-s3.test.ts). A `CrashSetup`
 * says where the warehouse is (broker flags) and how to read the table's rows; everything else (the topic,
 * the producer that writes until the broker dies, the restart and the checks) is the same for both.
 *
 * For each cycle the broker (dist/broker/main.js) is started with FLOE_TIERING_CRASH_AT so that it SIGKILLs
 * itself at a crash point while a producer (acks=all) is writing; the harness checks it really died there
 * (signal SIGKILL and the crash marker in its output). `restartAndVerify` then restarts it on the same log dir
 * and warehouse, lets tiering catch up (committed offsets in the table reach the log end) and the local
 * hand-off run, and checks:
 *   - the table has exactly one row per record of the log: every offset from 0 to the log end once, no
 *     duplicates, no gaps, with the same keys and values;
 *   - every acknowledged record is in the log exactly once;
 *   - kcat (CRCs checked) reads every record from offset 0, across the Parquet-served and local ranges.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { spawnBroker, type BrokerProcess } from './broker.js';
import { currentSummary, kcatRead, latestProperty, loadTable, waitFor } from './tiered-table.js';

export const TOPIC = 'crashy';
export const PARTITIONS = 2;
const PAD = 'x'.repeat(60);

/** A table row as the checks need it. */
export interface CrashTableRow {
  readonly partition: number;
  readonly offset: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

export interface CrashSetup {
  /** `--iceberg.warehouse=...` and, for S3, its endpoint and credentials. */
  readonly warehouseFlags: readonly string[];
  /** Every row of the topic table's current snapshot, given the broker's REST catalog URL. */
  readRows(restUrl: string): Promise<CrashTableRow[]>;
}

export interface Acked {
  partition: number;
  key: string;
  value: string;
}

function flags(setup: CrashSetup): string[] {
  return [
    '--remote.log.storage.system.enable=true',
    ...setup.warehouseFlags,
    '--iceberg.rest.port=0',
    '--iceberg.rest.host=127.0.0.1',
    '--log.retention.check.interval.ms=200',
  ];
}

export async function stop(p: BrokerProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  await p.exited;
}

/** Lowest base offset among a partition's local segment files. */
async function localStart(logDir: string, partition: number): Promise<number> {
  const names = (await readdir(join(logDir, `${TOPIC}-${partition}`))).filter((n) => n.endsWith('.log'));
  return Math.min(...names.map((n) => Number(n.slice(0, -4))));
}

/**
 * The pause between two sends. A producer that never let up (it was 2 ms) brought no crash point sooner and
 * gave the restart three to fifteen times the records to tier before its checks: the ten kills through the
 * external catalog took 82 s alone with it, 54 s with this (verification 41.7 s against 17.7). Compaction
 * waits while tiering has a backlog, so with it the compaction points came later: 3.5-29 s per cycle, the
 * third commit only after all 2,000 sends, against 2.6-4.4 s now (six kills: 113 s against 29 s).
 */
const SEND_PAUSE_MS = 20;

/** Produces 5-record batches (acks=all) until the broker dies or `maxSends` is reached; returns what was acknowledged. */
async function produceUntilDeath(bootstrap: string, tag: string, maxSends: number, create: boolean): Promise<{ acked: Acked[]; failed: boolean }> {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: `crash-${tag}`, logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const acked: Acked[] = [];
  let failed = false;
  const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
  try {
    if (create) {
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({
        topics: [{ topic: TOPIC, numPartitions: PARTITIONS, configEntries: [
          { name: 'internal.segment.bytes', value: '2048' },
          { name: 'local.retention.bytes', value: '0' },
          { name: 'iceberg.commit.interval.ms', value: '300' },
        ] }],
      });
      await admin.disconnect();
    }
    await producer.connect();
  } catch {
    return { acked, failed: true }; // the broker died before the first send
  }
  for (let i = 0; i < maxSends; i++) {
    const partition = i % PARTITIONS;
    const messages = Array.from({ length: 5 }, (_, j) => ({ key: `${tag}-k${i}-${j}`, value: `${tag}-v${i}-${j}-${PAD}`, partition }));
    try {
      await producer.send({ topic: TOPIC, acks: -1, messages });
    } catch {
      failed = true;
      break;
    }
    for (const m of messages) acked.push({ partition, key: m.key, value: m.value });
    await new Promise((r) => setTimeout(r, SEND_PAUSE_MS));
  }
  await producer.disconnect().catch(() => undefined);
  return { acked, failed };
}

/**
 * Restarts the broker without fault injection, waits for tiering to commit every partition up to its log end
 * and for the local hand-off, then checks table rows, Kafka reads from offset 0, and the acknowledged records.
 */
export async function restartAndVerify(setup: CrashSetup, logDir: string, acked: readonly Acked[], cleanups: (() => Promise<unknown>)[]): Promise<{ ends: Map<number, number>; rows: CrashTableRow[] }> {
  const second = await spawnBroker(logDir, flags(setup));
  cleanups.push(() => stop(second));
  const restUrl = second.restUrl;
  assert.ok(restUrl, 'the REST catalog runs');
  const kafka = new Kafka({ brokers: [second.bootstrap], clientId: 'crash-check', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  const ends = new Map((await admin.fetchTopicOffsets(TOPIC)).map((o) => [o.partition, Number(o.high)]));

  // Tiering catches up: the table's summary says every partition is committed to its log end. A long history
  // on a loaded machine takes a while: the wait gives up only after 60 s without any progress.
  let summary: Record<string, string> | undefined;
  let progress = -1;
  const caughtUp = async (): Promise<true | undefined> => {
    const load = await loadTable(restUrl, TOPIC);
    summary = load === undefined ? undefined : currentSummary(load);
    if (summary === undefined) return undefined;
    let done = true;
    let committed = 0;
    for (let p = 0; p < PARTITIONS; p++) {
      const c = Number(latestProperty(load as Record<string, unknown>, `floe.kafka.committed-offset.${p}`) ?? -1);
      committed += c;
      if (c !== (ends.get(p) ?? 0) - 1) done = false;
    }
    if (committed > progress) {
      progress = committed;
      throw new Progress();
    }
    return done ? true : undefined;
  };
  await (async () => {
    for (;;) {
      try {
        return await waitFor('the table to hold every record (no progress for 60 s)', caughtUp);
      } catch (err) {
        if (!(err instanceof Progress)) throw err;
      }
    }
  })().catch((err: unknown) => {
    const warnings = second.output().split('\n').filter((l) => /"level":"(warn|error)"/.test(l)).slice(-5);
    throw new Error(`${String(err)}; log ends ${JSON.stringify([...ends])}, table summary ${JSON.stringify(summary)}; broker warnings:\n${warnings.join('\n')}`);
  });
  // ... and the local hand-off deletes committed segments, so offset 0 is served from Parquet.
  for (let p = 0; p < PARTITIONS; p++) await waitFor(`local segments of partition ${p} to be handed off`, async () => ((await localStart(logDir, p)) > 0 ? true : undefined));

  const rows = await setup.readRows(restUrl);
  for (let p = 0; p < PARTITIONS; p++) {
    const end = ends.get(p) ?? 0;
    const inTable = rows.filter((r) => r.partition === p);
    assert.deepEqual(inTable.map((r) => r.offset), Array.from({ length: end }, (_, i) => i), `partition ${p}: one row per offset 0..${end - 1}, no duplicates, no gaps`);
    const fetched = await kcatRead(second.bootstrap, TOPIC, p, 0);
    assert.deepEqual(fetched.map((r) => r.offset), Array.from({ length: end }, (_, i) => i), `partition ${p}: kcat reads every offset from 0`);
    assert.deepEqual(
      inTable.map((r) => ({ offset: r.offset, key: r.key?.toString() ?? '', value: r.value?.toString() ?? '' })),
      fetched,
      `partition ${p}: the table rows are the Kafka records`,
    );
    const values = fetched.map((r) => r.value);
    for (const a of acked.filter((x) => x.partition === p)) {
      assert.equal(values.filter((v) => v === a.value).length, 1, `acknowledged ${a.value} is in partition ${p} exactly once`);
    }
  }
  return { ends, rows };
}

/** The marker crash-points.ts prints just before the SIGKILL. */
function marker(point: string): RegExp {
  const [name, nth] = point.split(':');
  return new RegExp(`FLOE_TIERING_CRASH ${name} ${nth ?? '1'}\\n`);
}

/**
 * One cycle: starts the broker set to kill itself at `point` (`<name>[:<n>]`), produces until it dies, checks
 * it died by SIGKILL at that point, and returns what was acknowledged. Re-queued segments may reach the point
 * before the listener starts; then nothing was produced.
 */
export async function crashCycle(setup: CrashSetup, logDir: string, point: string, tag: string, create: boolean): Promise<Acked[]> {
  let broker: BrokerProcess;
  try {
    broker = await spawnBroker(logDir, flags(setup), 0, { env: { ...process.env, FLOE_TIERING_CRASH_AT: point } });
  } catch (err) {
    assert.match(String(err), marker(point), `the broker died at ${point} during start-up, nothing else: ${String(err)}`);
    return [];
  }
  try {
    const { acked } = await produceUntilDeath(broker.bootstrap, tag, 2000, create);
    const ended = await broker.ended;
    assert.equal(ended.signal, 'SIGKILL', `the broker died by SIGKILL, not ${JSON.stringify(ended)}:\n${broker.output()}`);
    assert.match(broker.output(), marker(point), `it died at ${point}`);
    return acked;
  } finally {
    await stop(broker);
  }
}

/** Thrown by a catch-up check that saw the committed offsets move: the wait starts its 60 s again. */
class Progress extends Error {}

/**
 * One kill -9 per crash point, in order, on the same log and warehouse (the first cycle creates the topic),
 * then a clean restart that checks every acknowledged record is in the log and the table exactly once.
 * Returns a line for t.diagnostic.
 */
export async function killAtEveryPoint(setup: CrashSetup, logDir: string, points: readonly string[], cleanups: (() => Promise<unknown>)[]): Promise<string> {
  const acked: Acked[] = [];
  const perCycle: string[] = [];
  for (const [i, point] of points.entries()) {
    const started = Date.now();
    const got = await crashCycle(setup, logDir, point, `c${i}`, i === 0);
    perCycle.push(`${got.length} in ${seconds(started)}`);
    acked.push(...got);
  }
  assert.ok(acked.length > 0);
  const started = Date.now();
  const { ends, rows } = await restartAndVerify(setup, logDir, acked, cleanups);
  return `${points.length} kills (${points.join(', ')}): acknowledged per cycle ${perCycle.join(', ')}; verified in ${seconds(started)}; log ends ${JSON.stringify([...ends])}, ${rows.length} table rows`;
}

/** Seconds since `started` (a Date.now()), for the diagnostics: where a long test spends its time. */
function seconds(started: number): string {
  return `${((Date.now() - started) / 1000).toFixed(1)} s`;
}
