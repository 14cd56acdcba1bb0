// The maintenance soak (issue 12), bounded for CI: a broker as users run it, a 1-second commit interval and
// steady produce on three partitions for about a minute, with compaction, snapshot expiry and orphan-free
// history working by themselves. Throughout the run the snapshots of the table and the data files of each
// partition stay under bounds that an unmaintained table passes within the first minute; a consumer reading
// every partition from offset 0 (the history comes from the table) never sees an error, a gap, a duplicate or
// a changed byte; and at the end Kafka reads, DuckDB (over icebird's manifest reading) and pyiceberg all return
// exactly the produced records. bench/ has no longer variant yet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompressionTypes, Kafka, Partitioners, logLevel } from 'kafkajs';
import { spawnBroker, tempDir } from '../../helpers/broker.js';
import { stop } from '../../helpers/crash-harness.js';
import { runVenvPython } from '../../helpers/peers.js';
import { liveDataFiles, loadTable, tableRows, waitFor } from '../../helpers/tiered-table.js';
import { fetchAllBatches } from '../../tiering/e2e/wire.js';

const TOPIC = 'soak';
const PARTITIONS = 3;
const PRODUCE_MS = 60_000;
/** Bounds the maintained table stays under (an unmaintained one gains a snapshot and a file per partition every second). */
const MAX_SNAPSHOTS = 40;
const MAX_FILES_PER_PARTITION = 24;
/** Samples before this are not held to the bounds: expiry needs the table to be older than its max age first. */
const WARM_UP_MS = 20_000;
const PYICEBERG = fileURLToPath(new URL('../../interop/engines/pyiceberg_driver.py', import.meta.url));

function filesPerPartition(files: readonly string[]): number[] {
  const counts = Array.from({ length: PARTITIONS }, () => 0);
  for (const f of files) {
    const p = Number(/partition=(\d+)/.exec(f)?.[1]);
    counts[p] = (counts[p] ?? 0) + 1;
  }
  return counts;
}

test('a 1-second commit interval under steady produce: snapshots and files stay bounded, and every reader sees exactly the produced records throughout', { timeout: 360_000 }, async (t) => {
  const root = await tempDir('floe-soak-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const warehouse = join(root, 'warehouse');
  const b = await spawnBroker(join(root, 'log'), [
    '--remote.log.storage.system.enable=true',
    `--iceberg.warehouse=${warehouse}`,
    '--iceberg.rest.port=0',
    '--iceberg.rest.host=127.0.0.1',
    '--iceberg.maintenance.interval.ms=1000',
    '--log.retention.check.interval.ms=200',
  ]);
  cleanups.push(() => stop(b));
  const restUrl = b.restUrl as string;
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'soak', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  await admin.createTopics({
    topics: [{ topic: TOPIC, numPartitions: PARTITIONS, configEntries: [
      { name: 'internal.segment.bytes', value: '4096' },
      { name: 'local.retention.bytes', value: '0' },
      { name: 'iceberg.commit.interval.ms', value: '1000' },
      { name: 'iceberg.compaction.min.input.files', value: '4' },
      { name: 'iceberg.compaction.target.file.size.bytes', value: String(1 << 20) },
    ] }],
  });
  // Snapshots expire after 5 s: set on the table through the REST catalog, as an engine's ALTER TABLE would.
  await waitFor('the table', async () => (await loadTable(restUrl, TOPIC)) ?? undefined);
  const set = await fetch(`${restUrl}/v1/namespaces/kafka/tables/${TOPIC}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ requirements: [], updates: [{ action: 'set-properties', updates: { 'history.expire.max-snapshot-age-ms': '5000' } }] }),
  });
  assert.equal(set.status, 200, await set.text());

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  const produced: string[][] = Array.from({ length: PARTITIONS }, () => []);
  const started = Date.now();
  let producing = true;
  const producing$ = (async () => {
    for (let i = 0; producing; i++) {
      const messages = Array.from({ length: PARTITIONS }, (_, p) => ({ partition: p, key: `k${i}`, value: `p${p}-${i}-${'x'.repeat(i % 64)}` }));
      await producer.send({ topic: TOPIC, compression: CompressionTypes.None, messages });
      for (const m of messages) produced[m.partition]?.push(m.value);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();

  // The consumer: passes over every partition from offset 0, through Fetch (the tiered part from the table).
  const seen = Array.from({ length: PARTITIONS }, () => new Map<number, Buffer>());
  let passes = 0;
  let reading = true;
  const reading$ = (async () => {
    while (reading) {
      for (let p = 0; p < PARTITIONS; p++) {
        let expect = 0;
        for (const { bytes, batch } of await fetchAllBatches(b.port, TOPIC, p, 0, 64 * 1024)) {
          assert.equal(Number(batch.baseOffset), expect, `pass ${passes}, partition ${p}: a batch at ${expect}, no gap, no duplicate`);
          expect = Number(batch.baseOffset) + batch.lastOffsetDelta + 1;
          const first = seen[p]?.get(Number(batch.baseOffset));
          if (first === undefined) seen[p]?.set(Number(batch.baseOffset), bytes);
          else assert.deepEqual(bytes, first, `pass ${passes}, partition ${p}: batch ${batch.baseOffset} unchanged`);
        }
      }
      passes++;
    }
  })();

  // The bounds, sampled every second.
  let samples = 0;
  let maxSnapshots = 0;
  let maxFiles = 0;
  let commits = 0;
  try {
    while (Date.now() - started < PRODUCE_MS) {
      await new Promise((r) => setTimeout(r, 1000));
      const load = await loadTable(restUrl, TOPIC);
      const metadata = load?.['metadata'] as { snapshots?: unknown[]; 'last-sequence-number'?: number } | undefined;
      const snapshots = metadata?.snapshots?.length ?? 0;
      const files = filesPerPartition(await liveDataFiles(restUrl, TOPIC, warehouse));
      commits = Number(metadata?.['last-sequence-number'] ?? 0);
      if (Date.now() - started < WARM_UP_MS) continue;
      samples++;
      maxSnapshots = Math.max(maxSnapshots, snapshots);
      maxFiles = Math.max(maxFiles, ...files);
      assert.ok(snapshots <= MAX_SNAPSHOTS, `${snapshots} snapshots after ${commits} commits (at most ${MAX_SNAPSHOTS})`);
      for (const [p, n] of files.entries()) assert.ok(n <= MAX_FILES_PER_PARTITION, `partition ${p} has ${n} data files (at most ${MAX_FILES_PER_PARTITION})`);
    }
  } finally {
    producing = false;
    await producing$;
    reading = false;
    await reading$;
  }
  assert.ok(samples >= 10, `${samples} samples held to the bounds`);
  assert.ok(commits > MAX_SNAPSHOTS, `the run made ${commits} commits, more than the snapshot bound, so expiry was needed`);
  t.diagnostic(`${commits} commits; at most ${maxSnapshots} snapshots and ${maxFiles} data files per partition; ${passes} consumer passes; ${produced.flat().length} records`);

  // Settled: the table holds everything; Kafka, DuckDB and pyiceberg read exactly the produced records.
  const ends = (await admin.fetchTopicOffsets(TOPIC)).sort((x, y) => x.partition - y.partition).map((o) => Number(o.high));
  assert.deepEqual(ends, produced.map((v) => v.length));
  await waitFor('the table to hold every record', async () => ((await tableRows(restUrl, TOPIC, warehouse)).length === ends.reduce((a, x) => a + x, 0) ? true : undefined), 120_000, 500);
  const expected = produced.flatMap((values, p) => values.map((v, o) => `${p}/${o}/${v}`));
  for (let p = 0; p < PARTITIONS; p++) {
    const fetched = (await fetchAllBatches(b.port, TOPIC, p, 0, 1 << 20)).flatMap(({ batch }) => batch.records.map((r) => r.value?.toString()));
    assert.deepEqual(fetched, produced[p], `Kafka reads partition ${p} from offset 0`);
  }
  const rows = await tableRows(restUrl, TOPIC, warehouse);
  assert.deepEqual(rows.map((r) => `${r.partition}/${r.offset}/${r.value?.toString()}`), expected, 'DuckDB over the live files icebird lists');
  const scan = JSON.parse(await runVenvPython(PYICEBERG, JSON.stringify({ catalog: { type: 'rest', uri: restUrl }, table: `kafka.${TOPIC}`, scans: [{ filter: null }] }))) as { scans: { rows: [{ partition: number; offset: number }, { b64: string }][] }[] };
  const pyRows = (scan.scans[0]?.rows ?? []).map(([k, v]) => `${k.partition}/${k.offset}/${Buffer.from(v.b64, 'base64').toString()}`);
  assert.deepEqual(pyRows, expected, 'pyiceberg');
});
