// kill -9 of the broker (dist/broker/main.js) while its log cleaner is compacting, several cycles: each
// cycle produces updates over a few keys (acks=all) while the cleaner runs slowly (its I/O throttled), kills
// the broker once a clean has started and not finished, restarts it on the same log directory and checks
// with kcat (CRCs verified) that nothing acknowledged was lost and no offset moved: every acknowledged
// record is still at its offset unless a later record of its key (at a higher offset) superseded it, and the
// latest acknowledged value of every key survives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { spawnBroker, tempDir, type BrokerProcess } from '../../../helpers/broker.js';
import { waitFor } from '../../../helpers/tiered-table.js';
import { KcatClient } from '../../../interop/clients/kcat.js';

const TOPIC = 'compacted-crash';
const KEYS = 10;
const CYCLES = 4;
const FLAGS = ['--log.cleaner.backoff.ms=100', '--log.cleaner.io.max.bytes.per.second=60000'];

interface Acked {
  offset: number;
  key: string;
  value: string;
}

/** A clean has started and not finished, after at least one clean of this run finished. */
function inProgress(output: string): boolean {
  const done = (output.match(/"msg":"cleaned a compacted partition"/g) ?? []).length;
  return done > 0 && (output.match(/"msg":"cleaning a compacted partition"/g) ?? []).length > done;
}

async function kill(p: BrokerProcess): Promise<void> {
  p.child.kill('SIGKILL');
  const { signal } = await p.ended;
  assert.equal(signal, 'SIGKILL');
}

test('kill -9 during log cleaning, several cycles: nothing acknowledged is lost and offsets never move', { timeout: 600_000 }, async (t) => {
  const dataDir = await tempDir('floe-compaction-crash-');
  const acked: Acked[] = [];
  let seq = 0;
  let midClean = 0;
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const broker = await spawnBroker(dataDir, FLAGS);
    t.after(() => kill(broker).catch(() => undefined));
    if (cycle > 0) await verify(broker.bootstrap, acked, `after crash ${cycle}`);
    const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: `crash-${cycle}`, logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    if (cycle === 0) {
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({
        topics: [{ topic: TOPIC, numPartitions: 1, configEntries: [
          { name: 'cleanup.policy', value: 'compact' },
          { name: 'internal.segment.bytes', value: '4000' },
          { name: 'min.cleanable.dirty.ratio', value: '0.01' },
          { name: 'delete.retention.ms', value: '600000' },
        ] }],
      });
      await admin.disconnect();
    }
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    // Produce (acks=all) until a second clean of this run is under way, then kill.
    let stop = false;
    const producing = (async () => {
      while (!stop) {
        const batch = Array.from({ length: 10 }, () => {
          const n = seq++;
          return { key: `key-${n % KEYS}`, value: `v${n}-${'p'.repeat(40)}` };
        });
        try {
          const [meta] = await producer.send({ topic: TOPIC, acks: -1, messages: batch });
          const base = Number(meta?.baseOffset);
          batch.forEach((m, i) => acked.push({ offset: base + i, key: m.key, value: m.value }));
        } catch {
          return; // the broker died under the request: not acknowledged
        }
        // At most ~500 records (~30 KB) a second, below the cleaner's 60 KB/s: unthrottled, a fast machine
        // grew the log by hundreds of thousands of records while waiting, until one clean outlasted the wait.
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const sentBefore = acked.length;
    await waitFor('a clean in progress', async () => (acked.length > sentBefore + 500 && inProgress(broker.output()) ? true : undefined), 120_000, 20);
    midClean++;
    await kill(broker);
    stop = true;
    await producing;
    await producer.disconnect().catch(() => undefined);
    const names = await readdir(join(dataDir, `${TOPIC}-0`));
    t.diagnostic(`crash ${cycle + 1}: ${acked.length} acknowledged, files ${names.filter((n) => /\.(swap|cleaned|compacted)$/.test(n)).join(' ') || '(no swap/cleaned/compacted)'}`);
  }
  assert.equal(midClean, CYCLES, 'every kill hit a clean in progress');
  // A last restart: the cleaner finishes, and the log then holds one record per key among the cleaned segments.
  const broker = await spawnBroker(dataDir, ['--log.cleaner.backoff.ms=100']);
  t.after(() => kill(broker).catch(() => undefined));
  await verify(broker.bootstrap, acked, 'final restart');
});

async function verify(bootstrap: string, acked: readonly Acked[], what: string): Promise<void> {
  const kcat = new KcatClient(bootstrap);
  const records = await kcat.consume(TOPIC, 0, 0, 1_000_000);
  await kcat.close();
  const byOffset = new Map(records.map((r) => [r.offset, r]));
  const offsets = records.map((r) => r.offset);
  assert.deepEqual(offsets, [...new Set(offsets)].sort((a, b) => a - b), `${what}: offsets strictly increase`);
  const lastOffsetOfKey = new Map<string, number>();
  for (const r of records) lastOffsetOfKey.set(r.key?.toString() ?? '', r.offset);
  for (const a of acked) {
    const r = byOffset.get(a.offset);
    if (r !== undefined) {
      assert.equal(r.key?.toString(), a.key, `${what}: offset ${a.offset} keeps its key`);
      assert.equal(r.value?.toString(), a.value, `${what}: offset ${a.offset} keeps its value`);
    } else {
      assert.ok((lastOffsetOfKey.get(a.key) ?? -1) > a.offset, `${what}: acknowledged offset ${a.offset} (${a.key}) is gone only because a later record of its key superseded it`);
    }
  }
  const latestAcked = new Map<string, Acked>();
  for (const a of acked) latestAcked.set(a.key, a);
  for (const [key, a] of latestAcked) {
    const last = lastOffsetOfKey.get(key);
    assert.ok(last !== undefined && last >= a.offset, `${what}: the latest acknowledged value of ${key} (offset ${a.offset}) or a later one survives`);
  }
  assert.ok(records.length < acked.length, `${what}: compaction removed records (${records.length} of ${acked.length} left)`);
}
