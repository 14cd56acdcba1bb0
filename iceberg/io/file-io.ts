/**
 * FileIO: the one small storage interface that Iceberg metadata, data files, the tiering plugin and the
 * segment-to-offset index all go through (named after Iceberg's own FileIO). Backends are chosen by URL
 * scheme: `file://` (a local folder, the default warehouse) and `s3://` (S3 or any S3-compatible store).
 * Every backend passes the same contract test suite (`test/iceberg/io/contract.ts`).
 *
 * Paths are full locations (`file:///var/floe/warehouse/...` or `s3://bucket/key`). Writes are whole-object:
 * an object is either absent or complete, never partially visible.
 */
export interface ObjectInfo {
  readonly location: string;
  readonly size: number;
  /** Opaque version tag used by putIfMatch (an S3 ETag, or a content hash locally). */
  readonly etag: string;
  readonly lastModified: Date;
}

/** What a backend can promise. Callers that need atomic conditional writes must check before relying on them. */
export interface FileIOCapabilities {
  /**
   * True when putIfAbsent and putIfMatch are atomic against concurrent writers (other processes and hosts
   * included, within the backend's documented guarantee). When false, both throw FileIOError 'UNSUPPORTED'
   * rather than pretend; a commit protocol must then keep its pointer elsewhere (e.g. in a catalog).
   */
  readonly conditionalWrites: boolean;
}

/**
 * Object storage. Buffers a read returns belong to the caller: the FileIO keeps no reference to them, so a
 * caller may change or transfer them (remote read workers take them without a copy).
 */
export interface FileIO {
  /** The whole object. Throws FileIOError with code 'NOT_FOUND' if absent. */
  get(location: string): Promise<Buffer>;
  /** `length` bytes from `offset` (a range read). Reading past the end returns the bytes that exist. */
  getRange(location: string, offset: number, length: number): Promise<Buffer>;
  /** Size and version of an object, or undefined if it does not exist. */
  head(location: string): Promise<ObjectInfo | undefined>;
  /** Creates or replaces the object. */
  put(location: string, data: Buffer): Promise<ObjectInfo>;
  /** Creates the object only if nothing exists there; otherwise throws FileIOError 'ALREADY_EXISTS'. */
  putIfAbsent(location: string, data: Buffer): Promise<ObjectInfo>;
  /** Replaces the object only if its etag still matches; otherwise throws FileIOError 'PRECONDITION_FAILED'. */
  putIfMatch(location: string, data: Buffer, etag: string): Promise<ObjectInfo>;
  /** Every object whose location starts with `prefix`, in lexicographic order of location. */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  /** Deletes the object; deleting an absent object is not an error. */
  delete(location: string): Promise<void>;
  /** Releases connections and handles. */
  close(): Promise<void>;
  /**
   * Capabilities for objects at `location` (a store may differ per bucket). Optional: a backend that lacks
   * it is assumed to support conditional writes only if its putIfAbsent/putIfMatch do not throw 'UNSUPPORTED'.
   */
  capabilities?(location: string): Promise<FileIOCapabilities>;
}

export type FileIOErrorCode =
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'PRECONDITION_FAILED'
  | 'INVALID_LOCATION'
  | 'UNSUPPORTED'
  | 'IO_ERROR';

export class FileIOError extends Error {
  constructor(
    readonly code: FileIOErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'FileIOError';
  }
}
