/**
 * Partition specs, shaped after the spec's JSON serialization (Iceberg spec, "Partitioning" and Appendix C):
 * `{ "spec-id": 0, "fields": [{ "source-id": 4, "field-id": 1000, "name": "ts_day", "transform": "day" }] }`.
 * Transforms stay in their string form in the model so that JSON round-trips exactly; parse them with
 * `parseTransform` from `./transforms.js`.
 */
import type { Transform, TransformString } from './transforms.js';

export type { Transform, TransformString };

export interface PartitionField {
  /** Id of the source column in the table schema. */
  readonly 'source-id': number;
  /** v3 multi-argument transforms: ids of every source column (then `source-id` is the first). */
  readonly 'source-ids'?: readonly number[];
  /** Partition field id, unique across every spec of a table; starts at 1000. */
  readonly 'field-id': number;
  readonly name: string;
  readonly transform: TransformString;
}

export interface PartitionSpec {
  readonly 'spec-id': number;
  readonly fields: readonly PartitionField[];
}

/** Partition field ids start here (spec: "partition field IDs ... start at 1000"). */
export const PARTITION_DATA_ID_START = 1000;

/** The spec with no partition fields, spec-id 0. */
export const UNPARTITIONED_SPEC: PartitionSpec = Object.freeze({ 'spec-id': 0, fields: Object.freeze([]) });
