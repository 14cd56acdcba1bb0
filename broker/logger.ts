/**
 * Structured logs: one JSON object per line on stdout, `{"ts","level","logger","msg",...fields}`, filtered by
 * the `log.level` setting. Child loggers add fixed fields (`logger.child({ topic })`).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
  enabled(level: LogLevel): boolean;
}

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => process.stdout.write(line),
  base: LogFields = {},
): Logger {
  const min = RANK[level];
  const emit = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields) => {
    if (RANK[lvl] < min) return;
    write(JSON.stringify({ ts: new Date().toISOString(), level: lvl, ...base, msg, ...fields }, replacer) + '\n');
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (fields) => createLogger(level, write, { ...base, ...fields }),
    enabled: (lvl) => RANK[lvl] >= min,
  };
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message, code: (value as { code?: unknown }).code };
  return value;
}

export interface RateLimitOptions {
  /** Lines of one message that may go out at once. */
  readonly burst: number;
  /** Lines per second of one message after the burst. */
  readonly perSecond: number;
  /** How long after the first suppressed line a summary of the suppressed ones is written. */
  readonly summaryAfterMs: number;
}

const DEFAULT_RATE_LIMIT: RateLimitOptions = { burst: 10, perSecond: 1, summaryAfterMs: 10_000 };

/**
 * Warnings caused by what clients send (garbage frames, requests that cannot be decoded): a flood of bad
 * input must not become a flood of log lines. Each message has a token bucket; lines beyond it are counted,
 * and the count goes out with the next line of that message (`suppressed`) or in a summary line at most
 * `summaryAfterMs` after the first suppressed one.
 */
export class RateLimitedLog {
  private readonly buckets = new Map<string, { tokens: number; atMs: number; suppressed: number; timer: NodeJS.Timeout | undefined }>();
  private readonly options: RateLimitOptions;

  constructor(
    private readonly log: Logger,
    options: Partial<RateLimitOptions> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.options = { ...DEFAULT_RATE_LIMIT, ...options };
  }

  /** Lines not written since start (for tests and metrics). */
  suppressedTotal = 0;

  warn(msg: string, fields?: LogFields): void {
    const { burst, perSecond, summaryAfterMs } = this.options;
    const now = this.now();
    let b = this.buckets.get(msg);
    if (b === undefined) {
      b = { tokens: burst, atMs: now, suppressed: 0, timer: undefined };
      this.buckets.set(msg, b);
    }
    b.tokens = Math.min(burst, b.tokens + ((now - b.atMs) / 1000) * perSecond);
    b.atMs = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      const suppressed = b.suppressed;
      b.suppressed = 0;
      if (b.timer !== undefined) clearTimeout(b.timer);
      b.timer = undefined;
      this.log.warn(msg, suppressed > 0 ? { ...fields, suppressed } : fields);
      return;
    }
    b.suppressed++;
    this.suppressedTotal++;
    if (b.timer === undefined) {
      const bucket = b;
      bucket.timer = setTimeout(() => {
        bucket.timer = undefined;
        if (bucket.suppressed === 0) return;
        this.log.warn(`${msg} (repeated; similar lines were not logged)`, { suppressed: bucket.suppressed, windowMs: summaryAfterMs });
        bucket.suppressed = 0;
      }, summaryAfterMs);
      bucket.timer.unref();
    }
  }
}
