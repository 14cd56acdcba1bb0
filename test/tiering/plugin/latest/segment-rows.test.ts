// The upsert table's two ways of reading a segment's rows agree: rebuilt Kafka batches (any table) and the
// key_value table's offset, key and value columns, on segments with null keys, null values, offset gaps,
// zstd and uncompressed batches, and rows hidden by DeleteRecords.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Table } from '../../../../iceberg/table.js';
import { readSegmentColumnRows, readSegmentRows, type KeyedRow } from '../../../../tiering/plugin/latest/segment-rows.js';
import { CONFIG, env, ID, segments, TOPIC } from '../compaction-fixture.js';

const view = (r: KeyedRow): string => `${r.file}#${r.row}@${r.offset} ${r.key?.toString('hex') ?? 'null'}=${r.value?.toString('hex') ?? 'null'} ${r.tombstone}`;

test('rows from rebuilt batches and rows from the columns are the same rows', async (t) => {
  const e = await env(t);
  const { plugin, catalog, io, codec } = e.open();
  await plugin.configureTopic(TOPIC, CONFIG);
  const { segs } = await segments(e.dir, 0, 0, 6);
  for (const s of segs) {
    plugin.segmentClosed(s);
    await plugin.drain();
  }
  // Rows below 9 are hidden from table readers (a position delete inside a segment).
  await plugin.deleteRecordsBefore({ topic: TOPIC, partition: 0 }, 9);
  const tableLocation = (await Table.load(catalog, ID, io)).location;
  const ctx = { topic: TOPIC, io, codec, tableLocation };
  let compared = 0;
  let hiddenSeen = 0;
  for (const seg of plugin.metadata.listRemoteLogSegments({ topic: TOPIC, partition: 0 })) {
    const fromBatches: string[] = [];
    const fromColumns: string[] = [];
    const hidden = await readSegmentRows(ctx, 0, seg, (r) => fromBatches.push(view(r)));
    await readSegmentColumnRows(ctx, seg, (r) => fromColumns.push(view(r)));
    assert.deepEqual(fromColumns, fromBatches, `segment ${seg.baseOffset}..${seg.lastOffset}`);
    compared += fromBatches.length;
    for (const rows of hidden.values()) hiddenSeen += rows.size;
  }
  assert.ok(compared > 40, `rows compared: ${compared}`);
  assert.ok(hiddenSeen > 0, 'some rows were hidden by DeleteRecords');
});
