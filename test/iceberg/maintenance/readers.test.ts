// After manifest merging, snapshot expiry and orphan removal, independent readers still read the table exactly:
// pyiceberg (from the peers' venv) scans the current snapshot and time-travels to retained older ones, with a
// position delete applied across a merge; icebird reads the current snapshot. Once on a local warehouse, once
// on S3 (s3rver).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { S3FileIO } from '../../../iceberg/io/s3.js';
import { expireSnapshots } from '../../../iceberg/maintenance/expire-snapshots.js';
import { removeOrphanFiles } from '../../../iceberg/maintenance/remove-orphan-files.js';
import { snapshotManifests } from '../../../iceberg/transaction.js';
import type { Snapshot } from '../../../iceberg/snapshot.js';
import { venvPython } from '../../helpers/peers.js';
import { startS3Server, type S3TestServer } from '../../helpers/s3-server.js';
import { append, icebirdIds, range, rows, tableEnv, type Env } from './fixture.js';

const PYICEBERG = `
import json, sys
from pyiceberg.table import StaticTable
req = json.load(sys.stdin)
t = StaticTable.from_metadata(req['metadata'], properties=req['props'])
def ids(scan):
    return sorted(int(x) for x in scan.to_arrow().column('id').to_pylist())
print(json.dumps({'current': ids(t.scan()), 'snapshots': {s: ids(t.scan(snapshot_id=int(s))) for s in req['snapshots']}}))
`;

async function pyiceberg(metadata: string, props: Record<string, string>, snapshots: bigint[]): Promise<{ current: number[]; snapshots: Record<string, number[]> }> {
  const child = spawn(venvPython(), ['-c', PYICEBERG], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdin.end(JSON.stringify({ metadata, props, snapshots: snapshots.map(String) }));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, `pyiceberg failed: ${err}`);
  return JSON.parse(out) as { current: number[]; snapshots: Record<string, number[]> };
}

async function maintainAndRead(env: Env, props: Record<string, string>, orphansOlderThan: () => number): Promise<void> {
  const { table, io } = env;
  const snap = (): Snapshot => table.currentSnapshot() as Snapshot;
  const a = await append(env, range(1, 6)); // s1: 1..5
  const b = await append(env, [6, 7, 8]); // s2
  env.tick();
  await table.commit(table.newRowDelta().addDeleteFile(await table.writePositionDeletes([{ path: a.file_path, pos: 0n }]))); // s3: id 1 deleted
  const s3Manifests = await snapshotManifests(io, snap());
  await append(env, [9]); // s4: the three data manifests merge
  const s4 = snap();
  assert.equal((await snapshotManifests(io, s4)).length, 2, 'one merged data manifest and the delete manifest');
  env.tick();
  await table.commit(table.newOverwrite().deleteFile(b).addFile(await table.writeDataFile(rows([6, 7])))); // s5
  const s5 = snap();
  await append(env, [10]); // s6
  const crashed = `${table.location}/data/crashed-upload.parquet`;
  await io.put(crashed, Buffer.from('half a parquet file'));

  // Keep the last two and, protected, s4; s1..s3 expire.
  const expired = await expireSnapshots(table, { olderThanMs: env.now() + 1, retainLast: 2, now: env.now, protect: () => [s4['snapshot-id']] });
  assert.equal(expired.expired.length, 3);
  assert.ok(!expired.deleted.includes(a.file_path), 'a is live in s4 (merged), so it stays');
  assert.ok(!expired.deleted.includes(b.file_path), 'b is live in the protected s4');
  for (const m of s3Manifests.filter((m) => m.content === 0)) assert.ok(expired.deleted.includes(m.manifest_path), 'data manifests merged away in s4 go with s1..s3');
  const orphans = await removeOrphanFiles(table, { olderThanMs: orphansOlderThan() });
  assert.ok(orphans.deleted.includes(crashed));
  assert.equal(await io.head(crashed), undefined);
  for (const l of orphans.deleted) assert.ok(!l.endsWith('.parquet') || l === crashed, `only the crashed upload among data files: ${l}`);

  const read = await pyiceberg(table.metadataLocation, props, [s4['snapshot-id'], s5['snapshot-id']]);
  assert.deepEqual(read.current, [2, 3, 4, 5, 6, 7, 9, 10]);
  assert.deepEqual(read.snapshots[String(s4['snapshot-id'])], range(2, 10), 'time travel to the protected s4: delete applied across the merge');
  assert.deepEqual(read.snapshots[String(s5['snapshot-id'])], [2, 3, 4, 5, 6, 7, 9]);
  assert.deepEqual(await icebirdIds(io, table), [2, 3, 4, 5, 6, 7, 9, 10]);
}

const PROPS = { 'commit.manifest.min-count-to-merge': '3', 'write.metadata.previous-versions-max': '3', 'write.metadata.delete-after-commit.enabled': 'true' };

test('local warehouse: pyiceberg and icebird read exactly after merge, expiry and orphan removal, time travel included', async (t) => {
  const env = await tableEnv(t, PROPS);
  // Local files are judged by mtime; everything here is seconds old, so the window is moved past now.
  await maintainAndRead(env, {}, () => Date.now() + 60_000);
});

let shared: Promise<S3TestServer> | undefined;
after(async () => {
  await (await shared)?.stop();
});

test('S3 warehouse (s3rver): the same, read by pyiceberg over S3', async (t) => {
  const s3 = await (shared ??= startS3Server());
  const io = new S3FileIO(s3.fileIOOptions());
  t.after(() => io.close());
  const env = await tableEnv(t, PROPS, { io, warehouse: `s3://${s3.bucket}/wh-${randomUUID()}` });
  await maintainAndRead(
    env,
    { 's3.endpoint': s3.endpoint, 's3.access-key-id': s3.credentials.accessKeyId, 's3.secret-access-key': s3.credentials.secretAccessKey, 's3.region': s3.region, 's3.force-virtual-addressing': 'false' },
    () => Date.now() + 60_000,
  );
});
