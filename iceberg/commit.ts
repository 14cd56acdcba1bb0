/**
 * Optimistic concurrency for table commits: load the current metadata, build `{ requirements, updates }`
 * against it, ask the catalog to apply them atomically; when the catalog answers `CommitConflictError`
 * (another writer moved the table first), wait with jittered exponential backoff, reload, rebuild and try
 * again. Errors other than conflicts are final.
 */
import { backoffDelay, sleep, type BackoffOptions } from './io/retry.js';
import { CommitConflictError, type TableRequirement, type TableUpdate } from './table-metadata-builder.js';
import { IcebergError } from './types.js';
import type { Catalog, CommitTableResult, LoadTableResult, TableIdentifier } from './catalog/catalog.js';

export interface CommitRetryOptions extends Partial<BackoffOptions> {
  /** Attempts, the first included. Default 100: a herd of 20 writers on one table needs up to ~20 rounds. */
  readonly maxAttempts?: number;
  /** Uniform random source in [0, 1) for the jitter. */
  readonly random?: () => number;
}

export interface Commitable {
  readonly requirements: readonly TableRequirement[];
  readonly updates: readonly TableUpdate[];
}

export interface CommitOutcome<P extends Commitable> extends CommitTableResult {
  readonly prepared: P;
  /** Attempts used, the successful one included. */
  readonly attempts: number;
}

/**
 * Commits what `build(base)` returns, rebuilding against the refreshed table after each conflict.
 * `onConflict` is told about each discarded attempt (to delete files written only for it).
 */
export async function commitWithRetry<P extends Commitable>(
  catalog: Catalog,
  id: TableIdentifier,
  build: (base: LoadTableResult) => Promise<P>,
  options: CommitRetryOptions & { onConflict?: (discarded: P, err: CommitConflictError) => Promise<void> } = {},
): Promise<CommitOutcome<P>> {
  const maxAttempts = options.maxAttempts ?? 100;
  const backoff: BackoffOptions = { baseDelayMs: options.baseDelayMs ?? 10, maxDelayMs: options.maxDelayMs ?? 1_000 };
  let last: CommitConflictError | undefined;
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    if (attempt > 0) await sleep(backoffDelay(attempt - 1, backoff, options.random));
    const base = await catalog.loadTable(id);
    const prepared = await build(base);
    try {
      const result = await catalog.commitTable(id, prepared.requirements, prepared.updates);
      return { ...result, prepared, attempts: attempt + 1 };
    } catch (err) {
      if (!(err instanceof CommitConflictError)) throw err;
      last = err;
      await options.onConflict?.(prepared, err);
    }
  }
  throw new IcebergError('COMMIT_CONFLICT', `Gave up after ${maxAttempts} attempts: the table kept changing underneath this commit (last: ${last?.message ?? 'none'}); retry later or reduce concurrent writers`, { cause: last });
}
