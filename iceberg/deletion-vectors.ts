/**
 * Deletion vectors (Iceberg spec v3, "Deletion Vectors"; Puffin blob type `deletion-vector-v1`): the deleted
 * row positions of ONE data file as a Roaring bitmap in a Puffin file. A v3 table has at most one per data
 * file in a snapshot, so a writer that deletes more rows of a file replaces its vector by the union.
 *
 * Blob layout (big endian where noted):
 *   length(4, BE: magic + vector) | magic D1 D3 39 64 | vector | CRC-32 of magic + vector (4, BE)
 * The vector is a 64-bit Roaring bitmap in the portable format: the count of 32-bit bitmaps (8 bytes, LE),
 * then for each, by ascending high 32 bits, its key (4 bytes, LE) and the 32-bit bitmap in the Roaring
 * portable format without run containers (cookie 12346; array containers up to 4,096 values, bitmap
 * containers above).
 *
 *   const dv = await writeDeletionVector(io, location, dataFile.file_path, [0, 5, 6], { partition });
 *   await table.commit(table.newRowDelta().addDeleteFile(dv));
 */
import { crc32 } from '@node-rs/crc32';
import { DataFileContent, validateDataFile, type DataFile, type PartitionData } from './data-file.js';
import type { FileIO } from './io/file-io.js';
import { writePuffin } from './puffin.js';
import { IcebergError } from './types.js';

export const DELETION_VECTOR_BLOB = 'deletion-vector-v1';
/** Reserved field id of `_pos` (spec, "Reserved Field IDs"): what a deletion vector is about. */
export const ROW_POSITION_ID = 2147483645;
const DV_MAGIC = Buffer.from([0xd1, 0xd3, 0x39, 0x64]);
const NO_RUN_COOKIE = 12346;
const ARRAY_MAX = 4096;

/** One 32-bit Roaring bitmap (values < 2^32, sorted, unique) in the portable format, without run containers. */
function roaring32(values: readonly number[]): Buffer {
  const containers: { key: number; values: number[] }[] = [];
  for (const v of values) {
    const key = v >>> 16;
    const last = containers[containers.length - 1];
    if (last !== undefined && last.key === key) last.values.push(v & 0xffff);
    else containers.push({ key, values: [v & 0xffff] });
  }
  const headerBytes = 8 + containers.length * 4 + containers.length * 4;
  const bodies = containers.map((c) => {
    if (c.values.length <= ARRAY_MAX) {
      const b = Buffer.alloc(c.values.length * 2);
      c.values.forEach((x, i) => b.writeUInt16LE(x, i * 2));
      return b;
    }
    const words = Buffer.alloc(8192);
    for (const x of c.values) words[x >>> 3] = (words[x >>> 3] as number) | (1 << (x & 7));
    return words;
  });
  const head = Buffer.alloc(headerBytes);
  head.writeUInt32LE(NO_RUN_COOKIE, 0);
  head.writeUInt32LE(containers.length, 4);
  let at = 8;
  for (const c of containers) {
    head.writeUInt16LE(c.key, at);
    head.writeUInt16LE(c.values.length - 1, at + 2);
    at += 4;
  }
  let offset = headerBytes;
  for (const b of bodies) {
    head.writeUInt32LE(offset, at);
    at += 4;
    offset += b.length;
  }
  return Buffer.concat([head, ...bodies]);
}

/** The `deletion-vector-v1` blob of row positions (any order; duplicates allowed). */
export function serializeDeletionVector(positions: Iterable<number | bigint>): { blob: Buffer; cardinality: number } {
  const sorted = [...new Set([...positions].map((p) => BigInt(p)))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (sorted.length > 0 && (sorted[0] as bigint) < 0n) throw new IcebergError('INVALID_UPDATE', `A deletion vector holds row positions, not ${sorted[0]}`);
  const groups = new Map<bigint, number[]>();
  for (const p of sorted) {
    const high = p >> 32n;
    let g = groups.get(high);
    if (g === undefined) groups.set(high, (g = []));
    g.push(Number(p & 0xffffffffn));
  }
  const count = Buffer.alloc(8);
  count.writeBigUInt64LE(BigInt(groups.size));
  const parts: Buffer[] = [count];
  for (const [high, low] of groups) {
    const key = Buffer.alloc(4);
    key.writeUInt32LE(Number(high));
    parts.push(key, roaring32(low));
  }
  const vector = Buffer.concat([DV_MAGIC, ...parts]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(vector.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(vector) >>> 0);
  return { blob: Buffer.concat([length, vector, crc]), cardinality: sorted.length };
}

/**
 * Writes a Puffin file holding the deletion vector of `dataFile` (its `file_path`, exactly as in its
 * manifest entry) and returns its delete file entry: position deletes in Puffin format, naming the data
 * file and where the blob is.
 */
export async function writeDeletionVector(io: FileIO, location: string, dataFile: string, positions: Iterable<number | bigint>, options: { partition?: PartitionData } = {}): Promise<DataFile> {
  const { blob, cardinality } = serializeDeletionVector(positions);
  if (cardinality === 0) throw new IcebergError('INVALID_UPDATE', `A deletion vector for ${dataFile} would delete no row; write none`);
  const { bytes, placed } = writePuffin([{ type: DELETION_VECTOR_BLOB, fields: [ROW_POSITION_ID], payload: blob, properties: { 'referenced-data-file': dataFile, cardinality: String(cardinality) } }], { 'created-by': 'Floe' });
  await io.put(location, bytes);
  const at = placed[0] as { offset: number; length: number };
  const f: DataFile = {
    content: DataFileContent.POSITION_DELETES,
    file_path: location,
    file_format: 'puffin',
    partition: options.partition ?? {},
    record_count: BigInt(cardinality),
    file_size_in_bytes: BigInt(bytes.length),
    referenced_data_file: dataFile,
    content_offset: BigInt(at.offset),
    content_size_in_bytes: BigInt(at.length),
  };
  validateDataFile(f);
  return f;
}
