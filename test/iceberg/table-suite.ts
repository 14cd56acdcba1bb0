/**
 * The table suite, run against each warehouse backend (table.test.ts: local folder; table-s3.test.ts: s3rver).
 * Tables are written through the Table API and read back by independent readers: icebird (the whole table,
 * deletes applied) and DuckDB's read_parquet (every data file: rows, field ids, and the manifest's
 * record_count and file_size_in_bytes).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { icebergRead } from 'icebird';
import type { FileIO } from '../../iceberg/io/file-io.js';
import type { Catalog, TableIdentifier } from '../../iceberg/catalog/catalog.js';
import { Table } from '../../iceberg/table.js';
import { ancestorsOf, currentSnapshot } from '../../iceberg/table-metadata.js';
import { DataFileContent, type ManifestEntry } from '../../iceberg/data-file.js';
import type { Schema } from '../../iceberg/schema.js';
import { installWarehouseFetch } from '../helpers/file-fetch.js';
import { duck } from '../helpers/duckdb.js';
import { readWithPythonAvro, type PythonAvroResult } from './avro/python-avro.js';

/** Parses an object of the warehouse with python3-avro (an independent Avro reader). */
async function pythonAvro(t: TestContext, io: FileIO, location: string): Promise<PythonAvroResult> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-avro-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'file.avro');
  await writeFile(path, await io.get(location));
  return readWithPythonAvro(path);
}

export interface SuiteEnv {
  readonly catalog: Catalog;
  readonly io: FileIO;
}

const V1: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'int' },
    { id: 2, name: 'name', required: false, type: 'string' },
  ],
};

const V2: Schema = {
  type: 'struct',
  'schema-id': 1,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'score', required: false, type: 'double' },
  ],
};

function v1Rows(ids: number[], names: string[]): arrow.Table {
  return new arrow.Table({ id: arrow.vectorFromArray(ids, new arrow.Int32()), name: arrow.vectorFromArray(names, new arrow.Utf8()) });
}

function v2Rows(ids: number[], names: string[], scores: (number | null)[]): arrow.Table {
  return new arrow.Table({
    id: arrow.makeVector(BigInt64Array.from(ids.map(BigInt))),
    name: arrow.vectorFromArray(names, new arrow.Utf8()),
    score: arrow.vectorFromArray(scores, new arrow.Float64()),
  });
}

const fileName = (location: string): string => location.slice(location.lastIndexOf('/') + 1);

async function readWithIcebird(io: FileIO, table: Table): Promise<Record<string, unknown>[]> {
  const restore = installWarehouseFetch(io);
  try {
    return await icebergRead({ tableUrl: table.location, metadataFileName: fileName(table.metadataLocation) });
  } finally {
    restore();
  }
}


/** Copies each live file to a temp folder and checks it with DuckDB against its manifest entry. */
async function checkFilesWithDuckDB(t: TestContext, io: FileIO, entries: ManifestEntry[], fieldIds: number[]): Promise<number> {
  const q = await duck(t);
  const dir = await mkdtemp(join(tmpdir(), 'floe-duck-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  let rows = 0;
  for (const [i, e] of entries.entries()) {
    const bytes = await io.get(e.data_file.file_path);
    assert.equal(BigInt(bytes.length), e.data_file.file_size_in_bytes, `file_size_in_bytes of ${e.data_file.file_path}`);
    const path = join(dir, `f${i}.parquet`);
    await writeFile(path, bytes);
    const [count] = await q(`SELECT count(*)::BIGINT AS n FROM read_parquet('${path}')`);
    assert.equal(BigInt(String(count?.['n'])), e.data_file.record_count, `record_count of ${e.data_file.file_path}`);
    rows += Number(e.data_file.record_count);
    if (e.data_file.content !== DataFileContent.DATA) continue;
    const ids = (await q(`SELECT field_id FROM parquet_schema('${path}') WHERE field_id IS NOT NULL`)).map((r) => Number(r['field_id']));
    for (const id of ids) assert.ok(fieldIds.includes(id), `field id ${id} of ${e.data_file.file_path} is in the schema`);
    assert.ok(ids.includes(1) && ids.includes(2), `columns id and name carry field ids in ${e.data_file.file_path}`);
  }
  return rows;
}

export function tableSuite(backend: string, setup: (t: TestContext) => Promise<SuiteEnv>): void {
  test(`${backend}: evolution, snapshots, overwrite and position deletes read back by icebird and DuckDB`, async (t) => {
    const { catalog, io } = await setup(t);
    await catalog.createNamespace(['db']);
    const id: TableIdentifier = { namespace: ['db'], name: 'events' };
    await catalog.createTable(id, { schema: V1 });
    const table = await Table.load(catalog, id, io);

    const a = await table.writeDataFile(v1Rows([1, 2, 3], ['a', 'b', 'c']));
    const a2 = await table.writeDataFile(v1Rows([10, 11], ['j', 'k']));
    const s1 = await table.commit(table.newAppend().addFile(a).addFile(a2).set('floe.test', 'first'));
    assert.equal(s1.summary.operation, 'append');
    assert.equal(s1.summary['floe.test'], 'first');
    assert.equal(s1.summary['total-records'], '5');

    await table.updateSchema(V2);
    assert.equal(table.metadata['current-schema-id'], 1);
    assert.equal(table.metadata['last-column-id'], 3);

    const b = await table.writeDataFile(v2Rows([4, 5], ['d', 'e'], [0.5, 1.5]));
    const s2 = await table.commit(table.newAppend().addFile(b));
    assert.equal(s2['parent-snapshot-id'], s1['snapshot-id']);

    const c = await table.writeDataFile(v2Rows([1, 2, 3], ['A', 'B', 'C'], [null, null, null]));
    const s3 = await table.commit(table.newOverwrite().deleteFile(a).addFile(c));
    assert.equal(s3.summary.operation, 'overwrite');
    assert.equal(s3.summary['deleted-data-files'], '1');
    assert.equal(s3.summary['total-records'], '7');

    const del = await table.writePositionDeletes([{ path: b.file_path, pos: 0n }]);
    assert.equal(del.referenced_data_file, b.file_path);
    const s4 = await table.commit(table.newRowDelta().addDeleteFile(del));
    assert.equal(s4.summary.operation, 'delete');
    assert.equal(s4.summary['total-position-deletes'], '1');

    // The snapshot chain is linear and sequence numbers grow.
    const chain = [...ancestorsOf(table.metadata, currentSnapshot(table.metadata)?.['snapshot-id'])].map((s) => s['sequence-number']);
    assert.deepEqual(chain, [4, 3, 2, 1]);

    // Independent reader 1: icebird reads the table with the delete applied.
    const rows = await readWithIcebird(io, table);
    const got = rows.map((r) => [Number(r['id']), r['name'], r['score'] ?? null]).sort((x, y) => Number(x[0]) - Number(y[0]));
    assert.deepEqual(got, [
      [1, 'A', null],
      [2, 'B', null],
      [3, 'C', null],
      [5, 'e', 1.5],
      [10, 'j', null],
      [11, 'k', null],
    ]);

    // Independent reader 2: DuckDB on every live file, against the manifests.
    const { dataFiles, deleteFiles } = await table.files();
    assert.deepEqual(dataFiles.map((e) => e.data_file.file_path).sort(), [a2.file_path, b.file_path, c.file_path].sort());
    assert.equal(await checkFilesWithDuckDB(t, io, dataFiles, [1, 2, 3]), 7);
    assert.equal(deleteFiles.length, 1);
    assert.equal(await checkFilesWithDuckDB(t, io, deleteFiles, []), 1);

    // Independent reader 3: python3-avro parses the manifest list and every manifest of every snapshot, and
    // every field carries its Iceberg id.
    for (const snap of table.metadata.snapshots) {
      const list = await pythonAvro(t, io, snap['manifest-list']);
      assert.deepEqual(list.missingIds, []);
      assert.equal(list.meta['snapshot-id'], String(snap['snapshot-id']));
      assert.equal(list.meta['sequence-number'], String(snap['sequence-number']));
      assert.equal(list.meta['format-version'], '2');
      for (const m of list.records) {
        assert.equal(m['sequence_number'] !== undefined && m['sequence_number'] !== null, true, 'sequence numbers are filled in the list');
        const manifest = await pythonAvro(t, io, String(m['manifest_path']));
        assert.deepEqual(manifest.missingIds, []);
        for (const key of ['schema', 'schema-id', 'partition-spec', 'partition-spec-id', 'format-version', 'content']) {
          assert.ok(manifest.meta[key] !== undefined, `manifest header ${key}`);
        }
        const live = manifest.records.filter((r) => r['status'] !== '2').length;
        assert.equal(live, Number(m['added_files_count']) + Number(m['existing_files_count']));
      }
    }

    // The old snapshot still reads as it was (time travel through an earlier metadata file).
    const old = await table.files(s1['snapshot-id']);
    assert.deepEqual(old.dataFiles.map((e) => e.data_file.file_path).sort(), [a.file_path, a2.file_path].sort());

    // Metadata files are named <NNNNN>-<uuid>.metadata.json and version-hint.text names the newest.
    assert.match(fileName(table.metadataLocation), /^00005-[0-9a-f-]{36}\.metadata\.json$/);
    const hint = (await io.get(`${table.location}/metadata/version-hint.text`)).toString('utf8');
    assert.equal(`${hint}.metadata.json`, fileName(table.metadataLocation));
  });

  test(`${backend}: 20 writers appending at once all land, each row exactly once, on a linear chain`, async (t) => {
    const { catalog, io } = await setup(t);
    await catalog.createNamespace(['db']);
    const id: TableIdentifier = { namespace: ['db'], name: 'herd' };
    await catalog.createTable(id, { schema: V1 });
    const writers = 20;
    const snapshots = await Promise.all(
      Array.from({ length: writers }, async (_, i) => {
        const table = await Table.load(catalog, id, io);
        const file = await table.writeDataFile(v1Rows([i], [`w${i}`]));
        return table.commit(table.newAppend().addFile(file).set('writer', String(i)), { baseDelayMs: 2, maxDelayMs: 50 });
      }),
    );
    assert.equal(new Set(snapshots.map((s) => s['snapshot-id'])).size, writers);

    const table = await Table.load(catalog, id, io);
    const md = table.metadata;
    assert.equal(md.snapshots.length, writers);
    const chain = [...ancestorsOf(md, md['current-snapshot-id'])];
    assert.equal(chain.length, writers, 'every snapshot is an ancestor of the current one');
    chain.forEach((s, i) => {
      assert.equal(s['sequence-number'], writers - i);
      const parent = chain[i + 1];
      assert.equal(s['parent-snapshot-id'], parent?.['snapshot-id']);
    });
    assert.equal(currentSnapshot(md)?.summary['total-records'], String(writers));
    assert.deepEqual(new Set(chain.map((s) => s.summary['writer'])), new Set(Array.from({ length: writers }, (_, i) => String(i))));

    const rows = await readWithIcebird(io, table);
    assert.deepEqual(rows.map((r) => Number(r['id'])).sort((x, y) => x - y), Array.from({ length: writers }, (_, i) => i));
    const { dataFiles } = await table.files();
    assert.equal(dataFiles.length, writers);
  });
}
