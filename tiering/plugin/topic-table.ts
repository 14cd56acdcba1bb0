/**
 * A topic's table in the catalog (iceberg-topic.ts open and drop): created on first use, with its namespace,
 * the codec's schema and partition spec and Floe's properties (the `floe.owner` property makes the REST
 * catalog refuse outside commits); loaded only when Floe may write it (table-checks.ts); dropped with its
 * files, and with the tables that hold copies of its records, when the topic goes.
 */
import type { Catalog, TableIdentifier } from '../../iceberg/catalog/catalog.js';
import { createNamespaceIfMissing, createTableIfMissing } from '../../iceberg/catalog/catalog.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { FLOE_OWNER_PROPERTY } from '../../iceberg/rest/server.js';
import { Table } from '../../iceberg/table.js';
import { TieringError } from './api.js';
import { DeadLetterTable } from './dead-letter-table.js';
import { LatestTable } from './latest/latest-table.js';
import type { SegmentCodec } from './segment-codec.js';
import { checkFieldIds, checkOwnership, FLOE_OWNER, TOPIC_PROPERTY } from './table-checks.js';
import { FLOE_TABLE_PROPERTIES } from './table-maintenance.js';

/**
 * Loads the topic's table `id`, creating the namespace and table if missing. Throws FOREIGN_TABLE for a
 * table Floe may not write (table-checks.ts), UNUSABLE_LOCATION for one whose location `checkLocation`
 * refuses (it returns why).
 */
export async function loadTopicTable(options: { catalog: Catalog; io: FileIO; codec: SegmentCodec; topic: string; id: TableIdentifier; checkLocation?: (location: string) => string | undefined }): Promise<Table> {
  const { catalog, io, codec, topic, id } = options;
  await createNamespaceIfMissing(catalog, id.namespace);
  const schema = codec.tableSchema();
  await createTableIfMissing(catalog, id, {
    schema,
    partitionSpec: codec.partitionSpec(schema),
    properties: { ...FLOE_TABLE_PROPERTIES, [FLOE_OWNER_PROPERTY]: FLOE_OWNER, [TOPIC_PROPERTY]: topic, 'write.parquet.compression-codec': 'zstd' },
    formatVersion: 2,
  });
  const table = await Table.load(catalog, id, io);
  checkOwnership(topic, id, table.metadata.properties, catalog.name);
  checkFieldIds(topic, id, table.schema(), codec.tableSchema(), catalog.name);
  const unusable = options.checkLocation?.(table.location);
  if (unusable !== undefined) throw new TieringError('UNUSABLE_LOCATION', `table ${id.namespace.join('.')}.${id.name} of topic ${topic} lives at ${table.location}: ${unusable}`);
  return table;
}

/**
 * Drops the topic's table `id` with its files (metadata, data, offset index), when it is this topic's table
 * (owned by Floe's tiering and naming this topic); its upsert and dead-letter tables go with it. Resolves
 * whether the topic's table was dropped.
 */
export async function dropTopicTable(catalog: Catalog, io: FileIO, topic: string, id: TableIdentifier): Promise<boolean> {
  // The upsert table names the topic table's data files: it goes first (keeping them for the purge below).
  await LatestTable.drop(catalog, id, topic, io);
  if (!(await catalog.tableExists(id))) return false;
  const props = (await catalog.loadTable(id)).metadata.properties;
  if (props[FLOE_OWNER_PROPERTY] !== FLOE_OWNER || props[TOPIC_PROPERTY] !== topic) return false;
  await catalog.dropTable(id, { purge: true });
  // Its dead letters are copies of its records: they go with it.
  await DeadLetterTable.drop(catalog, id.namespace, topic, id.name);
  return true;
}
