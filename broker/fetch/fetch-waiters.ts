/**
 * Long polling for Fetch: a request that has less than minBytes waits here until one of its partitions
 * grows, its maxWaitMs runs out, or the broker shuts down, whichever comes first. One waiter per request,
 * registered on each of its partitions; an append wakes exactly the waiters of that partition. No polling.
 */
export type WakeReason = 'append' | 'timeout' | 'shutdown' | 'aborted';

interface Waiter {
  readonly keys: readonly object[];
  readonly resolve: (reason: WakeReason) => void;
  timer: NodeJS.Timeout | undefined;
  done: boolean;
}

export class FetchWaiters {
  private readonly byKey = new Map<object, Set<Waiter>>();
  private closed = false;

  /** Number of requests currently waiting (for metrics and tests). */
  get waiting(): number {
    const all = new Set<Waiter>();
    for (const set of this.byKey.values()) for (const w of set) all.add(w);
    return all.size;
  }

  /**
   * Resolves when any of `keys` (partition logs) is notified, after `timeoutMs`, on close(), or when
   * `signal` aborts. Resolves immediately with 'shutdown' once closed.
   */
  wait(keys: readonly object[], timeoutMs: number, signal?: AbortSignal): Promise<WakeReason> {
    if (this.closed) return Promise.resolve('shutdown');
    if (signal?.aborted) return Promise.resolve('aborted');
    return new Promise<WakeReason>((resolve) => {
      const waiter: Waiter = {
        keys,
        timer: undefined,
        done: false,
        resolve: (reason) => {
          if (waiter.done) return;
          waiter.done = true;
          if (waiter.timer !== undefined) clearTimeout(waiter.timer);
          signal?.removeEventListener('abort', onAbort);
          for (const key of keys) {
            const set = this.byKey.get(key);
            set?.delete(waiter);
            if (set?.size === 0) this.byKey.delete(key);
          }
          resolve(reason);
        },
      };
      const onAbort = () => waiter.resolve('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      for (const key of keys) {
        let set = this.byKey.get(key);
        if (set === undefined) this.byKey.set(key, (set = new Set()));
        set.add(waiter);
      }
      waiter.timer = setTimeout(() => waiter.resolve('timeout'), Math.max(0, timeoutMs));
    });
  }

  /** Wakes every request waiting on `key`. */
  notify(key: object): void {
    const set = this.byKey.get(key);
    if (set === undefined) return;
    for (const w of [...set]) w.resolve('append');
  }

  /** Wakes every waiter (they answer with what they have) and makes later waits return at once. */
  close(): void {
    this.closed = true;
    const all = new Set<Waiter>();
    for (const set of this.byKey.values()) for (const w of set) all.add(w);
    for (const w of all) w.resolve('shutdown');
  }
}
