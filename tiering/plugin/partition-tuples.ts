/**
 * A topic table's partitioning as Floe sees it: whether the table still has only the partition spec Floe
 * created it with (identity on the Kafka partition; compaction runs only then), and the partition tuple of
 * each data file of a committed segment, which a position delete file over it must carry.
 */
import type { PartitionData } from '../../iceberg/data-file.js';
import type { Table } from '../../iceberg/table.js';
import type { SegmentEntry } from './partition-manifest.js';
import type { SegmentCodec } from './segment-codec.js';

/**
 * Partition tuples of a committed segment's data files, by path (a delete file must carry its target's).
 * While the table has only ever had the partition spec Floe created it with (identity on the Kafka
 * partition), every data file's tuple is that partition, so no manifest is read; a table whose spec was
 * evolved (by another engine) is looked up in its live data files, which reads every manifest.
 */
export async function partitionTuples(table: Table, codec: SegmentCodec, partition: number, segment: SegmentEntry): Promise<Map<string, PartitionData>> {
  const field = codec.partitionSpec(table.schema()).fields[0];
  if (specIsOurs(table, codec) && field !== undefined) return new Map(segment.dataFiles.map((f) => [f, { [field.name]: partition }]));
  const { dataFiles } = await table.files();
  return new Map(dataFiles.map((e) => [e.data_file.file_path, e.data_file.partition]));
}

/** Whether the table has only ever had the partition spec Floe creates it with (identity on the Kafka partition). */
export function specIsOurs(table: Table, codec: SegmentCodec): boolean {
  const specs = table.metadata['partition-specs'];
  const ours = codec.partitionSpec(table.schema());
  const only = specs.length === 1 ? specs[0] : undefined;
  const field = ours.fields[0];
  const same =
    only !== undefined &&
    only['spec-id'] === ours['spec-id'] &&
    only.fields.length === 1 &&
    ours.fields.length === 1 &&
    field !== undefined &&
    field.transform === 'identity' &&
    only.fields[0]?.['source-id'] === field['source-id'] &&
    only.fields[0]?.['field-id'] === field['field-id'] &&
    only.fields[0]?.name === field.name &&
    only.fields[0]?.transform === 'identity';
  return same;
}
