// The README's promise: the first command starts Floe with embedded defaults (local log, local warehouse,
// built-in REST catalog), and every topic is also an Iceberg table. The compiled broker is started with only
// its listener, log dir, warehouse, REST port and a 1 s commit interval; kafkajs produces to an auto-created
// topic; the table is found through the REST catalog (GET /v1/config, list tables, load table) and holds the
// produced records. Freshness: the topic then goes quiet, and its records still reach the table within a
// few commit intervals (polled, no fixed sleep), twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { spawnBroker, tempDir } from '../../helpers/broker.js';
import { loadTable, tableRows, waitFor } from '../../helpers/tiered-table.js';

const INTERVAL_MS = 1000;
/** Freshness bound checked: a roll at most one interval after the write, a commit at most one interval later, conversion time. */
const DEADLINE_MS = 4 * INTERVAL_MS;

test('with default settings a produced topic is an Iceberg table in the REST catalog, fresh within the commit interval', { timeout: 60_000 }, async (t) => {
  const root = await tempDir('floe-defaults-');
  const cleanups: (() => Promise<unknown>)[] = [];
  // One hook, newest first: clients and brokers stop before their folders are removed.
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const warehouse = join(root, 'warehouse');
  const broker = await spawnBroker(join(root, 'log'), [`--iceberg.warehouse=${warehouse}`, '--iceberg.rest.port=0', '--schema.registry.port=0', `--iceberg.commit.interval.ms=${INTERVAL_MS}`], 0, { rawFlags: true });
  cleanups.push(async () => {
    broker.child.kill('SIGTERM');
    await broker.exited;
  });
  const rest = broker.restUrl;
  assert.ok(rest, 'the built-in REST catalog runs by default');

  const config = (await (await fetch(`${rest}/v1/config`)).json()) as { defaults?: unknown; overrides?: unknown };
  assert.ok(config.defaults !== undefined && config.overrides !== undefined, 'GET /v1/config answers a CatalogConfig');

  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'floe-defaults', logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  const sent = ['first', 'second', 'third'];
  await producer.send({ topic: 'events', acks: -1, messages: sent.map((v, i) => ({ key: `k${i}`, value: v })) });
  const ackedAt = Date.now();

  const rows = await waitFor(
    'the quiet topic to reach its table',
    async () => {
      const r = await tableRows(rest, 'events', warehouse);
      return r.length === sent.length ? r : undefined;
    },
    DEADLINE_MS,
  );
  t.diagnostic(`rows visible ${Date.now() - ackedAt} ms after the produce was acknowledged (interval ${INTERVAL_MS} ms)`);
  assert.deepEqual(
    rows.map((r) => ({ partition: r.partition, offset: r.offset, key: r.key?.toString(), value: r.value?.toString() })),
    sent.map((v, i) => ({ partition: 0, offset: i, key: `k${i}`, value: v })),
  );

  const list = (await (await fetch(`${rest}/v1/namespaces/kafka/tables`)).json()) as { identifiers: { namespace: string[]; name: string }[] };
  assert.deepEqual(
    list.identifiers,
    [
      { namespace: ['kafka'], name: '_schemas' },
      { namespace: ['kafka'], name: 'events' },
    ],
    'the topic is listed as kafka.events, beside the schema registry\'s _schemas (the registry runs by default and keeps its state in that topic)',
  );
  const load = await loadTable(rest, 'events');
  assert.ok(load, 'the table loads');
  const location = (load['metadata'] as { location: string }).location;
  assert.ok(location.startsWith('file://') && location.includes(warehouse), `the table lives in the local warehouse (${location})`);

  // Quiet again after two more records: they arrive too, without more traffic.
  await producer.send({ topic: 'events', acks: -1, messages: [{ key: 'k3', value: 'fourth' }, { key: 'k4', value: 'fifth' }] });
  const more = await waitFor(
    'two more records to reach the table',
    async () => {
      const r = await tableRows(rest, 'events', warehouse);
      return r.length === 5 ? r : undefined;
    },
    DEADLINE_MS,
  );
  assert.deepEqual(more.map((r) => r.value?.toString()), [...sent, 'fourth', 'fifth']);
});
