// Spark SQL, Trino, pyiceberg and icebird read a typed topic table (issue 11) through Floe's REST catalog, on
// a local warehouse: an Avro topic in `value_schema_id_prefix` mode (values from Confluent's AvroSerializer)
// whose schema has one field of each type (typed-orders.ts), then a second schema version that adds an
// optional field. Every engine reads every typed column and each value equals what the producer sent:
// nested fields (`user.city`), decimals exactly, timestamps to the millisecond, dates, arrays, maps, enums as
// strings, nulls (also where rows written with version 1 lack the added field), with `kafka.value_schema_id`
// naming the registry id and `value` null (the typed columns rebuild the bytes). A filter on a typed column
// (`qty > 10`) returns exactly the matching rows in Spark, Trino and pyiceberg, and pyiceberg's scan plan
// for a filter on `kafka.offset` still leaves out the files of the first commit. On the Kafka side, once the
// local segments are gone, a kafkajs consumer reads the exact bytes the producer sent.
//
// One Spark session and one Trino server for the file; both start while the records are produced.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AvroSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { icebergRead } from 'icebird';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { parseJson } from '../../../iceberg/json.js';
import { createTypedTopic, produce, tableFiles, tableSchema, tierAll, typedEnv } from '../../broker/tiering/typed-fixture.js';
import { installWarehouseFetch } from '../../helpers/file-fetch.js';
import { venvPython } from '../../helpers/peers.js';
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
const TABLE = `floe.kafka.${TOPIC}`;
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
    user: user === null ? (null as never) : { name: user['name'] as string, city: user['city'] as string },
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

test('Spark, Trino, pyiceberg and icebird read a typed Avro table through the REST catalog, and Kafka still reads every byte', { timeout: 900_000 }, async (t) => {
  const e = await typedEnv(t);
  await createTypedTopic(e, TOPIC, { 'iceberg.mode': 'value_schema_id_prefix' });

  // The engines start while the records are produced and tiered.
  const sparkReadme = readSparkReadme();
  const sparkStarting = SparkSql.start({ ...sessionConf(sparkReadme), 'spark.jars': packageJars(sparkReadme).join(',') });
  sparkStarting.catch(() => undefined);
  t.after(async () => (await sparkStarting.catch(() => undefined))?.close());
  const trinoStarting = startTrino({ catalogs: { floe: readmeTrino().catalog({ kind: 'local' }, e.restUrl) } });
  trinoStarting.catch(() => undefined);
  t.after(async () => (await trinoStarting.catch(() => undefined))?.stop());

  const client = new SchemaRegistryClient({ baseURLs: [e.registryUrl] });
  const subject = `${TOPIC}-value`;
  const v1Id = await client.register(subject, { schemaType: 'AVRO', schema: JSON.stringify(ORDER_V1) });
  const v1 = new AvroSerializer(client, SerdeType.VALUE, { useSchemaId: v1Id });
  const sent: Buffer[] = [];
  for (let i = 0; i < V1_RECORDS; i++) sent.push(await v1.serialize(TOPIC, order(i, false)));
  await produce(e, TOPIC, sent);
  await tierAll(e, TOPIC);
  const firstCommitFiles = await tableFiles(e, TOPIC);
  assert.ok(firstCommitFiles.length > 0, 'the version 1 records are in the table');

  const v2Id = await client.register(subject, { schemaType: 'AVRO', schema: JSON.stringify(ORDER_V2) });
  assert.notEqual(v2Id, v1Id);
  const v2 = new AvroSerializer(client, SerdeType.VALUE, { useSchemaId: v2Id });
  const second: Buffer[] = [];
  for (let i = V1_RECORDS; i < V1_RECORDS + V2_RECORDS; i++) second.push(await v2.serialize(TOPIC, order(i, true)));
  await produce(e, TOPIC, second);
  sent.push(...second);
  await tierAll(e, TOPIC);
  const allFiles = await tableFiles(e, TOPIC);
  const laterFiles = allFiles.filter((f) => !firstCommitFiles.includes(f));
  assert.ok(laterFiles.length > 0 && firstCommitFiles.every((f) => allFiles.includes(f)), 'the second commit added files and kept the first ones');

  const want: OrderView[] = sent.map((_, i) => (i < V1_RECORDS ? expectedView(i, i, v1Id, false) : expectedView(i, i, v2Id, true)));
  const matching = want.filter((w) => w.qty > 10);
  assert.ok(matching.length > 0 && matching.length < want.length, 'qty > 10 selects some rows');
  assert.ok(want.some((w) => w.note === null) && want.some((w) => w.coupon !== null) && want.some((w) => w.tags.length === 0) && want.some((w) => w.counts.length === 0), 'nulls, empty arrays and maps are covered');

  await t.test('the table has one column per value field, with the mapped Iceberg types', async () => {
    const fields = await tableSchema(e, TOPIC);
    assert.deepEqual(fields.map((f) => f.name), TABLE_COLUMNS);
    for (const [name, type] of Object.entries(ICEBERG_TYPES)) {
      const got = fields.find((f) => f.name === name)?.type;
      assert.equal(typeof got === 'string' ? got : (got as { type: string }).type, type, `${name} is ${String(type)}`);
    }
  });

  await t.test('Kafka: after the local segments are gone, a kafkajs consumer reads the exact bytes the producer sent', async () => {
    assert.equal(e.b.broker.services.logs.get(TOPIC, 0)?.logStartOffset, sent.length, 'no local segment is left: every read comes from the typed files');
    const consumer = e.kafka.consumer({ groupId: 'typed-engines-check' });
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

  const spark = await sparkStarting;
  await spark.setConf(catalogConf(sparkReadme, { name: 'floe', uri: e.restUrl, token: 'not-required' }));
  const sparkSelect = (where: string): Promise<Record<string, unknown>[]> =>
    spark.objects(`SELECT kafka.offset AS o, kafka.value_schema_id AS sid, value IS NULL AS no_bytes, ${typedColumnsSql('`')} FROM ${TABLE} ${where} ORDER BY o`);

  await t.test('Spark reads every typed column as the producer sent it', async () => {
    const rows = await sparkSelect('');
    assert.equal(rows.length, want.length);
    rows.forEach((r, i) => assert.deepEqual(view(r, DRIVER_FORMS), want[i], `offset ${i}`));
    const nested = await spark.objects(`SELECT user.city AS city FROM ${TABLE} WHERE user.city = 'Oslo' ORDER BY kafka.offset`);
    assert.equal(nested.length, want.filter((w) => w.user.city === 'Oslo').length, 'a nested field in a filter');
  });

  await t.test('Spark: WHERE qty > 10', async () => {
    assert.deepEqual((await sparkSelect('WHERE qty > 10')).map((r) => view(r, DRIVER_FORMS)), matching);
  });

  const trino = await trinoStarting;
  const trinoSelect = async (where: string): Promise<Record<string, unknown>[]> =>
    objects(await trino.query(`SELECT kafka.offset AS o, kafka.value_schema_id AS sid, value IS NULL AS no_bytes, ${typedColumnsSql('"')} FROM ${TABLE} ${where} ORDER BY 1`));

  await t.test('Trino reads every typed column as the producer sent it', async () => {
    const rows = await trinoSelect('');
    assert.equal(rows.length, want.length);
    rows.forEach((r, i) => assert.deepEqual(view(r, TRINO_FORMS), want[i], `offset ${i}`));
    const { rows: types } = await trino.query(`SELECT column_name, data_type FROM floe.information_schema.columns WHERE table_schema = 'kafka' AND table_name = '${TOPIC}' AND column_name IN ('price', 'at', 'day', 'user', 'counts') ORDER BY ordinal_position`);
    assert.deepEqual(types, [
      ['price', 'decimal(10,2)'],
      ['at', 'timestamp(6) with time zone'],
      ['day', 'date'],
      ['user', 'row(name varchar, city varchar)'],
      ['counts', 'map(varchar, bigint)'],
    ]);
  });

  await t.test('Trino: WHERE qty > 10', async () => {
    assert.deepEqual((await trinoSelect('WHERE qty > 10')).map((r) => view(r, TRINO_FORMS)), matching);
  });

  await t.test('pyiceberg reads every typed column, filters on qty, and prunes files by kafka.offset', async () => {
    const runner = new ChildRunner();
    t.after(() => runner.killAll());
    const columns = ['kafka', 'value', ...TYPED];
    const scans = [{ columns }, { columns, filter: ['>', 'qty', 10] }, { columns: ['kafka'], filter: ['>=', 'kafka.offset', V1_RECORDS] }];
    const { stdout } = await runner.run(venvPython(), [PYICEBERG], JSON.stringify({ catalog: { type: 'rest', uri: e.restUrl }, table: `kafka.${TOPIC}`, scans }), 180_000);
    type Scan = { files: { path: string; records: number }[]; rows: Record<string, unknown>[] };
    const [full, qty, byOffset] = (parseJson(stdout.toString()) as unknown as { scans: Scan[] }).scans;
    const asRow = (r: Record<string, unknown>): Record<string, unknown> => {
      const d = decodeValue(r) as Record<string, unknown>;
      const k = d['kafka'] as Record<string, unknown>;
      return { ...d, o: k['offset'], sid: k['value_schema_id'], no_bytes: d['value'] === null };
    };
    assert.equal(full?.rows.length, want.length);
    full?.rows.forEach((r, i) => assert.deepEqual(view(asRow(r), DRIVER_FORMS), want[i], `offset ${i}`));
    assert.deepEqual(qty?.rows.map((r) => view(asRow(r), DRIVER_FORMS)), matching, 'qty > 10');
    const paths = (s: Scan | undefined): string[] => (s?.files ?? []).map((f) => fileURLToPath(f.path)).sort();
    assert.deepEqual(paths(full), [...allFiles].sort(), 'the full scan plans every live file');
    assert.deepEqual(paths(byOffset), [...laterFiles].sort(), 'kafka.offset >= the first version 2 offset plans only the second commit\'s files');
    assert.deepEqual(byOffset?.rows.map((r) => num((decodeValue(r) as { kafka: { offset: unknown } }).kafka.offset)), want.slice(V1_RECORDS).map((w) => w.offset));
  });

  await t.test('icebird (icebergRead) reads every typed column as the producer sent it', async () => {
    const load = await loadTable(e.restUrl, TOPIC);
    assert.ok(load);
    const metadata = load['metadata'] as { location: string };
    const io = new LocalFileIO({ root: e.warehouse, fsync: false });
    const restore = installWarehouseFetch(io);
    let rows: Record<string, unknown>[];
    try {
      rows = await icebergRead({ tableUrl: metadata.location, metadata: metadata as never });
    } finally {
      restore();
      await io.close();
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
        const typed = Object.fromEntries(TYPED.map((c) => [c, r[c] === undefined ? null : r[c]]));
        // hyparquet (icebird's Parquet reader) hands an optional leaf of the required `kafka` struct over
        // wrapped in a one-element array (`[2]`; `kafka.key` too): its intermediate form for an optional level
        // leaks through there. Spark, Trino, pyiceberg and DuckDB read the same column as a plain int.
        const sid = k['value_schema_id'];
        const schemaId = Array.isArray(sid) && sid.length === 1 ? (sid[0] as unknown) : sid;
        return view({ ...typed, o: k['offset'], sid: schemaId ?? null, no_bytes: r['value'] === null || r['value'] === undefined }, forms);
      })
      .sort((a, b) => a.offset - b.offset);
    assert.equal(got.length, want.length);
    got.forEach((r, i) => assert.deepEqual(r, want[i], `offset ${i}`));
  });
});
