import test from 'node:test';
import assert from 'node:assert/strict';
import { encodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { parseParquetFooter } from '../../../iceberg/parquet/footer.js';
import { readParquetTable } from '../../../iceberg/parquet/reader.js';
import { convertSegment } from '../../../tiering/convert/segment-to-parquet.js';
import { decodeFooterTree, encodeFooterTree, sliceParquetFile } from '../../../tiering/convert/parquet-slice.js';

async function file(): Promise<Uint8Array> {
  const batches = Array.from({ length: 40 }, (_, b) =>
    encodeRecordBatch({ baseOffset: BigInt(b * 10), baseTimestamp: 1n, records: Array.from({ length: 10 }, (_, i) => ({ key: Buffer.from(`k${b}.${i}`), value: Buffer.alloc(64, b) })) }),
  );
  for await (const f of convertSegment(Buffer.concat(batches), { partition: 0, targetRowGroupBytes: 2000 })) return f.parquet!.bytes;
  throw new Error('no file');
}

test('the footer re-encodes byte for byte from its typed tree', async () => {
  const bytes = await file();
  const footer = parseParquetFooter(bytes);
  const meta = bytes.subarray(bytes.length - 8 - footer.metadataLength, bytes.length - 8);
  assert.deepEqual(Buffer.from(encodeFooterTree(decodeFooterTree(meta))), Buffer.from(meta));
});

test('a slice of row groups is a valid Parquet file with exactly their rows', async () => {
  const bytes = await file();
  const footer = parseParquetFooter(bytes);
  assert.ok(footer.rowGroups.length >= 4);
  const meta = bytes.subarray(bytes.length - 8 - footer.metadataLength, bytes.length - 8);
  const tree = decodeFooterTree(meta);
  const whole = readParquetTable(bytes);
  const offsets = (t: ReturnType<typeof readParquetTable>) => Array.from(t.getChild('kafka')!.getChild('offset')!.toArray() as BigInt64Array);
  const all = offsets(whole);
  const [a, z] = [1, 2];
  const rgA = footer.rowGroups[a]!;
  const rgZ = footer.rowGroups[z]!;
  const start = Number(rgA.startOffset);
  const end = Number(rgZ.startOffset + rgZ.totalCompressedSize);
  const slice = sliceParquetFile(tree, a, z, bytes.subarray(start, end), start);
  const part = readParquetTable(slice);
  const first = Number(footer.rowGroups[0]!.numRows);
  assert.deepEqual(offsets(part), all.slice(first, first + Number(rgA.numRows + rgZ.numRows)));
  assert.deepEqual(parseParquetFooter(slice).rowGroups.length, 2);
});
