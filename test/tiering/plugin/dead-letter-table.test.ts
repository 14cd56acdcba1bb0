// The dead-letter table <topic>~dlq: a dead letter without a value (a tombstone whose key could not be typed)
// is written and committed, also into a table made before typed keys, whose `value` column was required:
// the commit that first needs it makes the column optional, and icebird reads every row back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { icebergRead } from 'icebird';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import type { Schema } from '../../../iceberg/schema.js';
import { Table } from '../../../iceberg/table.js';
import { DEAD_LETTER_SCHEMA, DeadLetterTable } from '../../../tiering/plugin/dead-letter-table.js';
import type { DeadLetter } from '../../../tiering/typed/typed-rows.js';
import { installWarehouseFetch } from '../../helpers/file-fetch.js';

const letter = (offset: number, value: Buffer | null): DeadLetter => ({
  partition: 0,
  offset,
  timestampMs: 1_700_000_000_000 + offset,
  key: Buffer.from(`k${offset}`),
  value,
  headers: [],
  reason: 'CORRUPT_PAYLOAD',
  message: value === null ? 'key: schema id 1: not an Avro string' : 'schema id 1: truncated',
  schemaId: 1,
});

async function rows(table: Table, io: LocalFileIO): Promise<Record<string, unknown>[]> {
  const restore = installWarehouseFetch(io);
  try {
    return await icebergRead({ tableUrl: table.location, metadataFileName: table.metadataLocation.split('/').pop() as string });
  } finally {
    restore();
  }
}

for (const made of ['now', 'before typed keys'] as const) {
  test(`a dead letter without a value lands in a dead-letter table made ${made}`, async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'floe-dlq-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const warehouse = pathToFileURL(join(dir, 'warehouse')).href;
    const io = new LocalFileIO({ root: warehouse, fsync: false });
    const catalog = new WarehouseCatalog({ io, warehouse });
    const namespace = ['kafka'];
    await catalog.createNamespace(namespace).catch(() => undefined);
    if (made === 'before typed keys') {
      // The schema of earlier releases: value required.
      const old = { ...DEAD_LETTER_SCHEMA, fields: DEAD_LETTER_SCHEMA.fields.map((f) => (f.id === 2 ? { ...f, required: true } : f)) } as Schema;
      await catalog.createTable(DeadLetterTable.identifier(namespace, 'orders'), {
        schema: old,
        partitionSpec: { 'spec-id': 0, fields: [{ 'source-id': 6, 'field-id': 1000, name: 'kafka_partition', transform: 'identity' }] },
        properties: { 'floe.kafka.dead-letters-of': 'orders' },
        formatVersion: 2,
      });
    }
    const dlq = await DeadLetterTable.open({ catalog, io, namespace, topic: 'orders' });
    const pending = await dlq.write(0, 0, 9, [letter(3, Buffer.from('bad')), letter(7, null)]);
    await dlq.commit([pending]);
    assert.equal(dlq.committedOffset(0), 9);

    const table = await Table.load(catalog, dlq.id, io);
    assert.equal(table.schema().fields.find((f) => f.id === 2)?.required, false, 'value is optional');
    const read = (await rows(table, io)).sort((a, b) => Number((a['kafka'] as { offset: bigint }).offset - (b['kafka'] as { offset: bigint }).offset));
    assert.deepEqual(
      read.map((r) => [Number((r['kafka'] as { offset: bigint }).offset), r['value'] === null || r['value'] === undefined ? null : Buffer.from(r['value'] as Uint8Array).toString(), r['message']]),
      [
        [3, 'bad', 'schema id 1: truncated'],
        [7, null, 'key: schema id 1: not an Avro string'],
      ],
    );
  });
}
