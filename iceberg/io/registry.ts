/**
 * Chooses a FileIO backend by the URL scheme of a warehouse location (as iceberg-go's io/registry.go does):
 * `file://` (or Hadoop's `file:/`) -> LocalFileIO rooted at that folder; `s3://`, `s3a://`, `s3n://` -> S3FileIO.
 * Other schemes can be registered (e.g. a test double or `gs://` later) without editing this file.
 */
import { FileIOError, type FileIO } from './file-io.js';
import { LocalFileIO, type LocalFileIOOptions } from './local.js';
import { S3FileIO, type S3FileIOOptions } from './s3.js';

export interface FileIOConfig {
  /** Options for local warehouses; the root is the warehouse location itself. */
  readonly local?: Omit<LocalFileIOOptions, 'root'>;
  /** Options for S3 warehouses (endpoint, region, credentials, multipart, retries, conditionalWrites). */
  readonly s3?: S3FileIOOptions;
}

/** Builds a backend able to serve every location under `warehouse`. */
export type FileIOFactory = (warehouse: string, config: FileIOConfig) => FileIO;

const factories = new Map<string, FileIOFactory>();

/** Registers (or replaces) the backend for a scheme, given without "://", lower case, e.g. "gs". */
export function registerFileIO(scheme: string, factory: FileIOFactory): void {
  if (!/^[a-z][a-z0-9+.-]*$/.test(scheme)) {
    throw new FileIOError('INVALID_LOCATION', `"${scheme}" is not a URL scheme (expected e.g. "s3", without "://")`);
  }
  factories.set(scheme, factory);
}

/** The schemes a warehouse location may use, sorted. */
export function registeredSchemes(): string[] {
  return [...factories.keys()].sort();
}

/** The scheme of a location, lower-cased, or undefined if it has none. */
export function schemeOf(location: string): string | undefined {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(location);
  return m?.[1]?.toLowerCase();
}

/**
 * Opens the backend for a warehouse location. Throws INVALID_LOCATION for a location without a scheme or with
 * one nobody registered, naming the schemes that are available.
 */
export function createFileIO(warehouse: string, config: FileIOConfig = {}): FileIO {
  const scheme = schemeOf(warehouse);
  const factory = scheme === undefined ? undefined : factories.get(scheme);
  if (factory === undefined) {
    throw new FileIOError(
      'INVALID_LOCATION',
      `no FileIO for warehouse "${warehouse}": use one of ${registeredSchemes()
        .map((s) => `${s}://`)
        .join(', ')} (a local folder is file:///absolute/path)`,
    );
  }
  return factory(warehouse, config);
}

registerFileIO('file', (warehouse, config) => new LocalFileIO({ ...config.local, root: warehouse }));
for (const scheme of ['s3', 's3a', 's3n']) {
  registerFileIO(scheme, (_warehouse, config) => new S3FileIO(config.s3));
}
