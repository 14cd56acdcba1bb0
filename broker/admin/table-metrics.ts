/**
 * Per-table metrics (label `topic`; `floe_table_info` maps it to the table's name), read at scrape time
 * from each tiered topic's table metadata through the tiering plugin (a manifest list read once per new
 * snapshot; see tiering/plugin/table-stats.ts). The commit counters of the same tables are counted as they
 * happen, in broker-metrics.ts.
 */
import { Gauge } from 'prom-client';
import type { TableStats } from '../../tiering/plugin/api.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { BrokerTiering } from '../tiering/broker-tiering.js';
import type { Logger } from '../logger.js';
import { topicGauge, type BrokerMetrics } from './broker-metrics.js';
import type { QualitySignals, StatusHistory } from './status-history.js';

export interface TableMetricsSources {
  readonly metadata: MetadataStore;
  readonly tiering: BrokerTiering;
  readonly log: Logger;
}

/** The tables of every tiered topic, read for one scrape; a table that cannot be read is left out. */
export async function readTables(sources: TableMetricsSources): Promise<Map<string, TableStats>> {
  const out = new Map<string, TableStats>();
  for (const { name } of sources.metadata.listTopics()) {
    if (!sources.tiering.isTiered(name)) continue;
    try {
      const stats = await sources.tiering.tableStats(name);
      if (stats !== undefined) out.set(name, stats);
    } catch (err) {
      sources.log.warn('could not read table metadata for metrics', { err, topic: name });
    }
  }
  return out;
}

export function registerTableMetrics(metrics: BrokerMetrics, sources: TableMetricsSources): void {
  let tables = new Map<string, TableStats>();
  metrics.beforeEachScrape(async () => {
    tables = await readTables(sources);
  });
  const registers = [metrics.registry];
  new Gauge({
    name: 'floe_table_info',
    help: 'Always 1: names the Iceberg table (namespace.name) of each tiered topic.',
    labelNames: ['topic', 'table'],
    registers,
    collect() {
      this.reset();
      for (const [topic, s] of tables) this.set({ topic, table: s.table }, 1);
    },
  });
  const gauge = (name: string, help: string, value: (s: TableStats) => number | undefined) => topicGauge(registers, name, help, () => tables, value);
  new Gauge({
    name: 'floe_table_behind_seconds',
    help: 'Seconds since tiering of the topic\'s table began failing without a commit landing since (the table is behind its log), by reason: catalog_unreachable, catalog_refused, foreign_table (a table Floe did not make, never taken over), storage, other. Absent while the table keeps up.',
    labelNames: ['topic', 'reason'],
    registers,
    collect() {
      this.reset();
      const now = Date.now();
      for (const [topic, b] of sources.tiering.tablesBehind()) this.set({ topic, reason: b.reason }, Math.max(0, (now - b.sinceMs) / 1000));
    },
  });
  gauge('floe_table_data_files', 'Live data files in the current snapshot of the topic\'s table.', (s) => s.dataFiles);
  gauge('floe_table_data_file_bytes', 'Bytes of the live data files in the current snapshot.', (s) => s.dataFileBytes);
  gauge('floe_table_data_file_average_bytes', 'Average size of a live data file in the current snapshot (small files slow readers down; compaction raises it).', (s) => (s.dataFiles > 0 ? s.dataFileBytes / s.dataFiles : 0));
  gauge('floe_table_delete_files', 'Live delete files (position deletes) in the current snapshot.', (s) => s.deleteFiles);
  gauge('floe_table_records', 'Rows in the live data files of the current snapshot (before deletes).', (s) => s.records);
  gauge('floe_table_snapshots', 'Snapshots kept in the table metadata.', (s) => s.snapshots);
  gauge('floe_table_manifests', 'Manifests listed by the current snapshot\'s manifest list.', (s) => s.manifests);
  gauge('floe_table_last_commit_timestamp_seconds', 'When the current snapshot was committed, in seconds since the epoch (tables with a snapshot only).', (s) => (s.lastCommitMs >= 0 ? s.lastCommitMs / 1000 : undefined));
}

/**
 * The data-quality signals of each topic (status-history.ts) as gauges, read from the in-memory history
 * at scrape time: records per minute and its baseline, null key and value shares, and a flag per signal.
 */
export function registerQualityMetrics(metrics: BrokerMetrics, history: StatusHistory): void {
  const registers = [metrics.registry];
  const gauge = (name: string, help: string, value: (q: QualitySignals) => number | undefined) =>
    topicGauge(registers, name, help, () => history.topics().map((topic) => [topic, history.quality(topic)] as const), value);
  gauge('floe_topic_records_per_minute', 'Records appended to the topic per minute over the last minute (sampled every 10 s).', (q) => q.recordsPerMinute);
  gauge('floe_topic_records_per_minute_baseline', 'The median records per minute of the topic over the last hour (after a minute of samples).', (q) => q.recordsPerMinuteBaseline);
  gauge('floe_table_null_key_ratio', 'Share of rows with a null key among the rows converted into the table in the last minutes.', (q) => q.nullKeyShare);
  gauge('floe_table_null_key_ratio_baseline', 'Share of rows with a null key among the rows converted over the last hour.', (q) => q.nullKeyShareBaseline);
  gauge('floe_table_null_value_ratio', 'Share of rows with a null value among the rows converted into the table in the last minutes.', (q) => q.nullValueShare);
  gauge('floe_table_null_value_ratio_baseline', 'Share of rows with a null value among the rows converted over the last hour.', (q) => q.nullValueShareBaseline);
  gauge('floe_table_dead_letter_ratio', 'Typed topics: share of rows converted in the last minutes that could not be typed (dead letters).', (q) => q.deadLetterShare);
  gauge('floe_table_dead_letter_ratio_baseline', 'Typed topics: share of dead letters among the rows converted over the last hour.', (q) => q.deadLetterShareBaseline);
  gauge('floe_table_raw_kept_ratio', 'Typed topics: share of rows converted in the last minutes whose exact bytes are kept raw beside their typed columns.', (q) => q.rawKeptShare);
  gauge('floe_table_raw_kept_ratio_baseline', 'Typed topics: share of rows kept raw among the rows converted over the last hour.', (q) => q.rawKeptShareBaseline);
  new Gauge({
    name: 'floe_table_quality_flag',
    help: '1 when a data-quality signal of the topic is outside its last hour\'s baseline (signal: records_per_minute, null_keys, null_values, and for typed topics dead_letters, raw_kept), else 0.',
    labelNames: ['topic', 'signal'],
    registers,
    collect() {
      this.reset();
      for (const topic of history.topics()) {
        const q = history.quality(topic);
        this.set({ topic, signal: 'records_per_minute' }, q.rateFlag ? 1 : 0);
        this.set({ topic, signal: 'null_keys' }, q.nullKeyFlag ? 1 : 0);
        this.set({ topic, signal: 'null_values' }, q.nullValueFlag ? 1 : 0);
        if (q.deadLetterShareBaseline !== undefined) {
          this.set({ topic, signal: 'dead_letters' }, q.deadLetterFlag ? 1 : 0);
          this.set({ topic, signal: 'raw_kept' }, q.rawKeptFlag ? 1 : 0);
        }
      }
    },
  });
}
