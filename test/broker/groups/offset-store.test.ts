import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readFile, rm, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32c } from '@node-rs/crc32';
import type { GroupMetadataValue } from '../../../broker/groups/group-metadata.js';
import { OffsetStore, type CommittedOffset } from '../../../broker/groups/offset-store.js';
import { tempDir } from '../../helpers/broker.js';

const at = (offset: bigint, metadata: string | null = null, leaderEpoch = -1): CommittedOffset => ({ offset, leaderEpoch, metadata, commitTimestamp: 1000, expireTimestamp: -1 });

async function dir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const d = await tempDir('floe-offsets-');
  t.after(() => rm(d, { recursive: true, force: true }));
  return d;
}

test('commits, deletions and group deletions survive reopening, with exact 64-bit offsets, metadata and epochs', async (t) => {
  const d = await dir(t);
  const s = await OffsetStore.open(d);
  await s.write('g1', [
    { topic: 't', partition: 0, value: at(2n ** 62n + 1n, 'meta', 5) },
    { topic: 't', partition: 1, value: at(7n) },
    { topic: 'u', partition: 0, value: at(9n, '') },
  ]);
  await s.write('g1', [{ topic: 't', partition: 1, value: null }]);
  await s.write('g2', [{ topic: 't', partition: 0, value: at(1n) }]);
  await s.write('g3', [{ topic: 't', partition: 0, value: at(3n) }]);
  await s.deleteGroup('g3');
  await s.close();

  const r = await OffsetStore.open(d);
  t.after(() => r.close());
  assert.deepEqual(r.get('g1', 't', 0), at(2n ** 62n + 1n, 'meta', 5));
  assert.equal(r.get('g1', 't', 1), undefined);
  assert.deepEqual(r.get('g1', 'u', 0), at(9n, ''));
  assert.deepEqual(r.get('g2', 't', 0), at(1n));
  assert.equal(r.hasOffsets('g3'), false);
  assert.deepEqual([...r.groups()].sort(), ['g1', 'g2']);
});

test('a torn or corrupt tail is cut off at open and later commits follow the intact records', async (t) => {
  const d = await dir(t);
  const path = join(d, 'offsets.log');
  const s = await OffsetStore.open(d);
  await s.write('g', [{ topic: 't', partition: 0, value: at(1n) }]);
  const good = (await stat(path)).size;
  await s.write('g', [{ topic: 't', partition: 0, value: at(2n) }]);
  await s.close();

  // Every cut inside the second record loses only that record.
  const full = (await stat(path)).size;
  for (const cut of [good + 1, good + 8, full - 1]) {
    const copy = await readFile(path);
    await truncate(path, cut);
    const r = await OffsetStore.open(d);
    assert.deepEqual(r.get('g', 't', 0), at(1n), `cut at ${cut}`);
    await r.close();
    assert.equal((await stat(path)).size, good);
    await appendFile(path, copy.subarray(good));
  }

  // A flipped byte in the last record's payload fails its CRC.
  const bytes = await readFile(path);
  bytes.writeUInt8(bytes.readUInt8(full - 2) ^ 0xff, full - 2);
  await rm(path);
  await appendFile(path, bytes);
  const r = await OffsetStore.open(d);
  assert.deepEqual(r.get('g', 't', 0), at(1n));
  await r.write('g', [{ topic: 't', partition: 0, value: at(3n) }]);
  await r.close();
  const again = await OffsetStore.open(d);
  t.after(() => again.close());
  assert.deepEqual(again.get('g', 't', 0), at(3n));
});

test('the log is compacted to the live offsets once it holds many more records than groups', async (t) => {
  const d = await dir(t);
  const path = join(d, 'offsets.log');
  const s = await OffsetStore.open(d, { compactAfterRecords: 20 });
  for (let i = 0; i < 200; i++) await s.write(`g${i % 3}`, [{ topic: 't', partition: i % 2, value: at(BigInt(i)) }]);
  const size = (await stat(path)).size;
  await s.close();
  assert.ok(size < 60 * 100, `compacted log is ${size} bytes`);
  const r = await OffsetStore.open(d);
  t.after(() => r.close());
  assert.deepEqual(r.get('g0', 't', 0), at(198n));
  assert.deepEqual(r.get('g2', 't', 1), at(197n));
  assert.deepEqual(r.get('g1', 't', 1), at(199n));
});

test('concurrent writes from many groups are all durable and visible once acknowledged', async (t) => {
  const d = await dir(t);
  const s = await OffsetStore.open(d);
  await Promise.all(Array.from({ length: 100 }, (_, i) => s.write(`g${i}`, [{ topic: 't', partition: 0, value: at(BigInt(i)) }])));
  for (let i = 0; i < 100; i++) assert.deepEqual(s.get(`g${i}`, 't', 0), at(BigInt(i)));
  await s.close();
  await assert.rejects(s.write('g', [{ topic: 't', partition: 0, value: at(1n) }]), { code: 'CLOSED' });
  const r = await OffsetStore.open(d);
  t.after(() => r.close());
  assert.equal([...r.groups()].length, 100);
});

const membership = (generationId: number): GroupMetadataValue => ({
  protocolType: 'consumer', generationId, protocolName: 'range', leaderId: 'm1', stateTimestamp: 5,
  members: [{ memberId: 'm1', groupInstanceId: null, clientId: 'c', clientHost: '/h', rebalanceTimeoutMs: 1, sessionTimeoutMs: 2, protocols: [['range', 'AQI=']], assignment: 'AwQ=' }],
});

test('group membership shares the log with offsets: it survives reopening and compaction, and a group deletion removes both', async (t) => {
  const d = await dir(t);
  const s = await OffsetStore.open(d, { compactAfterRecords: 10 });
  for (let i = 1; i <= 30; i++) await s.writeGroupMetadata('g', membership(i));
  await s.write('g', [{ topic: 't', partition: 0, value: at(7n) }]);
  await s.writeGroupMetadata('h', membership(1));
  await s.write('h', [{ topic: 't', partition: 0, value: at(1n) }]);
  await s.deleteGroup('h');
  await s.writeGroupMetadata('k', membership(1));
  await s.writeGroupMetadata('k', null);
  await s.close();
  assert.ok((await stat(join(d, 'offsets.log'))).size < 30 * 300, 'compacted');

  const r = await OffsetStore.open(d);
  t.after(() => r.close());
  assert.deepEqual(r.groupMetadata('g'), membership(30));
  assert.deepEqual(r.get('g', 't', 0), at(7n));
  assert.equal(r.groupMetadata('h'), undefined);
  assert.equal(r.hasOffsets('h'), false);
  assert.equal(r.groupMetadata('k'), undefined);
  assert.deepEqual([...r.metadataGroups()], ['g']);
});

test('a record of a kind this broker does not know stops the start-up instead of being cut off', async (t) => {
  const d = await dir(t);
  const s = await OffsetStore.open(d);
  await s.write('g', [{ topic: 't', partition: 0, value: at(1n) }]);
  await s.close();
  const payload = Buffer.from(JSON.stringify({ type: 'group', version: 2, group: 'g', value: null }));
  const header = Buffer.alloc(8);
  header.writeUInt32BE(payload.length, 0);
  header.writeUInt32BE(crc32c(payload), 4);
  const path = join(d, 'offsets.log');
  await appendFile(path, Buffer.concat([header, payload]));
  const before = (await stat(path)).size;
  await assert.rejects(OffsetStore.open(d), /written by a newer Floe/);
  assert.equal((await stat(path)).size, before, 'nothing was cut off');
});
