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
