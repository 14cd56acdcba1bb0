// Apache Kafka Streams (kafka-streams 4.4 from Maven Central) runs an exactly-once-v2 application against
// Floe: it reads an input topic, counts each group's records in a RocksDB state store backed by its changelog
// topic, and writes one result per input record (test/interop/streams/src/floe/streams/EosCounter.java). While
// a plain producer keeps feeding the input, the application is killed with kill -9 several times mid-run and
// restarted on the same state directory. Then the output topic, read by a read_committed consumer (from the
// table, once every segment is tiered and gone locally), holds each input's result exactly once, and each
// group's counts are exactly 1..n: nothing processed twice, no state lost or restored from an aborted
// transaction. The output topic's table (icebird and DuckDB) holds the same records and no aborted one.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { peerPath } from '../../helpers/peers.js';
import { readWithDuckDB, readWithIcebird } from '../../tiering/e2e/table-readers.js';
import { seededRandom } from './verify.js';

const run = promisify(execFile);
const INPUT = 'streams-in';
const OUTPUT = 'streams-out';
const APP = 'floe-eos-counter';
const KILLS = 3;
const GROUPS = 12;

function javaArgs(mode: string[]): string[] {
  const classpath = `${peerPath('kafka-streams', 'app.jar')}:${readFileSync(peerPath('kafka-streams', 'classpath'), 'utf8').trim()}`;
  return ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xmx256m', '-cp', classpath, 'floe.streams.EosCounter', ...mode];
}

/** One run of the application; `running` resolves when Streams first reports RUNNING. */
interface AppRun {
  readonly child: ChildProcess;
  readonly running: Promise<void>;
  readonly exited: Promise<number | null>;
  readonly output: () => string;
}

function startApp(bootstrap: string, stateDir: string): AppRun {
  const child = spawn('java', javaArgs(['run', bootstrap, INPUT, OUTPUT, APP, stateDir]), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let onRunning: () => void = () => {};
  let onFailed: (err: Error) => void = () => {};
  const running = new Promise<void>((resolve, reject) => {
    onRunning = resolve;
    onFailed = reject;
  });
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    if (/^STATE RUNNING$/m.test(out)) onRunning();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  void exited.then((code) => onFailed(new Error(`Kafka Streams exited (${code}) before RUNNING:\n${out.slice(-4000)}`)));
  return { child, running, exited, output: () => out };
}

/** Total log end offset of a topic's partitions (records plus markers written so far). */
function endOffsets(logs: { get(topic: string, partition: number): { logEndOffset: number } | undefined }, topic: string, partitions: number): number {
  let sum = 0;
  for (let p = 0; p < partitions; p++) sum += logs.get(topic, p)?.logEndOffset ?? 0;
  return sum;
}

test('Kafka Streams exactly-once-v2 with a state store, killed with kill -9 three times: every input counted and written exactly once', { timeout: 420_000 }, async (t) => {
  const root = await tempDir('floe-streams-');
  const warehouse = join(root, 'wh');
  const stateDir = join(root, 'state');
  const b = await startBroker([
    '--remote.log.storage.system.enable=true',
    `--iceberg.warehouse=${warehouse}`,
    '--iceberg.rest.port=0',
    '--iceberg.rest.host=127.0.0.1',
    '--log.retention.check.interval.ms=3600000',
  ]);
  const apps: AppRun[] = [];
  t.after(async () => {
    for (const a of apps) a.child.kill('SIGKILL');
    await Promise.all(apps.map((a) => a.exited));
    await b.stop();
    await rm(root, { recursive: true, force: true });
  });
  const tiering = b.broker.services.tiering;
  assert.ok(tiering?.restCatalogUrl);
  const topics = b.broker.services.topics;
  await topics.createTopic(INPUT, 3);
  // The output tiers as it goes: small segments, frequent table commits, nothing kept locally once tiered.
  // A segment must hold the largest batch Streams sends (its producer's batch.size is 16 KiB, and a batch
  // larger than segment.bytes is refused with RECORD_BATCH_TOO_LARGE, as Kafka does): 8 KiB segments failed
  // the application whenever it caught up on a backlog after a restart.
  await topics.createTopic(OUTPUT, 3, -1, { 'remote.storage.enable': 'true', 'internal.segment.bytes': '32768', 'local.retention.bytes': '0', 'iceberg.commit.interval.ms': '500' });

  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'streams-feed', logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  t.after(() => producer.disconnect());
  const random = seededRandom(2026);
  const inputs = new Map<string, string>(); // id -> group
  let feeding = true;
  const feed = (async () => {
    while (feeding) {
      const messages = Array.from({ length: 20 }, () => {
        const id = `in-${String(inputs.size).padStart(5, '0')}`;
        const group = `g${Math.floor(random() * GROUPS)}`;
        inputs.set(id, group);
        return { key: group, value: id };
      });
      await producer.send({ topic: INPUT, acks: -1, messages });
      await sleep(100);
    }
  })();

  // Kill -9 mid-run, each time after the application has written new results since it started.
  for (let kill = 0; kill < KILLS; kill++) {
    const app = startApp(b.bootstrap, stateDir);
    apps.push(app);
    await app.running;
    const before = endOffsets(b.broker.services.logs, OUTPUT, 3);
    const deadline = Date.now() + 120_000;
    while (endOffsets(b.broker.services.logs, OUTPUT, 3) <= before + 40) {
      assert.ok(Date.now() < deadline, `run ${kill + 1} wrote no results:\n${app.output().slice(-4000)}`);
      await sleep(100);
    }
    await sleep(200 + Math.floor(random() * 1500));
    app.child.kill('SIGKILL');
    await app.exited;
  }
  feeding = false;
  await feed;
  const total = inputs.size;

  // A last run processes the rest; it stops cleanly once every input has a committed result.
  const last = startApp(b.bootstrap, stateDir);
  apps.push(last);
  await last.running;
  const readOutput = async (isolation = 'read_committed'): Promise<string[]> => {
    const { stdout } = await run('java', javaArgs(['read', b.bootstrap, OUTPUT, isolation]), { maxBuffer: 64 * 1024 * 1024 });
    return stdout.split('\n').filter((l) => l !== '');
  };
  let lines = await readOutput();
  const deadline = Date.now() + 180_000;
  while (new Set(lines.map((l) => l.split('\t')[0])).size < total) {
    assert.ok(Date.now() < deadline, `only ${lines.length} of ${total} results committed:\n${last.output().slice(-4000)}`);
    await sleep(2000);
    lines = await readOutput();
  }
  last.child.kill('SIGTERM');
  assert.equal(await last.exited, 143, `a clean close:\n${last.output().slice(-2000)}`);

  // Streams made its state store's changelog a compacted topic on Floe, and restored the store from it.
  const changelog = topics.getTopic(`${APP}-counts-changelog`);
  assert.equal(changelog?.configs['cleanup.policy'], 'compact', 'the changelog topic Streams created');
  assert.ok(endOffsets(b.broker.services.logs, changelog.name, changelog.partitions) > total, 'the changelog holds the store\'s updates');

  // The output's segments all go to the table, and the local copies are dropped: the read below is remote.
  for (let p = 0; p < 3; p++) await b.broker.services.logs.get(OUTPUT, p)?.roll();
  await tiering.drain();
  for (let p = 0; p < 3; p++) {
    const log = b.broker.services.logs.get(OUTPUT, p);
    assert.ok(log);
    await log.enforceRetention();
    assert.ok(log.logStartOffset >= log.logEndOffset - 1, `partition ${p} is read from the table (local start ${log.logStartOffset}, end ${log.logEndOffset})`);
  }

  lines = await readOutput();
  const ids = lines.map((l) => l.split('\t')[0] ?? '');
  const duplicates = ids.filter((id, i) => ids.indexOf(id) !== i);
  assert.deepEqual(duplicates, [], 'no input has two results');
  assert.deepEqual([...ids].sort(), [...inputs.keys()].sort(), 'every input has its result');
  const counts = new Map<string, number[]>();
  for (const l of lines) {
    const [id, result] = l.split('\t') as [string, string];
    const [group, count] = result.split(':') as [string, string];
    assert.equal(group, inputs.get(id), `${id} was counted in its own group`);
    counts.set(group, [...(counts.get(group) ?? []), Number(count)]);
  }
  // What the kills left behind: results of transactions that were open when their writer died, aborted.
  const uncommitted = (await readOutput('read_uncommitted')).length;
  assert.ok(uncommitted >= total);
  t.diagnostic(`${total} inputs, ${KILLS} runs ended by kill -9; read_uncommitted sees ${uncommitted - total} aborted results beside the ${total} committed ones`);
  for (const [group, seen] of counts) {
    const n = [...inputs.values()].filter((g) => g === group).length;
    assert.deepEqual([...seen].sort((x, y) => x - y), Array.from({ length: n }, (_, i) => i + 1), `${group}: counts 1..${n}, each once (the state store survived the kills exactly)`);
  }

  // The table holds exactly the committed results: read by icebird and by DuckDB.
  const io = new LocalFileIO({ root: warehouse, fsync: false });
  t.after(() => io.close());
  const want = [...inputs.keys()].sort();
  const icebird = (await readWithIcebird(tiering.restCatalogUrl, io, ['kafka'], OUTPUT)).map((r) => (r.key === null ? '' : Buffer.from(r.key as Buffer).toString()));
  assert.deepEqual(icebird.sort(), want, 'icebird: each result once, nothing aborted');
  const duckdb = (await readWithDuckDB(t, tiering.restCatalogUrl, io, ['kafka'], OUTPUT)).map((r) => r.key?.toString() ?? '');
  assert.deepEqual(duckdb.sort(), want, 'DuckDB: each result once, nothing aborted');
});
