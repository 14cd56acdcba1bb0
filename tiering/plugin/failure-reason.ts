/**
 * Why a tiering step failed, as a short label for metrics and logs (the broker knows no catalog or FileIO
 * errors): the catalog is unreachable (an external catalog down, a timeout, a 5xx), the catalog refused the
 * request (authorization, a conflict it keeps raising), the table is not Floe's (never taken over), the
 * object store failed, or something else.
 */
import { CatalogError } from '../../iceberg/catalog/catalog.js';
import { FileIOError } from '../../iceberg/io/file-io.js';
import { CommitConflictError } from '../../iceberg/table-metadata-builder.js';
import { TieringError } from './api.js';

export type FailureReason = 'catalog_unreachable' | 'catalog_refused' | 'foreign_table' | 'storage' | 'other';

export function failureReason(err: unknown): FailureReason {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof CatalogError) return e.code === 'SERVICE_ERROR' ? 'catalog_unreachable' : 'catalog_refused';
    if (e instanceof CommitConflictError) return 'catalog_refused';
    if (e instanceof TieringError && e.code === 'FOREIGN_TABLE') return 'foreign_table';
    if (e instanceof FileIOError || (e instanceof TieringError && e.code === 'UNUSABLE_LOCATION')) return 'storage';
  }
  return 'other';
}
