/**
 * Starts one of this folder's worker modules (`name` without extension) in a worker thread: the built
 * JavaScript when running from dist/, the TypeScript source through tsx's loader when running from source
 * (benchmarks and tools run with tsx).
 */
import { Worker } from 'node:worker_threads';

const FROM_SOURCE = import.meta.url.endsWith('.ts');

export function startWorkerThread(name: 'convert-worker' | 'read-worker', workerData: unknown): Worker {
  const url = new URL(`./${name}.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url);
  if (!FROM_SOURCE) return new Worker(url, { workerData });
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`, { eval: true, workerData });
}
