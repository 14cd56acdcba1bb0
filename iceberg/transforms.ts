/**
 * Iceberg partition transforms (spec, "Partition Transforms"): their representation, parsing and printing
 * in the spec's string form (`identity`, `bucket[16]`, `truncate[10]`, `year`, `month`, `day`, `hour`,
 * `void`), result types, and applying a transform to a source value.
 */

/** A parsed transform. The spec's JSON keeps the string form (see `transformToString`). */
export type Transform =
  | { readonly kind: 'identity' }
  | { readonly kind: 'bucket'; readonly numBuckets: number }
  | { readonly kind: 'truncate'; readonly width: number }
  | { readonly kind: 'year' }
  | { readonly kind: 'month' }
  | { readonly kind: 'day' }
  | { readonly kind: 'hour' }
  | { readonly kind: 'void' };

/** A transform in the spec's JSON spelling, e.g. `'bucket[16]'`. */
export type TransformString = string;
