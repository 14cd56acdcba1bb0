import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ancestorsOf,
  currentSchema,
  currentSnapshot,
  parseTableMetadata,
  serializeTableMetadata,
  snapshotForRef,
} from '../../iceberg/table-metadata.js';
import { IcebergError } from '../../iceberg/types.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

for (const name of ['TableMetadataV2Valid.json', 'TableMetadataV3Valid.json']) {
  test(`${name} round-trips byte for byte`, () => {
    const text = fixture(name);
    const md = parseTableMetadata(text);
    assert.equal(serializeTableMetadata(md) + '\n', text);
  });
}

test('64-bit snapshot ids stay exact (JSON.parse would lose them)', () => {
  const text = fixture('TableMetadataV2Valid.json');
  assert.notEqual(String((JSON.parse(text) as { 'current-snapshot-id': number })['current-snapshot-id']), '8744736658442914487');
  const md = parseTableMetadata(text);
  assert.equal(md['current-snapshot-id'], 8744736658442914487n);
  assert.equal(currentSnapshot(md)?.['parent-snapshot-id'], 3051729675574597004n);
  assert.deepEqual([...ancestorsOf(md, md['current-snapshot-id'])].map((s) => s['snapshot-id']), [8744736658442914487n, 3051729675574597004n]);
  assert.equal(snapshotForRef(md, 'audit')?.['snapshot-id'], 3051729675574597004n);
  assert.equal(currentSchema(md)['schema-id'], 1);
  assert.equal(md.snapshots[1]?.summary['floe.committed-offsets'], '{"0":9007199254740993}');
  assert.match(serializeTableMetadata(md), /"current-snapshot-id": 8744736658442914487,/);
});

test('v3 metadata keeps next-row-id and row lineage fields', () => {
  const md = parseTableMetadata(fixture('TableMetadataV3Valid.json'));
  assert.equal(md['format-version'], 3);
  assert.equal(md['next-row-id'], 1100);
  assert.equal(md.snapshots[1]?.['first-row-id'], 100);
  assert.equal(md.snapshots[1]?.['added-rows'], 1000);
});

test('a v3-only type in v2 metadata is rejected', () => {
  const text = fixture('TableMetadataV2Valid.json').replace('"type": "timestamptz"', '"type": "timestamptz_ns"');
  assert.throws(() => parseTableMetadata(text), (e: unknown) => e instanceof IcebergError && e.code === 'INVALID_METADATA' && /format-version 3/.test(e.message));
});

const invalid: [string, string, RegExp][] = [
  ['TableMetadataV2MissingSchemas.json', 'INVALID_METADATA', /missing required field 'schemas'/],
  ['TableMetadataV2CurrentSchemaNotFound.json', 'INVALID_METADATA', /current-schema-id 2 is not one of the schemas/],
  ['TableMetadataV2DuplicateFieldIds.json', 'INVALID_METADATA', /schemas\[1\].*Duplicate field id 2/],
  ['TableMetadataUnsupportedVersion.json', 'UNSUPPORTED_FORMAT_VERSION', /format-version 4 is not supported/],
  ['TableMetadataV2BadTransform.json', 'INVALID_METADATA', /partition-specs\[0\].*'y_bucket'.*bucket\[0\].*positive/],
  ['TableMetadataV2MissingLastColumnId.json', 'INVALID_METADATA', /missing required field 'last-column-id'/],
  ['TableMetadataV2CurrentSnapshotNotFound.json', 'INVALID_METADATA', /current-snapshot-id 8744736658442914488 is not one of the snapshots/],
];

for (const [name, code, message] of invalid) {
  test(`${name} is rejected with ${code}`, () => {
    assert.throws(
      () => parseTableMetadata(fixture(name)),
      (e: unknown) => {
        assert.ok(e instanceof IcebergError, String(e));
        assert.equal(e.code, code);
        assert.match(e.message, message);
        return true;
      },
    );
  });
}

test('current-snapshot-id -1 means no snapshot and main is then absent', () => {
  const md = parseTableMetadata(
    fixture('TableMetadataV2Valid.json')
      .replace('"current-snapshot-id": 8744736658442914487,', '"current-snapshot-id": -1,')
      .replace(/"main": \{[^}]*\},\n\s*/, ''),
  );
  assert.equal(md['current-snapshot-id'], undefined);
  assert.match(serializeTableMetadata(md), /"current-snapshot-id": null/);
});

test('main ref disagreeing with current-snapshot-id is rejected', () => {
  const text = fixture('TableMetadataV2Valid.json').replace('"current-snapshot-id": 8744736658442914487,', '"current-snapshot-id": 3051729675574597004,');
  assert.throws(() => parseTableMetadata(text), /must equal the main branch's snapshot-id 8744736658442914487/);
});
