import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manifestMergeSettings, MANIFEST_MERGE_DEFAULTS, packEnd } from '../../iceberg/manifest-merge.js';
import { readManifestList, ManifestContent } from '../../iceberg/manifest-list.js';
import { readManifest } from '../../iceberg/manifest.js';
import { ManifestEntryStatus } from '../../iceberg/data-file.js';
import { snapshotManifests } from '../../iceberg/transaction.js';
import { CommitConflictError } from '../../iceberg/table-metadata-builder.js';
import { append, icebirdIds, ID, range, rows, SCHEMA, tableEnv } from './maintenance/fixture.js';

test('packEnd fills bins from the end, keeps order, and leaves the first bin under-filled', () => {
  const w = (x: number): number => x;
  assert.deepEqual(packEnd([5, 5, 5, 5], w, 10), [
    [5, 5],
    [5, 5],
  ]);
  assert.deepEqual(packEnd([3, 5, 5], w, 10), [[3], [5, 5]]);
  assert.deepEqual(packEnd([1, 2, 30, 4, 5], w, 10), [[1, 2], [30], [4, 5]]);
  assert.deepEqual(packEnd([], w, 10), []);
});

test('merge settings: Iceberg defaults, table properties, malformed values fall back', () => {
  assert.deepEqual(manifestMergeSettings({}), MANIFEST_MERGE_DEFAULTS);
  assert.deepEqual(MANIFEST_MERGE_DEFAULTS, { enabled: true, minCountToMerge: 100, targetSizeBytes: 8 * 1024 * 1024 });
  assert.deepEqual(
    manifestMergeSettings({ 'commit.manifest-merge.enabled': 'FALSE', 'commit.manifest.min-count-to-merge': '3', 'commit.manifest.target-size-bytes': '1000' }),
    { enabled: false, minCountToMerge: 3, targetSizeBytes: 1000 },
  );
  assert.deepEqual(manifestMergeSettings({ 'commit.manifest.min-count-to-merge': 'many', 'commit.manifest.target-size-bytes': '-1' }), MANIFEST_MERGE_DEFAULTS);
});

test('manifests merge at min-count; sequence numbers and snapshot ids survive, so an older position delete still applies', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest.min-count-to-merge': '3' });
  const { table, io } = env;
  const a = await append(env, [1, 2, 3]);
  const s1 = table.currentSnapshot();
  const b = await append(env, [4, 5]);
  const s2 = table.currentSnapshot();
  env.tick();
  const del = await table.writePositionDeletes([{ path: a.file_path, pos: 0n }]);
  await table.commit(table.newRowDelta().addDeleteFile(del));
  const s3 = table.currentSnapshot();
  // Two data manifests (and one delete manifest): below min-count, nothing merged yet.
  assert.equal((await snapshotManifests(io, s3)).filter((m) => m.content === ManifestContent.DATA).length, 2);

  const c = await append(env, [6]);
  const s4 = table.currentSnapshot();
  const manifests = await snapshotManifests(io, s4);
  const data = manifests.filter((m) => m.content === ManifestContent.DATA);
  const deletes = manifests.filter((m) => m.content === ManifestContent.DELETES);
  assert.equal(data.length, 1, 'three data manifests merged into one');
  assert.equal(deletes.length, 1, 'a single delete manifest is left alone');
  assert.equal(data[0]?.added_snapshot_id, s4?.['snapshot-id']);
  assert.equal(data[0]?.added_files_count, 1);
  assert.equal(data[0]?.existing_files_count, 2);
  assert.equal(data[0]?.min_sequence_number, 1n);

  const { dataFiles, deleteFiles } = await table.files();
  const byPath = new Map(dataFiles.map((e) => [e.data_file.file_path, e]));
  assert.deepEqual(
    [a, b, c].map((f) => {
      const e = byPath.get(f.file_path);
      return [e?.status, e?.snapshot_id, e?.sequence_number, e?.file_sequence_number];
    }),
    [
      [ManifestEntryStatus.EXISTING, s1?.['snapshot-id'], 1n, 1n],
      [ManifestEntryStatus.EXISTING, s2?.['snapshot-id'], 2n, 2n],
      [ManifestEntryStatus.ADDED, s4?.['snapshot-id'], 4n, 4n],
    ],
  );
  assert.equal(deleteFiles[0]?.sequence_number, 3n);
  // The delete (sequence number 3) applies to a (1) only if a kept its number: id 1 stays deleted.
  assert.deepEqual(await icebirdIds(io, table), [2, 3, 4, 5, 6]);
  // The new-files manifest folded into the merged one is not left behind.
  assert.equal(readManifestList(await io.get(s4?.['manifest-list'] ?? '')).manifests.length, 2);
  const written: string[] = [];
  for await (const o of io.list(`${table.location}/metadata/`)) if (o.location.endsWith('-m0.avro')) written.push(o.location);
  for (const w of written) {
    const referenced = (await Promise.all(table.metadata.snapshots.map((s) => snapshotManifests(io, s)))).flat().some((m) => m.manifest_path === w);
    assert.ok(referenced, `${w} is listed by some snapshot (superseded new-files manifests are deleted)`);
  }
  assert.equal(written.length, 2, "a's and b's new-files manifests remain (older snapshots list them); c's, merged away, was deleted");
});

test('DELETED entries of older snapshots are dropped when merging, the committing snapshot keeps its own', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest.min-count-to-merge': '2' });
  const { table, io } = env;
  const a = await append(env, [1]);
  const b = await append(env, [2]); // merged with a's manifest (2 >= 2)
  env.tick();
  const s3 = await table.commit(table.newOverwrite().deleteFile(b));
  const own = (await snapshotManifests(io, s3)).filter((m) => m.content === ManifestContent.DATA);
  assert.equal(own.length, 1);
  const ownEntries = readManifest(await io.get(own[0]?.manifest_path ?? '')).entries;
  assert.deepEqual(ownEntries.map((e) => [e.data_file.file_path, e.status]).sort(), [
    [a.file_path, ManifestEntryStatus.EXISTING],
    [b.file_path, ManifestEntryStatus.DELETED],
  ].sort());
  await append(env, [3]);
  const merged = (await snapshotManifests(io, table.currentSnapshot())).filter((m) => m.content === ManifestContent.DATA);
  assert.equal(merged.length, 1);
  const entries = readManifest(await io.get(merged[0]?.manifest_path ?? '')).entries;
  assert.equal(entries.some((e) => e.status === ManifestEntryStatus.DELETED), false, 'the older DELETED entry is gone');
  assert.deepEqual(await icebirdIds(io, table), [1, 3]);
});

test('commit.manifest-merge.enabled=false: every commit adds a manifest', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest-merge.enabled': 'false', 'commit.manifest.min-count-to-merge': '2' });
  for (const i of range(0, 4)) await append(env, [i]);
  assert.equal((await snapshotManifests(env.io, env.table.currentSnapshot())).length, 4);
  assert.deepEqual(await icebirdIds(env.io, env.table), [0, 1, 2, 3]);
});

test('target size splits bins: only bins of two or more are merged, the first bin waits for min-count', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest.min-count-to-merge': '100' });
  for (const i of range(0, 4)) await append(env, [i]);
  const manifests = await snapshotManifests(env.io, env.table.currentSnapshot());
  assert.equal(manifests.length, 4, 'one bin holding the new manifest, below min-count: unmerged');
  // A target just above two manifests: bins from the end are pairs; the pair with the new manifest still waits.
  const size = Number(manifests[0]?.manifest_length ?? 0);
  await env.table.setProperties({ 'commit.manifest.target-size-bytes': String(size * 2 + 10) });
  await append(env, [4]);
  const after = await snapshotManifests(env.io, env.table.currentSnapshot());
  // 5 manifests -> bins [new], [m3, m2], [m1, m0]: the two full pairs merge, the new one stays.
  assert.equal(after.length, 3);
  assert.deepEqual(after.map((m) => m.added_files_count + m.existing_files_count), [1, 2, 2]);
  assert.deepEqual(await icebirdIds(env.io, env.table), [0, 1, 2, 3, 4]);
});

test('a merged manifest is an attempt file: written per attempt, gone with a conflicting attempt', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest.min-count-to-merge': '2' });
  const { table, io, catalog } = env;
  await append(env, [1]);
  const stale = table.metadata;
  const update = table.newAppend().addFile(await table.writeDataFile(rows([7])));
  const first = await update.prepare(stale);
  const mergedPath = (await snapshotManifests(io, first.snapshot)).find((m) => m.existing_files_count > 0)?.manifest_path;
  assert.ok(mergedPath && first.attemptFiles.includes(mergedPath), 'the merged manifest is listed with the attempt files');
  await append(env, [2]); // moves main: the prepared commit now conflicts
  await assert.rejects(catalog.commitTable(ID, first.requirements, first.updates), CommitConflictError);
  for (const f of first.attemptFiles) await io.delete(f);
  await table.commit(update);
  assert.equal(await io.head(mergedPath), undefined);
  assert.deepEqual(await icebirdIds(io, table), [1, 2, 7]);
});

test('delete manifests merge among themselves: each delete keeps its sequence number and still applies', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest.min-count-to-merge': '3' });
  const { table, io } = env;
  const a = await append(env, range(0, 6));
  const seqs: bigint[] = [];
  for (const pos of [0n, 2n, 4n]) {
    env.tick();
    const s = await table.commit(table.newRowDelta().addDeleteFile(await table.writePositionDeletes([{ path: a.file_path, pos }])));
    seqs.push(BigInt(s['sequence-number']));
  }
  const manifests = await snapshotManifests(io, table.currentSnapshot());
  assert.equal(manifests.filter((m) => m.content === ManifestContent.DELETES).length, 1, 'three delete manifests merged');
  const { deleteFiles } = await table.files();
  assert.deepEqual(deleteFiles.map((e) => e.sequence_number).sort(), seqs.sort());
  assert.deepEqual(await icebirdIds(io, table), [1, 3, 5]);
});

test('a table committed 30 times keeps a short manifest list and reads back every row', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest.min-count-to-merge': '4' });
  for (const i of range(0, 30)) {
    await append(env, [i]);
    const n = (await snapshotManifests(env.io, env.table.currentSnapshot())).length;
    assert.ok(n <= 4, `commit ${i}: ${n} manifests`);
  }
  assert.deepEqual(await icebirdIds(env.io, env.table), range(0, 30));
  const { dataFiles } = await env.table.files();
  assert.deepEqual(dataFiles.map((e) => Number(e.sequence_number)).sort((x, y) => x - y), range(1, 31), 'each file keeps the sequence number of its commit');
});

test('after another engine evolves the spec and schema, manifests merge per spec and the table reads the same', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest.min-count-to-merge': '3' });
  const { table, io } = env;
  for (const i of [1, 2]) await append(env, [i]);
  // Evolution as another engine would commit it: a new column, and an identity partition on id.
  await table.updateSchema({ ...SCHEMA, 'schema-id': 1, fields: [...SCHEMA.fields, { id: 3, name: 'note', required: false, type: 'string' }] });
  await table.commitUpdates(() => ({
    requirements: [],
    updates: [
      { action: 'add-spec', spec: { 'spec-id': 1, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'id', transform: 'identity' }] } },
      { action: 'set-default-spec', 'spec-id': -1 },
    ],
  }));
  assert.equal(table.specId(), 1);
  for (const i of [3, 4, 5]) {
    env.tick();
    const f = await table.writeDataFile(rows([i]), { partition: { id: BigInt(i) } });
    await table.commit(table.newAppend().addFile(f));
  }
  const manifests = await snapshotManifests(io, table.currentSnapshot());
  // Spec 1: [new, m4, m3] reaches min-count and merges; spec 0: two manifests in a bin without the new one merge.
  assert.deepEqual(manifests.map((m) => [m.partition_spec_id, m.added_files_count + m.existing_files_count]), [
    [1, 3],
    [0, 2],
  ]);
  const { dataFiles } = await table.files();
  assert.deepEqual(dataFiles.map((e) => Number(e.sequence_number)).sort(), [1, 2, 3, 4, 5]);
  assert.deepEqual(await icebirdIds(io, table), [1, 2, 3, 4, 5]);
});

test('format v3: merged entries keep their first_row_id (row lineage), new rows get fresh ids', async (t) => {
  const env = await tableEnv(t, { 'commit.manifest.min-count-to-merge': '2' }, { formatVersion: 3 });
  const { table } = env;
  await append(env, [1, 2]);
  const before = (await table.files()).dataFiles.map((e) => e.data_file.first_row_id);
  assert.deepEqual(before, [0n]);
  await append(env, [3]); // merges with the first manifest
  assert.equal((await snapshotManifests(env.io, table.currentSnapshot())).length, 1);
  const after = new Map((await table.files()).dataFiles.map((e) => [Number(e.data_file.record_count), e.data_file.first_row_id]));
  assert.equal(after.get(2), 0n, 'the existing file keeps rows 0..1');
  const fresh = after.get(1);
  assert.ok(fresh !== undefined && fresh !== null && fresh >= 2n, `the new file's rows start after every assigned id (${String(fresh)})`);
  assert.ok((table.metadata['next-row-id'] ?? 0) > Number(fresh));
});
