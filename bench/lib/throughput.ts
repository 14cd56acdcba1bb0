/**
 * Median throughput of a synchronous operation in MB/s: warm up, then `runs` timed runs of at least `minMs`
 * each, counting `bytes` per call. Shared by the protocol micro-benchmarks.
 */
export function measure(fn: () => void, bytes: number, runs = 7, minMs = 200): number {
  for (let i = 0; i < 20; i++) fn(); // warm up
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    let n = 0;
    const start = performance.now();
    let elapsed = 0;
    do {
      fn();
      n++;
      elapsed = performance.now() - start;
    } while (elapsed < minMs);
    rates.push((n * bytes) / 1e6 / (elapsed / 1000));
  }
  rates.sort((a, b) => a - b);
  return rates[Math.floor(rates.length / 2)] ?? 0;
}
