/**
 * The segment-to-offset index of one tiered data file: what a Kafka fetch needs to find rows by offset and
 * to rebuild the original record batches exactly, and what the Parquet rows cannot hold (batches without
 * rows: transaction markers and other control batches, and batches left empty by compaction, kept whole).
 *
 * Stored beside the data as `<table>/kafka-index/partition=<p>/<base>-<last>.idx` (see ./location.ts) in a
 * compact versioned binary format, big-endian:
 *
 *   magic "FLIX" | version u16 (1) | flags u16 (0) | partition i32 | baseOffset i64 | lastOffset i64 |
 *   minTimestamp i64 | maxTimestamp i64 | rowCount u32 |
 *   dataPathLength u16 | dataPath utf8 (relative to the table location; empty = no data file) |
 *   dataFileSize i64 | footerOffset i64 | footerLength u32 |
 *   rowGroupCount u32 | rowGroup* | batchCount u32 | batch* | crc32c u32 (of everything before it)
 *
 *   rowGroup: firstRow u32 | numRows u32 | firstOffset i64 | lastOffset i64 | byteStart i64 | byteLength u32
 *   batch:    baseOffset i64 | lastOffsetDelta i32 | recordsCount i32 | attributes i16 |
 *             partitionLeaderEpoch i32 | baseTimestamp i64 | maxTimestamp i64 | producerId i64 |
 *             producerEpoch i16 | baseSequence i32 | firstRow u32 | recordsBytes u32 | originalSize u32 |
 *             storedLength i32 (-1: the batch's records are rows) | stored bytes
 *
 * A reader rejects an unknown major version rather than guess; version 1 is the only one so far.
 */
import { crc32cOf } from '../../protocol/record-batch/crc.js';
import { TieringConvertError } from '../convert/errors.js';

export const INDEX_MAGIC = 'FLIX';
export const INDEX_VERSION = 1;

/** One original record batch of the segment, in offset order. */
export interface IndexedBatch {
  readonly baseOffset: bigint;
  readonly lastOffsetDelta: number;
  readonly recordsCount: number;
  /** The batch attributes as stored (codec, timestamp type, transactional, control, delete horizon). */
  readonly attributes: number;
  readonly partitionLeaderEpoch: number;
  readonly baseTimestamp: bigint;
  readonly maxTimestamp: bigint;
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  /** Row of the data file holding the batch's first record (for stored batches: the next row). */
  readonly firstRow: number;
  /** Bytes of the uncompressed records section: an uncompressed rebuild is 61 + this many bytes. */
  readonly recordsBytes: number;
  /** Size of the batch as it was in the log. */
  readonly originalSize: number;
  /** The whole original batch, for batches whose records are not rows (control batches); null otherwise. */
  readonly stored: Buffer | null;
}

export interface IndexedRowGroup {
  readonly firstRow: number;
  readonly numRows: number;
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  /** First byte of the row group's column chunks in the data file, and the length of their contiguous span. */
  readonly byteStart: number;
  readonly byteLength: number;
}

export interface IndexedDataFile {
  /** Location relative to the table location, e.g. `data/partition=0/000...0-000...9.parquet`. */
  readonly path: string;
  readonly size: number;
  /** Where the thrift FileMetaData starts, and its length, so the footer is one exact range read. */
  readonly footerOffset: number;
  readonly footerLength: number;
}

export interface SegmentIndex {
  readonly version: number;
  readonly partition: number;
  /** First offset covered (the first batch's base offset). */
  readonly baseOffset: bigint;
  /** Last offset covered (the last batch's base offset plus its lastOffsetDelta). */
  readonly lastOffset: bigint;
  /** Smallest timestamp a consumer sees on a data record (-1 when there is none). */
  readonly minTimestamp: bigint;
  /** Largest batch maxTimestamp, as Kafka's time index keeps it (-1 when there is none). */
  readonly maxTimestamp: bigint;
  readonly rowCount: number;
  /** Null when the range holds no data records (only control batches). */
  readonly dataFile: IndexedDataFile | null;
  readonly rowGroups: readonly IndexedRowGroup[];
  readonly batches: readonly IndexedBatch[];
}

const BATCH_FIXED = 8 + 4 + 4 + 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4 + 4 + 4 + 4;
const ROW_GROUP_SIZE = 4 + 4 + 8 + 8 + 8 + 4;

/** Encoded size of `index` (also the figure an in-memory cache charges for it). */
export function encodedIndexSize(index: SegmentIndex): number {
  let n = 4 + 2 + 2 + 4 + 8 * 4 + 4 + 2 + Buffer.byteLength(index.dataFile?.path ?? '', 'utf8') + 8 + 8 + 4 + 4 + 4 + 4;
  n += index.rowGroups.length * ROW_GROUP_SIZE;
  for (const b of index.batches) n += BATCH_FIXED + (b.stored?.length ?? 0);
  return n;
}

export function encodeSegmentIndex(index: SegmentIndex): Buffer {
  const buf = Buffer.allocUnsafe(encodedIndexSize(index));
  let p = buf.write(INDEX_MAGIC, 0, 'latin1');
  p = buf.writeUInt16BE(INDEX_VERSION, p);
  p = buf.writeUInt16BE(0, p);
  p = buf.writeInt32BE(index.partition, p);
  p = buf.writeBigInt64BE(index.baseOffset, p);
  p = buf.writeBigInt64BE(index.lastOffset, p);
  p = buf.writeBigInt64BE(index.minTimestamp, p);
  p = buf.writeBigInt64BE(index.maxTimestamp, p);
  p = buf.writeUInt32BE(index.rowCount, p);
  const path = index.dataFile?.path ?? '';
  const pathLen = Buffer.byteLength(path, 'utf8');
  p = buf.writeUInt16BE(pathLen, p);
  p += buf.write(path, p, 'utf8');
  p = buf.writeBigInt64BE(BigInt(index.dataFile?.size ?? 0), p);
  p = buf.writeBigInt64BE(BigInt(index.dataFile?.footerOffset ?? 0), p);
  p = buf.writeUInt32BE(index.dataFile?.footerLength ?? 0, p);
  p = buf.writeUInt32BE(index.rowGroups.length, p);
  for (const rg of index.rowGroups) {
    p = buf.writeUInt32BE(rg.firstRow, p);
    p = buf.writeUInt32BE(rg.numRows, p);
    p = buf.writeBigInt64BE(rg.firstOffset, p);
    p = buf.writeBigInt64BE(rg.lastOffset, p);
    p = buf.writeBigInt64BE(BigInt(rg.byteStart), p);
    p = buf.writeUInt32BE(rg.byteLength, p);
  }
  p = buf.writeUInt32BE(index.batches.length, p);
  for (const b of index.batches) {
    p = buf.writeBigInt64BE(b.baseOffset, p);
    p = buf.writeInt32BE(b.lastOffsetDelta, p);
    p = buf.writeInt32BE(b.recordsCount, p);
    p = buf.writeInt16BE(b.attributes, p);
    p = buf.writeInt32BE(b.partitionLeaderEpoch, p);
    p = buf.writeBigInt64BE(b.baseTimestamp, p);
    p = buf.writeBigInt64BE(b.maxTimestamp, p);
    p = buf.writeBigInt64BE(b.producerId, p);
    p = buf.writeInt16BE(b.producerEpoch, p);
    p = buf.writeInt32BE(b.baseSequence, p);
    p = buf.writeUInt32BE(b.firstRow, p);
    p = buf.writeUInt32BE(b.recordsBytes, p);
    p = buf.writeUInt32BE(b.originalSize, p);
    if (b.stored === null) p = buf.writeInt32BE(-1, p);
    else {
      p = buf.writeInt32BE(b.stored.length, p);
      p += b.stored.copy(buf, p);
    }
  }
  buf.writeUInt32BE(crc32cOf(buf.subarray(0, p)), p);
  return buf;
}

function corrupt(what: string): TieringConvertError {
  return new TieringConvertError('INVALID_INDEX', `offset index is corrupt: ${what}; delete it and re-tier the segment, or rebuild it from the data file`);
}

/** Decodes an index written by encodeSegmentIndex; checks magic, version and CRC. Stored batches are copies. */
export function decodeSegmentIndex(buf: Buffer): SegmentIndex {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== INDEX_MAGIC) throw corrupt('magic FLIX missing');
  const version = buf.readUInt16BE(4);
  if (version !== INDEX_VERSION) {
    throw new TieringConvertError('INVALID_INDEX', `offset index version ${version} is not supported (this broker reads version ${INDEX_VERSION}); upgrade the broker`);
  }
  const stored = buf.readUInt32BE(buf.length - 4);
  if (crc32cOf(buf.subarray(0, buf.length - 4)) !== stored) throw corrupt('CRC mismatch');
  const end = buf.length - 4;
  let p = 8;
  const need = (n: number): void => {
    if (p + n > end) throw corrupt(`truncated at byte ${p}`);
  };
  need(4 + 8 * 4 + 4 + 2);
  const partition = buf.readInt32BE(p);
  const baseOffset = buf.readBigInt64BE(p + 4);
  const lastOffset = buf.readBigInt64BE(p + 12);
  const minTimestamp = buf.readBigInt64BE(p + 20);
  const maxTimestamp = buf.readBigInt64BE(p + 28);
  const rowCount = buf.readUInt32BE(p + 36);
  const pathLen = buf.readUInt16BE(p + 40);
  p += 42;
  need(pathLen + 20);
  const path = buf.toString('utf8', p, p + pathLen);
  p += pathLen;
  const size = Number(buf.readBigInt64BE(p));
  const footerOffset = Number(buf.readBigInt64BE(p + 8));
  const footerLength = buf.readUInt32BE(p + 16);
  p += 20;
  need(4);
  const rgCount = buf.readUInt32BE(p);
  p += 4;
  need(rgCount * ROW_GROUP_SIZE);
  const rowGroups: IndexedRowGroup[] = [];
  for (let i = 0; i < rgCount; i++) {
    rowGroups.push({
      firstRow: buf.readUInt32BE(p),
      numRows: buf.readUInt32BE(p + 4),
      firstOffset: buf.readBigInt64BE(p + 8),
      lastOffset: buf.readBigInt64BE(p + 16),
      byteStart: Number(buf.readBigInt64BE(p + 24)),
      byteLength: buf.readUInt32BE(p + 32),
    });
    p += ROW_GROUP_SIZE;
  }
  need(4);
  const batchCount = buf.readUInt32BE(p);
  p += 4;
  const batches: IndexedBatch[] = [];
  for (let i = 0; i < batchCount; i++) {
    need(BATCH_FIXED);
    const storedLength = buf.readInt32BE(p + 64);
    const b = {
      baseOffset: buf.readBigInt64BE(p),
      lastOffsetDelta: buf.readInt32BE(p + 8),
      recordsCount: buf.readInt32BE(p + 12),
      attributes: buf.readInt16BE(p + 16),
      partitionLeaderEpoch: buf.readInt32BE(p + 18),
      baseTimestamp: buf.readBigInt64BE(p + 22),
      maxTimestamp: buf.readBigInt64BE(p + 30),
      producerId: buf.readBigInt64BE(p + 38),
      producerEpoch: buf.readInt16BE(p + 46),
      baseSequence: buf.readInt32BE(p + 48),
      firstRow: buf.readUInt32BE(p + 52),
      recordsBytes: buf.readUInt32BE(p + 56),
      originalSize: buf.readUInt32BE(p + 60),
    };
    p += BATCH_FIXED;
    let bytes: Buffer | null = null;
    if (storedLength >= 0) {
      need(storedLength);
      bytes = Buffer.from(buf.subarray(p, p + storedLength));
      p += storedLength;
    } else if (storedLength !== -1) throw corrupt(`batch ${i} has stored length ${storedLength}`);
    batches.push({ ...b, stored: bytes });
  }
  if (p !== end) throw corrupt(`${end - p} unexpected bytes after the batches`);
  return {
    version,
    partition,
    baseOffset,
    lastOffset,
    minTimestamp,
    maxTimestamp,
    rowCount,
    dataFile: pathLen === 0 ? null : { path, size, footerOffset, footerLength },
    rowGroups,
    batches,
  };
}
