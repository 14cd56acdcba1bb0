// Spark SQL, Trino, pyiceberg and icebird read a typed topic table (issue 11) through Floe's REST catalog, on
// a local warehouse and on an S3 one (s3rver), one broker each: an Avro topic in `value_schema_id_prefix`
// mode (values from Confluent's AvroSerializer) whose schema has one field of each type (typed-orders.ts),
// then a second schema version that adds an optional field. Every engine reads every typed column and each
// value equals what the producer sent: nested fields (`user.city`), decimals exactly, timestamps to the
// millisecond, dates, arrays, maps, enums as strings, nulls (also where rows written with version 1 lack the
// added field), with `kafka.value_schema_id` naming the registry id and `value` null (the typed columns
// rebuild the bytes). A filter on a typed column (`qty > 10`) returns exactly the matching rows in Spark,
// Trino and pyiceberg, and pyiceberg's scan plan for a filter on `kafka.offset` still leaves out the files of
// the first commit. On the Kafka side, once the local segments are gone, a kafkajs consumer reads the exact
// bytes the producer sent.
//
// One Spark session and one Trino server for the file, with a catalog per warehouse in each: the Spark JVM
// starts while the brokers are set up, Trino as soon as the catalogs' URLs are known.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AvroSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { icebergManifests, icebergRead } from 'icebird';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { S3FileIO } from '../../../iceberg/io/s3.js';
import { parseJson } from '../../../iceberg/json.js';
import { createTypedTopic, produce, tableSchema, tierAll, typedEnv, type TypedEnv } from '../../broker/tiering/typed-fixture.js';
import { installWarehouseFetch } from '../../helpers/file-fetch.js';
import { venvPython } from '../../helpers/peers.js';
import { s3WarehouseFlags, startS3Server, type S3TestServer } from '../../helpers/s3-server.js';
import { loadTable } from '../../helpers/tiered-table.js';
import { startTrino } from '../../helpers/trino.js';
import { ChildRunner } from '../clients/process.js';
import { catalogConf, packageJars, readSparkReadme, sessionConf } from './readme-spark.js';
import { decodeValue, num } from './rows.js';
import { SparkSql } from './spark.js';
import { readmeTrino } from './trino-readme.js';
import { objects } from './trino-rows.js';
import { ICEBERG_TYPES, ORDER_V1, ORDER_V2, TABLE_COLUMNS, expectedView, isoDay, mapEntries, order, type OrderView } from './typed-orders.js';

const TOPIC = 'typed_orders';
const V1_RECORDS = 40;
const V2_RECORDS = 20;
const TYPED = ['id', 'qty', 'item', 'paid', 'weight', 'price', 'at', 'day', 'user', 'tags', 'counts', 'status', 'note', 'coupon'];
const PYICEBERG = fileURLToPath(new URL('./pyiceberg_driver.py', import.meta.url));

/** How one engine hands over the values whose form differs between engines. */
interface Forms {
  atUs(v: unknown): string;
  day(v: unknown): string;
  price(v: unknown): string;
}

/** An engine's row (offset `o`, schema id `sid`, `no_bytes`, the typed columns by name) as an OrderView. */
function view(r: Record<string, unknown>, f: Forms): OrderView {
  const user = r['user'] as Record<string, unknown> | null;
  return {
    offset: num(r['o']),
    sid: r['sid'] === null ? null : num(r['sid']),
    noBytes: r['no_bytes'] as boolean,
    id: String(r['id']),
    qty: r['qty'] as number,
    item: r['item'] as string,
    paid: r['paid'] as boolean,
    weight: r['weight'] as number,
    price: f.price(r['price']),
    atUs: f.atUs(r['at']),
    day: f.day(r['day']),
    user: user === null ? null : { name: user['name'] as string, city: user['city'] as string },
    tags: r['tags'] as string[],
    counts: mapEntries(r['counts']),
    status: r['status'] as string,
    note: r['note'] as string | null,
    coupon: r['coupon'] as string | null,
  };
}

/** Spark's and pyiceberg's driver forms (spark_driver.py, pyiceberg_driver.py): {us}, date and decimal text. */
const DRIVER_FORMS: Forms = {
  atUs: (v) => String(v as bigint),
  day: (v) => v as string,
  price: (v) => v as string,
};

/** Trino's JSON protocol: timestamp(6) with time zone as `YYYY-MM-DD hh:mm:ss.ffffff UTC`, decimals and dates as text. */
const TRINO_FORMS: Forms = {
  atUs: (v) => {
    const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})\.(\d{6}) UTC$/.exec(String(v));
    assert.ok(m, `a Trino timestamp(6) with time zone: ${String(v)}`);
    return String(BigInt(Date.parse(`${m[1]}T${m[2]}Z`)) * 1000n + BigInt(m[3]!));
  },
  day: (v) => v as string,
  price: (v) => v as string,
};

const typedColumnsSql = (quote: string): string => TYPED.map((c) => `${quote}${c}${quote}`).join(', ');

type After = { after: (fn: () => Promise<void> | void) => void };

/** One broker, its warehouse and the typed topic on it, with what the producer sent. */
interface Case {
  readonly kind: 'local' | 's3';
  /** The Spark and Trino catalog of this broker. */
  readonly catalog: string;
  readonly e: TypedEnv;
  /** The warehouse, for icebird. */
  readonly io: FileIO;
  readonly s3?: S3TestServer;
  readonly sent: readonly Buffer[];
  readonly want: readonly OrderView[];
  /** The live data files (as the manifests name them) after the first commit, and those the second added. */
  readonly firstFiles: readonly string[];
  readonly laterFiles: readonly string[];
}

/** The live data files of the table's current snapshot, listed by icebird from the REST catalog's metadata. */
async function liveFiles(e: TypedEnv, io: FileIO): Promise<string[]> {
  const load = await loadTable(e.restUrl, TOPIC);
  assert.ok(load, `table kafka.${TOPIC} exists`);
  const restore = installWarehouseFetch(io);
  try {
    const manifests = await icebergManifests(load['metadata'] as never);
    return manifests.flatMap(({ entries }) => entries.filter((x) => x.status !== 2 && !x.data_file.content).map((x) => x.data_file.file_path)).sort();
  } finally {
    restore();
  }
}

/**
 * A broker on the warehouse, the typed topic, V1_RECORDS orders with schema version 1, committed (local
 * segments dropped), then version 2 and V2_RECORDS more, committed the same way.
 */
async function typedCase(t: After, kind: 'local' | 's3'): Promise<Case> {
  let e: TypedEnv;
  let io: FileIO;
  let s3: S3TestServer | undefined;
  if (kind === 's3') {
    s3 = await startS3Server({ bucket: 'floe-typed' });
    t.after(() => s3?.stop());
    e = await typedEnv(t, s3WarehouseFlags(s3));
    io = new S3FileIO(s3.fileIOOptions());
  } else {
    e = await typedEnv(t);
    io = new LocalFileIO({ root: e.warehouse, fsync: false });
  }
  t.after(() => io.close());
  await createTypedTopic(e, TOPIC, { 'iceberg.mode': 'value_schema_id_prefix' });
  const client = new SchemaRegistryClient({ baseURLs: [e.registryUrl] });
  const subject = `${TOPIC}-value`;
  const v1Id = await client.register(subject, { schemaType: 'AVRO', schema: JSON.stringify(ORDER_V1) });
  const v1 = new AvroSerializer(client, SerdeType.VALUE, { useSchemaId: v1Id });
  const sent: Buffer[] = [];
  for (let i = 0; i < V1_RECORDS; i++) sent.push(await v1.serialize(TOPIC, order(i, false)));
  await produce(e, TOPIC, sent);
  await tierAll(e, TOPIC);
  const firstFiles = await liveFiles(e, io);
  assert.ok(firstFiles.length > 0, 'the version 1 records are in the table');

  const v2Id = await client.register(subject, { schemaType: 'AVRO', schema: JSON.stringify(ORDER_V2) });
  assert.notEqual(v2Id, v1Id);
  const v2 = new AvroSerializer(client, SerdeType.VALUE, { useSchemaId: v2Id });
  const second: Buffer[] = [];
  for (let i = V1_RECORDS; i < V1_RECORDS + V2_RECORDS; i++) second.push(await v2.serialize(TOPIC, order(i, true)));
  await produce(e, TOPIC, second);
  sent.push(...second);
  await tierAll(e, TOPIC);
  const allFiles = await liveFiles(e, io);
  const laterFiles = allFiles.filter((f) => !firstFiles.includes(f));
  assert.ok(laterFiles.length > 0 && firstFiles.every((f) => allFiles.includes(f)), 'the second commit added files and kept the first ones');
  const want = sent.map((_, i) => (i < V1_RECORDS ? expectedView(i, i, v1Id, false) : expectedView(i, i, v2Id, true)));
  return { kind, catalog: kind === 's3' ? 'floe_s3' : 'floe_local', e, io, ...(s3 ? { s3 } : {}), sent, want, firstFiles, laterFiles };
}

test('Spark, Trino, pyiceberg and icebird read a typed Avro table through the REST catalog on a local and an S3 warehouse, and Kafka still reads every byte', { timeout: 900_000 }, async (t) => {
  // The Spark JVM starts while the brokers are set up.
  const sparkReadme = readSparkReadme();
  const sparkStarting = SparkSql.start({ ...sessionConf(sparkReadme), 'spark.jars': packageJars(sparkReadme).join(',') });
  sparkStarting.catch(() => undefined);
  t.after(async () => (await sparkStarting.catch(() => undefined))?.close());
  const [local, s3] = await Promise.all([typedCase(t, 'local'), typedCase(t, 's3')]);
  const cases = [local, s3];
  const s3Server = s3.s3;
  assert.ok(s3Server);

  // Trino starts once it knows the catalogs' URLs, and runs while the Kafka side is checked.
  const trinoReadme = readmeTrino();
  const trinoStarting = startTrino({
    catalogs: {
      [local.catalog]: trinoReadme.catalog({ kind: 'local' }, local.e.restUrl),
      [s3.catalog]: trinoReadme.catalog({ kind: 's3', endpoint: s3Server.endpoint, accessKey: s3Server.credentials.accessKeyId, secretKey: s3Server.credentials.secretAccessKey }, s3.e.restUrl),
    },
  });
  trinoStarting.catch(() => undefined);
  t.after(async () => (await trinoStarting.catch(() => undefined))?.stop());

  for (const c of cases) {
    const { want } = c;
    assert.ok(want.filter((w) => w.qty > 10).length > 0 && want.some((w) => w.qty <= 10), 'qty > 10 selects some rows');
    assert.ok(want.some((w) => w.note === null) && want.some((w) => w.coupon !== null) && want.some((w) => w.tags.length === 0) && want.some((w) => w.counts.length === 0), 'nulls, empty arrays and maps are covered');

    await t.test(`${c.kind} warehouse: the table has one column per value field, with the mapped Iceberg types`, async () => {
      const fields = await tableSchema(c.e, TOPIC);
      assert.deepEqual(fields.map((f) => f.name), TABLE_COLUMNS);
      for (const [name, type] of Object.entries(ICEBERG_TYPES)) {
        const got = fields.find((f) => f.name === name)?.type;
        assert.equal(typeof got === 'string' ? got : (got as { type: string }).type, type, `${name} is ${String(type)}`);
      }
    });

    await t.test(`${c.kind} warehouse: after the local segments are gone, a kafkajs consumer reads the exact bytes the producer sent`, async () => {
      const { sent } = c;
      assert.equal(c.e.b.broker.services.logs.get(TOPIC, 0)?.logStartOffset, sent.length, 'no local segment is left: every read comes from the typed files');
      const consumer = c.e.kafka.consumer({ groupId: 'typed-engines-check' });
      await consumer.connect();
      t.after(() => consumer.disconnect());
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      const got = new Map<number, Buffer | null>();
      await new Promise<void>((resolve, reject) => {
        consumer
          .run({
            eachMessage: async ({ message }) => {
              got.set(Number(message.offset), message.value);
              if (got.size === sent.length) resolve();
            },
          })
          .catch(reject);
      });
      await consumer.stop();
      assert.equal(got.size, sent.length);
      sent.forEach((v, i) => assert.deepEqual(got.get(i), v, `offset ${i} byte for byte`));
    });
  }

  const spark = await sparkStarting;
  await spark.setConf(catalogConf(sparkReadme, { name: local.catalog, uri: local.e.restUrl, token: 'not-required' }));
  await spark.setConf(catalogConf(sparkReadme, { name: s3.catalog, uri: s3.e.restUrl, token: 'not-required', s3: s3Server.credentials }));
  for (const c of cases) {
    const table = `${c.catalog}.kafka.${TOPIC}`;
    const sparkSelect = (where: string): Promise<Record<string, unknown>[]> =>
      spark.objects(`SELECT kafka.offset AS o, kafka.value_schema_id AS sid, value IS NULL AS no_bytes, ${typedColumnsSql('`')} FROM ${table} ${where} ORDER BY o`);

    await t.test(`${c.kind} warehouse: Spark reads every typed column as the producer sent it`, async () => {
      const rows = await sparkSelect('');
      assert.equal(rows.length, c.want.length);
      rows.forEach((r, i) => assert.deepEqual(view(r, DRIVER_FORMS), c.want[i], `offset ${i}`));
      const nested = await spark.objects(`SELECT kafka.offset AS o FROM ${table} WHERE user.city = 'Oslo' ORDER BY o`);
      assert.deepEqual(nested.map((r) => num(r['o'])), c.want.filter((w) => w.user?.city === 'Oslo').map((w) => w.offset), 'a filter on a nested field');
    });

    await t.test(`${c.kind} warehouse: Spark, WHERE qty > 10`, async () => {
      assert.deepEqual((await sparkSelect('WHERE qty > 10')).map((r) => view(r, DRIVER_FORMS)), c.want.filter((w) => w.qty > 10));
    });
  }

  const trino = await trinoStarting;
  for (const c of cases) {
    const table = `${c.catalog}.kafka.${TOPIC}`;
    const trinoSelect = async (where: string): Promise<Record<string, unknown>[]> =>
      objects(await trino.query(`SELECT kafka.offset AS o, kafka.value_schema_id AS sid, value IS NULL AS no_bytes, ${typedColumnsSql('"')} FROM ${table} ${where} ORDER BY 1`));

    await t.test(`${c.kind} warehouse: Trino reads every typed column as the producer sent it`, async () => {
      const rows = await trinoSelect('');
      assert.equal(rows.length, c.want.length);
      rows.forEach((r, i) => assert.deepEqual(view(r, TRINO_FORMS), c.want[i], `offset ${i}`));
      const { rows: types } = await trino.query(`SELECT column_name, data_type FROM ${c.catalog}.information_schema.columns WHERE table_schema = 'kafka' AND table_name = '${TOPIC}' AND column_name IN ('price', 'at', 'day', 'user', 'counts') ORDER BY ordinal_position`);
      assert.deepEqual(types, [
        ['price', 'decimal(10,2)'],
        ['at', 'timestamp(6) with time zone'],
        ['day', 'date'],
        ['user', 'row(name varchar, city varchar)'],
        ['counts', 'map(varchar, bigint)'],
      ]);
      const { rows: nested } = await trino.query(`SELECT kafka.offset FROM ${table} WHERE "user".city = 'Oslo' ORDER BY 1`);
      assert.deepEqual(nested.map((r) => r[0]), c.want.filter((w) => w.user?.city === 'Oslo').map((w) => w.offset), 'a filter on a nested field');
    });

    await t.test(`${c.kind} warehouse: Trino, WHERE qty > 10`, async () => {
      assert.deepEqual((await trinoSelect('WHERE qty > 10')).map((r) => view(r, TRINO_FORMS)), c.want.filter((w) => w.qty > 10));
    });
  }

  const runner = new ChildRunner();
  t.after(() => runner.killAll());
  for (const c of cases) {
    await t.test(`${c.kind} warehouse: pyiceberg reads every typed column, filters on qty, and prunes files by kafka.offset`, async () => {
      const columns = ['kafka', 'value', ...TYPED];
      const scans = [{ columns }, { columns, filter: ['>', 'qty', 10] }, { columns: ['kafka'], filter: ['>=', 'kafka.offset', V1_RECORDS] }];
      // The endpoint, path style and region come with the table's config from the REST catalog.
      const catalog = { type: 'rest', uri: c.e.restUrl, ...(c.s3 ? { 's3.access-key-id': c.s3.credentials.accessKeyId, 's3.secret-access-key': c.s3.credentials.secretAccessKey } : {}) };
      const { stdout } = await runner.run(venvPython(), [PYICEBERG], JSON.stringify({ catalog, table: `kafka.${TOPIC}`, scans }), 180_000);
      type Scan = { files: { path: string; records: number }[]; rows: Record<string, unknown>[] };
      const [full, qty, byOffset] = (parseJson(stdout.toString()) as unknown as { scans: Scan[] }).scans;
      const asRow = (r: Record<string, unknown>): Record<string, unknown> => {
        const d = decodeValue(r) as Record<string, unknown>;
        const k = d['kafka'] as Record<string, unknown>;
        return { ...d, o: k['offset'], sid: k['value_schema_id'], no_bytes: d['value'] === null };
      };
      assert.equal(full?.rows.length, c.want.length);
      full?.rows.forEach((r, i) => assert.deepEqual(view(asRow(r), DRIVER_FORMS), c.want[i], `offset ${i}`));
      assert.deepEqual(qty?.rows.map((r) => view(asRow(r), DRIVER_FORMS)), c.want.filter((w) => w.qty > 10), 'qty > 10');
      const paths = (s: Scan | undefined): string[] => (s?.files ?? []).map((f) => f.path).sort();
      assert.deepEqual(paths(full), [...c.firstFiles, ...c.laterFiles].sort(), 'the full scan plans every live file');
      assert.deepEqual(paths(byOffset), [...c.laterFiles].sort(), 'kafka.offset >= the first version 2 offset plans only the second commit\'s files');
      assert.deepEqual(byOffset?.rows.map((r) => num((decodeValue(r) as { kafka: { offset: unknown } }).kafka.offset)), c.want.slice(V1_RECORDS).map((w) => w.offset));
    });
  }

  for (const c of cases) {
    await t.test(`${c.kind} warehouse: icebird (icebergRead) reads every typed column as the producer sent it`, async () => {
      const load = await loadTable(c.e.restUrl, TOPIC);
      assert.ok(load);
      const metadata = load['metadata'] as { location: string };
      const restore = installWarehouseFetch(c.io);
      let rows: Record<string, unknown>[];
      try {
        rows = await icebergRead({ tableUrl: metadata.location, metadata: metadata as never });
      } finally {
        restore();
      }
      const forms: Forms = {
        // hyparquet: timestamps and dates as Date (milliseconds, all a timestamp-millis value has), decimals as
        // JS numbers (exact here: at most 10 digits, so toFixed(2) gives the decimal's text back).
        atUs: (v) => (v instanceof Date ? String(BigInt(v.getTime()) * 1000n) : String(v)),
        day: (v) => (v instanceof Date ? v.toISOString().slice(0, 10) : typeof v === 'number' ? isoDay(v) : String(v)),
        price: (v) => (typeof v === 'number' ? v.toFixed(2) : String(v)),
      };
      const got = rows
        .map((r) => {
          const k = r['kafka'] as Record<string, unknown>;
          // icebird leaves a column a data file lacks `undefined` (its "null" for an added field).
          const typed = Object.fromEntries(TYPED.map((col) => [col, r[col] === undefined ? null : r[col]]));
          // hyparquet (icebird's Parquet reader) hands an optional leaf of the required `kafka` struct over
          // wrapped in a one-element array (`[2]`; `kafka.key` too): its intermediate form for an optional
          // level leaks through there. Spark, Trino, pyiceberg and DuckDB read the same column as a plain int.
          const sid = k['value_schema_id'];
          const schemaId = Array.isArray(sid) && sid.length === 1 ? (sid[0] as unknown) : sid;
          return view({ ...typed, o: k['offset'], sid: schemaId ?? null, no_bytes: r['value'] === null || r['value'] === undefined }, forms);
        })
        .sort((a, b) => a.offset - b.offset);
      assert.equal(got.length, c.want.length);
      got.forEach((r, i) => assert.deepEqual(r, c.want[i], `offset ${i}`));
    });
  }
});
