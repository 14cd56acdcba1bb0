// Trino (476, from Maven Central, scripts/peers/40-trino.sh) reads Floe's topic tables through Floe's REST
// catalog, with the Iceberg connector configured exactly as the README says (trino-readme.ts builds the
// catalogs from the README's block), on an S3 warehouse (s3rver; the broker requires a bearer token there)
// and on a local one (file://). One Trino server serves both catalogs for the whole file.
//
// Every query is checked row for row against the Kafka side (kafka-side.ts): counts, every column of the
// `kafka` struct and `value` (null keys and values, empty bytes, duplicate header keys, null header values,
// binary bytes, LogAppendTime), filters on kafka.offset and kafka.timestamp, time travel to the snapshot of
// the first round, the metadata tables against what the REST catalog lists, the README example, and, after
// DeleteRecords below the local log start, that the rows it hid (with a position delete file) are gone while
// time travel to the snapshot before it still shows them.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { icebergManifests } from 'icebird';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { createFileIO } from '../../../iceberg/io/registry.js';
import { S3FileIO } from '../../../iceberg/io/s3.js';
import { readManifestList } from '../../../iceberg/manifest-list.js';
import type { TableMetadata } from '../../../iceberg/table-metadata.js';
import { tempDir } from '../../helpers/broker.js';
import { installWarehouseFetch } from '../../helpers/file-fetch.js';
import { s3WarehouseFlags, startS3Server } from '../../helpers/s3-server.js';
import { startTrino, type TrinoServer } from '../../helpers/trino.js';
import { deleteRecords, EARLIEST, EARLIEST_LOCAL, listOffset } from '../../tiering/e2e/wire.js';
import { kafkaSide, type KafkaSide } from './kafka-side.js';
import { readmeTrino } from './trino-readme.js';
import { byPartitionOffset, objects, rowMillis, trinoTimestamp, type KafkaRow } from './trino-rows.js';

interface Warehouse {
  readonly name: string;
  /** The Trino catalog on this warehouse's broker. */
  readonly catalog: string;
  readonly side: KafkaSide;
  readonly io: FileIO;
}

const sqlTimestamp = (ms: number): string => `TIMESTAMP '${trinoTimestamp(ms)}'`;

async function rows(trino: TrinoServer, sql: string): Promise<KafkaRow[]> {
  return objects(await trino.query(sql)) as unknown as KafkaRow[];
}

/** Every row of `table` (optionally filtered / at a version), ordered by partition and offset. */
function select(w: Warehouse, table: string, tail = ''): string {
  return `SELECT kafka, value FROM ${w.catalog}.kafka.${table} ${tail} ORDER BY kafka.partition, kafka.offset`;
}

/** The manifest list and live files of the table's current snapshot, as the REST catalog's metadata names them. */
async function catalogView(w: Warehouse, metadata: TableMetadata): Promise<{ manifests: ReturnType<typeof readManifestList>['manifests']; files: { content: number; file_path: string; record_count: number; file_size_in_bytes: number }[] }> {
  const current = metadata.snapshots.find((s) => s['snapshot-id'] === metadata['current-snapshot-id']);
  assert.ok(current, 'the current snapshot is in the metadata');
  const { manifests } = readManifestList(await w.io.get(current['manifest-list']));
  // Entries through icebird, an independent manifest reader, from the same metadata.
  const restore = installWarehouseFetch(w.io);
  try {
    const lists = await icebergManifests(JSON.parse(JSON.stringify(metadata, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))) as never);
    const files = lists.flatMap((m) => m.entries.filter((e) => e.status !== 2).map((e) => ({
      content: e.data_file.content,
      file_path: e.data_file.file_path,
      record_count: Number(e.data_file.record_count),
      file_size_in_bytes: Number(e.data_file.file_size_in_bytes),
    })));
    return { manifests, files: files.sort((a, b) => a.file_path.localeCompare(b.file_path)) };
  } finally {
    restore();
  }
}

async function assertMetadataTables(trino: TrinoServer, w: Warehouse, table: string): Promise<void> {
  const metadata = await w.side.metadata(table);
  const snapshots = objects(await trino.query(
    `SELECT CAST(snapshot_id AS varchar) AS id, CAST(parent_id AS varchar) AS parent, operation, manifest_list, summary,
            CAST(to_unixtime(committed_at) * 1000 AS bigint) AS committed_ms
       FROM ${w.catalog}.kafka."${table}$snapshots" ORDER BY committed_at, snapshot_id`,
  ));
  const want = [...metadata.snapshots]
    .sort((a, b) => a['timestamp-ms'] - b['timestamp-ms'])
    .map((s) => {
      const { operation, ...summary } = s.summary as Record<string, string>;
      return { id: String(s['snapshot-id']), parent: s['parent-snapshot-id'] === undefined ? null : String(s['parent-snapshot-id']), operation, manifest_list: s['manifest-list'], summary, committed_ms: s['timestamp-ms'] };
    });
  assert.deepEqual(snapshots.sort((a, b) => Number(a['committed_ms']) - Number(b['committed_ms']) || String(a['id']).localeCompare(String(b['id']))), want.sort((a, b) => a.committed_ms - b.committed_ms || a.id.localeCompare(b.id)), `${table}$snapshots: the REST catalog's snapshots`);

  const view = await catalogView(w, metadata);
  const files = objects(await trino.query(`SELECT content, file_path, file_format, record_count, file_size_in_bytes FROM ${w.catalog}.kafka."${table}$files" ORDER BY file_path`));
  assert.deepEqual(files, view.files.map((f) => ({ ...f, file_format: 'PARQUET' })), `${table}$files: the live files of the current snapshot`);

  const manifests = objects(await trino.query(
    `SELECT path, length, partition_spec_id, CAST(added_snapshot_id AS varchar) AS added_snapshot_id,
            added_data_files_count, added_rows_count, existing_data_files_count, existing_rows_count,
            deleted_data_files_count, deleted_rows_count
       FROM ${w.catalog}.kafka."${table}$manifests" ORDER BY path`,
  ));
  // Trino lists data and delete manifests alike, with the manifest list's file counts under *_data_files_count.
  assert.deepEqual(
    manifests,
    [...view.manifests].sort((a, b) => a.manifest_path.localeCompare(b.manifest_path)).map((m) => ({
      path: m.manifest_path,
      length: Number(m.manifest_length),
      partition_spec_id: m.partition_spec_id,
      added_snapshot_id: String(m.added_snapshot_id),
      added_data_files_count: m.added_files_count,
      added_rows_count: Number(m.added_rows_count),
      existing_data_files_count: m.existing_files_count,
      existing_rows_count: Number(m.existing_rows_count),
      deleted_data_files_count: m.deleted_files_count,
      deleted_rows_count: Number(m.deleted_rows_count),
    })),
    `${table}$manifests: the current snapshot's manifest list`,
  );
}

async function checkWarehouse(t: TestContext, trino: TrinoServer, w: Warehouse): Promise<void> {
  const { side } = w;
  const events = [...side.events].sort(byPartitionOffset);

  await t.test(`${w.name}: the table's columns as Trino types them`, async () => {
    const { rows: columns } = await trino.query(`SELECT column_name, data_type FROM ${w.catalog}.information_schema.columns WHERE table_schema = 'kafka' AND table_name = 'events' ORDER BY ordinal_position`);
    assert.deepEqual(columns, [
      ['kafka', 'row(partition integer, offset bigint, timestamp timestamp(6) with time zone, timestamp_type integer, key varbinary, headers array(row(key varchar, value varbinary)), batch row(base_offset bigint, last_offset_delta integer, partition_leader_epoch integer, attributes integer, base_timestamp bigint, max_timestamp bigint, producer_id bigint, producer_epoch integer, base_sequence integer, records_count integer), record_attributes integer, timestamp_delta bigint, raw_record varbinary)'],
      ['value', 'varbinary'],
    ]);
  });

  await t.test(`${w.name}: row counts`, async () => {
    for (const [table, want] of [['events', events.length], ['audit', side.audit.length], ['orders', side.orders.length]] as const) {
      const { rows: got } = await trino.query(`SELECT count(*) FROM ${w.catalog}.kafka.${table}`);
      assert.deepEqual(got, [[want]], `${table}: one row per record`);
    }
  });

  await t.test(`${w.name}: every kafka column and the value, row for row`, async () => {
    assert.deepEqual(await rows(trino, select(w, 'events')), events, 'events');
    assert.ok(events.some((r) => r.kafka.key === null) && events.some((r) => r.value === null), 'null keys and values are covered');
    assert.ok(events.some((r) => r.kafka.headers.some((h) => h.value === null)), 'null header values are covered');
    assert.ok(events.some((r) => new Set(r.kafka.headers.map((h) => h.key)).size < r.kafka.headers.length), 'duplicate header keys are covered');
    assert.ok(events.some((r) => r.kafka.batch['producer_id'] !== -1) && events.some((r) => r.kafka.batch['producer_id'] === -1), 'idempotent and plain batches are covered');
    assert.deepEqual(await rows(trino, select(w, 'audit')), side.audit, 'audit (LogAppendTime)');
    assert.ok(side.audit.every((r) => r.kafka.timestamp_type === 1 && r.kafka.timestamp_delta !== null));
  });

  await t.test(`${w.name}: filters on kafka.offset and kafka.timestamp`, async () => {
    assert.deepEqual(await rows(trino, select(w, 'events', 'WHERE kafka.partition = 0 AND kafka.offset BETWEEN 3 AND 9')), events.filter((r) => r.kafka.partition === 0 && r.kafka.offset >= 3 && r.kafka.offset <= 9));
    assert.deepEqual(await rows(trino, select(w, 'events', 'WHERE kafka.offset >= 12')), events.filter((r) => r.kafka.offset >= 12));
    const times = [...new Set(events.map(rowMillis))].sort((a, b) => a - b);
    const mid = times[Math.floor(times.length / 2)] ?? 0;
    const at = events.filter((r) => rowMillis(r) >= mid);
    assert.ok(at.length > 0 && at.length < events.length, 'the timestamp filter splits the table');
    assert.deepEqual(await rows(trino, select(w, 'events', `WHERE kafka.timestamp >= ${sqlTimestamp(mid)}`)), at);
    assert.deepEqual(await rows(trino, select(w, 'events', `WHERE kafka.timestamp < ${sqlTimestamp(mid)} AND kafka.partition = 2`)), events.filter((r) => rowMillis(r) < mid && r.kafka.partition === 2));
  });

  await t.test(`${w.name}: time travel to the first round's snapshot`, async () => {
    const round1 = [...side.round1].sort(byPartitionOffset);
    assert.ok(round1.length > 0 && round1.length < events.length);
    assert.deepEqual(await rows(trino, select(w, 'events', `FOR VERSION AS OF ${side.snapshot1}`)), round1);
    assert.deepEqual(await rows(trino, select(w, 'events', `FOR VERSION AS OF ${side.snapshot2}`)), events);
  });

  await t.test(`${w.name}: $snapshots, $files and $manifests agree with the REST catalog`, async () => {
    await assertMetadataTables(trino, w, 'events');
  });

  await t.test(`${w.name}: after DeleteRecords below the local log start, the deleted rows are gone`, async () => {
    const x = 7;
    assert.equal(await listOffset(side.broker.port, 'events', 0, EARLIEST), 0);
    assert.ok(await listOffset(side.broker.port, 'events', 0, EARLIEST_LOCAL) > x, 'the deleted range is below the local log start: only the table holds it');
    assert.deepEqual(await deleteRecords(side.broker.port, 'events', 0, x), { errorCode: 0, lowWatermark: x });
    const kept = events.filter((r) => r.kafka.partition !== 0 || r.kafka.offset >= x);
    assert.deepEqual(await rows(trino, select(w, 'events')), kept, 'the table from the new log start on');
    assert.deepEqual((await trino.query(`SELECT count(*) FROM ${w.catalog}.kafka.events`)).rows, [[kept.length]]);
    assert.deepEqual((await trino.query(`SELECT min(kafka.offset) FROM ${w.catalog}.kafka.events WHERE kafka.partition = 0`)).rows, [[x]]);
    const deletes = (await trino.query(`SELECT count(*) FROM ${w.catalog}.kafka."events$files" WHERE content = 1`)).rows;
    assert.ok(Number(deletes[0]?.[0]) > 0, 'the rows are hidden by a position delete file');
    assert.deepEqual(await rows(trino, select(w, 'events', `FOR VERSION AS OF ${side.snapshot2}`)), events, 'the snapshot before the delete still has them (one copy, many views)');
    await assertMetadataTables(trino, w, 'events');
  });
}

test('Trino reads Floe topics as Iceberg tables through the REST catalog, on S3 and on a local warehouse', async (t) => {
  const readme = readmeTrino();
  const s3 = await startS3Server({ bucket: 'floe-trino' });
  t.after(() => s3.stop());
  const root = await tempDir('floe-trino-wh-');
  t.after(() => rm(root, { recursive: true, force: true }));
  const token = 'trino-test-token';
  const onS3 = await kafkaSide(t, s3WarehouseFlags(s3), token);
  const onLocal = await kafkaSide(t, [`--iceberg.warehouse=${join(root, 'wh')}`]);
  const s3io = new S3FileIO(s3.fileIOOptions());
  t.after(() => s3io.close());
  const localIo = createFileIO(pathToFileURL(join(root, 'wh')).href);
  t.after(() => localIo.close());

  const started = Date.now();
  const trino = await startTrino({
    catalogs: {
      floe: readme.catalog({ kind: 's3', endpoint: s3.endpoint, accessKey: s3.credentials.accessKeyId, secretKey: s3.credentials.secretAccessKey }, onS3.restUrl, token),
      floe_local: readme.catalog({ kind: 'local' }, onLocal.restUrl),
    },
  });
  t.after(() => trino.stop());
  t.diagnostic(`Trino started in ${Date.now() - started} ms`);

  await t.test('the README example query runs on the S3 catalog', async () => {
    for (const sql of readme.queries) {
      const result = objects(await trino.query(sql));
      const want = onS3.orders.filter((r) => rowMillis(r) >= Date.UTC(2023, 10, 14, 22, 13, 20)).map((r) => ({
        partition: r.kafka.partition,
        offset: r.kafka.offset,
        timestamp: r.kafka.timestamp,
        key: Buffer.from(r.kafka.key ?? '', 'base64').toString('utf8'),
        value: Buffer.from(r.value ?? '', 'base64').toString('utf8'),
      }));
      assert.ok(want.length > 0 && want.length < onS3.orders.length, 'the example filter keeps some orders');
      assert.deepEqual(result, want, sql);
    }
  });

  await checkWarehouse(t, trino, { name: 'S3 warehouse', catalog: 'floe', side: onS3, io: s3io });
  await checkWarehouse(t, trino, { name: 'local warehouse', catalog: 'floe_local', side: onLocal, io: localIo });
});
