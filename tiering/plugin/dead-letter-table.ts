/**
 * A typed topic's dead-letter table, `<namespace>.<topic>~dlq` (`~` is a character no Kafka topic name may
 * hold, so no topic's table can take the name). It holds the records conversion could not type — a missing
 * wire-format prefix, an unknown schema id, a schema Iceberg cannot hold, a change Iceberg cannot express,
 * a payload that is not a value of its schema — with their raw key, value and headers, their Kafka
 * coordinates and the reason. The records themselves stay in the topic's data files, which serve Kafka
 * fetches; this is a second copy of only the records that need a human.
 *
 * Exactly once: each segment's dead letters are one data file named from its partition and offsets (a retry
 * rewrites it), committed before the topic table's commit of that segment, with the highest offset per
 * partition in the snapshot summary; a segment the summary already covers is not committed again.
 */
import type { Catalog, TableIdentifier } from '../../iceberg/catalog/catalog.js';
import { createTableIfMissing } from '../../iceberg/catalog/catalog.js';
import { parquetDataFile, type DataFile } from '../../iceberg/data-file.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { icebergToArrowSchema } from '../../iceberg/parquet/arrow-schema.js';
import { writeParquet } from '../../iceberg/parquet/writer.js';
import { FLOE_OWNER_PROPERTY } from '../../iceberg/rest/server.js';
import type { Schema } from '../../iceberg/schema.js';
import { Table } from '../../iceberg/table.js';
import { latestSummaryProperty } from '../../iceberg/transaction.js';
import * as arrow from 'apache-arrow';
import { padOffset } from '../offset-index/location.js';
import { buildColumn } from '../typed/arrow-columns.js';
import type { DeadLetter } from '../typed/typed-rows.js';
import { FLOE_TABLE_PROPERTIES } from './table-maintenance.js';

export const DEAD_LETTER_SUFFIX = '~dlq';
const COMMITTED_PREFIX = 'floe.kafka.dead-letters.committed-offset.';
export const DEAD_LETTER_TOPIC_PROPERTY = 'floe.kafka.dead-letters-of';

/** The dead-letter table's schema (ids as Iceberg's fresh-id assignment gives them, breadth first). */
export const DEAD_LETTER_SCHEMA: Schema = Object.freeze({
  type: 'struct',
  'schema-id': 0,
  fields: [
    {
      id: 1,
      name: 'kafka',
      required: true,
      type: {
        type: 'struct',
        fields: [
          { id: 6, name: 'partition', required: true, type: 'int' },
          { id: 7, name: 'offset', required: true, type: 'long' },
          { id: 8, name: 'timestamp', required: true, type: 'timestamptz' },
          { id: 9, name: 'key', required: false, type: 'binary' },
          {
            id: 10,
            name: 'headers',
            required: false,
            type: {
              type: 'list',
              'element-id': 11,
              'element-required': true,
              element: {
                type: 'struct',
                fields: [
                  { id: 12, name: 'key', required: true, type: 'binary' },
                  { id: 13, name: 'value', required: false, type: 'binary' },
                ],
              },
            },
          },
        ],
      },
    },
    { id: 2, name: 'value', required: false, type: 'binary', doc: 'The record value exactly as produced (null for a tombstone whose key could not be typed)' },
    { id: 3, name: 'reason', required: true, type: 'string', doc: 'MISSING_PREFIX, UNKNOWN_SCHEMA, UNSUPPORTED_SCHEMA, INCOMPATIBLE_SCHEMA or CORRUPT_PAYLOAD' },
    { id: 4, name: 'message', required: true, type: 'string', doc: 'What was wrong, naming the schema id and field; a key\'s problem starts with "key: "' },
    { id: 5, name: 'schema_id', required: false, type: 'int', doc: 'The registry schema id the record named or was decoded with' },
  ],
}) as Schema;

const PARTITION_FIELD = 'kafka_partition';

/** A segment's dead letters, written and waiting for the commit. */
export interface PendingDeadLetters {
  readonly partition: number;
  readonly lastOffset: number;
  readonly file: DataFile;
}

export class DeadLetterTable {
  private constructor(
    readonly id: TableIdentifier,
    private table: Table,
    private readonly catalog: Catalog,
    private readonly io: FileIO,
  ) {}

  /** `<table>~dlq` beside the topic's table (`table` is the topic's name unless iceberg.table.name says otherwise). */
  static identifier(namespace: readonly string[], table: string): TableIdentifier {
    return { namespace, name: `${table}${DEAD_LETTER_SUFFIX}` };
  }

  /** Drops (and purges) the topic's dead-letter table when there is one made by Floe for this topic. */
  static async drop(catalog: Catalog, namespace: readonly string[], topic: string, tableName = topic): Promise<boolean> {
    const id = DeadLetterTable.identifier(namespace, tableName);
    if (!(await catalog.tableExists(id))) return false;
    const props = (await catalog.loadTable(id)).metadata.properties;
    if (props[DEAD_LETTER_TOPIC_PROPERTY] !== topic) return false;
    await catalog.dropTable(id, { purge: true });
    return true;
  }

  /** Loads the topic's dead-letter table, creating it on first use. */
  static async open(options: { catalog: Catalog; io: FileIO; namespace: readonly string[]; topic: string; tableName?: string }): Promise<DeadLetterTable> {
    const { catalog, io, namespace, topic } = options;
    const id = DeadLetterTable.identifier(namespace, options.tableName ?? topic);
    await createTableIfMissing(catalog, id, {
      schema: DEAD_LETTER_SCHEMA,
      partitionSpec: { 'spec-id': 0, fields: [{ 'source-id': 6, 'field-id': 1000, name: PARTITION_FIELD, transform: 'identity' }] },
      properties: { ...FLOE_TABLE_PROPERTIES, [FLOE_OWNER_PROPERTY]: 'floe-tiering', [DEAD_LETTER_TOPIC_PROPERTY]: topic, 'write.parquet.compression-codec': 'zstd' },
      formatVersion: 2,
    });
    return new DeadLetterTable(id, await Table.load(catalog, id, io), catalog, io);
  }

  /** The highest offset of `partition` whose dead letters the table holds, -1 when none. */
  committedOffset(partition: number): number {
    const v = latestSummaryProperty(this.table.metadata, COMMITTED_PREFIX + partition);
    return v === undefined ? -1 : Number(v);
  }

  /** Writes a segment's dead letters as one data file (not committed yet); its name derives from the offsets. */
  async write(partition: number, baseOffset: number, lastOffset: number, letters: readonly DeadLetter[]): Promise<PendingDeadLetters> {
    const schema = DEAD_LETTER_SCHEMA;
    const column = (i: number, values: unknown[]) => buildColumn(schema.fields[i]!.type, values);
    const data = arrow.makeData({
      type: new arrow.Struct(icebergToArrowSchema(schema).fields),
      length: letters.length,
      nullCount: 0,
      children: [
        column(
          0,
          letters.map((l) => ({
            partition: l.partition,
            offset: BigInt(l.offset),
            timestamp: BigInt(l.timestampMs) * 1000n,
            key: l.key,
            headers: l.headers.map((h) => ({ key: h.key, value: h.value })),
          })),
        ),
        column(1, letters.map((l) => l.value)),
        column(2, letters.map((l) => l.reason)),
        column(3, letters.map((l) => l.message)),
        column(4, letters.map((l) => l.schemaId)),
      ],
    });
    const batch = new arrow.RecordBatch(icebergToArrowSchema(schema), data);
    const written = await writeParquet(schema, [batch], { compression: 'zstd' });
    const location = `${this.table.location}/data/${PARTITION_FIELD}=${partition}/${padOffset(BigInt(baseOffset))}-${padOffset(BigInt(lastOffset))}.parquet`;
    await this.io.put(location, Buffer.from(written.bytes.buffer, written.bytes.byteOffset, written.bytes.byteLength));
    const file = parquetDataFile({ file_path: location, partition: { [PARTITION_FIELD]: partition }, metrics: written.metrics, split_offsets: written.splitOffsets });
    written.release();
    return { partition, lastOffset, file };
  }

  /** Commits written dead letters in one snapshot, skipping segments the table already holds. */
  async commit(pending: readonly PendingDeadLetters[]): Promise<void> {
    const fresh = pending.filter((p) => p.lastOffset > this.committedOffset(p.partition));
    if (fresh.length === 0) return;
    const update = this.table.newAppend();
    // Tables made before typed keys hold `value` as required: a key's dead letter may have none.
    if (this.table.schema().fields.find((f) => f.id === 2)?.required) update.setSchema(DEAD_LETTER_SCHEMA, this.table.metadata['last-column-id']);
    const highest = new Map<number, number>();
    for (const p of fresh) {
      update.addFile(p.file);
      highest.set(p.partition, Math.max(highest.get(p.partition) ?? -1, p.lastOffset));
    }
    for (const [partition, offset] of highest) update.set(COMMITTED_PREFIX + partition, String(offset));
    const before = new Map([...highest.keys()].map((p) => [p, this.committedOffset(p)]));
    update.validate((base) => {
      for (const [p, b] of before) {
        const now = latestSummaryProperty(base, COMMITTED_PREFIX + p);
        if ((now === undefined ? -1 : Number(now)) !== b) throw new Error(`dead letters of partition ${p} were committed meanwhile (up to ${now}); reload and retry`);
      }
    });
    try {
      await this.table.commit(update);
    } catch (err) {
      this.table = await Table.load(this.catalog, this.id, this.io);
      if ([...highest].every(([p, o]) => this.committedOffset(p) >= o)) return;
      throw err;
    }
  }
}
