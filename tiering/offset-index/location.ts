/**
 * Deterministic object names of tiered data, from partition and offsets only, so a retried conversion
 * overwrites the same objects instead of adding duplicates:
 *
 *   data file:    <table>/data/partition=<p>/<20-digit base offset>-<20-digit last offset>.parquet
 *   offset index: <table>/kafka-index/partition=<p>/<20-digit base offset>-<20-digit last offset>.idx
 *
 * Twenty digits hold any non-negative int64 and sort lexicographically in offset order, so listing the
 * index prefix of a partition returns its remote history in order.
 *
 * Files written by compaction (../plugin/compaction.ts) carry a tag after the offsets, naming the merged
 * segment they belong to (`<base>-<last>.c<segment base>-<segment last>.parquet`): never the name of an input
 * file, and the same again when a crashed compaction is retried.
 */

export function padOffset(offset: bigint): string {
  return offset.toString().padStart(20, '0');
}

/** Data file path relative to the table location. */
export function dataFilePath(partition: number, baseOffset: bigint, lastOffset: bigint, tag?: string): string {
  return `data/partition=${partition}/${padOffset(baseOffset)}-${padOffset(lastOffset)}${suffix(tag)}.parquet`;
}

/** Offset index path relative to the table location. */
export function indexPath(partition: number, baseOffset: bigint, lastOffset: bigint, tag?: string): string {
  return `${indexPrefix(partition)}${padOffset(baseOffset)}-${padOffset(lastOffset)}${suffix(tag)}.idx`;
}

function suffix(tag: string | undefined): string {
  if (tag === undefined || tag === '') return '';
  if (!/^[0-9a-z-]+$/.test(tag)) throw new RangeError(`file name tag ${JSON.stringify(tag)} must be lower-case letters, digits and dashes`);
  return `.${tag}`;
}

/** The prefix under which a partition's index objects are listed (relative to the table location). */
export function indexPrefix(partition: number): string {
  return `kafka-index/partition=${partition}/`;
}

/** Parses an index object name back into its offset range, or undefined for other names. */
export function parseIndexName(name: string): { baseOffset: bigint; lastOffset: bigint } | undefined {
  const m = /(\d{20})-(\d{20})(?:\.[0-9a-z-]+)?\.idx$/.exec(name);
  if (!m) return undefined;
  return { baseOffset: BigInt(m[1]!), lastOffset: BigInt(m[2]!) };
}

/** `relative` resolved against a table location (`file:///...` or `s3://...`), with exactly one slash between. */
export function resolveLocation(tableLocation: string, relative: string): string {
  return `${tableLocation.replace(/\/+$/, '')}/${relative}`;
}
