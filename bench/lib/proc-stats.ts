/**
 * What a broker process cost, read from /proc (Linux): CPU seconds (user + system, every thread) and the
 * peak resident set size. Both brokers are measured the same way, whatever their runtime.
 */
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** User plus system CPU seconds the process used so far. */
export function cpuSeconds(pid: number | 'self'): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command (which may hold spaces) start after the last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
}

/**
 * The process's peak resident set size so far, in bytes: Linux's VmHWM, which starts afresh at exec
 * (getrusage's maxRSS is carried over from a forking parent).
 */
export function peakRssBytes(pid: number | 'self'): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmHWM in /proc/${pid}/status: this benchmark needs Linux`);
  return Number(m[1]) * 1024;
}
