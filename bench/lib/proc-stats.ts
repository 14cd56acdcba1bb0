/**
 * What a broker process cost, read from /proc (Linux): CPU seconds (user + system, every thread) and the
 * peak resident set size. Both brokers are measured the same way, whatever their runtime.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** The fields of a /proc stat file from the state on (proc(5) field n is at index n - 3). */
function statFields(path: string): string[] {
  const stat = readFileSync(path, 'utf8');
  // Fields after the command (which may hold spaces) start after the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime plus stime of stat fields, in seconds. */
const cpuOf = (f: readonly string[]): number => (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;

/** User plus system CPU seconds the process used so far. */
export function cpuSeconds(pid: number | 'self'): number {
  return cpuOf(statFields(`/proc/${pid}/stat`));
}

/**
 * User plus system CPU seconds one thread of the process used so far (Linux): `tid` = `pid` is the main
 * thread, which for Node is the one running JavaScript's event loop.
 */
export function threadCpuSeconds(pid: number, tid = pid): number {
  return cpuOf(statFields(`/proc/${pid}/task/${tid}/stat`));
}

/**
 * CPU seconds of every thread of the process so far, by thread id, with the thread's name and nice value
 * (Linux: per thread). Node names all its threads after the process; Floe's conversion workers are the
 * threads with a nice value above the main thread's (`iceberg.convert.workers.nice`).
 */
export function threadsCpuSeconds(pid: number): Map<number, { readonly name: string; readonly seconds: number; readonly nice: number }> {
  const out = new Map<number, { name: string; seconds: number; nice: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    try {
      const f = statFields(`/proc/${pid}/task/${tid}/stat`);
      out.set(tid, { name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), seconds: cpuOf(f), nice: Number(f[16]) });
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
