// Real clients against the data path: kafkajs produces (acks 1 and all, gzip, idempotent), kcat produces and
// consumes by partition and offset; every key, value, header, timestamp and offset is checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { startBroker } from '../../helpers/broker.js';

/** Runs a command asynchronously (never blocking the in-process broker) and resolves with its stdout. */
function run(cmd: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited with ${code}: ${err}`))));
    child.stdin.end(input ?? '');
  });
}

interface Consumed {
  key: string;
  value: string;
  timestamp: number;
  offset: number;
  headers: string;
}

/** kcat -C from an offset to the end of the partition; null keys/values print as NULL. */
async function kcatConsume(bootstrap: string, topic: string, partition: number, offset = 0): Promise<Consumed[]> {
  const out = await run('kcat', ['-b', bootstrap, '-C', '-t', topic, '-p', String(partition), '-o', String(offset), '-e', '-q', '-Z', '-f', '%k\t%s\t%T\t%o\t%h\n']);
  return out
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      const [key = '', value = '', ts = '', off = '', headers = ''] = l.split('\t');
      return { key, value, timestamp: Number(ts), offset: Number(off), headers };
    });
}

test('kafkajs produces with acks 1 and all, gzip and idempotence; kcat reads every field back', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-test', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await admin.createTopics({ topics: [{ topic: 'js', numPartitions: 3 }] });

  const plain = kafka.producer();
  await plain.connect();
  t.after(() => plain.disconnect());
  const idem = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await idem.connect();
  t.after(() => idem.disconnect());

  const T = 1_700_000_000_000;
  const r1 = await plain.send({
    topic: 'js',
    acks: 1,
    messages: [
      { partition: 0, key: 'k0', value: 'v0', timestamp: String(T), headers: { h1: 'a', h2: 'b' } },
      { partition: 0, key: null, value: 'no-key', timestamp: String(T + 1) },
    ],
  });
  assert.deepEqual(r1.map((r) => [r.partition, r.errorCode, r.baseOffset]), [[0, 0, '0']]);
  await plain.send({ topic: 'js', acks: -1, compression: CompressionTypes.GZIP, messages: [{ partition: 0, key: 'k2', value: null, timestamp: String(T + 2) }] });
  for (let i = 0; i < 3; i++) {
    await idem.send({ topic: 'js', acks: -1, compression: CompressionTypes.GZIP, messages: [{ partition: 1, key: `i${i}`, value: `idem-${i}`, timestamp: String(T + 10 + i) }] });
  }

  const p0 = await kcatConsume(b.bootstrap, 'js', 0);
  assert.deepEqual(p0, [
    { key: 'k0', value: 'v0', timestamp: T, offset: 0, headers: 'h1=a,h2=b' },
    { key: 'NULL', value: 'no-key', timestamp: T + 1, offset: 1, headers: '' },
    { key: 'k2', value: 'NULL', timestamp: T + 2, offset: 2, headers: '' },
  ]);
  const p1 = await kcatConsume(b.bootstrap, 'js', 1, 1);
  assert.deepEqual(p1.map((r) => [r.key, r.value, r.timestamp, r.offset]), [
    ['i1', 'idem-1', T + 11, 1],
    ['i2', 'idem-2', T + 12, 2],
  ]);
  const offsets = await admin.fetchTopicOffsets('js');
  assert.deepEqual(offsets.sort((x, y) => x.partition - y.partition).map((o) => [o.partition, o.low, o.high]), [[0, '0', '3'], [1, '0', '3'], [2, '0', '0']]);
  const byTime = await admin.fetchTopicOffsetsByTimestamp('js', T + 1);
  assert.equal(byTime.find((o) => o.partition === 0)?.offset, '1');
});

test('kcat produce → kcat consume round trip with keys, headers, null values, several codecs', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  const codecs = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
  const before = Date.now();
  for (const [i, codec] of codecs.entries()) {
    await run('kcat', ['-b', b.bootstrap, '-P', '-t', 'kc', '-p', '0', '-K', ':', '-H', `codec=${codec}`, '-H', 'dup=1', '-H', 'dup=2', '-z', codec, '-X', 'acks=all'], `key${i}:value-${codec}\n`);
  }
  await run('kcat', ['-b', b.bootstrap, '-P', '-t', 'kc', '-p', '0', '-Z', '-K', ':'], 'nullkey:\n');
  const got = await kcatConsume(b.bootstrap, 'kc', 0);
  assert.deepEqual(
    got.slice(0, codecs.length).map((r) => [r.key, r.value, r.offset, r.headers]),
    codecs.map((c, i) => [`key${i}`, `value-${c}`, i, `codec=${c},dup=1,dup=2`]),
  );
  assert.deepEqual([got[codecs.length]?.key, got[codecs.length]?.value, got[codecs.length]?.offset], ['nullkey', 'NULL', codecs.length]);
  const after = Date.now();
  assert.ok(got.every((r) => r.timestamp >= before && r.timestamp <= after), 'CreateTime timestamps were set by kcat while producing');
});
