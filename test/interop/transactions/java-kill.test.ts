// Apache Kafka's Java client in a consume-transform-produce loop with offsets sent in the transaction and
// random aborts (TxnLoop.java), while the loop and the broker (the compiled broker, as users run it) are each
// killed with kill -9 twice, alternately, at random moments. A killed loop is restarted with the same
// transactional.id (which fences and aborts whatever it left open); a loop that the broker's restart fenced
// exits and is restarted too. When the input is done, a read_committed consumer sees each input's result
// exactly once and no aborted attempt: from the hot log, and again once every output segment is in the
// table and gone from local disk.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { spawnBroker, startBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { compileTxnLoop, javaTxnLoop, spawnTxnLoop } from './txn-loop.js';
import { seededRandom } from './verify.js';

const INPUT = 'kill-in';
const OUTPUT = 'kill-out';
const INPUTS = 4000;

test('Java transactional loop with kill -9 of the client and of the broker: read_committed sees every input exactly once, hot and tiered', { timeout: 420_000 }, async (t) => {
  const { classpath, cleanup } = await compileTxnLoop();
  const root = await tempDir('floe-txn-kill-');
  const dataDir = join(root, 'log');
  const flags = ['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--log.retention.check.interval.ms=3600000'];
  let broker: BrokerProcess | undefined = await spawnBroker(dataDir, flags);
  const port = broker.port;
  const loops: ReturnType<typeof spawnTxnLoop>[] = [];
  t.after(async () => {
    for (const l of loops) l.child.kill('SIGKILL');
    await Promise.all(loops.map((l) => l.exited));
    broker?.child.kill('SIGKILL');
    await broker?.exited;
    await cleanup();
    await rm(root, { recursive: true, force: true });
  });

  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'txn-kill', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: INPUT, numPartitions: 2 },
      { topic: OUTPUT, numPartitions: 3, configEntries: [{ name: 'remote.storage.enable', value: 'true' }, { name: 'internal.segment.bytes', value: '16384' }, { name: 'iceberg.commit.interval.ms', value: '500' }] },
    ],
  });
  const producer = kafka.producer();
  await producer.connect();
  const inputs = Array.from({ length: INPUTS }, (_, i) => `in-${i}`);
  for (let i = 0; i < inputs.length; i += 200) {
    await producer.send({ topic: INPUT, acks: -1, messages: inputs.slice(i, i + 200).map((key, j) => ({ key, value: `v${i + j}`, partition: (i + j) % 2 })) });
  }
  await producer.disconnect();
  const outputEnd = async (): Promise<number> => (await admin.fetchTopicOffsets(OUTPUT)).reduce((a, p) => a + Number(p.high), 0);
  await admin.disconnect();

  const loopArgs = () => ['loop', `127.0.0.1:${port}`, INPUT, OUTPUT, 'kill-eos', 'kill-eos-tx', '0.2', String(loops.length + 1)];
  const random = seededRandom(890);
  let loop = spawnTxnLoop(classpath, loopArgs());
  loops.push(loop);
  const restarts = { client: 0, broker: 0, fenced: 0 };
  for (let cycle = 0; cycle < 4; cycle++) {
    // Wait until the loop has written something new through the current broker, then kill at a random moment.
    const watch = new Kafka({ brokers: [`127.0.0.1:${port}`], clientId: 'txn-kill-watch', logLevel: logLevel.NOTHING }).admin();
    await watch.connect();
    const before = await (async () => {
      const offsets = await watch.fetchTopicOffsets(OUTPUT);
      return offsets.reduce((a, p) => a + Number(p.high), 0);
    })();
    const deadline = Date.now() + 120_000;
    for (;;) {
      const now = (await watch.fetchTopicOffsets(OUTPUT)).reduce((a, p) => a + Number(p.high), 0);
      if (now > before + 20) break;
      assert.ok(Date.now() < deadline, `cycle ${cycle}: the loop wrote nothing:\n${loop.output().slice(-4000)}`);
      const code = await Promise.race([loop.exited, sleep(200).then(() => 'running' as const)]);
      if (code !== 'running') {
        // The broker's restart fenced the loop's producer (Floe aborts open transactions on restart): a
        // real application restarts, and so does this one.
        assert.notEqual(code, 0, `the loop finished before the kills:\n${loop.output().slice(-2000)}`);
        restarts.fenced++;
        loop = spawnTxnLoop(classpath, loopArgs());
        loops.push(loop);
      }
    }
    await watch.disconnect();
    await sleep(100 + Math.floor(random() * 700));
    if (cycle % 2 === 0) {
      loop.child.kill('SIGKILL');
      await loop.exited;
      restarts.client++;
      loop = spawnTxnLoop(classpath, loopArgs());
      loops.push(loop);
    } else {
      broker.child.kill('SIGKILL');
      await broker.exited;
      restarts.broker++;
      broker = await spawnBroker(dataDir, flags, port);
    }
  }

  // The last run goes to the end of the input (restarted if the last broker kill fenced it).
  const lastDeadline = Date.now() + 180_000;
  for (;;) {
    const current = loop;
    const code = await Promise.race([current.exited, sleep(Math.max(0, lastDeadline - Date.now())).then(() => 'late' as const)]);
    assert.notEqual(code, 'late', `the last loop run did not finish within 3 minutes:\n${current.output().slice(-4000)}`);
    if (code === 0) break;
    restarts.fenced++;
    assert.ok(restarts.fenced < 10, `the loop keeps failing:\n${loop.output().slice(-4000)}`);
    loop = spawnTxnLoop(classpath, loopArgs());
    loops.push(loop);
  }
  t.diagnostic(`${loops.length} loop runs: ${restarts.client} killed, ${restarts.broker} broker kills, ${restarts.fenced} runs ended by a fence; output end ${await outputEnd().catch(() => -1)}`);

  const readKeys = async (bootstrap: string, isolation: string) => (await javaTxnLoop(classpath, ['read', bootstrap, OUTPUT, isolation])).split('\n').filter((k) => k !== '');
  const hot = await readKeys(broker.bootstrap, 'read_committed');
  assert.deepEqual([...hot].sort(), [...inputs].sort(), 'hot log: each input exactly once, nothing aborted');
  const all = await readKeys(broker.bootstrap, 'read_uncommitted');
  assert.ok(all.length > inputs.length, `read_uncommitted sees the aborted attempts too (${all.length} for ${inputs.length})`);

  // Everything to the table, then from the table: the same in-process broker on the same data.
  broker.child.kill('SIGTERM');
  await broker.exited;
  broker = undefined;
  const b = await startBroker(flags, { dataDir, keepData: true });
  try {
    for (let p = 0; p < 3; p++) await b.broker.services.logs.get(OUTPUT, p)?.roll();
    await b.broker.services.tiering?.drain();
    await b.broker.services.topics.alterConfigs(OUTPUT, { 'local.retention.bytes': '0' }, false);
    for (let p = 0; p < 3; p++) {
      const log = b.broker.services.logs.get(OUTPUT, p);
      assert.ok(log);
      await log.enforceRetention();
      assert.ok(log.logStartOffset >= log.logEndOffset - 1, `partition ${p} is read from the table (local start ${log.logStartOffset}, end ${log.logEndOffset})`);
    }
    const cold = await readKeys(b.bootstrap, 'read_committed');
    assert.deepEqual([...cold].sort(), [...inputs].sort(), 'from the table: each input exactly once, nothing aborted');
  } finally {
    await b.stop();
  }
});
