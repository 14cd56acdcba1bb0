// The broker as users run it (dist/broker/main.js, built by `npm test`), stopped with SIGTERM or killed with
// SIGKILL while idempotent producers send with acks=all: records and producer state survive, so a batch
// resent after the restart is recognised, and every acknowledged record is there exactly once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { spawnBroker, tempDir, type BrokerProcess } from '../../helpers/broker.js';
import { WireClient, batchOf, firstPartition, produceBody, readAll } from './wire-client.js';

async function stop(proc: BrokerProcess, signal: NodeJS.Signals): Promise<void> {
  proc.child.kill(signal);
  await proc.exited;
}

async function initProducer(client: WireClient): Promise<bigint> {
  const r = await client.request(22, 4, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 });
  assert.equal(r.errorCode, 0);
  return r.producerId as bigint;
}

test('SIGTERM and restart: records, topic and idempotent producer state survive; a resent batch gets its original offset', async (t) => {
  const dataDir = await tempDir();
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  let proc = await spawnBroker(dataDir);
  let client = await WireClient.connect(proc.port);
  await client.request(19, 7, { topics: [{ name: 'keep', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [{ name: 'retention.ms', value: '-1' }] }], timeoutMs: 5000, validateOnly: false });
  const producerId = await initProducer(client);
  const batches = [0, 1, 2].map((i) => batchOf([`r${i}`], { producerId, producerEpoch: 0, baseSequence: i }));
  for (const [i, b] of batches.entries()) assert.equal(firstPartition(await client.request(0, 9, produceBody('keep', 1, Buffer.from(b)))).baseOffset, BigInt(i));
  client.close();
  await stop(proc, 'SIGTERM');

  proc = await spawnBroker(dataDir);
  t.after(() => stop(proc, 'SIGKILL'));
  client = await WireClient.connect(proc.port);
  t.after(() => client.close());
  const resent = firstPartition(await client.request(0, 9, produceBody('keep', 1, Buffer.from(batches[1] as Buffer))));
  assert.deepEqual([resent.errorCode, resent.baseOffset], [0, 1n]);
  const next = firstPartition(await client.request(0, 9, produceBody('keep', 1, batchOf(['r3'], { producerId, producerEpoch: 0, baseSequence: 3 }))));
  assert.deepEqual([next.errorCode, next.baseOffset], [0, 3n]);
  assert.deepEqual(await readAll(client, 'keep', 1), [[0, 'r0'], [1, 'r1'], [2, 'r2'], [3, 'r3']]);
  const secondId = await initProducer(client);
  assert.ok(secondId > producerId, 'producer ids are never handed out twice, across restarts too');
});

test('kill -9 in 10 cycles while 3 idempotent producers send with acks=all: every acknowledged record exactly once, offsets contiguous', async (t) => {
  const dataDir = await tempDir();
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const PRODUCERS = 3;
  const CYCLES = 10;
  const ACKS_PER_CYCLE = 30;
  let proc = await spawnBroker(dataDir);
  t.after(() => (proc.child.exitCode === null ? stop(proc, 'SIGKILL') : undefined));
  const admin = await WireClient.connect(proc.port);
  await admin.request(19, 7, { topics: [{ name: 'crash', numPartitions: PRODUCERS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
  const producers = await Promise.all(Array.from({ length: PRODUCERS }, async (_, i) => ({ partition: i, producerId: await initProducer(admin), seq: 0, acked: new Map<string, bigint>() })));
  admin.close();

  for (let cycle = 0; cycle < CYCLES; cycle++) {
    if (cycle > 0) proc = await spawnBroker(dataDir);
    let acks = 0;
    let killed = false;
    const killNow = async () => {
      if (killed) return;
      killed = true;
      await stop(proc, 'SIGKILL');
    };
    // Each producer sends one batch at a time and resends an unacknowledged one (same sequence) after a restart.
    const loops = producers.map(async (p) => {
      const client = await WireClient.connect(proc.port);
      try {
        while (!killed) {
          const value = `p${p.partition}-${p.seq}`;
          const batch = batchOf([value], { producerId: p.producerId, producerEpoch: 0, baseSequence: p.seq });
          const res = firstPartition(await client.request(0, 9, produceBody('crash', p.partition, batch)));
          assert.equal(res.errorCode, 0, `${value}: ${res.errorMessage}`);
          p.acked.set(value, res.baseOffset);
          p.seq++;
          if (++acks >= ACKS_PER_CYCLE) void killNow();
        }
      } catch (err) {
        if (!killed) throw err;
      } finally {
        client.close();
      }
    });
    await Promise.all(loops);
    await killNow();
  }

  proc = await spawnBroker(dataDir);
  const reader = await WireClient.connect(proc.port);
  t.after(() => reader.close());
  for (const p of producers) {
    const records = await readAll(reader, 'crash', p.partition);
    assert.deepEqual(
      records.map(([offset]) => offset),
      records.map((_, i) => i),
      'offsets are contiguous from 0',
    );
    const values = records.map(([, v]) => v);
    assert.equal(new Set(values).size, values.length, 'no record is stored twice');
    for (const [value, offset] of p.acked) assert.deepEqual(records[Number(offset)], [Number(offset), value], `acknowledged ${value} is at offset ${offset}`);
    assert.ok(p.acked.size >= ACKS_PER_CYCLE / PRODUCERS, 'each producer got acknowledgements');
    // Sequences are gap-free, so the log holds exactly the values p-0 .. p-(n-1), in order.
    assert.deepEqual(values, values.map((_, i) => `p${p.partition}-${i}`));
  }
});
