// Spark SQL (pyspark with Iceberg's Spark runtime, started with exactly the README's configuration) reads
// Floe's topic tables through Floe's REST catalog, on a local warehouse (catalog `floe_local`) and on an S3
// warehouse (s3rver; catalog `floe`, the README's name), both in ONE Spark session:
//
// - every row equals what Kafka clients read, column for column (each `kafka` field, `value`), with null
//   keys and values, empty and non-UTF-8 bytes, duplicate and null headers, several codecs, idempotent batches;
// - filters on kafka.offset and kafka.timestamp; time travel (VERSION AS OF the first snapshot);
// - the metadata tables (snapshots, files, manifests) agree with the REST metadata and with icebird's reading
//   of the manifests;
// - the README's example queries run and answer what the records say;
// - after DeleteRecords inside a tiered data file (a position delete), Spark no longer returns the deleted
//   rows, and time travel to the snapshot before still does;
// - the local warehouse's catalog wants credentials (iceberg.rest.authentication.method=BASIC): Spark reads with
//   the token and with OAuth2 client credentials (`credential`, through POST /v1/oauth/tokens), and a catalog
//   with neither is refused.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { assertCoversTheHardCases, currentManifests, EngineTopic, localWarehouse, REST_TOKEN, s3Warehouse, type KafkaRow } from './engine-topic.js';
import { catalogConf, forCatalog, packageJars, pomDependencies, readSparkReadme, sessionConf } from './readme-spark.js';
import { big, kafkaView, num, tableView } from './rows.js';
import { SparkSql, type SparkValue } from './spark.js';

const readme = readSparkReadme();
/** Deleting below 2 in partition 0 cuts inside its first data file (round 1; checked below). */
const DELETE_PARTITION = 0;
const DELETE_BEFORE = 2;

interface Warehouse {
  readonly catalog: string;
  readonly topic: EngineTopic;
  /** Snapshot ids after round 1 and round 2. */
  readonly snapshots: readonly [bigint, bigint];
}

async function sparkRows(spark: SparkSql, from: string, where = ''): Promise<Record<string, unknown>[]> {
  const { rows } = await spark.sql(`SELECT kafka, value FROM ${from} ${where} ORDER BY kafka.partition, kafka.offset`);
  return rows.map((r) => tableView(r[0], r[1]));
}

const table = (w: Warehouse): string => `${w.catalog}.kafka.orders`;
const mapOf = (v: SparkValue | undefined): Record<string, unknown> => Object.fromEntries((v as [string, SparkValue][]).map(([k, x]) => [k, x]));

async function metadataTablesAgree(spark: SparkSql, w: Warehouse): Promise<void> {
  const metadata = await w.topic.metadata();
  const snaps = (metadata['snapshots'] as Record<string, unknown>[]).slice().sort((a, b) => Number(a['timestamp-ms']) - Number(b['timestamp-ms']));
  const sparkSnaps = await spark.objects(`SELECT snapshot_id, parent_id, operation, manifest_list, committed_at, summary FROM ${table(w)}.snapshots ORDER BY committed_at`);
  assert.deepEqual(
    sparkSnaps.map((s) => ({ id: big(s['snapshot_id']), parent: s['parent_id'] === null ? null : big(s['parent_id']), operation: s['operation'], list: s['manifest_list'], at: s['committed_at'], summary: mapOf(s['summary']) })),
    snaps.map((s) => {
      const { operation, ...summary } = s['summary'] as Record<string, string>;
      const parent = s['parent-snapshot-id'];
      return { id: big(s['snapshot-id']), parent: parent === undefined || parent === null ? null : big(parent), operation, list: s['manifest-list'], at: BigInt(s['timestamp-ms'] as number) * 1000n, summary };
    }),
    'snapshots: one row per snapshot of the REST metadata, same ids, parents, operations, manifest lists, times, summaries',
  );
  assert.equal(big(sparkSnaps.at(-1)?.['snapshot_id']), big(metadata['current-snapshot-id']));

  const manifests = await currentManifests(w.topic);
  const sparkManifests = await spark.objects(`SELECT path, content, added_snapshot_id, added_data_files_count, existing_data_files_count, deleted_data_files_count, added_delete_files_count, existing_delete_files_count, deleted_delete_files_count FROM ${table(w)}.manifests ORDER BY path`);
  const count = (m: (typeof manifests)[number], status: number): number => m.entries.filter((e) => e.status === status).length;
  assert.deepEqual(
    sparkManifests.map((m) => {
      const content = num(m['content']);
      const [a, e, d] = content === 0 ? ['added_data_files_count', 'existing_data_files_count', 'deleted_data_files_count'] : ['added_delete_files_count', 'existing_delete_files_count', 'deleted_delete_files_count'];
      return { path: m['path'], content, added: num(m[a ?? '']), existing: num(m[e ?? '']), deleted: num(m[d ?? '']) };
    }),
    manifests
      .map((m) => ({ path: m.path, content: m.entries.some((e) => e.content !== 0) ? 1 : 0, added: count(m, 1), existing: count(m, 0), deleted: count(m, 2) }))
      .sort((x, y) => (x.path < y.path ? -1 : 1)),
    'manifests: the manifest list of the current snapshot, with the entries icebird counts in each',
  );

  const sparkFiles = await spark.objects(`SELECT content, file_path, record_count, file_size_in_bytes, partition.kafka_partition AS p FROM ${table(w)}.files ORDER BY file_path`);
  assert.deepEqual(
    sparkFiles.map((f) => ({ content: num(f['content']), path: f['file_path'], records: num(f['record_count']), size: num(f['file_size_in_bytes']), partition: f['p'] })),
    manifests
      .flatMap((m) => m.entries.filter((e) => e.status !== 2))
      .map((e) => ({ content: e.content, path: e.filePath, records: e.recordCount, size: e.fileSizeInBytes, partition: e.partition }))
      .sort((x, y) => (x.path < y.path ? -1 : 1)),
    'files: the live files of the current snapshot',
  );
}

const validUtf8 = (b: Buffer): boolean => Buffer.from(b.toString('utf8'), 'utf8').equals(b);
const NOT_UTF8 = '(not UTF-8)';
const asText = (b: Buffer | null): string | null => (b === null ? null : validUtf8(b) ? b.toString('utf8') : NOT_UTF8);

async function readmeQueriesAnswer(spark: SparkSql, w: Warehouse, rows: readonly KafkaRow[]): Promise<void> {
  assert.equal(readme.queries.length, 5, 'the README has the five example queries this test checks');
  const [perPartition, fromOffset, timeRange, snapshots, timeTravel] = readme.queries.map((q) => forCatalog(q, w.catalog).replace('<snapshot_id>', String(w.snapshots[0])));
  const partitions = [...new Set(rows.map((r) => r.partition))].sort();
  assert.deepEqual(
    (await spark.objects(perPartition ?? '')).map((r) => ({ p: r['partition'], n: num(r['records']), last: num(r['last_offset']) })),
    partitions.map((p) => ({ p, n: rows.filter((r) => r.partition === p).length, last: Math.max(...rows.filter((r) => r.partition === p).map((r) => r.offset)) })),
    perPartition,
  );
  const p0 = rows.filter((r) => r.partition === 0 && r.offset >= 2);
  assert.ok(p0.length > 0);
  // CAST(binary AS STRING) is lossy for bytes that are not UTF-8: those are only checked to be there.
  const text = (want: Buffer | null | undefined, got: SparkValue | undefined): unknown => (want !== null && want !== undefined && !validUtf8(want) ? NOT_UTF8 : got);
  const fromRows = await spark.objects(fromOffset ?? '');
  assert.deepEqual(
    fromRows.map((r, i) => ({ offset: num(r['offset']), us: r['timestamp'], key: text(p0[i]?.key, r['key']), value: text(p0[i]?.value, r['value']) })),
    p0.map((r) => ({ offset: r.offset, us: BigInt(r.timestamp) * 1000n, key: asText(r.key), value: asText(r.value) })),
    fromOffset,
  );
  const since = Date.parse('2023-11-14T22:13:50Z');
  const want = rows.filter((r) => r.timestamp >= since).length;
  assert.ok(want > 0 && want < rows.length, 'the README\'s time range selects some of the records');
  assert.equal(num((await spark.sql(timeRange ?? '')).rows[0]?.[0]), want, timeRange);
  const metadata = await w.topic.metadata();
  const snaps = (metadata['snapshots'] as Record<string, unknown>[]).slice().sort((a, b) => Number(a['timestamp-ms']) - Number(b['timestamp-ms']));
  assert.deepEqual(
    (await spark.objects(snapshots ?? '')).map((s) => ({ id: big(s['snapshot_id']), operation: s['operation'], added: s['added_records'] })),
    snaps.map((s) => ({ id: big(s['snapshot-id']), operation: (s['summary'] as Record<string, string>)['operation'], added: (s['summary'] as Record<string, string>)['added-records'] ?? null })),
    snapshots,
  );
  const firstRound = (w.topic.roundEnds[0] ?? []).reduce((a, b) => a + b, 0);
  assert.equal(num((await spark.sql(timeTravel ?? '')).rows[0]?.[0]), firstRound, `${timeTravel}: the records of the first round`);
}

/** A Floe user for the local warehouse's REST catalog, which also wants Basic or OAuth2 credentials (BASIC). */
const SPARK_USER = { name: 'spark', password: 'spark-Pw-8e21' };
const BASIC_AUTH = ['--iceberg.rest.authentication.method=BASIC', `--sasl.plain.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${SPARK_USER.name}="${SPARK_USER.password}";`];

async function warehouseCase(t: TestContext, kind: 'local' | 's3'): Promise<{ topic: EngineTopic; snapshots: [bigint, bigint] }> {
  const topic = await EngineTopic.start(t, kind === 'local' ? await localWarehouse(t) : await s3Warehouse(t), kind === 'local' ? BASIC_AUTH : []);
  const first = await topic.round();
  const second = await topic.round();
  assert.notEqual(first, second);
  return { topic, snapshots: [first, second] };
}

test('Spark SQL reads Floe\'s tables through the REST catalog with the README\'s configuration, on a local and an S3 warehouse', async (t) => {
  assert.deepEqual(readme.packages, pomDependencies(), 'the README\'s --packages are the jars scripts/peers/30-spark.sh installs');
  const jars = packageJars(readme);
  // The JVM starts while the brokers are set up.
  const starting = SparkSql.start({ ...sessionConf(readme), 'spark.jars': jars.join(',') });
  starting.catch(() => undefined);
  t.after(async () => (await starting.catch(() => undefined))?.close());
  const [local, s3] = await Promise.all([warehouseCase(t, 'local'), warehouseCase(t, 's3')]);
  const spark = await starting;
  const s3Server = s3.topic.warehouse.s3;
  assert.ok(s3Server);
  const warehouses: Warehouse[] = [
    { catalog: 'floe_local', ...local },
    { catalog: 'floe', ...s3 },
  ];
  const localConf = catalogConf(readme, { name: 'floe_local', uri: local.topic.restUrl, token: REST_TOKEN });
  await spark.setConf(localConf);
  // The same catalog once with OAuth2 client credentials (Iceberg's `credential`) instead of the token, once with neither.
  const without = (name: string) => Object.fromEntries(Object.entries(localConf).filter(([k]) => k !== 'spark.sql.catalog.floe_local.token').map(([k, v]) => [k.replace('.floe_local', `.${name}`), v]));
  await spark.setConf({ ...without('floe_credential'), 'spark.sql.catalog.floe_credential.credential': `${SPARK_USER.name}:${SPARK_USER.password}` });
  await spark.setConf(without('floe_anonymous'));
  await spark.setConf(catalogConf(readme, { name: 'floe', uri: s3.topic.restUrl, token: REST_TOKEN, s3: s3Server.credentials }));

  await t.test('with iceberg.rest.authentication.method=BASIC, Spark reads with OAuth2 client credentials and is refused without credentials', async () => {
    const rows = await local.topic.kafkaRows();
    assert.equal(num((await spark.sql('SELECT count(*) FROM floe_credential.kafka.orders')).rows[0]?.[0]), rows.length);
    await assert.rejects(spark.sql('SELECT count(*) FROM floe_anonymous.kafka.orders'), /NotAuthorized|401/);
  });

  const kafka = new Map<Warehouse, KafkaRow[]>();
  for (const w of warehouses) {
    await t.test(`${w.catalog} (${w.topic.warehouse.kind} warehouse): every row equals what Kafka clients read, every kafka column and the value`, async () => {
      const rows = await w.topic.kafkaRows();
      kafka.set(w, rows);
      assertCoversTheHardCases(rows);
      assert.equal(num((await spark.sql(`SELECT count(*) FROM ${table(w)}`)).rows[0]?.[0]), rows.length, 'row count');
      const got = await sparkRows(spark, table(w));
      assert.equal(got.length, rows.length);
      rows.forEach((r, i) => assert.deepEqual(got[i], kafkaView(r), `row ${i} (partition ${r.partition} offset ${r.offset})`));
    });

    await t.test(`${w.catalog}: filters on kafka.offset and on kafka.timestamp`, async () => {
      const rows = kafka.get(w) ?? [];
      const byOffset = rows.filter((r) => r.offset >= 4);
      assert.ok(byOffset.length > 0 && byOffset.length < rows.length);
      assert.deepEqual(await sparkRows(spark, table(w), 'WHERE kafka.offset >= 4'), byOffset.map(kafkaView));
      const stamps = rows.map((r) => r.timestamp).sort((a, b) => a - b);
      const since = stamps[Math.floor(stamps.length / 2)] ?? 0;
      const until = stamps.at(-3) ?? 0;
      const inRange = rows.filter((r) => r.timestamp >= since && r.timestamp < until);
      assert.ok(inRange.length > 0 && inRange.length < rows.length);
      const literal = (ms: number): string => `TIMESTAMP '${new Date(ms).toISOString()}'`;
      assert.deepEqual(await sparkRows(spark, table(w), `WHERE kafka.timestamp >= ${literal(since)} AND kafka.timestamp < ${literal(until)}`), inRange.map(kafkaView));
    });

    await t.test(`${w.catalog}: time travel, VERSION AS OF the first snapshot, shows the first round only`, async () => {
      const rows = kafka.get(w) ?? [];
      const firstRound = w.topic.model.partitions.map((p, i) => p.slice(0, w.topic.roundEnds[0]?.[i] ?? 0)).flat();
      assert.ok(firstRound.length > 0 && firstRound.length < rows.length);
      const older = await spark.objects(`SELECT kafka.partition AS p, kafka.offset AS o FROM ${table(w)} VERSION AS OF ${w.snapshots[0]} ORDER BY p, o`);
      assert.deepEqual(older.map((r) => [r['p'], num(r['o'])]), firstRound.map((e) => [e.partition, e.offset]));
    });

    await t.test(`${w.catalog}: the snapshots, manifests and files metadata tables agree with the REST catalog's metadata`, async () => {
      await metadataTablesAgree(spark, w);
    });

    await t.test(`${w.catalog}: the README's example queries run and answer what the records say`, async () => {
      await readmeQueriesAnswer(spark, w, kafka.get(w) ?? []);
    });
  }

  for (const w of warehouses) {
    await t.test(`${w.catalog}: after DeleteRecords below the local log start, Spark no longer returns the deleted rows (a position delete)`, async () => {
      const before = kafka.get(w) ?? [];
      assert.ok(DELETE_BEFORE < (w.topic.roundEnds[0]?.[DELETE_PARTITION] ?? 0), 'the new log start falls inside the first data file, so its rows below are position-deleted');
      await w.topic.deleteBefore(DELETE_PARTITION, DELETE_BEFORE);
      const rows = await w.topic.kafkaRows();
      assert.deepEqual(rows, before.filter((r) => r.partition !== DELETE_PARTITION || r.offset >= DELETE_BEFORE), 'Kafka clients read from the new log start');
      // count(*) too: Iceberg answers it from manifest statistics only while no delete file applies.
      assert.equal(num((await spark.sql(`SELECT count(*) FROM ${table(w)}`)).rows[0]?.[0]), rows.length, 'row count');
      const got = await sparkRows(spark, table(w));
      assert.deepEqual(got, rows.map(kafkaView));
      const deletes = await spark.objects(`SELECT file_path, record_count, partition.kafka_partition AS p FROM ${table(w)}.files WHERE content = 1`);
      assert.deepEqual(deletes.map((d) => [d['p'], num(d['record_count'])]), [[DELETE_PARTITION, DELETE_BEFORE]], 'one position delete file hides the rows below the new start');
      assert.equal(num((await spark.sql(`SELECT count(*) FROM ${table(w)} VERSION AS OF ${w.snapshots[1]}`)).rows[0]?.[0]), before.length, 'the snapshot before the delete still has them');
      await metadataTablesAgree(spark, w);
    });
  }

  await t.test('ALTER TABLE ... SET TBLPROPERTIES changes a Floe table\'s maintenance settings and nothing else', async () => {
    const w = warehouses[0] as Warehouse;
    await spark.sql(`ALTER TABLE ${table(w)} SET TBLPROPERTIES ('history.expire.max-snapshot-age-ms' = '3600000')`);
    const props = () => w.topic.metadata().then((m) => (m['properties'] ?? {}) as Record<string, string>);
    assert.equal((await props())['history.expire.max-snapshot-age-ms'], '3600000');
    await assert.rejects(spark.sql(`ALTER TABLE ${table(w)} SET TBLPROPERTIES ('owner.note' = 'mine')`), /read-only|Forbidden/i);
    assert.equal((await props())['owner.note'], undefined);
  });
});
