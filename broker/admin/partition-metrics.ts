/**
 * Per-partition metrics (labels `topic`, `partition`), read when Prometheus scrapes, never on the produce
 * path: the offsets the partition log and tiered storage already hold in memory, and the freshness of the
 * partition's Iceberg table.
 *
 * Freshness of a tiered partition: the records the table does not hold yet are the offsets from
 * max(committed + 1, log start) up to the log end. Their count is the lag in records (Redpanda reports it as
 * pending_translation_lag plus pending_commit_lag, Fluss as tierLag); the age of the oldest of them, now
 * minus its timestamp (the batch header's first timestamp), is the lag in event time (Fluss's freshness).
 * Both are 0 when the table has caught up. That timestamp costs one header read when the committed offset
 * moves, and none while it stays.
 */
import { Gauge } from 'prom-client';
import type { LogManager } from '../log/log-manager.js';
import type { BrokerTiering } from '../tiering/broker-tiering.js';
import type { BrokerMetrics } from './broker-metrics.js';

export interface PartitionMetricsSources {
  readonly logs: LogManager;
  readonly tiering?: BrokerTiering | undefined;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
}

/** One partition's values at a scrape. Table fields are undefined for a partition that is not tiered. */
export interface PartitionReading {
  readonly topic: string;
  readonly partition: number;
  readonly logEndOffset: number;
  readonly highWatermark: number;
  readonly localLogStartOffset: number;
  readonly remoteLogStartOffset: number | undefined;
  readonly committedOffset: number | undefined;
  readonly lagRecords: number | undefined;
  readonly lagSeconds: number | undefined;
}

type Labels = 'topic' | 'partition';

/** Reads every partition's values (the scrape-time half of the partition metrics). */
export class PartitionReader {
  /** By partition: the first uncommitted offset last looked at and its timestamp. */
  private readonly timestamps = new Map<string, { offset: number; timestamp: number | undefined }>();

  constructor(private readonly sources: PartitionMetricsSources) {}

  async read(): Promise<PartitionReading[]> {
    const { logs, tiering } = this.sources;
    const now = (this.sources.now ?? Date.now)();
    const out: PartitionReading[] = [];
    const seen = new Set<string>();
    for (const [tp, plog] of logs.entries()) {
      const key = `${tp.topic}\u0000${tp.partition}`;
      seen.add(key);
      // A single broker: every acknowledged record is replicated, so the high watermark is the log end.
      const logEndOffset = plog.logEndOffset;
      const localLogStartOffset = plog.logStartOffset;
      const base = { topic: tp.topic, partition: tp.partition, logEndOffset, highWatermark: logEndOffset, localLogStartOffset };
      if (tiering === undefined || !tiering.isTiered(tp.topic)) {
        out.push({ ...base, remoteLogStartOffset: undefined, committedOffset: undefined, lagRecords: undefined, lagSeconds: undefined });
        continue;
      }
      const committedOffset = tiering.lastTieredOffset(tp.topic, tp.partition);
      const firstPending = Math.max(committedOffset + 1, localLogStartOffset);
      const lagRecords = Math.max(0, logEndOffset - firstPending);
      let lagSeconds = 0;
      if (lagRecords > 0) {
        let cached = this.timestamps.get(key);
        if (cached?.offset !== firstPending) {
          const timestamp = await plog.firstTimestampFrom(firstPending).catch(() => undefined);
          cached = { offset: firstPending, timestamp };
          this.timestamps.set(key, cached);
        }
        // A timestamp in the future (producer clock ahead) is no lag; none readable (-1, a gap) reads as 0.
        if (cached.timestamp !== undefined && cached.timestamp >= 0) lagSeconds = Math.max(0, now - cached.timestamp) / 1000;
      }
      out.push({ ...base, remoteLogStartOffset: tiering.remoteLogStartOffset(tp.topic, tp.partition), committedOffset, lagRecords, lagSeconds });
    }
    for (const key of this.timestamps.keys()) if (!seen.has(key)) this.timestamps.delete(key);
    return out;
  }
}

/** Registers the per-partition gauges; their values come from one PartitionReader pass per scrape. */
export function registerPartitionMetrics(metrics: BrokerMetrics, sources: PartitionMetricsSources): void {
  const reader = new PartitionReader(sources);
  let readings: PartitionReading[] = [];
  metrics.beforeEachScrape(async () => {
    readings = await reader.read();
  });
  const registers = [metrics.registry];
  const gauge = (name: string, help: string, value: (r: PartitionReading) => number | undefined): Gauge<Labels> =>
    new Gauge<Labels>({
      name,
      help,
      labelNames: ['topic', 'partition'],
      registers,
      collect() {
        this.reset();
        for (const r of readings) {
          const v = value(r);
          if (v !== undefined) this.set({ topic: r.topic, partition: String(r.partition) }, v);
        }
      },
    });
  gauge('floe_partition_log_end_offset', 'The offset the next record appended to the partition gets (Kafka\'s log end offset).', (r) => r.logEndOffset);
  gauge('floe_partition_high_watermark', 'The partition\'s high watermark: consumers read below it (a single broker: the log end offset).', (r) => r.highWatermark);
  gauge('floe_partition_local_log_start_offset', 'The first offset held on local disk.', (r) => r.localLogStartOffset);
  gauge('floe_partition_remote_log_start_offset', 'The first offset held in the Iceberg table (tiered partitions with remote data only).', (r) => r.remoteLogStartOffset);
  gauge('floe_partition_table_committed_offset', 'The highest offset committed to the partition\'s Iceberg table, -1 before the first commit (tiered partitions only).', (r) => r.committedOffset);
  gauge(
    'floe_partition_freshness_lag_records',
    'Offsets in the log that the Iceberg table does not hold yet: log end offset minus max(committed offset + 1, local log start); 0 when caught up. Redpanda reports this as pending_translation_lag plus pending_commit_lag, Fluss as tierLag (tiered partitions only).',
    (r) => r.lagRecords,
  );
  gauge(
    'floe_partition_freshness_lag_seconds',
    'Event-time lag of the Iceberg table: now minus the timestamp of the oldest record the table does not hold yet; 0 when caught up (like Fluss\'s freshness; tiered partitions only).',
    (r) => r.lagSeconds,
  );
}
