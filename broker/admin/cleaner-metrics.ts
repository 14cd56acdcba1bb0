/**
 * Metrics of the log cleaner (compaction of cleanup.policy=compact topics on the local log), read from its
 * counters at scrape time.
 */
import { Counter, Gauge } from 'prom-client';
import type { LogCleanerMetrics } from '../log/cleaner/log-cleaner.js';
import type { BrokerMetrics } from './broker-metrics.js';

export function registerCleanerMetrics(metrics: BrokerMetrics, cleaner: { readonly metrics: LogCleanerMetrics }): void {
  const registers = [metrics.registry];
  const m = cleaner.metrics;
  const counter = (name: string, help: string, value: () => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(value());
      },
    });
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(value());
      },
    });
  counter('floe_log_cleaner_passes_total', 'Cleans of a compacted partition by the log cleaner.', () => m.passes);
  counter('floe_log_cleaner_failures_total', 'Cleans that failed (retried after log.cleaner.backoff.ms).', () => m.failures);
  counter('floe_log_cleaner_read_bytes_total', 'Bytes of segments the log cleaner read (each cleaned segment is read twice).', () => m.bytesRead);
  counter('floe_log_cleaner_written_bytes_total', 'Bytes of cleaned segments the log cleaner wrote.', () => m.bytesWritten);
  counter('floe_log_cleaner_removed_records_total', 'Records (superseded, expired tombstones, aborted, keyless, emptied markers) the log cleaner removed.', () => m.recordsRemoved);
  gauge('floe_log_cleaner_max_dirty_ratio', 'Highest dirty ratio (dirty bytes / cleanable bytes) among compacted partitions at the cleaner\'s last look.', () => m.maxDirtyRatio);
  gauge('floe_log_cleaner_max_compaction_delay_seconds', 'Longest wait of an uncleaned record among compacted partitions at the cleaner\'s last look.', () => m.maxCompactionDelayMs / 1000);
}
