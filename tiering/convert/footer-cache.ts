/**
 * Footers of data files, loaded once per file (`loadFooter`) and cached under a byte budget (`FooterCache`)
 * with the last natively decoded row group of each reader beside them.
 */
import { LRUCache } from 'lru-cache';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { ParquetError } from '../../iceberg/parquet/errors.js';
import { parseFileMetaData } from '../../iceberg/parquet/footer.js';
import { TieringConvertError } from './errors.js';
import { decodeFooterTree, footerTreeCost, type ThriftStructNode } from './parquet-slice.js';
import { nativeLeaves, releaseRows, type NativeLeaves, type NativeRows } from './native-rows.js';
import type { SegmentIndex } from '../offset-index/format.js';
import { ByteBudgetCache } from '../offset-index/cache.js';
import { TypedFileValues } from '../typed/value-rebuild.js';

/**
 * A data file's footer as loaded once per file: the typed Thrift tree (for slicing, the parquet-wasm path),
 * the parsed footer and the leaf columns the native reader decodes (null when the file cannot be read
 * natively: a footer this code does not parse, or columns of other types; the fallback path is used).
 */
export interface LoadedFooter {
  readonly tree: ThriftStructNode;
  readonly native: NativeLeaves | null;
  /** Why `native` is null, for diagnostics. */
  readonly nativeUnavailable?: string;
  /** Set once the native reader reported UNSUPPORTED_TYPE for this file, so later fetches skip it. */
  nativeFailed?: string;
  /** A typed file's value rebuilder (its rows are read through Arrow); null for a key_value file. */
  readonly typed: TypedFileValues | null;
  /** A file with typed keys: their rebuilder; null otherwise. */
  readonly typedKeys: TypedFileValues | null;
}

/** Bytes of natively decoded row groups a footer cache keeps by default (see FooterCache.rowGroups). */
export const DEFAULT_DECODED_ROW_GROUP_BYTES = 16 * 1024 * 1024;

/**
 * A cache of loaded Parquet footers, keyed by data file location, with natively decoded row groups beside it
 * under their own byte budget: the row group each fetch ended in, since a consumer reading forward starts
 * its next fetch there (fetches and row groups are both about 1 MiB), so without it every row group would be
 * range-read and decoded twice. One entry per reader in the middle of a file; the budget bounds how many.
 */
export class FooterCache extends ByteBudgetCache<LoadedFooter> {
  readonly rowGroups: LRUCache<string, NativeRows> | null;
  constructor(maxBytes: number, decodedRowGroupBytes: number) {
    // The cost is charged from the encoded length recorded at load time.
    super({ maxBytes, sizeOf: (t) => footerCosts.get(t) ?? 4096 });
    // An entry holds a reference on its rows (see releaseRows), dropped when it leaves the cache.
    this.rowGroups =
      decodedRowGroupBytes > 0 ? new LRUCache<string, NativeRows>({ maxSize: decodedRowGroupBytes, sizeCalculation: (r) => Math.max(1, r.bytes), dispose: (r) => releaseRows(r) }) : null;
  }
}

export function createFooterCache(maxBytes: number, decodedRowGroupBytes = DEFAULT_DECODED_ROW_GROUP_BYTES): FooterCache {
  return new FooterCache(maxBytes, decodedRowGroupBytes);
}
const footerCosts = new WeakMap<LoadedFooter, number>();

/** The footer of the index's data file: from `cache` when given (loaded into it on a miss), else loaded. */
export async function loadFooter(io: FileIO, location: string, index: SegmentIndex, cache: FooterCache | undefined): Promise<LoadedFooter> {
  const df = index.dataFile!;
  const load = async (): Promise<LoadedFooter> => {
    const meta = await io.getRange(location, df.footerOffset, df.footerLength);
    if (meta.length !== df.footerLength) {
      throw new TieringConvertError('INDEX_MISMATCH', `data file ${location} is shorter than its index says (footer at ${df.footerOffset}+${df.footerLength}); re-tier the segment`);
    }
    const tree = decodeFooterTree(meta);
    let loaded: LoadedFooter;
    try {
      const footer = parseFileMetaData(meta);
      const typed = TypedFileValues.fromFooter(footer.keyValueMetadata);
      const typedKeys = TypedFileValues.keysFromFooter(footer.keyValueMetadata);
      // Typed values and keys are rebuilt from Arrow rows (the parquet-wasm path), not from native leaves.
      loaded =
        typed || typedKeys
          ? { tree, native: null, nativeUnavailable: 'values are rebuilt from typed columns', typed, typedKeys }
          : { tree, native: nativeLeaves(footer), typed: null, typedKeys: null };
    } catch (err) {
      if (!(err instanceof ParquetError)) throw err;
      loaded = { tree, native: null, nativeUnavailable: err.message, typed: null, typedKeys: null };
    }
    // Two parsed forms of the footer: charge both.
    footerCosts.set(loaded, 2 * footerTreeCost(meta.length));
    return loaded;
  };
  return cache ? cache.get(location, load) : load();
}
