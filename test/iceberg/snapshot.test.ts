import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeSummary, parseSnapshot, parseSnapshotRef, snapshotToJson } from '../../iceberg/snapshot.js';
import { parseJson, stringifyJson } from '../../iceberg/json.js';

test('summary totals carry from the previous summary; deletes are counted by kind', () => {
  const s = computeSummary({
    operation: 'overwrite',
    previous: { operation: 'append', 'total-records': '100', 'total-data-files': '2', 'total-files-size': '5000', 'total-delete-files': '0', 'total-position-deletes': '0' },
    added: [
      { content: 'data', recordCount: 7, fileSizeInBytes: 70, partitionKey: 'p=1' },
      { content: 'position-deletes', recordCount: 3, fileSizeInBytes: 30, partitionKey: 'p=1' },
    ],
    removed: [{ content: 'data', recordCount: 50, fileSizeInBytes: 2500, partitionKey: 'p=0' }],
  });
  assert.deepEqual(s, {
    operation: 'overwrite',
    'added-files-size': '100', 'added-data-files': '1', 'added-records': '7', 'added-delete-files': '1', 'added-position-delete-files': '1', 'added-position-deletes': '3',
    'removed-files-size': '2500', 'deleted-data-files': '1', 'deleted-records': '50', 'changed-partition-count': '2',
    'total-data-files': '2', 'total-delete-files': '1', 'total-records': '57', 'total-files-size': '2600', 'total-position-deletes': '3',
  });
  assert.throws(() => computeSummary({ operation: 'append', properties: { 'added-records': '1' }, added: [{ content: 'data', recordCount: 1, fileSizeInBytes: 1 }] }), /computed from the commit's files/);
});

test('snapshots and refs parse with exact ids and print back', () => {
  const text = '{"snapshot-id":9223372036854775807,"parent-snapshot-id":1,"sequence-number":2,"timestamp-ms":3,"manifest-list":"m","summary":{"operation":"append"},"schema-id":0}';
  const s = parseSnapshot(parseJson(text));
  assert.equal(s['snapshot-id'], 9223372036854775807n);
  assert.equal(stringifyJson(snapshotToJson(s)), text);
  assert.throws(() => parseSnapshot(parseJson(text.replace('"append"', '"merge"'))), /operation "merge"/);
  assert.throws(() => parseSnapshot(parseJson(text.replace('9223372036854775807', '9223372036854775808'))), /64-bit integer/);
  assert.throws(() => parseSnapshot(parseJson(text.replace('"sequence-number":2,', ''))), /missing required field 'sequence-number'/);
  assert.throws(() => parseSnapshot(parseJson(text), 3), /first-row-id/);
  assert.throws(() => parseSnapshotRef({ 'snapshot-id': 1, type: 'tag', 'min-snapshots-to-keep': 2 }, 't'), /branches only/);
  assert.throws(() => parseSnapshotRef({ 'snapshot-id': 1, type: 'tag' }, 'main'), /must be a branch/);
});
