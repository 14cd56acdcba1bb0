/**
 * Starts one of this folder's worker modules (`name` without extension) in a worker thread: the built
 * JavaScript when running from dist/, the TypeScript source through tsx's loader when running from source
 * (benchmarks and tools run with tsx).
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';

const FROM_SOURCE = import.meta.url.endsWith('.ts');

export function startWorkerThread(name: 'convert-worker' | 'read-worker', workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  const url = new URL(`./${name}.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url);
  const limits = resourceLimits === undefined ? {} : { resourceLimits };
  if (!FROM_SOURCE) return new Worker(url, { workerData, ...limits });
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`, { eval: true, workerData, ...limits });
}
