// The rollback rule of the recovery runbook on its own: a partition's history at a snapshot may differ from
// now only in delete files; anything Kafka reads (segments, data and index files, log start, committed
// offset) that differs names the offsets a rollback would take from Kafka consumers. And the naming of a
// hide's delete files, which DeleteRecords and retention rely on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deletesOf, hiddenFileLocation, historyDifference } from '../../../tiering/plugin/topic-runbook.js';
import type { PartitionManifest, SegmentEntry } from '../../../tiering/plugin/partition-manifest.js';

const seg = (base: number, last: number, extra: Partial<SegmentEntry> = {}): SegmentEntry => ({ baseOffset: base, lastOffset: last, maxTimestamp: 0, sizeInBytes: 100, dataFiles: [`d-${base}`], indexFiles: [`i-${base}`], ...extra });
const manifest = (segments: SegmentEntry[], logStartOffset = 0): PartitionManifest => ({ partition: 0, logStartOffset, committedOffset: segments[segments.length - 1]?.lastOffset ?? -1, segments });

test('histories that differ only in delete files can be rolled back to', () => {
  const now = manifest([seg(0, 9, { deleteFiles: ['d-0-hidden-x'] }), seg(10, 19)]);
  assert.equal(historyDifference(now, manifest([seg(0, 9), seg(10, 19)])), undefined);
  assert.equal(historyDifference(now, now), undefined);
});

test('anything Kafka reads that differs names the offsets a rollback would lose', () => {
  const now = manifest([seg(0, 9), seg(10, 19), seg(20, 29)]);
  assert.deepEqual(historyDifference(now, manifest([seg(0, 9), seg(10, 19)])), { from: 20, to: 29 }, 'later commits');
  assert.deepEqual(historyDifference(now, manifest([seg(0, 9), seg(10, 19, { dataFiles: ['other'] }), seg(20, 29)])), { from: 10, to: 29 }, 'rewritten files (compaction)');
  assert.deepEqual(historyDifference(now, manifest([seg(0, 9), seg(10, 19, { indexFiles: ['other'] }), seg(20, 29)])), { from: 10, to: 29 }, 'another offset index');
  assert.deepEqual(historyDifference(now, manifest([seg(0, 29)])), { from: 0, to: 29 }, 'merged segments');
  assert.deepEqual(historyDifference(manifest([seg(10, 19), seg(20, 29)], 10), manifest([seg(0, 9), seg(10, 19), seg(20, 29)], 0)), { from: 0, to: 29 }, 'another log start');
  assert.deepEqual(historyDifference(now, undefined), { from: 0, to: 29 }, 'a snapshot from before the partition had history');
  assert.equal(historyDifference(manifest([]), undefined), undefined, 'nothing to lose');
});

test('a hide\'s delete files are named from their data file and range', () => {
  const data = 's3://wh/kafka/t/data/partition=0/00000000000000000000-00000000000000000099.parquet';
  const hidden = hiddenFileLocation(data, 50, 59);
  assert.equal(hidden, 's3://wh/kafka/t/data/partition=0/00000000000000000000-00000000000000000099-hidden-00000000000000000050-00000000000000000059.parquet');
  assert.ok(deletesOf(data, hidden));
  assert.ok(!deletesOf('s3://wh/kafka/t/data/partition=0/00000000000000000100-00000000000000000199.parquet', hidden));
});
