// A transaction left open past its transaction.timeout.ms is aborted by the broker, and its records never
// reach the table. Two kafkajs producers leave one open each: the first one's records are in a segment the
// table commits while it is still open (hidden as undecided, then settled as aborted once the broker's abort
// marker is in), the second one's in a segment tiered only after the abort (hidden as aborted from the
// start). pyiceberg, icebird and DuckDB read the table at both points: only the plain records, every time.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { RestCatalogClient } from '../../../iceberg/catalog/rest-client.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { Table } from '../../../iceberg/table.js';
import { parseJson } from '../../../iceberg/json.js';
import { startBroker, tempDir, type TestBroker } from '../../helpers/broker.js';
import { venvPython } from '../../helpers/peers.js';
import { ChildRunner } from '../../interop/clients/process.js';
import { readWithDuckDB, readWithIcebird } from '../../tiering/e2e/table-readers.js';

const TOPIC = 'txn-timeout';
const PYICEBERG = fileURLToPath(new URL('../../interop/engines/pyiceberg_driver.py', import.meta.url));

/** Keys of the table's rows, sorted, by pyiceberg (REST catalog), icebird and DuckDB. */
async function tableKeys(t: TestContext, runner: ChildRunner, restUrl: string, io: LocalFileIO): Promise<Record<string, string[]>> {
  const { stdout } = await runner.run(venvPython(), [PYICEBERG], JSON.stringify({ catalog: { type: 'rest', uri: restUrl }, table: `kafka.${TOPIC}`, scans: [{ filter: null }] }), 180_000);
  const scan = (parseJson(stdout.toString()) as unknown as { scans: { rows: [{ key: { b64: string } | null }, unknown][] }[] }).scans[0];
  const text = (k: Buffer | string | null): string => (k === null ? '' : k.toString());
  return {
    pyiceberg: (scan?.rows ?? []).map(([k]) => (k.key === null ? '' : Buffer.from(k.key.b64, 'base64').toString())).sort(),
    icebird: (await readWithIcebird(restUrl, io, ['kafka'], TOPIC)).map((r) => text(r.key)).sort(),
    duckdb: (await readWithDuckDB(t, restUrl, io, ['kafka'], TOPIC)).map((r) => text(r.key)).sort(),
  };
}

test('a transaction the broker aborts for its timeout never reaches the table, whether its segment was tiered before or after the abort', { timeout: 300_000 }, async (t) => {
  const root = await tempDir('floe-txn-timeout-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const warehouse = join(root, 'wh');
  const b: TestBroker = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--log.retention.check.interval.ms=3600000', '--transaction.abort.timed.out.transaction.cleanup.interval.ms=50']);
  cleanups.push(() => b.stop());
  const tiering = b.broker.services.tiering;
  assert.ok(tiering);
  const restUrl = tiering.restCatalogUrl;
  assert.ok(restUrl);
  // The table commits when the test drains tiering.
  await b.broker.services.topics.createTopic(TOPIC, 1, -1, { 'remote.storage.enable': 'true', 'iceberg.commit.interval.ms': '600000' });
  const log = b.broker.services.logs.get(TOPIC, 0);
  assert.ok(log);
  const io = new LocalFileIO({ root: warehouse, fsync: false });
  cleanups.push(() => io.close());
  const runner = new ChildRunner();
  cleanups.push(async () => runner.killAll());

  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'txn-timeout', logLevel: logLevel.NOTHING });
  const early = kafka.producer({ transactionalId: 'txn-timeout-early', transactionTimeout: 3000, maxInFlightRequests: 1, idempotent: true });
  const late = kafka.producer({ transactionalId: 'txn-timeout-late', transactionTimeout: 3000, maxInFlightRequests: 1, idempotent: true });
  const plain = kafka.producer();
  for (const p of [early, late, plain]) {
    await p.connect();
    cleanups.push(() => p.disconnect());
  }
  const plainKeys: string[] = [];
  const sendPlain = async (tag: string): Promise<void> => {
    const keys = [`${tag}-0`, `${tag}-1`];
    await plain.send({ topic: TOPIC, messages: keys.map((key) => ({ key, value: key })) });
    plainKeys.push(...keys);
  };

  await sendPlain('p1');
  const earlyTxn = await early.transaction();
  await earlyTxn.send({ topic: TOPIC, messages: [{ key: 'early-0', value: 'x' }, { key: 'early-1', value: 'x' }] });
  await sendPlain('p2');
  await log.roll();
  await tiering.drain();
  assert.equal(tiering.lastTieredOffset(TOPIC, 0), log.logEndOffset - 1, 'the open transaction\'s segment is in the table');
  for (const [reader, keys] of Object.entries(await tableKeys(t, runner, restUrl, io))) assert.deepEqual(keys, [...plainKeys].sort(), `${reader}: the open transaction's records are hidden`);

  const lateTxn = await late.transaction();
  await lateTxn.send({ topic: TOPIC, messages: [{ key: 'late-0', value: 'y' }] });
  await sendPlain('p3');
  // The coordinator aborts both for their timeout (bounded by the test's timeout if it never does).
  const coordinator = b.broker.services.transactions.coordinator;
  for (const id of ['txn-timeout-early', 'txn-timeout-late']) while (coordinator.describe(id)?.state !== 'CompleteAbort') await new Promise((r) => setTimeout(r, 100));
  await assert.rejects(earlyTxn.commit(), 'the timed-out transaction cannot commit');
  await sendPlain('p4');
  // The late transaction's records and both abort markers are in this segment, tiered after the aborts.
  await log.roll();
  await tiering.drain();
  assert.equal(tiering.lastTieredOffset(TOPIC, 0), log.logEndOffset - 1, 'every segment is in the table');
  for (const [reader, keys] of Object.entries(await tableKeys(t, runner, restUrl, io))) assert.deepEqual(keys, [...plainKeys].sort(), `${reader}: only the plain records, never one of the timed-out transactions`);
  // Both are decided now: the table's delete files are final ones, one per data file with aborted rows.
  const table = await Table.load(new RestCatalogClient({ uri: restUrl }), { namespace: ['kafka'], name: TOPIC }, io);
  const deletes = (await table.files()).deleteFiles.map((f) => f.data_file.file_path);
  assert.equal(deletes.length, 2, deletes.join(', '));
  assert.ok(deletes.every((f) => f.endsWith('-aborted-txns.parquet')), deletes.join(', '));
});
