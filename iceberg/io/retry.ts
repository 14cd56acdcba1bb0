/**
 * Exponential backoff with full jitter (the AWS architecture-blog scheme the SDK's "standard" retry mode uses):
 * the delay before retry n is uniform in [0, min(maxDelayMs, baseDelayMs * 2^n)). Full jitter spreads a herd of
 * writers that failed together, so they don't collide again on the same beat.
 *
 * The FileIO backends use this only for what nobody else retries: waiting for a local lock, and S3's
 * `409 ConditionalRequestConflict`, which AWS says to retry but the SDK treats as final. Throttling, 5xx and
 * network errors on S3 are left to the SDK's own retry strategy, so the two never stack.
 */
export interface BackoffOptions {
  /** Upper bound of the first delay. */
  readonly baseDelayMs: number;
  /** No delay is ever longer than this. */
  readonly maxDelayMs: number;
}

export interface RetryOptions extends BackoffOptions {
  /** Total attempts, the first one included (>= 1). */
  readonly maxAttempts: number;
  /** Whether a failure is worth another attempt. Non-retryable errors are thrown at once. */
  readonly retryable: (err: unknown) => boolean;
  /** Uniform random source in [0, 1); injectable so tests are deterministic. */
  readonly random?: () => number;
}

/** The delay before retry number `retry` (0 for the first retry). */
export function backoffDelay(retry: number, opts: BackoffOptions, random: () => number = Math.random): number {
  const cap = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** Math.min(retry, 30));
  return Math.floor(random() * cap);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs `fn` until it succeeds, a non-retryable error occurs, or `maxAttempts` is spent; the last error is
 * rethrown unchanged. `fn` receives the 0-based attempt number.
 */
export async function retry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  if (!Number.isInteger(opts.maxAttempts) || opts.maxAttempts < 1) {
    throw new RangeError(`maxAttempts must be an integer >= 1, got ${opts.maxAttempts}`);
  }
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt + 1 >= opts.maxAttempts || !opts.retryable(err)) throw err;
      await sleep(backoffDelay(attempt, opts, opts.random));
    }
  }
}
