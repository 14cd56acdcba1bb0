/**
 * The upsert table's deletes on format v3: one deletion vector per data file (iceberg/deletion-vectors.ts),
 * holding every row of the file that is not a current row. A v3 table may have at most one per data file,
 * so a file whose rows changed gets a new vector (the complement of its live rows) in place of its old one;
 * a file left with no live row leaves the table with its vector.
 */
import type { DataFile } from '../../../iceberg/data-file.js';
import { writeDeletionVector } from '../../../iceberg/deletion-vectors.js';
import type { FileIO } from '../../../iceberg/io/file-io.js';
import type { SnapshotUpdate } from '../../../iceberg/transaction.js';
import type { LatestKeys } from './latest-keys.js';

export interface VectorTarget {
  readonly io: FileIO;
  /** Where a new vector of `dataFile` goes (a fresh name each time: the old one stays for older snapshots). */
  location(dataFile: string): string;
  /** The data file's entry in the topic table. */
  dataFile(path: string): Promise<DataFile>;
  readonly update: SnapshotUpdate;
  /** The table's data files of the partition, and each one's vector: updated in place. */
  readonly files: Set<string>;
  readonly vectors: Map<string, string>;
}

/** Rewrites the vectors of `touched` from the live rows in `keys`; returns the rows the new vectors hide. */
export async function rewriteVectors(target: VectorTarget, keys: LatestKeys, touched: Iterable<string>): Promise<number> {
  let hidden = 0;
  for (const path of new Set(touched)) {
    const live = keys.liveIn(path);
    const old = target.vectors.get(path);
    if (old !== undefined) {
      target.update.deleteFile(old);
      target.vectors.delete(path);
    }
    if (live.size === 0) {
      if (target.files.has(path)) {
        target.update.deleteFile(path);
        target.files.delete(path);
      }
      continue;
    }
    const f = await target.dataFile(path);
    if (!target.files.has(path)) {
      target.update.addFile(f);
      target.files.add(path);
    }
    const rows = Number(f.record_count);
    if (live.size === rows) continue;
    const dead: number[] = [];
    for (let r = 0; r < rows; r++) if (!live.has(r)) dead.push(r);
    const dv = await writeDeletionVector(target.io, target.location(path), path, dead, { partition: f.partition });
    target.update.addDeleteFile(dv);
    target.vectors.set(path, dv.file_path);
    hidden += dead.length;
  }
  return hidden;
}
