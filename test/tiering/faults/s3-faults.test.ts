// Tiering under S3 faults. The broker's warehouse is on s3rver THROUGH a fault-injecting proxy
// (test/helpers/fault-proxy.ts, seeded): while 503 SlowDown answers, added latency and dropped connections
// (before the store saw the request, after it applied it, and mid-answer) hit every S3 request tiering makes,
// a producer (acks=all, idempotent) writes continuously. The test checks that:
//   - produce keeps working: every send is acknowledged (S3 is not on the produce path);
//   - hot fetch keeps working: right after each acknowledged send, kcat (CRCs checked) reads the records from
//     that send's base offset to the end of the log, and gets exactly what was sent since;
//   - the faults really hit tiering's requests (the proxy counts errors and drops of each kind);
// then turns the faults off and checks that tiering catches up (the table's committed offset of every
// partition reaches the log end), the local hand-off runs, the table (read by DuckDB from S3 directly, not
// through the proxy) has exactly one row per record with the acknowledged keys and values, and a fetch from
// offset 0 (Parquet-served, then local) returns every record exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { S3FileIO } from '../../../iceberg/io/s3.js';
import { spawnBroker, tempDir } from '../../helpers/broker.js';
import { stop } from '../../helpers/crash-harness.js';
import { startFaultProxy } from '../../helpers/fault-proxy.js';
import { s3WarehouseFlags, startS3Server } from '../../helpers/s3-server.js';
import { kcatRead, latestProperty, loadTable, waitFor } from '../../helpers/tiered-table.js';
import { readWithDuckDB } from '../e2e/table-readers.js';

const TOPIC = 'faulty';
const PARTITIONS = 2;
const PAD = 'y'.repeat(80);
/** Sends made while the faults are on (5 records each), at least; more until the proxy has seen enough. */
const SENDS = 240;
const MIN_FAULTY_REQUESTS = 180;

interface Sent {
  partition: number;
  offset: number;
  key: string;
  value: string;
}

async function localStart(logDir: string, partition: number): Promise<number> {
  const names = (await readdir(join(logDir, `${TOPIC}-${partition}`))).filter((n) => n.endsWith('.log'));
  return Math.min(...names.map((n) => Number(n.slice(0, -4))));
}

test('tiering through S3 errors, latency and dropped connections: produce and hot fetch keep working, then it catches up with nothing lost or duplicated', { timeout: 300_000 }, async (t) => {
  const root = await tempDir('floe-s3-faults-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const s3 = await startS3Server({ bucket: 'floe-faults' });
  cleanups.push(() => s3.stop());
  const proxy = await startFaultProxy(s3.endpoint, { seed: 6 });
  cleanups.push(() => proxy.close());
  const logDir = join(root, 'log');
  const broker = await spawnBroker(logDir, [
    '--remote.log.storage.system.enable=true',
    ...s3WarehouseFlags(s3, { endpoint: proxy.endpoint }),
    '--iceberg.rest.port=0',
    '--iceberg.rest.host=127.0.0.1',
    '--log.retention.check.interval.ms=200',
  ]);
  cleanups.push(() => stop(broker));
  const restUrl = broker.restUrl;
  assert.ok(restUrl, 'the REST catalog runs');

  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'faults', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic: TOPIC, numPartitions: PARTITIONS, configEntries: [
      { name: 'internal.segment.bytes', value: '4096' },
      { name: 'local.retention.bytes', value: '0' },
      { name: 'iceberg.commit.interval.ms', value: '300' },
    ] }],
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await producer.connect();
  cleanups.push(() => producer.disconnect());

  // Faults on: every S3 request of tiering (uploads, range reads, catalog metadata and pointer) may fail.
  proxy.set({ errorRate: 0.4, dropRate: 0.15, latencyMs: 2, jitterMs: 20 });
  const sent: Sent[] = [];
  let hotReads = 0;
  for (let i = 0; i < SENDS || proxy.stats().requests < MIN_FAULTY_REQUESTS; i++) {
    const partition = i % PARTITIONS;
    const messages = Array.from({ length: 5 }, (_, j) => ({ key: `k${i}-${j}`, value: `v${i}-${j}-${PAD}`, partition }));
    const [meta] = await producer.send({ topic: TOPIC, acks: -1, messages });
    assert.ok(meta && meta.errorCode === 0, `send ${i} acknowledged`);
    const base = Number(meta.baseOffset);
    for (const [j, m] of messages.entries()) sent.push({ partition, offset: base + j, key: m.key, value: m.value });
    if (i % 40 === 39) {
      // Hot fetch: the records from this send's base offset to the log end are the ones just acknowledged.
      const got = await kcatRead(broker.bootstrap, TOPIC, partition, base);
      assert.deepEqual(got, messages.map((m, j) => ({ offset: base + j, key: m.key, value: m.value })), `hot fetch of partition ${partition} from ${base} during faults`);
      hotReads++;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const faulty = proxy.stats();
  t.diagnostic(`during faults: ${sent.length} records acknowledged, ${hotReads} hot reads, proxy ${JSON.stringify(faulty)}`);
  assert.ok(faulty.errors > 0 && faulty.dropsMidRequest > 0 && faulty.dropsAfterUpstream > 0 && faulty.dropsMidResponse > 0, `every kind of fault was injected: ${JSON.stringify(faulty)}`);

  // Faults off: tiering retries and catches up to the log end.
  proxy.set({});
  const ends = new Map((await admin.fetchTopicOffsets(TOPIC)).map((o) => [o.partition, Number(o.high)]));
  for (let p = 0; p < PARTITIONS; p++) assert.equal(ends.get(p), sent.filter((s) => s.partition === p).length, `partition ${p}: the log holds exactly the acknowledged records`);
  await waitFor('tiering to commit every partition to its log end', async () => {
    const load = await loadTable(restUrl, TOPIC);
    if (load === undefined) return undefined;
    for (let p = 0; p < PARTITIONS; p++) if (Number(latestProperty(load, `floe.kafka.committed-offset.${p}`) ?? -1) !== (ends.get(p) ?? 0) - 1) return undefined;
    return true;
  }).catch((err: unknown) => {
    const warnings = broker.output().split('\n').filter((l) => /"level":"(warn|error)"/.test(l)).slice(-5);
    throw new Error(`${String(err)}; log ends ${JSON.stringify([...ends])}; broker warnings:\n${warnings.join('\n')}`);
  });
  for (let p = 0; p < PARTITIONS; p++) await waitFor(`local segments of partition ${p} to be handed off`, async () => ((await localStart(logDir, p)) > 0 ? true : undefined));
  const failures = broker.output().split('\n').filter((l) => l.includes('tiering step failed')).length;

  const io = new S3FileIO(s3.fileIOOptions());
  cleanups.push(() => io.close());
  const rows = await readWithDuckDB(t, restUrl, io, ['kafka'], TOPIC);
  for (let p = 0; p < PARTITIONS; p++) {
    const want = sent.filter((s) => s.partition === p).map(({ offset, key, value }) => ({ offset, key, value }));
    assert.deepEqual(want.map((w) => w.offset), Array.from({ length: ends.get(p) ?? 0 }, (_, i) => i), `partition ${p}: acknowledged offsets are 0..end-1`);
    const inTable = rows.filter((r) => r.partition === p).map((r) => ({ offset: r.offset, key: r.key?.toString() ?? '', value: r.value?.toString() ?? '' }));
    assert.deepEqual(inTable, want, `partition ${p}: one table row per acknowledged record, none lost or duplicated`);
    const fetched = await kcatRead(broker.bootstrap, TOPIC, p, 0);
    assert.deepEqual(fetched, want, `partition ${p}: a fetch from offset 0 after the hand-off returns every record exactly`);
  }
  t.diagnostic(`after faults: log ends ${JSON.stringify([...ends])}, ${rows.length} table rows, ${failures} tiering steps failed and were retried, proxy ${JSON.stringify(proxy.stats())}`);
});
