import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EXPIRE_DEFAULTS, expireSnapshots, planExpiry } from '../../../iceberg/maintenance/expire-snapshots.js';
import { deleteUnreferencedFiles } from '../../../iceberg/maintenance/reachable.js';
import { snapshotManifests } from '../../../iceberg/transaction.js';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { Table } from '../../../iceberg/table.js';
import { RestCatalogServer } from '../../../iceberg/rest/server.js';
import { RestCatalogClient } from '../../../iceberg/catalog/rest-client.js';
import { IcebergError } from '../../../iceberg/types.js';
import type { TableRequirement, TableUpdate } from '../../../iceberg/table-metadata-builder.js';
import type { CommitTableResult, TableIdentifier } from '../../../iceberg/catalog/catalog.js';
import type { Snapshot } from '../../../iceberg/snapshot.js';
import { append, icebirdIds, rows, tableEnv, type Env } from './fixture.js';

const ids = (snaps: readonly (Snapshot | undefined)[]): bigint[] => snaps.map((s) => s?.['snapshot-id'] ?? -1n);

/** `n` appends of one row each; returns the snapshots, oldest first. */
async function appends(env: Env, n: number, from = 0): Promise<Snapshot[]> {
  const out: Snapshot[] = [];
  for (let i = 0; i < n; i++) {
    await append(env, [from + i]);
    out.push(env.table.currentSnapshot() as Snapshot);
  }
  return out;
}

const exists = async (env: Env, l: string): Promise<boolean> => (await env.io.head(l)) !== undefined;

test('defaults are Iceberg’s: 5 days, keep 1, refs forever', () => {
  assert.deepEqual(EXPIRE_DEFAULTS, { maxSnapshotAgeMs: 432_000_000, minSnapshotsToKeep: 1, maxRefAgeMs: Number.MAX_SAFE_INTEGER });
});

test('expires by age and keeps retainLast; files shared with retained snapshots stay, time travel to a retained one works', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest-merge.enabled': 'false' });
  const snaps = await appends(env, 5);
  const s = (i: number): Snapshot => snaps[i] as Snapshot;
  // Older than s4: s1..s3 (indexes 0..2) may go; retainLast 1 keeps only the head among the old ones.
  const res = await expireSnapshots(env.table, { olderThanMs: s(3)['timestamp-ms'], retainLast: 1, now: env.now });
  assert.deepEqual(res.expired, ids(snaps.slice(0, 3)));
  assert.deepEqual(ids(env.table.metadata.snapshots), ids(snaps.slice(3)));
  // Appends share every manifest and data file: only the three manifest lists were theirs alone.
  assert.deepEqual(res.deleted.sort(), snaps.slice(0, 3).map((x) => x['manifest-list']).sort());
  assert.deepEqual(res.deferred, []);
  for (const m of await snapshotManifests(env.io, s(4))) assert.ok(await exists(env, m.manifest_path));
  assert.deepEqual(await icebirdIds(env.io, env.table), [0, 1, 2, 3, 4]);
  const old = await env.table.files(s(3)['snapshot-id']);
  assert.equal(old.dataFiles.length, 4, 'the retained s4 still lists its four files');
  for (const e of old.dataFiles) assert.ok(await exists(env, e.data_file.file_path));

  // retainLast counts the branch's history whatever the age: keep 3 of the 2 left → nothing more.
  assert.deepEqual((await expireSnapshots(env.table, { olderThanMs: env.now() + 1, retainLast: 3, now: env.now })).expired, []);
  // Everything old, keep 1: s4 goes, the current s5 stays.
  assert.deepEqual((await expireSnapshots(env.table, { olderThanMs: env.now() + 1, retainLast: 1, now: env.now })).expired, ids([s(3)]));
  assert.deepEqual(ids(env.table.metadata.snapshots), ids([s(4)]));
});

test('files only expired snapshots reached are deleted: a data file overwritten away, its manifests; live ones stay', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest-merge.enabled': 'false' });
  const { table } = env;
  const a = await append(env, [1]);
  const s1 = table.currentSnapshot() as Snapshot;
  const s1Manifests = await snapshotManifests(env.io, s1);
  const b = await append(env, [2]);
  env.tick();
  const c = await table.writeDataFile(rows([3]));
  await table.commit(table.newOverwrite().deleteFile(a).addFile(c));
  const s3 = table.currentSnapshot() as Snapshot;
  // Expire s1 and s2: a was live only there.
  const res = await expireSnapshots(table, { olderThanMs: s3['timestamp-ms'], retainLast: 1, now: env.now });
  assert.equal(res.expired.length, 2);
  assert.ok(res.deleted.includes(a.file_path), 'a, live only in expired snapshots, is deleted');
  assert.equal(await exists(env, a.file_path), false);
  assert.ok(await exists(env, b.file_path), 'b is live in s3');
  assert.ok(await exists(env, c.file_path));
  // s1's manifest (a ADDED) is not listed by s3 (which has its rewrite): deleted with it.
  for (const m of s1Manifests) assert.equal(await exists(env, m.manifest_path), false);
  for (const m of await snapshotManifests(env.io, s3)) assert.ok(await exists(env, m.manifest_path));
  assert.deepEqual(await icebirdIds(env.io, table), [2, 3]);
});

test('protected, tagged and branch snapshots are kept; a ref past max-ref-age-ms is removed and its snapshot expires', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest-merge.enabled': 'false' });
  const snaps = await appends(env, 6);
  const s = (i: number): Snapshot => snaps[i] as Snapshot;
  const ref = (name: string, snap: Snapshot, extra: Record<string, unknown> = {}): TableUpdate => ({ action: 'set-snapshot-ref', 'ref-name': name, type: 'tag', 'snapshot-id': snap['snapshot-id'], ...extra }) as TableUpdate;
  await env.table.commitUpdates(() => ({
    requirements: [],
    updates: [
      ref('keep-tag', s(0)),
      ref('old-tag', s(1), { 'max-ref-age-ms': 1000 }),
      { action: 'set-snapshot-ref', 'ref-name': 'audit', type: 'branch', 'snapshot-id': s(3)['snapshot-id'], 'min-snapshots-to-keep': 2 },
    ],
  }));
  let planned: bigint[] = [];
  const res = await expireSnapshots(env.table, {
    olderThanMs: env.now() + 1,
    retainLast: 1,
    now: () => env.now() + 60_000,
    protect: (md) => {
      planned = md.snapshots.map((x) => x['snapshot-id']);
      return [s(4)['snapshot-id']];
    },
  });
  assert.equal(planned.length, 6, 'protect sees the metadata being planned on');
  // Kept: s(0) (tag), s(3) and its parent s(2) (branch audit keeps 2), s(4) (protected), s(5) (main's head).
  // Expired: s(1), whose tag is older than its max-ref-age-ms and removed.
  assert.deepEqual(res.expired, ids([s(1)]));
  assert.deepEqual(Object.keys(env.table.metadata.refs).sort(), ['audit', 'keep-tag', 'main']);
  assert.deepEqual(ids(env.table.metadata.snapshots), ids([s(0), s(2), s(3), s(4), s(5)]));
  // The tagged snapshot still reads.
  assert.equal((await env.table.files(s(0)['snapshot-id'])).dataFiles.length, 1);
});

test('table properties give the defaults; dry runs change nothing; gc.enabled=false refuses', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest-merge.enabled': 'false', 'history.expire.max-snapshot-age-ms': '2500', 'history.expire.min-snapshots-to-keep': '2' });
  const snaps = await appends(env, 5); // one second apart
  const plan = await planExpiry(env.table.metadata, { now: env.now });
  // s1..s5 are 4, 3, 2, 1 and 0 s old. Within 2.5 s: s3, s4, s5 (more than the minimum of 2); s2 and s1 are
  // older and beyond the minimum: expired.
  assert.deepEqual(plan.expire, ids(snaps.slice(0, 2)));
  assert.deepEqual((await planExpiry(env.table.metadata, { now: env.now, retainLast: 4 })).expire, ids(snaps.slice(0, 1)), 'retainLast overrides the property');
  const metadataBefore = env.table.metadataLocation;
  const dry = await expireSnapshots(env.table, { now: env.now, dryRun: true });
  assert.deepEqual(dry.expired, plan.expire);
  assert.ok(dry.deleted.length > 0);
  for (const l of dry.deleted) assert.ok(await exists(env, l), `${l} still there after a dry run`);
  assert.equal((await env.catalog.loadTable(env.table.id)).metadataLocation, metadataBefore);

  await env.table.setProperties({ 'gc.enabled': 'false' });
  await assert.rejects(expireSnapshots(env.table, { now: env.now }), (e: unknown) => e instanceof IcebergError && /gc\.enabled/.test(e.message));
  await assert.rejects(planExpiry(env.table.metadata, { retainLast: 0 }), IcebergError);
});

test('canDelete false defers a file a reader holds; deleteUnreferencedFiles removes it later', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest-merge.enabled': 'false' });
  const { table } = env;
  const a = await append(env, [1]);
  env.tick();
  await table.commit(table.newOverwrite().deleteFile(a).addFile(await table.writeDataFile(rows([2]))));
  const held = new Set([a.file_path]);
  const res = await expireSnapshots(table, { olderThanMs: env.now() + 1, retainLast: 1, now: env.now, canDelete: (l) => !held.has(l) });
  assert.deepEqual(res.deferred, [a.file_path]);
  assert.ok(!res.deleted.includes(a.file_path));
  assert.ok(await exists(env, a.file_path), 'the held file is still readable');
  held.clear();
  const later = await deleteUnreferencedFiles(env.io, res.deferred, { canDelete: (l) => !held.has(l) });
  assert.deepEqual(later, { deleted: [a.file_path], deferred: [] });
  assert.equal(await exists(env, a.file_path), false);
});

test('extraReferences: objects named only by expired snapshots are deleted, shared ones kept', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest-merge.enabled': 'false' });
  const snaps = await appends(env, 3);
  const idx = (n: number): string => `${env.table.location}/kafka-index/partition=0/${n}.idx`;
  for (const n of [0, 1, 2]) await env.io.put(idx(n), Buffer.from('x'));
  // s1 names idx0 and idx1; s2 names idx1; s3 names idx1 and idx2.
  const names = new Map<bigint, string[]>(
    [
      [snaps[0], [idx(0), idx(1)]],
      [snaps[1], [idx(1)]],
      [snaps[2], [idx(1), idx(2)]],
    ].map(([s, l]) => [(s as Snapshot)['snapshot-id'], l as string[]]),
  );
  const res = await expireSnapshots(env.table, { olderThanMs: env.now() + 1, retainLast: 1, now: env.now, extraReferences: async (s) => names.get(s['snapshot-id']) ?? [] });
  assert.equal(res.expired.length, 2);
  assert.ok(res.deleted.includes(idx(0)));
  assert.ok(!res.deleted.includes(idx(1)));
  assert.deepEqual(await Promise.all([0, 1, 2].map((n) => exists(env, idx(n)))), [false, true, true]);
});

/** A catalog whose first commit of an expiry loses a race against an append landing just before it. */
class RacingCatalog extends WarehouseCatalog {
  race: (() => Promise<void>) | undefined;
  commits = 0;
  override async commitTable(id: TableIdentifier, requirements: readonly TableRequirement[], updates: readonly TableUpdate[]): Promise<CommitTableResult> {
    const race = this.race;
    if (race && updates.some((u) => u.action === 'remove-snapshots')) {
      this.race = undefined;
      await race();
    }
    if (updates.some((u) => u.action === 'remove-snapshots')) this.commits++;
    return super.commitTable(id, requirements, updates);
  }
}

test('a concurrent append makes the expiry commit conflict: it is planned again and the new snapshot is kept', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest-merge.enabled': 'false' });
  const catalog = new RacingCatalog({ io: env.io, warehouse: `file://${env.dir}/wh`, now: env.now });
  const table = await Table.load(catalog, env.table.id, env.io, { now: env.now });
  const snaps = await appends({ ...env, table }, 3);
  const other = await Table.load(catalog, env.table.id, env.io, { now: env.now });
  let raced: Snapshot | undefined;
  catalog.race = async () => {
    env.tick();
    raced = await other.commit(other.newAppend().addFile(await other.writeDataFile(rows([99]))));
  };
  const res = await expireSnapshots(table, { olderThanMs: env.now() + 1, retainLast: 1, now: env.now });
  assert.equal(catalog.commits, 2, 'the first expiry commit conflicted and was re-planned');
  // Re-planned on the new head: all three earlier snapshots go, the raced one is current and kept.
  assert.deepEqual(res.expired, ids(snaps));
  assert.deepEqual(ids(table.metadata.snapshots), ids([raced]));
  assert.deepEqual(await icebirdIds(env.io, table), [0, 1, 2, 99]);
});

test('through the REST catalog client: the expiry commit (remove-snapshots, pinned refs) crosses HTTP', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest-merge.enabled': 'false' });
  const server = new RestCatalogServer({ catalog: env.catalog, host: '127.0.0.1', port: 0 });
  const { url } = await server.start();
  t.after(() => server.close());
  const client = new RestCatalogClient({ uri: url });
  const table = await Table.load(client, env.table.id, env.io, { now: env.now });
  const snaps = await appends({ ...env, table }, 3);
  const res = await expireSnapshots(table, { olderThanMs: env.now() + 1, retainLast: 1, now: env.now });
  assert.deepEqual(res.expired, ids(snaps.slice(0, 2)));
  assert.deepEqual(ids((await env.catalog.loadTable(env.table.id)).metadata.snapshots), ids(snaps.slice(2)));
  for (const s of snaps.slice(0, 2)) assert.equal(await exists(env, s['manifest-list']), false);
  assert.deepEqual(await icebirdIds(env.io, table), [0, 1, 2]);
});
