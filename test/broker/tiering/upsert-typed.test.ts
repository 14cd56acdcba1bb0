// An upsert table keyed by a typed table's id column: Debezium change events in Avro (Confluent's serializer,
// the registry's schema, which gains a column in the last round), produced with a distinct Kafka key each, so only `iceberg.upsert.id.columns=id`
// (read from `after`, or `before` for a delete) can tell which rows are one entity; `op` and `ts_ms` come
// from their columns. pyiceberg reads the `_latest` table; it equals the state the test folds from its events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { AvroSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { parseJson } from '../../../iceberg/json.js';
import { CdcStream } from '../../helpers/cdc-stream.js';
import { runVenvPython } from '../../helpers/peers.js';
import { loadTable, upsertCaughtUp } from '../../helpers/tiered-table.js';
import { createTypedTopic, produce, typedEnv } from './typed-fixture.js';

const PYICEBERG = fileURLToPath(new URL('../../interop/engines/pyiceberg_driver.py', import.meta.url));
const NS = 'dbserver1.inventory.customers';
const VALUE = { type: 'record', name: 'Value', namespace: NS, fields: [{ name: 'id', type: 'int' }, { name: 'name', type: 'string' }, { name: 'version', type: 'int' }] };
/** The second version of the row: an optional column added (the table's schema evolves, `_latest`'s with it). */
const VALUE_V2 = { ...VALUE, fields: [...VALUE.fields, { name: 'email', type: ['null', 'string'], default: null }] };
const envelope = (value: unknown) => ({
  type: 'record',
  name: 'Envelope',
  namespace: NS,
  fields: [
    { name: 'before', type: ['null', value], default: null },
    { name: 'after', type: ['null', `${NS}.Value`], default: null },
    { name: 'op', type: 'string' },
    { name: 'ts_ms', type: ['null', 'long'], default: null },
  ],
});
const ENVELOPE = envelope(VALUE);

interface Payload {
  before: { id: number; name: string; version: number } | null;
  after: { id: number; name: string; version: number } | null;
  op: string;
  ts_ms: number;
}

test('iceberg.upsert.id.columns: a typed Debezium table\'s _latest rows are one per id, whatever the Kafka keys', { timeout: 300_000 }, async (t) => {
  const e = await typedEnv(t);
  const topic = 'customers-avro';
  await createTypedTopic(e, topic, {
    'iceberg.mode': 'value_schema_id_prefix',
    'iceberg.upsert.enabled': 'true',
    'iceberg.upsert.cdc.format': 'debezium',
    'iceberg.upsert.id.columns': 'id',
    'iceberg.upsert.order.field': 'ts_ms',
    'iceberg.commit.interval.ms': '300',
    'local.retention.bytes': '-1',
  });
  const client = new SchemaRegistryClient({ baseURLs: [e.registryUrl] });
  await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(ENVELOPE) });
  let ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  // The stream's Debezium events, without its tombstones and heartbeats (they carry no id: with id columns
  // they change nothing, and the reference keys by id).
  const stream = new CdcStream(23, 40);
  const want = new Map<number, { ts: number; version: number | null; email: string | null }>();
  let sent = 0;
  for (let round = 0; round < 3; round++) {
    // The last round writes the row's second version: the table (and _latest) gain the email column.
    if (round === 2) {
      await client.register(`${topic}-value`, { schemaType: 'AVRO', schema: JSON.stringify(envelope(VALUE_V2)) });
      // A fresh client: the first one keeps the latest version it looked up.
      ser = new AvroSerializer(new SchemaRegistryClient({ baseURLs: [e.registryUrl] }), SerdeType.VALUE, { useLatestVersion: true });
    }
    const withEmail = (v: Payload['after']) => (v === null ? null : round === 2 ? { ...v, email: `c${v.id}@example.com` } : v);
    const values: Buffer[] = [];
    for (const ev of stream.events(150)) {
      if (ev.key === null || ev.value === null) continue;
      const parsed = JSON.parse(ev.value) as { payload?: Payload } & Payload;
      const p: Payload = parsed.payload ?? parsed;
      values.push(await ser.serialize(topic, { before: withEmail(p.before), after: withEmail(p.after), op: p.op, ts_ms: p.ts_ms }));
      const id = (p.after ?? p.before)?.id ?? -1;
      const cur = want.get(id);
      if (cur === undefined || p.ts_ms >= cur.ts) want.set(id, { ts: p.ts_ms, version: p.op === 'd' ? null : (p.after?.version ?? null), email: round === 2 && p.after !== null ? `c${p.after.id}@example.com` : null });
    }
    await produce(e, topic, values);
    sent += values.length;
    await upsertCaughtUp(e.restUrl, topic, 1, sent);
  }
  const expected = [...want].filter(([, s]) => s.version !== null).map(([id, s]) => `${id}:${s.version}:${s.email}`).sort();
  const out = await runVenvPython(PYICEBERG, JSON.stringify({ catalog: { type: 'rest', uri: e.restUrl }, table: `kafka.${topic}_latest`, scans: [{ filter: null, columns: ['after'] }] }));
  // The upsert table's schema follows the topic table's, field ids included (they share the data files).
  const schemaOf = async (name: string): Promise<unknown> => {
    const md = (await loadTable(e.restUrl, name))?.['metadata'] as { 'current-schema-id': number; schemas: { 'schema-id': number; fields: unknown[] }[] };
    return md.schemas.find((x) => x['schema-id'] === md['current-schema-id'])?.fields;
  };
  const fields = await schemaOf(topic);
  assert.match(JSON.stringify(fields), /"name":"email"/, 'the topic table gained the column');
  assert.deepEqual(await schemaOf(`${topic}_latest`), fields);
  const rows = (parseJson(out) as unknown as { scans: { rows: { after: { id: number; version: number; email?: string | null } | null }[] }[] }).scans[0]?.rows ?? [];
  assert.deepEqual(rows.map((r) => `${r.after?.id}:${r.after?.version}:${r.after?.email ?? null}`).sort(), expected, 'one row per id: its newest state (with the column the schema gained), deleted ids gone');
  assert.ok(expected.some((r) => r.endsWith('.com')) && expected.some((r) => r.endsWith(':null')), 'rows of both schema versions');
  assert.ok(expected.length > 0 && expected.length < sent);
  t.diagnostic(`${sent} events, ${expected.length} live ids`);
});
