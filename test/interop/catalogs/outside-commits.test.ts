// Exactly-once tiering through an external catalog's optimistic concurrency, with another writer committing
// to the same table meanwhile. Floe tiers a topic through Apache Iceberg's REST catalog server (S3 warehouse
// on moto) while an outside writer keeps committing snapshots of its own to the table's main branch, each
// with Iceberg's `assert-ref-snapshot-id` requirement, as an engine's maintenance would: a 'replace' snapshot
// that keeps the same files (the current manifest list). So Floe's commits meet CommitFailed (409), counted
// in the catalog's log, and are retried from the table's new state: afterwards the outside snapshots are
// still in the main branch's history, the summary still gives every partition's committed offset, and
// pyiceberg reads exactly what Kafka reads (nothing lost, nothing duplicated).
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { spawnBroker, tempDir } from '../../helpers/broker.js';
import { motoPython } from '../../helpers/peers.js';
import { startMotoS3Server } from '../../helpers/s3-server.js';
import { kcatRead } from '../../helpers/tiered-table.js';
import { parseJson, stringifyJson, toBigInt, type JsonObject, type JsonValue } from '../../../iceberg/json.js';
import { assertSameRows, ChildRunner, externalCatalogFlags, pyicebergRows, waitForTable } from './external.js';
import { startIcebergRestServer } from './iceberg-rest-server.js';

const BUCKET = 'lake';
const PARTITIONS = 2;
const TOPIC = 'orders';

/** A snapshot as the catalog returns it; ids are 64-bit, so they are kept as decimal strings. */
interface Snapshot {
  readonly id: string;
  readonly parent: string | undefined;
  readonly manifestList: string;
  readonly schemaId: JsonValue | undefined;
  readonly summary: Record<string, string>;
}

interface Metadata {
  readonly current: string | undefined;
  readonly lastSequenceNumber: bigint;
  readonly snapshots: Map<string, Snapshot>;
}

const idOf = (v: JsonValue | undefined): string | undefined => (v === undefined || v === null ? undefined : String(toBigInt(v)));

/** The table's metadata from the catalog, parsed without losing 64-bit ids (JSON.parse would round them). */
async function metadataOf(table: string): Promise<Metadata> {
  const res = await fetch(table);
  assert.equal(res.status, 200, `load ${table}`);
  const md = (parseJson(await res.text()) as JsonObject)['metadata'] as JsonObject;
  const snapshots = new Map<string, Snapshot>();
  for (const s of (md['snapshots'] ?? []) as JsonObject[]) {
    const id = idOf(s['snapshot-id']) ?? '';
    snapshots.set(id, { id, parent: idOf(s['parent-snapshot-id']), manifestList: String(s['manifest-list']), schemaId: s['schema-id'], summary: s['summary'] as unknown as Record<string, string> });
  }
  return { current: idOf(md['current-snapshot-id']), lastSequenceNumber: toBigInt(md['last-sequence-number']) ?? 0n, snapshots };
}

const FLOE_COMMIT = 'floe.kafka.committed-offset.0';

test('an outside writer commits to the table while Floe tiers through the external catalog: Floe retries from the new state, nothing lost or duplicated', { timeout: 300_000 }, async (t) => {
  const root = await tempDir('floe-outside-');
  const s3 = await startMotoS3Server({ bucket: BUCKET, python: motoPython() });
  assert.ok(typeof s3 !== 'string', `moto's S3 server is needed (scripts/peers/55-moto.sh): ${String(s3)}`);
  const catalog = await startIcebergRestServer(s3, { dir: root, bucket: BUCKET });
  const runner = new ChildRunner();
  const broker = await spawnBroker(join(root, 'log'), ['--remote.log.storage.system.enable=true', '--iceberg.rest.port=-1', '--log.retention.check.interval.ms=200', ...externalCatalogFlags(s3, catalog, BUCKET)]);
  let writing = false;
  let writer: Promise<void> = Promise.resolve();
  t.after(async () => {
    writing = false;
    await writer.catch(() => undefined);
    runner.killAll();
    broker.child.kill('SIGTERM');
    await broker.exited;
    await catalog.stop();
    await s3.stop();
    await rm(root, { recursive: true, force: true });
  });

  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'outside-commits', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const producer = kafka.producer();
  await admin.connect();
  await producer.connect();
  t.after(() => producer.disconnect());
  t.after(() => admin.disconnect());
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS, configEntries: [{ name: 'internal.segment.bytes', value: '2048' }, { name: 'iceberg.commit.interval.ms', value: '100' }] }] });
  const ends = async () => (await admin.fetchTopicOffsets(TOPIC)).sort((a, b) => a.partition - b.partition).map((o) => Number(o.high));
  const produce = async (round: number) => {
    for (let p = 0; p < PARTITIONS; p++) {
      await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ partition: p, key: `r${round}-p${p}-${i}`, value: `round ${round} ${'x'.repeat(100)}` })) });
    }
  };
  await produce(0);
  await waitForTable(catalog, TOPIC, await ends());

  // The outside writer: a snapshot of the same files on main, committed only if main has not moved.
  const outside = new Set<string>();
  let refused = 0;
  /** Whether an outside commit is in flight (its 409 may be in the catalog's log before it is counted). */
  let posting = false;
  const table = `${catalog.tablesBase}/namespaces/kafka/tables/${TOPIC}`;
  const commitOutside = async (): Promise<void> => {
    const md = await metadataOf(table);
    const current = md.current === undefined ? undefined : md.snapshots.get(md.current);
    if (current === undefined) return;
    const id = BigInt(randomInt(1, 2 ** 47));
    const totals = Object.fromEntries(Object.entries(current.summary).filter(([k]) => k.startsWith('total-')));
    const body: JsonValue = {
      requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': BigInt(current.id) }],
      updates: [
        {
          action: 'add-snapshot',
          snapshot: {
            'snapshot-id': id,
            'parent-snapshot-id': BigInt(current.id),
            'sequence-number': md.lastSequenceNumber + 1n,
            'timestamp-ms': Date.now(),
            'manifest-list': current.manifestList,
            ...(current.schemaId !== undefined ? { 'schema-id': current.schemaId } : {}),
            summary: { operation: 'replace', 'engine-name': 'outside-writer', ...totals },
          },
        },
        { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
      ],
    };
    posting = true;
    try {
      const res = await fetch(table, { method: 'POST', headers: { 'content-type': 'application/json' }, body: stringifyJson(body) });
      if (res.ok) outside.add(String(id));
      else if (res.status === 409) refused++; // Floe committed in between: the outside writer loses this race
      else throw new Error(`outside commit: HTTP ${res.status} ${await res.text()}`);
    } finally {
      posting = false;
    }
  };
  writing = true;
  writer = (async () => {
    while (writing) {
      await commitOutside();
      await sleep(20);
    }
  })();

  for (let round = 1; round <= 8; round++) {
    await produce(round);
    await sleep(150);
  }
  // The catalog server logs each commit it refuses (409, "branch main has changed"); those beyond the
  // outside writer's own were Floe's, retried from the table's new state.
  const conflicts = () => (catalog.output().match(/ErrorResponse\(code=409/g) ?? []).length;
  // The outside writer keeps committing until Floe has met at least one refusal, then stops: a writer that
  // commits every few milliseconds for ever would starve any optimistic committer slower than it (Iceberg's
  // own included), which is not what this test is about. Floe then catches up on top of its commits.
  for (const started = Date.now(); (posting || conflicts() <= refused) && Date.now() - started < 60_000; ) await sleep(100);
  writing = false;
  await writer;
  const end = await ends();
  await waitForTable(catalog, TOPIC, end);

  // Floe's commits landed on top of outside ones: it met their 409s and retried from the table's state.
  const md = await metadataOf(table);
  const floeOnOutside = [...md.snapshots.values()].filter((s) => s.summary[FLOE_COMMIT] !== undefined && outside.has(s.parent ?? ''));
  t.diagnostic(`${outside.size} outside commits landed, ${refused} lost a race to Floe; the catalog refused ${conflicts() - refused} of Floe's commits; ${floeOnOutside.length} Floe commits sit on an outside one`);
  assert.ok(outside.size > 0, 'the outside writer committed');
  assert.ok(conflicts() > refused, 'Floe met a conflict (409) and retried');
  // Walking main back from its head: outside snapshots stay in the history (Floe did not overwrite them).
  const chain: Snapshot[] = [];
  for (let s = md.snapshots.get(md.current ?? ''); s !== undefined; s = md.snapshots.get(s.parent ?? '')) chain.push(s);
  assert.ok(chain.some((s) => outside.has(s.id)), 'outside commits are ancestors of the current snapshot');

  // Exactly once: the table holds each Kafka record once, at its offset.
  const rows = await pyicebergRows(runner, s3, catalog, TOPIC);
  for (let p = 0; p < PARTITIONS; p++) {
    const fromKafka = await kcatRead(broker.bootstrap, TOPIC, p, 0);
    assert.equal(fromKafka.length, end[p]);
    assertSameRows(rows, p, fromKafka);
  }
});
