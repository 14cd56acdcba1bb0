// The table of a transactional topic holds only committed records. kafkajs transactional producers commit
// and abort transactions beside a plain producer, and one transaction stays open across segment rolls and
// table commits. While it is open, the table's commits go past it, and pyiceberg, icebird and DuckDB read
// exactly the committed records the table has reached: never a marker, never an aborted record, never one of
// the open transaction (transactions committed after it began are there). Once it commits, its records
// appear. After the local segments are handed off, Kafka consumers reading from the table get
// what the hot log gave them: read_uncommitted every record (aborted ones included, from the same data files),
// read_committed only the committed ones, with the same aborted-transaction lists.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { parseJson } from '../../../iceberg/json.js';
import { decodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { startBroker, tempDir, type TestBroker } from '../../helpers/broker.js';
import { venvPython } from '../../helpers/peers.js';
import { waitFor } from '../../helpers/tiered-table.js';
import { ChildRunner } from '../../interop/clients/process.js';
import { consumeKeys } from '../../interop/transactions/verify.js';
import { readWithDuckDB, readWithIcebird } from '../../tiering/e2e/table-readers.js';
import { fetchBody, fetchPartitions, WireClient } from '../handlers/wire-client.js';

const TOPIC = 'txn-table';
const PYICEBERG = fileURLToPath(new URL('../../interop/engines/pyiceberg_driver.py', import.meta.url));
const PAD = 'x'.repeat(60);

interface Sweep {
  /** `offset:key` of every data record returned, in offset order. */
  readonly records: string[];
  /** `fetchOffset:producerId@firstOffset` of every aborted-list entry (read_committed). */
  readonly aborted: string[];
}

/** Fetches partition 0 from offset 0 to the end at one isolation level (1: read_committed). */
async function sweep(c: WireClient, isolationLevel: number): Promise<Sweep> {
  const records: string[] = [];
  const aborted: string[] = [];
  let offset = 0n;
  for (;;) {
    const p = fetchPartitions(await c.request(1, 12, fetchBody(TOPIC, [{ partition: 0, fetchOffset: offset }], { isolationLevel })))[0];
    assert.ok(p && p.errorCode === 0, `fetch at ${offset}`);
    const buf = p.records ?? Buffer.alloc(0);
    let next = offset;
    for (const b of iterateBatches(buf)) {
      next = b.lastOffset + 1n;
      const batch = decodeRecordBatch(buf, b.start);
      if (batch.isControl) continue;
      for (const r of batch.records) {
        const o = batch.baseOffset + BigInt(r.offsetDelta);
        if (o >= offset) records.push(`${o}:${r.key?.toString() ?? ''}`);
      }
    }
    if (next === offset) break;
    for (const a of (p.abortedTransactions ?? []) as { producerId: bigint; firstOffset: bigint }[]) aborted.push(`${offset}:${a.producerId}@${a.firstOffset}`);
    offset = next;
  }
  return { records, aborted };
}

/** Keys of the table's rows by three independent readers: pyiceberg (REST catalog), icebird and DuckDB. */
async function tableKeys(t: TestContext, runner: ChildRunner, restUrl: string, io: LocalFileIO): Promise<{ pyiceberg: string[]; icebird: string[]; duckdb: string[] }> {
  const { stdout } = await runner.run(venvPython(), [PYICEBERG], JSON.stringify({ catalog: { type: 'rest', uri: restUrl }, table: `kafka.${TOPIC}`, scans: [{ filter: null }] }), 180_000);
  const scan = (parseJson(stdout.toString()) as unknown as { scans: { rows: [{ key: { b64: string } | null }, unknown][] }[] }).scans[0];
  const pyiceberg = (scan?.rows ?? []).map(([k]) => (k.key === null ? '' : Buffer.from(k.key.b64, 'base64').toString()));
  const icebird = (await readWithIcebird(restUrl, io, ['kafka'], TOPIC)).map((r) => (r.key === null ? '' : Buffer.from(r.key as Buffer).toString()));
  const duckdb = (await readWithDuckDB(t, restUrl, io, ['kafka'], TOPIC)).map((r) => r.key?.toString() ?? '');
  return { pyiceberg, icebird, duckdb };
}

/** Runs `count` transactions of 3 records on `producer`, aborting every third (from the second on). */
async function transactions(producer: Producer, tag: string, count: number, committed: Set<string>, aborted: Set<string>): Promise<void> {
  for (let n = 0; n < count; n++) {
    const txn = await producer.transaction();
    const keys = Array.from({ length: 3 }, (_, i) => `${tag}${n}-${i}`);
    await txn.send({ topic: TOPIC, messages: keys.map((key) => ({ key, value: `${key}-${PAD}` })) });
    if (n % 3 === 1) {
      await txn.abort();
      for (const k of keys) aborted.add(k);
    } else {
      await txn.commit();
      for (const k of keys) committed.add(k);
    }
  }
}

test('the table holds only committed records, an open transaction holds back only its own, and Kafka reads from the table are those of the hot log', { timeout: 300_000 }, async (t) => {
  const root = await tempDir('floe-txn-table-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const warehouse = join(root, 'wh');
  const b: TestBroker = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--log.retention.check.interval.ms=3600000']);
  cleanups.push(() => b.stop());
  const tiering = b.broker.services.tiering;
  assert.ok(tiering);
  const restUrl = tiering.restCatalogUrl;
  assert.ok(restUrl);
  await b.broker.services.topics.createTopic(TOPIC, 1, -1, {
    'remote.storage.enable': 'true',
    'internal.segment.bytes': '1024',
    'local.retention.bytes': '0',
    'iceberg.commit.interval.ms': '300',
  });
  const log = b.broker.services.logs.get(TOPIC, 0);
  assert.ok(log);
  const io = new LocalFileIO({ root: warehouse, fsync: false });
  cleanups.push(() => io.close());
  const runner = new ChildRunner();
  cleanups.push(async () => runner.killAll());

  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'txn-table', logLevel: logLevel.NOTHING });
  const a = kafka.producer({ transactionalId: 'txn-table-a', maxInFlightRequests: 1, idempotent: true });
  const open = kafka.producer({ transactionalId: 'txn-table-open', maxInFlightRequests: 1, idempotent: true });
  const plain = kafka.producer();
  for (const p of [a, open, plain]) {
    await p.connect();
    cleanups.push(() => p.disconnect());
  }
  const committed = new Set<string>();
  const aborted = new Set<string>();
  const sendPlain = async (tag: string): Promise<void> => {
    const keys = Array.from({ length: 4 }, (_, i) => `${tag}-${i}`);
    await plain.send({ topic: TOPIC, messages: keys.map((key) => ({ key, value: `${key}-${PAD}` })) });
    for (const k of keys) committed.add(k);
  };

  await transactions(a, 'a', 9, committed, aborted);
  await sendPlain('p1');
  // The open transaction starts in a fresh segment, so everything before it can be tiered while it is open.
  await log.roll();
  const stableEnd = log.logEndOffset - 1;
  const pending = await open.transaction();
  const openKeys = ['o-0', 'o-1', 'o-2'];
  await pending.send({ topic: TOPIC, messages: openKeys.map((key) => ({ key, value: `${key}-${PAD}` })) });
  await transactions(a, 'b', 6, committed, aborted);
  await sendPlain('p2');
  await log.roll();
  const rolledEnd = log.logEndOffset - 1;

  const c = await WireClient.connect(b.port);
  cleanups.push(async () => c.close());
  const offsetOf = new Map((await sweep(c, 0)).records.map((r) => [r.slice(r.indexOf(':') + 1), Number(r.slice(0, r.indexOf(':')))]));

  // Table commits go on while the transaction is open (the commit interval is 300 ms), past its records.
  const upTo = await waitFor('the table to reach every closed segment, the open transaction\'s included', async () => {
    const at = tiering.lastTieredOffset(TOPIC, 0);
    return at >= rolledEnd ? at : undefined;
  });
  const firstOpen = offsetOf.get('o-0');
  assert.ok(firstOpen !== undefined && firstOpen > stableEnd && firstOpen < upTo, `the table's commits (up to ${upTo}) passed the open transaction's first record (${firstOpen})`);
  const want = [...committed].filter((k) => (offsetOf.get(k) ?? Infinity) <= upTo).sort();
  assert.ok(want.some((k) => k.startsWith('b')), 'records committed after the open transaction began are in the table');
  const during = await tableKeys(t, runner, restUrl, io);
  for (const [reader, keys] of Object.entries(during)) {
    assert.deepEqual([...keys].sort(), want, `${reader}: exactly the committed records up to ${upTo} while a transaction is open`);
    assert.ok(!keys.some((k) => aborted.has(k) || openKeys.includes(k)), `${reader}: no aborted or open record`);
  }

  await pending.commit();
  for (const k of openKeys) committed.add(k);
  await log.roll();
  await tiering.drain();
  assert.equal(tiering.lastTieredOffset(TOPIC, 0), log.logEndOffset - 1, 'everything is in the table');
  const after = await tableKeys(t, runner, restUrl, io);
  for (const [reader, keys] of Object.entries(after)) {
    assert.deepEqual([...keys].sort(), [...committed].sort(), `${reader}: every committed record, the formerly open ones too, and nothing else`);
  }

  // Kafka reads of the hot log, then the same from the table once the local segments are gone.
  const hotAll = await sweep(c, 0);
  const hotCommitted = await sweep(c, 1);
  assert.ok(hotCommitted.aborted.length > 0, 'the hot log reports aborted transactions');
  assert.ok((await log.enforceRetention()) > 0, 'local segments were handed off');
  assert.ok(log.logStartOffset >= log.logEndOffset - 1, `the whole log is remote (local start ${log.logStartOffset}, end ${log.logEndOffset})`);
  const coldAll = await sweep(c, 0);
  const coldCommitted = await sweep(c, 1);
  assert.deepEqual(coldAll.records, hotAll.records, 'read_uncommitted from the table: every record, aborted ones included');
  assert.equal(coldAll.records.length, committed.size + aborted.size);
  assert.deepEqual(coldCommitted.aborted, hotCommitted.aborted, 'read_committed from the table: the same aborted lists');
  const rc = await consumeKeys(kafka, TOPIC, { readUncommitted: false, until: committed });
  assert.deepEqual(rc.duplicates, []);
  assert.deepEqual(new Set(rc.seen), committed, 'a read_committed consumer reading from the table sees exactly the committed records');
  const ru = await consumeKeys(kafka, TOPIC, { readUncommitted: true, until: new Set([...committed, ...aborted]) });
  assert.deepEqual(new Set(ru.seen), new Set([...committed, ...aborted]));
});
