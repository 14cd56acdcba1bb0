import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CommitConflictError, TableMetadataBuilder, checkRequirements, type TableRequirement } from '../../iceberg/table-metadata-builder.js';
import { parseTableMetadata, serializeTableMetadata, currentSnapshot } from '../../iceberg/table-metadata.js';
import { computeSummary, newSnapshotId, type Snapshot } from '../../iceberg/snapshot.js';
import { partitionType } from '../../iceberg/partition-spec.js';
import { IcebergError } from '../../iceberg/types.js';
import type { Schema } from '../../iceberg/schema.js';

const clock = (start: number) => {
  let t = start;
  return () => (t += 1000);
};

const schema: Schema = {
  type: 'struct',
  'schema-id': 7,
  fields: [
    { id: 10, name: 'partition', required: true, type: 'int' },
    { id: 20, name: 'ts', required: true, type: 'timestamptz' },
    { id: 30, name: 'value', required: false, type: 'binary' },
  ],
};

const create = () =>
  TableMetadataBuilder.newTable({
    schema,
    location: 'file:///wh/kafka/orders/',
    spec: { 'spec-id': 5, fields: [{ 'source-id': 10, 'field-id': 5000, name: 'partition', transform: 'identity' }] },
    properties: { 'write.format.default': 'parquet' },
    tableUuid: '0f0e0d0c-0b0a-4909-8807-060504030201',
    now: clock(1_700_000_000_000),
  }).build();

test('a new table gets fresh ids, spec 0 with field 1000, and lists its changes as REST updates', () => {
  const { metadata, changes } = create();
  assert.equal(metadata['format-version'], 2);
  assert.deepEqual(metadata.schemas[0]?.fields.map((f) => f.id), [1, 2, 3]);
  assert.equal(metadata['last-column-id'], 3);
  assert.deepEqual(metadata['partition-specs'][0], { 'spec-id': 0, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'partition', transform: 'identity' }] });
  assert.equal(metadata['last-partition-id'], 1000);
  assert.equal(metadata.location, 'file:///wh/kafka/orders');
  assert.deepEqual(changes.map((c) => c.action), [
    'assign-uuid', 'upgrade-format-version', 'add-schema', 'set-current-schema', 'add-spec', 'set-default-spec',
    'add-sort-order', 'set-default-sort-order', 'set-location', 'set-properties',
  ]);
  assert.deepEqual(partitionType(metadata['partition-specs'][0]!, metadata.schemas[0]!), {
    type: 'struct', fields: [{ id: 1000, name: 'partition', required: false, type: 'int' }],
  });
  // The built metadata is valid on its own: it survives a serialize/parse round trip.
  assert.deepEqual(parseTableMetadata(serializeTableMetadata(metadata)), metadata);
});

test('commits: add-snapshot + main ref move current-snapshot-id, sequence numbers and the logs', () => {
  const { metadata: base } = create();
  const id = 8744736658442914487n;
  const snap: Snapshot = {
    'snapshot-id': id,
    'sequence-number': 1,
    'timestamp-ms': 1_700_000_100_000,
    'manifest-list': 'file:///wh/kafka/orders/metadata/snap-1.avro',
    summary: computeSummary({ operation: 'append', added: [{ content: 'data', recordCount: 10, fileSizeInBytes: 1000, partitionKey: 'p=0' }], properties: { 'floe.offsets': '0:9' } }),
    'schema-id': 0,
  };
  const { metadata, changes } = TableMetadataBuilder.fromMetadata(base, { metadataLocation: 'file:///wh/kafka/orders/metadata/00000.metadata.json', now: clock(1_700_000_200_000) })
    .setBranchSnapshot(snap)
    .build();
  assert.equal(metadata['current-snapshot-id'], id);
  assert.equal(metadata['last-sequence-number'], 1);
  assert.deepEqual(metadata.refs.main, { 'snapshot-id': id, type: 'branch' });
  assert.deepEqual(metadata['snapshot-log'].map((e) => e['snapshot-id']), [id]);
  assert.deepEqual(metadata['metadata-log'], [{ 'metadata-file': 'file:///wh/kafka/orders/metadata/00000.metadata.json', 'timestamp-ms': base['last-updated-ms'] }]);
  assert.deepEqual(changes.map((c) => c.action), ['add-snapshot', 'set-snapshot-ref']);
  assert.deepEqual(currentSnapshot(metadata)?.summary, {
    operation: 'append', 'floe.offsets': '0:9', 'added-files-size': '1000', 'added-data-files': '1', 'added-records': '10',
    'changed-partition-count': '1', 'total-data-files': '1', 'total-delete-files': '0', 'total-records': '10',
    'total-files-size': '1000', 'total-position-deletes': '0', 'total-equality-deletes': '0',
  });
  assert.match(serializeTableMetadata(metadata), /"current-snapshot-id": 8744736658442914487/);

  // Replaying the recorded changes on the base gives the same metadata (what a REST catalog does).
  const replay = TableMetadataBuilder.fromMetadata(base, { now: clock(1_700_000_200_000) });
  for (const c of changes) replay.applyUpdate(c);
  const replayed = replay.build().metadata;
  assert.equal(replayed['current-snapshot-id'], id);
  assert.deepEqual(replayed.snapshots, metadata.snapshots);

  // remove-snapshots drops the ref and trims the log.
  const expired = TableMetadataBuilder.fromMetadata(metadata).removeSnapshots([id]).build().metadata;
  assert.equal(expired['current-snapshot-id'], undefined);
  assert.deepEqual(expired.snapshots, []);
  assert.deepEqual(expired['snapshot-log'], []);
});

test('invalid changes are refused with INVALID_UPDATE naming the problem', () => {
  const { metadata } = create();
  const b = () => TableMetadataBuilder.fromMetadata(metadata);
  const bad = (f: () => unknown, re: RegExp) => assert.throws(f, (e: unknown) => e instanceof IcebergError && e.code === 'INVALID_UPDATE' && re.test(e.message));
  bad(() => b().setCurrentSchema(9), /schema 9 does not exist/);
  bad(() => b().addSchema({ ...metadata.schemas[0]!, fields: [{ id: 1, name: 'partition', required: true, type: 'string' }] }), /cannot be promoted from int to string/);
  bad(() => b().addPartitionSpec({ 'spec-id': 0, fields: [{ 'source-id': 3, 'field-id': 1001, name: 'v', transform: 'day' }] }), /cannot be applied to a binary column/);
  bad(() => b().addPartitionSpec({ 'spec-id': 0, fields: [{ 'source-id': 1, 'field-id': 1001, name: 'p', transform: 'zorder' }] }), /unknown/);
  bad(() => b().setRef('main', { 'snapshot-id': 1n, type: 'branch' }), /snapshot 1, which does not exist/);
  bad(() => b().upgradeFormatVersion(1), /cannot downgrade|not supported/);
  bad(() => b().assignUuid('11111111-2222-4333-8444-555555555555'), /never changes/);
});

test('evolution through the builder: new schema and spec reuse field ids, upgrade to v3 adds next-row-id', () => {
  const { metadata } = create();
  const next = TableMetadataBuilder.fromMetadata(metadata)
    .addSchema({ ...metadata.schemas[0]!, fields: [...metadata.schemas[0]!.fields, { id: 4, name: 'key', required: false, type: 'string' }] })
    .setCurrentSchema(-1)
    .addPartitionSpec({ 'spec-id': 0, fields: [{ 'source-id': 1, 'field-id': 0, name: 'partition', transform: 'identity' }, { 'source-id': 2, 'field-id': 0, name: 'ts_day', transform: 'day' }] })
    .setDefaultPartitionSpec(-1)
    .upgradeFormatVersion(3)
    .build();
  assert.equal(next.metadata['current-schema-id'], 1);
  assert.equal(next.metadata['last-column-id'], 4);
  assert.deepEqual(next.metadata['partition-specs'][1]?.fields.map((f) => f['field-id']), [1000, 1001]);
  assert.equal(next.metadata['last-partition-id'], 1001);
  assert.equal(next.metadata['next-row-id'], 0);
  assert.deepEqual(next.changes.find((c) => c.action === 'set-current-schema'), { action: 'set-current-schema', 'schema-id': -1 });
});

test('requirements: pass against matching metadata, CommitConflictError otherwise', () => {
  const md = parseTableMetadata(readFileSync(new URL('./fixtures/TableMetadataV2Valid.json', import.meta.url), 'utf8'));
  const ok: TableRequirement[] = [
    { type: 'assert-table-uuid', uuid: '9C12D441-03FE-4693-9A96-A0705DDF69C1' },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 8744736658442914487n },
    { type: 'assert-ref-snapshot-id', ref: 'dev', 'snapshot-id': null },
    { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 8 },
    { type: 'assert-current-schema-id', 'current-schema-id': 1 },
    { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1002 },
    { type: 'assert-default-spec-id', 'default-spec-id': 0 },
    { type: 'assert-default-sort-order-id', 'default-sort-order-id': 3 },
  ];
  checkRequirements(md, ok);
  checkRequirements(undefined, [{ type: 'assert-create' }]);
  const conflicts: [TableRequirement, RegExp][] = [
    [{ type: 'assert-create' }, /already exists/],
    [{ type: 'assert-table-uuid', uuid: '00000000-0000-4000-8000-000000000000' }, /assert-table-uuid failed/],
    [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 8744736658442914486n }, /'main' is at 8744736658442914487, expected 8744736658442914486/],
    [{ type: 'assert-ref-snapshot-id', ref: 'audit', 'snapshot-id': null }, /expected not to exist/],
    [{ type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 7 }, /table is at 8, expected 7/],
    [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }, /table is at 1, expected 0/],
    [{ type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1000 }, /expected 1000/],
    [{ type: 'assert-default-spec-id', 'default-spec-id': 1 }, /expected 1/],
    [{ type: 'assert-default-sort-order-id', 'default-sort-order-id': 0 }, /expected 0/],
  ];
  for (const [req, re] of conflicts) {
    assert.throws(() => checkRequirements(md, [req]), (e: unknown) => e instanceof CommitConflictError && e.code === 'COMMIT_CONFLICT' && e.requirement === req && re.test(e.message), req.type);
  }
  assert.throws(() => checkRequirements(undefined, [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }]), /does not exist/);
});

test('new snapshot ids are positive 63-bit and avoid taken ids', () => {
  const taken = new Set<bigint>();
  for (let i = 0; i < 100; i++) {
    const id = newSnapshotId((x) => taken.has(x));
    assert.ok(id > 0n && id < 2n ** 63n);
    assert.ok(!taken.has(id));
    taken.add(id);
  }
});
