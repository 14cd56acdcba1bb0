// pyiceberg (PyPI, with pyarrow) reads Floe's topic tables through Floe's REST catalog, on a local and an S3
// (s3rver) warehouse: a full scan equals what Kafka clients read, row for row and column for column; row
// filters on kafka.partition and kafka.offset return exactly the matching records AND prune data files in the
// scan plan (plan_files() plans only the files whose partition and offset bounds can match); after
// DeleteRecords inside a data file, the scan applies the position delete.
//
// The topic gets two rounds of records (engine-topic.ts), each committed as one data file per partition, so a
// partition's first file holds offsets [0, e1) and its second [e1, e2), with e1, e2 the round ends.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { parseJson } from '../../../iceberg/json.js';
import { venvPython } from '../../helpers/peers.js';
import { ChildRunner } from '../clients/process.js';
import { EngineTopic, PARTITIONS, REST_TOKEN, assertCoversTheHardCases, localWarehouse, s3Warehouse, type KafkaRow } from './engine-topic.js';
import { decodeValue, kafkaView, tableView } from './rows.js';

const DRIVER = fileURLToPath(new URL('./pyiceberg_driver.py', import.meta.url));

type Expr = ['==' | '>=' | '<', string, number] | ['and', Expr, Expr];

interface PlannedFile {
  readonly path: string;
  readonly partition: number;
  readonly records: number;
  readonly deletes: readonly string[];
}

interface ScanResult {
  readonly files: readonly PlannedFile[];
  readonly rows: readonly Record<string, unknown>[];
}

async function pyiceberg(runner: ChildRunner, topic: EngineTopic, filters: readonly (Expr | null)[]): Promise<ScanResult[]> {
  const s3 = topic.warehouse.s3;
  const catalog = {
    type: 'rest',
    uri: topic.restUrl,
    token: REST_TOKEN,
    // The endpoint, path style and region come with the table's config from the REST catalog.
    ...(s3 ? { 's3.access-key-id': s3.credentials.accessKeyId, 's3.secret-access-key': s3.credentials.secretAccessKey } : {}),
  };
  const input = JSON.stringify({ catalog, table: 'kafka.orders', scans: filters.map((filter) => ({ filter })) });
  const { stdout } = await runner.run(venvPython(), [DRIVER], input, 120_000);
  const res = parseJson(stdout.toString()) as unknown as { scans: { files: PlannedFile[]; rows: unknown[][] }[] };
  return res.scans.map((s) => ({
    files: s.files.map((f) => ({ ...f, records: Number(f.records) })),
    rows: s.rows.map(([k, v]) => tableView(decodeValue(k), decodeValue(v))),
  }));
}

/** The data files the two rounds wrote: one per partition and round, with its offset range. */
function dataFiles(topic: EngineTopic): { partition: number; first: number; last: number }[] {
  const [e1, e2] = topic.roundEnds;
  assert.ok(e1 && e2, 'two rounds');
  return Array.from({ length: PARTITIONS }, (_, p) => [
    { partition: p, first: 0, last: (e1[p] ?? 0) - 1 },
    { partition: p, first: e1[p] ?? 0, last: (e2[p] ?? 0) - 1 },
  ]).flat();
}

const planned = (r: ScanResult | undefined): [number, number][] => (r?.files ?? []).map((f) => [f.partition, f.records] as [number, number]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
const expectFiles = (files: readonly { partition: number; first: number; last: number }[]): [number, number][] => files.map((f) => [f.partition, f.last - f.first + 1] as [number, number]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);

async function warehouseSuite(t: TestContext, kind: 'local' | 's3'): Promise<void> {
  const runner = new ChildRunner();
  t.after(() => runner.killAll());
  const topic = await EngineTopic.start(t, kind === 'local' ? await localWarehouse(t) : await s3Warehouse(t));
  await topic.round();
  await topic.round();
  const files = dataFiles(topic);
  const e1 = topic.roundEnds[0] ?? [];
  const fromOffset = Math.max(...e1); // past every first-round file
  const kafka: KafkaRow[] = await topic.kafkaRows();
  assertCoversTheHardCases(kafka);
  const filters: (Expr | null)[] = [null, ['==', 'kafka.partition', 1], ['>=', 'kafka.offset', fromOffset], ['and', ['==', 'kafka.partition', 0], ['>=', 'kafka.offset', e1[0] ?? 0]]];
  const [full, partition1, offsetScan, both] = await pyiceberg(runner, topic, filters);

  await t.test(`${kind} warehouse: a full scan equals what Kafka clients read, every kafka column and the value`, () => {
    assert.deepEqual(planned(full), expectFiles(files), 'one data file per partition and round');
    assert.equal(full?.rows.length, kafka.length);
    kafka.forEach((r, i) => assert.deepEqual(full?.rows[i], kafkaView(r), `row ${i} (partition ${r.partition} offset ${r.offset})`));
  });

  await t.test(`${kind} warehouse: a filter on kafka.partition prunes the other partitions' files from the plan`, () => {
    assert.deepEqual(planned(partition1), expectFiles(files.filter((f) => f.partition === 1)));
    assert.ok((partition1?.files.length ?? 0) < (full?.files.length ?? 0));
    assert.deepEqual(partition1?.rows, kafka.filter((r) => r.partition === 1).map(kafkaView));
  });

  await t.test(`${kind} warehouse: a filter on kafka.offset plans only the files whose offset bounds reach it`, () => {
    const reaching = files.filter((f) => f.last >= fromOffset);
    assert.ok(reaching.length > 0 && reaching.length < files.length, 'the filter must prune some file and keep some');
    assert.deepEqual(planned(offsetScan), expectFiles(reaching));
    assert.deepEqual(offsetScan?.rows, kafka.filter((r) => r.offset >= fromOffset).map(kafkaView));
  });

  await t.test(`${kind} warehouse: partition and offset together plan one file`, () => {
    assert.deepEqual(planned(both), expectFiles(files.filter((f) => f.partition === 0 && f.first === e1[0])));
    assert.deepEqual(both?.rows, kafka.filter((r) => r.partition === 0 && r.offset >= (e1[0] ?? 0)).map(kafkaView));
  });

  await t.test(`${kind} warehouse: after DeleteRecords inside a data file, the scan applies its position delete`, async () => {
    await topic.deleteBefore(0, 2);
    const after = await topic.kafkaRows();
    assert.deepEqual(after, kafka.filter((r) => r.partition !== 0 || r.offset >= 2));
    const [scan] = await pyiceberg(runner, topic, [null]);
    assert.deepEqual(scan?.rows, after.map(kafkaView));
    const withDeletes = (scan?.files ?? []).filter((f) => f.deletes.length > 0);
    assert.deepEqual(withDeletes.map((f) => [f.partition, f.records, f.deletes.length]), [[0, e1[0], 1]], 'partition 0\'s first file is planned with one delete file');
  });
}

test('pyiceberg scans Floe\'s tables through the REST catalog on a local warehouse', async (t) => {
  await warehouseSuite(t, 'local');
});

test('pyiceberg scans Floe\'s tables through the REST catalog on an S3 warehouse', async (t) => {
  await warehouseSuite(t, 's3');
});
