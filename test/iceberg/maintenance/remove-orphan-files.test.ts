import { test } from 'node:test';
import assert from 'node:assert/strict';
import { utimes } from 'node:fs/promises';
import { removeOrphanFiles, ORPHAN_DEFAULT_WINDOW_MS } from '../../../iceberg/maintenance/remove-orphan-files.js';
import { isWithin, locationKey } from '../../../iceberg/maintenance/reachable.js';
import { expireSnapshots } from '../../../iceberg/maintenance/expire-snapshots.js';
import { IcebergError } from '../../../iceberg/types.js';
import { append, icebirdIds, rows, tableEnv, type Env } from './fixture.js';

const FOUR_DAYS_AGO = (): Date => new Date(Date.now() - 4 * 24 * 60 * 60 * 1000);

async function listAll(env: Env): Promise<string[]> {
  const out: string[] = [];
  for await (const o of env.io.list(`${env.table.location}/`)) out.push(o.location);
  return out.sort();
}

/** Sets a local object's modification time (the safety window is judged by it). */
async function age(location: string, when: Date = FOUR_DAYS_AGO()): Promise<void> {
  await utimes(location.replace(/^file:\/\//, ''), when, when);
}

test('locations compare by canonical key: file:/x, file:///x and /x; s3a and s3; doubled and trailing slashes', () => {
  assert.equal(locationKey('file:/tmp/wh/t/data/a.parquet'), 'file:///tmp/wh/t/data/a.parquet');
  assert.equal(locationKey('/tmp/wh//t/data/a.parquet'), 'file:///tmp/wh/t/data/a.parquet');
  assert.equal(locationKey('file://localhost/tmp/wh/t/'), 'file:///tmp/wh/t');
  assert.equal(locationKey('s3a://bucket/wh//t/x.avro'), 's3://bucket/wh/t/x.avro');
  assert.notEqual(locationKey('s3://bucket/a'), locationKey('s3://other/a'));
  assert.ok(isWithin('s3://b/wh/t/data/x', 's3://b/wh/t/'));
  assert.ok(!isWithin('s3://b/wh/t2/data/x', 's3://b/wh/t'));
  assert.equal(ORPHAN_DEFAULT_WINDOW_MS, 3 * 24 * 60 * 60 * 1000);
});

test('orphans older than the window are deleted, younger ones and everything referenced kept', async (t) => {
  const env = await tableEnv(t, { 'write.metadata.previous-versions-max': '2', 'commit.manifest.min-count-to-merge': '3' });
  const { table, io } = env;
  const a = await append(env, [1, 2]);
  await append(env, [3]);
  env.tick();
  await table.commit(table.newRowDelta().addDeleteFile(await table.writePositionDeletes([{ path: a.file_path, pos: 1n }])));
  await append(env, [4]); // merges the data manifests
  env.tick();
  await table.commit(table.newOverwrite().deleteFile(a).addFile(await table.writeDataFile(rows([1]))));
  const beforeMetadata = table.metadataLocation;

  // What a crashed upload or commit leaves behind, and a young file of a commit still in progress.
  const crashed = `${table.location}/data/crashed-upload.parquet`;
  const stray = `${table.location}/metadata/stray-m0.avro`;
  const young = `${table.location}/data/in-progress.parquet`;
  const index = `${table.location}/kafka-index/partition=0/00000000000000000000-00000000000000000003.idx`;
  for (const l of [crashed, stray, young, index]) await io.put(l, Buffer.from('x'));
  // Everything already there is old; only `young` is inside the window.
  const referencedBefore = (await listAll(env)).filter((l) => ![crashed, stray, young, index].includes(l));
  for (const l of await listAll(env)) if (l !== young) await age(l);

  const res = await removeOrphanFiles(table, { extraReferenced: async () => [index] });
  // Old metadata files fell off the 2-entry log: orphans too.
  const fellOff = referencedBefore.filter((l) => l.endsWith('.metadata.json') && l !== beforeMetadata && !table.metadata['metadata-log'].some((e) => e['metadata-file'] === l));
  assert.ok(fellOff.length >= 3, 'some metadata files fell off the log');
  assert.deepEqual(res.deleted.sort(), [crashed, stray, ...fellOff].sort());
  assert.deepEqual(res.kept, [young]);
  assert.deepEqual(res.deferred, []);
  const left = await listAll(env);
  for (const l of referencedBefore) if (!fellOff.includes(l)) assert.ok(left.includes(l), `referenced ${l} is kept`);
  assert.ok(left.includes(index) && left.includes(young));
  assert.ok(left.includes(`${table.location}/metadata/version-hint.text`));
  assert.deepEqual(await icebirdIds(io, table), [1, 3, 4]);
  // Every snapshot still reads (time travel).
  for (const s of table.metadata.snapshots) await table.files(s['snapshot-id']);
});

test('expiry then orphan removal: files of expired snapshots a crash left behind are removed later', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest-merge.enabled': 'false' });
  const { table } = env;
  const a = await append(env, [1]);
  env.tick();
  await table.commit(table.newOverwrite().deleteFile(a).addFile(await table.writeDataFile(rows([2]))));
  // Commit the expiry but "crash" before deleting: cleanExpiredFiles false leaves a and s1's files.
  const res = await expireSnapshots(table, { olderThanMs: env.now() + 1, retainLast: 1, now: env.now, cleanExpiredFiles: false });
  assert.equal(res.expired.length, 1);
  assert.ok(await env.io.head(a.file_path));
  for (const l of await listAll(env)) await age(l);
  const orphans = await removeOrphanFiles(table);
  assert.ok(orphans.deleted.includes(a.file_path));
  assert.equal(await env.io.head(a.file_path), undefined);
  assert.deepEqual(await icebirdIds(env.io, table), [2]);
});

test('dry run, a folder inside the table, canDelete, and a location outside the table refused', async (t) => {
  const env = await tableEnv(t);
  const { table, io } = env;
  await append(env, [1]);
  const dataOrphan = `${table.location}/data/orphan.parquet`;
  const metaOrphan = `${table.location}/metadata/orphan.avro`;
  for (const l of [dataOrphan, metaOrphan]) await io.put(l, Buffer.from('x'));
  const later = Date.now() + 60_000;
  const dry = await removeOrphanFiles(table, { olderThanMs: later, dryRun: true });
  assert.deepEqual(dry.deleted.sort(), [dataOrphan, metaOrphan].sort());
  assert.ok(await io.head(dataOrphan));
  const inData = await removeOrphanFiles(table, { olderThanMs: later, location: `${table.location}/data/`, canDelete: (l) => l !== dataOrphan });
  assert.deepEqual(inData, { deleted: [], kept: [], deferred: [dataOrphan] });
  assert.ok(await io.head(metaOrphan), 'outside the folder asked for: untouched');
  await assert.rejects(removeOrphanFiles(table, { location: `file://${env.dir}/wh` }), IcebergError);
});

test('a file the metadata names as file:/path (Hadoop style) is referenced, not an orphan', async (t) => {
  const env = await tableEnv(t);
  const { table, io } = env;
  const written = await table.writeDataFile(rows([5]));
  const hadoopStyle = written.file_path.replace(/^file:\/\//, 'file:');
  // The same file, recorded by another writer under the other spelling.
  await table.commit(table.newAppend().addFile({ ...written, file_path: hadoopStyle }));
  const res = await removeOrphanFiles(table, { olderThanMs: Date.now() + 60_000 });
  assert.deepEqual(res.deleted, []);
  assert.ok(await io.head(written.file_path));
});

test('a missing manifest list of a kept snapshot stops orphan removal before it deletes anything', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest-merge.enabled': 'false' });
  const { table, io } = env;
  await append(env, [1]);
  const first = table.currentSnapshot();
  await append(env, [2]);
  const orphan = `${table.location}/data/orphan.parquet`;
  await io.put(orphan, Buffer.from('x'));
  await io.delete(first?.['manifest-list'] ?? '');
  await assert.rejects(removeOrphanFiles(table, { olderThanMs: Date.now() + 60_000 }), (e: unknown) => e instanceof IcebergError && e.code === 'MAINTENANCE_INCOMPLETE' && /missing/.test(e.message));
  assert.ok(await io.head(orphan), 'nothing was deleted');
});
