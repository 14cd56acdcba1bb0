// The recovery runbook, scripted with the real `floe` CLI: a bad deployment writes malformed records among
// good ones; `floe table hide` removes exactly them from the table (checked by pyiceberg, which applies
// position deletes), while a Kafka consumer keeps reading every original byte (local segments handed off,
// so the early offsets come from the table's Parquet files); `floe table rollback` is refused where it would
// take offsets from Kafka consumers and allowed where it only undoes a hide; the hide survives compaction
// and snapshot expiry, and DeleteRecords into the hidden range.
import { test } from 'node:test';
import { waitFor } from '../../helpers/tiered-table.js';
import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { runFloe } from '../../helpers/cli.js';
import { runVenvPython } from '../../helpers/peers.js';
import { fetchAllBatches } from '../../tiering/e2e/wire.js';

const PYICEBERG = fileURLToPath(new URL('../../interop/engines/pyiceberg_driver.py', import.meta.url));
const TOPIC = 'payments';

test('runbook: hide bad records from the table while Kafka serves every byte; rollback only where Kafka loses nothing', { timeout: 240_000 }, async (t) => {
  const root = await tempDir('floe-runbook-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const flags = ['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--iceberg.commit.interval.ms=500', '--log.retention.check.interval.ms=3600000'];
  const dataDir = join(root, 'data');
  await mkdir(dataDir);
  const b = await startBroker(flags, { dataDir });
  let stopped = false;
  cleanups.push(() => (stopped ? Promise.resolve() : b.stop()));
  let restUrl = b.broker.services.tiering?.restCatalogUrl ?? '';
  const env = { FLOE_ADMIN_URL: b.adminUrl ?? '' };
  const floe = async (...args: string[]) => {
    const r = await runFloe(args, env);
    return r;
  };
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-runbook', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1, configEntries: [{ name: 'internal.segment.bytes', value: '1024' }, { name: 'local.retention.bytes', value: '0' }, { name: 'iceberg.compaction.enabled', value: 'false' }] }] });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  cleanups.push(() => producer.disconnect());

  // Offsets 0..49 good, 50..59 from the bad deployment, 60..119 good again (each send its own batch).
  const values: string[] = [];
  const send = async (from: number, to: number, make: (i: number) => string) => {
    for (let i = from; i <= to; i += 5) {
      const batch = Array.from({ length: 5 }, (_, j) => make(i + j));
      values.push(...batch);
      await producer.send({ topic: TOPIC, messages: batch.map((v, j) => ({ key: `k${i + j}`, value: v })) });
    }
  };
  await send(0, 49, (i) => `{"amount":${i}}`.padEnd(60, ' '));
  await send(50, 59, (i) => `<<malformed ${i}>>`.padEnd(60, '!'));
  await send(60, 119, (i) => `{"amount":${i}}`.padEnd(60, ' '));
  const committed = async () => {
    const r = await floe('tables', '--json');
    return (JSON.parse(r.stdout) as { tables: { records: number; lagRecords: number }[] }).tables[0];
  };
  await waitFor('every record committed', async () => ((await committed())?.records === 120 && (await committed())?.lagRecords === 0 ? true : undefined));
  // Hand the local segments off: the early offsets are now read from the table's files.
  const plog = b.broker.services.logs.get(TOPIC, 0);
  assert.ok(plog);
  assert.ok((await plog.enforceRetention()) > 0);
  assert.ok(plog.logStartOffset > 60, `local log starts at ${plog.logStartOffset}: the bad range is served from the table`);

  const kafkaBytes = async () => {
    const batches = await fetchAllBatches(b.port, TOPIC, 0, 0, 4096);
    const read = batches.flatMap(({ batch }) => batch.records.map((r) => r.value?.toString() ?? ''));
    assert.deepEqual(read, values, 'Kafka reads every produced record, in order');
    return Buffer.concat(batches.map((x) => x.bytes));
  };
  const original = await kafkaBytes();
  const tableValues = async () => {
    const scan = JSON.parse(await runVenvPython(PYICEBERG, JSON.stringify({ catalog: { type: 'rest', uri: restUrl }, table: `kafka.${TOPIC}`, scans: [{ filter: null }] }))) as { scans: { rows: [{ offset: number }, { b64: string }][] }[] };
    return (scan.scans[0]?.rows ?? []).map(([k, v]) => [k.offset, Buffer.from(v.b64, 'base64').toString()] as const);
  };
  const all = values.map((v, i) => [i, v] as const);
  const good = all.filter(([o]) => o < 50 || o > 59);
  assert.deepEqual(await tableValues(), all, 'before: the table holds every record');

  const snapshots = async () => (JSON.parse((await floe('table', 'status', TOPIC, '--json')).stdout) as { snapshots: { snapshotId: string; current: boolean; committedOffsets: Record<string, number> }[] }).snapshots;
  const beforeHide = await snapshots();
  const preHide = beforeHide.find((s) => s.current)?.snapshotId ?? '';
  const early = beforeHide.find((s) => (s.committedOffsets['0'] ?? -1) < 119)?.snapshotId ?? '';
  assert.ok(preHide !== '' && early !== '', 'an earlier snapshot exists (several commits)');

  // Hide the bad range.
  const hide = await floe('table', 'hide', `kafka.${TOPIC}`, '--partition', '0', '--from-offset', '50', '--to-offset', '59');
  assert.equal(hide.code, 0, hide.stderr);
  assert.match(hide.stdout, /^hid 10 rows of kafka\.payments partition 0, offsets 50\.\.59/);
  assert.deepEqual(await tableValues(), good, 'after hide: exactly the bad rows are gone from the table');
  assert.ok(original.equals(await kafkaBytes()), 'Kafka still serves every original byte');
  const again = await floe('table', 'hide', TOPIC, '--partition', '0', '--from-offset', '50', '--to-offset', '59');
  assert.equal(again.code, 0);
  assert.match(again.stdout, /^hid 0 rows/, 'hiding again changes nothing');
  const beyond = await floe('table', 'hide', TOPIC, '--partition', '0', '--from-offset', '100', '--to-offset', '199');
  assert.equal(beyond.code, 1, 'offsets the table does not hold yet are refused');
  assert.match(beyond.stderr, /not in the table yet/);

  // Rolling back to before the later commits would take offsets from Kafka consumers: refused.
  const refused = await floe('table', 'rollback', TOPIC, '--to-snapshot', early);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /would take records Kafka consumers still read from the table \(partition 0: offsets \d+\.\.119\)/);
  assert.deepEqual(await tableValues(), good, 'a refused rollback changes nothing');
  assert.ok(original.equals(await kafkaBytes()));

  // Rolling back to the snapshot before the hide only undoes it: allowed, as a new snapshot.
  const rolled = await floe('table', 'rollback', TOPIC, '--to-snapshot', preHide);
  assert.equal(rolled.code, 0, rolled.stderr);
  assert.match(rolled.stdout, /^rolled payments back to snapshot \d+ \(1 partitions changed, as a new snapshot\)/);
  assert.deepEqual(await tableValues(), all, 'after rollback: the hidden rows are back');
  assert.ok(original.equals(await kafkaBytes()));

  // Hide again, then compact and expire: the hide stays.
  assert.equal((await floe('table', 'hide', TOPIC, '--partition', '0', '--from-offset', '50', '--to-offset', '59')).code, 0);
  const compact = await floe('table', 'compact', TOPIC, '--min-input-files', '2', '--json');
  assert.equal(compact.code, 0, compact.stderr);
  assert.equal((JSON.parse(compact.stdout) as { results: { status: string }[] }).results[0]?.status, 'compacted', 'the segments without deletes were merged');
  assert.equal((await floe('table', 'expire', TOPIC)).code, 0);
  assert.deepEqual(await tableValues(), good, 'the hide survives compaction and expiry');
  assert.ok(original.equals(await kafkaBytes()), 'Kafka reads the same bytes after compaction');
  // Compaction changed the offset index: going back to before the hide would now lose what Kafka reads.
  const afterCompaction = await floe('table', 'rollback', TOPIC, '--to-snapshot', preHide);
  assert.equal(afterCompaction.code, 1);
  assert.match(afterCompaction.stderr, /would take records Kafka consumers still read/);

  // DeleteRecords into the hidden range replaces only its own deletes: the rest of the hide stays.
  await admin.fetchTopicMetadata({ topics: [TOPIC] });
  await admin.deleteTopicRecords({ topic: TOPIC, partitions: [{ partition: 0, offset: '53' }] });
  assert.deepEqual(await tableValues(), good.filter(([o]) => o >= 53), 'rows below the new log start are gone, the hidden ones stay hidden');

  // And across a restart: the hide is in the table's committed history, not in the broker's memory.
  await producer.disconnect();
  await admin.disconnect();
  await b.stop();
  stopped = true;
  const again2 = await startBroker(flags, { dataDir });
  cleanups.push(() => again2.stop());
  restUrl = again2.broker.services.tiering?.restCatalogUrl ?? '';
  assert.deepEqual(await tableValues(), good.filter(([o]) => o >= 53), 'after a restart');
  const status = await runFloe(['table', 'status', TOPIC, '--json'], { FLOE_ADMIN_URL: again2.adminUrl ?? '' });
  assert.ok((JSON.parse(status.stdout) as { deleteFiles: number }).deleteFiles >= 1);
});
