/**
 * Time for the group coordinator: the current time and one-shot timers. The coordinator never reads the
 * wall clock or calls setTimeout directly, so tests drive session, rebalance and retention timeouts with a
 * manual clock instead of sleeping.
 */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  now(): number;
  /** Runs `fn` once after `ms` milliseconds unless cancelled first. */
  schedule(ms: number, fn: () => void): Timer;
}

/** The process clock. Timers are unref'd: a pending session timeout never keeps the process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  schedule(ms, fn) {
    const handle = setTimeout(fn, Math.max(0, ms));
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};
