/**
 * The Iceberg schema of a topic table in `key_value` mode, and the Arrow schema its data files are written
 * with. One row per Kafka data record; control records never become rows (their batches live in the
 * segment-to-offset index, see ../offset-index/format.ts).
 *
 * Layout (field ids in brackets). What users query sits at the top of the `kafka` struct and in `value`;
 * the fields that only exist so the original batches can be rebuilt byte for byte are grouped in
 * `kafka.batch` or are null for ordinary records, so they stay out of the way:
 *
 *   kafka [1] struct, required
 *     partition [3] int                    the Kafka partition (also the table's identity partition)
 *     offset [4] long                      the stored offset (never renumbered: gaps survive)
 *     timestamp [5] timestamptz            the timestamp a Kafka consumer sees: base + delta for CreateTime
 *                                          batches, the batch's maxTimestamp for LogAppendTime batches
 *     timestamp_type [6] int               0 CreateTime, 1 LogAppendTime
 *     key [7] binary, optional             null for a null key
 *     headers [8] list<[13] struct<key [14] string, value [15] binary optional>>, optional;
 *                                          order and duplicate keys kept; an empty list (not null) when the
 *                                          record has none (Kafka has no null header list)
 *     batch [9] struct, required           the record's batch, repeated on each row (run-length encoded):
 *       base_offset [16] long, last_offset_delta [17] int, partition_leader_epoch [18] int,
 *       attributes [19] int (codec bits 0-2, timestamp type 3, transactional 4, control 5, delete horizon 6),
 *       base_timestamp [20] long (ms), max_timestamp [21] long (ms), producer_id [22] long,
 *       producer_epoch [23] int, base_sequence [24] int, records_count [25] int
 *     record_attributes [10] int, optional    the record's attributes byte when non-zero (null = 0)
 *     timestamp_delta [11] long, optional     the record's timestampDelta when `timestamp` does not give
 *                                             it back (LogAppendTime batches); null otherwise
 *     raw_record [12] binary, optional        the record's exact wire bytes when the typed columns cannot
 *                                             rebuild them (a header key that is not valid UTF-8, a
 *                                             non-minimal varint...); checked for every record at
 *                                             conversion. Null for every ordinary record.
 *   value [2] binary, optional             null for a null value (a tombstone)
 *
 * The ids are the ones Iceberg's fresh-id assignment (breadth first: a struct's fields, then each field's
 * children) gives this schema, so a catalog that reassigns ids on table creation keeps them unchanged.
 * Timestamps are Kafka milliseconds times 1000 (microseconds), which converts back exactly.
 */
import type { Schema, StructType } from '../../iceberg/schema.js';
import { icebergToArrowSchema } from '../../iceberg/parquet/arrow-schema.js';
import type * as arrow from 'apache-arrow';

export const FIELD_IDS = Object.freeze({
  kafka: 1,
  value: 2,
  partition: 3,
  offset: 4,
  timestamp: 5,
  timestampType: 6,
  key: 7,
  headers: 8,
  batch: 9,
  recordAttributes: 10,
  timestampDelta: 11,
  rawRecord: 12,
  headerElement: 13,
  headerKey: 14,
  headerValue: 15,
  batchBaseOffset: 16,
  batchLastOffsetDelta: 17,
  batchPartitionLeaderEpoch: 18,
  batchAttributes: 19,
  batchBaseTimestamp: 20,
  batchMaxTimestamp: 21,
  batchProducerId: 22,
  batchProducerEpoch: 23,
  batchBaseSequence: 24,
  batchRecordsCount: 25,
});

/** The highest field id of the topic schema (the table's `last-column-id`). */
export const LAST_COLUMN_ID = 25;

const BATCH_TYPE: StructType = {
  type: 'struct',
  fields: [
    { id: FIELD_IDS.batchBaseOffset, name: 'base_offset', required: true, type: 'long' },
    { id: FIELD_IDS.batchLastOffsetDelta, name: 'last_offset_delta', required: true, type: 'int' },
    { id: FIELD_IDS.batchPartitionLeaderEpoch, name: 'partition_leader_epoch', required: true, type: 'int' },
    { id: FIELD_IDS.batchAttributes, name: 'attributes', required: true, type: 'int' },
    { id: FIELD_IDS.batchBaseTimestamp, name: 'base_timestamp', required: true, type: 'long' },
    { id: FIELD_IDS.batchMaxTimestamp, name: 'max_timestamp', required: true, type: 'long' },
    { id: FIELD_IDS.batchProducerId, name: 'producer_id', required: true, type: 'long' },
    { id: FIELD_IDS.batchProducerEpoch, name: 'producer_epoch', required: true, type: 'int' },
    { id: FIELD_IDS.batchBaseSequence, name: 'base_sequence', required: true, type: 'int' },
    { id: FIELD_IDS.batchRecordsCount, name: 'records_count', required: true, type: 'int' },
  ],
};

const KAFKA_TYPE: StructType = {
  type: 'struct',
  fields: [
    { id: FIELD_IDS.partition, name: 'partition', required: true, type: 'int' },
    { id: FIELD_IDS.offset, name: 'offset', required: true, type: 'long' },
    { id: FIELD_IDS.timestamp, name: 'timestamp', required: true, type: 'timestamptz' },
    { id: FIELD_IDS.timestampType, name: 'timestamp_type', required: true, type: 'int' },
    { id: FIELD_IDS.key, name: 'key', required: false, type: 'binary' },
    {
      id: FIELD_IDS.headers,
      name: 'headers',
      required: false,
      type: {
        type: 'list',
        'element-id': FIELD_IDS.headerElement,
        'element-required': true,
        element: {
          type: 'struct',
          fields: [
            { id: FIELD_IDS.headerKey, name: 'key', required: true, type: 'string' },
            { id: FIELD_IDS.headerValue, name: 'value', required: false, type: 'binary' },
          ],
        },
      },
    },
    { id: FIELD_IDS.batch, name: 'batch', required: true, type: BATCH_TYPE, doc: 'The record batch this record was produced in; used to rebuild it exactly' },
    { id: FIELD_IDS.recordAttributes, name: 'record_attributes', required: false, type: 'int', doc: 'Record attributes byte when non-zero' },
    { id: FIELD_IDS.timestampDelta, name: 'timestamp_delta', required: false, type: 'long', doc: 'Stored timestampDelta when timestamp does not imply it' },
    { id: FIELD_IDS.rawRecord, name: 'raw_record', required: false, type: 'binary', doc: 'Exact record bytes when the typed columns cannot rebuild them' },
  ],
};

/** The topic table schema (`key_value` mode), schema id 0. */
export const TOPIC_SCHEMA: Schema = Object.freeze({
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: FIELD_IDS.kafka, name: 'kafka', required: true, type: KAFKA_TYPE, doc: 'Kafka record metadata' },
    { id: FIELD_IDS.value, name: 'value', required: false, type: 'binary', doc: 'Record value bytes' },
  ],
}) as Schema;

/** The topic schema with another schema id (for tables whose schema list already holds other schemas). */
export function topicTableSchema(schemaId = 0): Schema {
  return { ...TOPIC_SCHEMA, 'schema-id': schemaId };
}

let arrowSchema: arrow.Schema | undefined;

/** The Arrow schema (every field carrying its Iceberg field id) rows are built against. */
export function topicArrowSchema(): arrow.Schema {
  return (arrowSchema ??= icebergToArrowSchema(TOPIC_SCHEMA));
}
