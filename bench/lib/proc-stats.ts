/**
 * What a broker process cost, read from /proc (Linux): CPU seconds (user + system, every thread) and the
 * peak resident set size. Both brokers are measured the same way, whatever their runtime.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** User plus system CPU seconds the process used so far. */
export function cpuSeconds(pid: number | 'self'): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command (which may hold spaces) start after the last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
}

/**
 * User plus system CPU seconds one thread of the process used so far (Linux): `tid` = `pid` is the main
 * thread, which for Node is the one running JavaScript's event loop.
 */
export function threadCpuSeconds(pid: number, tid = pid): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
}

/** CPU seconds of every thread of the process so far, by thread id, with the thread's name (Linux). */
export function threadsCpuSeconds(pid: number): Map<number, { readonly name: string; readonly seconds: number }> {
  const out = new Map<number, { name: string; seconds: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    try {
      out.set(tid, { name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), seconds: threadCpuSeconds(pid, tid) });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
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

/** Dirty page-cache pages now and the kernel's background writeback threshold, from /proc/vmstat (Linux). */
export function dirtyPages(): { readonly dirty: number; readonly backgroundThreshold: number } {
  const text = readFileSync('/proc/vmstat', 'utf8');
  const field = (name: string): number => {
    const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
    if (!m) throw new Error(`no ${name} in /proc/vmstat: this benchmark needs Linux`);
    return Number(m[1]);
  };
  return { dirty: field('nr_dirty'), backgroundThreshold: field('nr_dirty_background_threshold') };
}

/**
 * Samples dirty pages every `everyMs` until stopped; `stop` returns the peak as a share of the background
 * writeback threshold (above 1, the kernel writes back while the benchmark runs, and writes slow down).
 */
export function watchDirtyPages(everyMs = 100): { stop(): number } {
  let peak = 0;
  const sample = (): void => {
    const d = dirtyPages();
    peak = Math.max(peak, d.dirty / d.backgroundThreshold);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}
