/**
 * The broker's Prometheus metrics: one prom-client registry per broker, rendered by `/metrics` in the text
 * exposition format (version 0.0.4). Names follow Prometheus' conventions: the `floe_` prefix, base units
 * (`_seconds`, `_bytes`), `_total` on counters.
 *
 * Cost: the request path pays one addition and one histogram observation per request (into a child kept per
 * API key: a bucket search and three additions, see bucket-histogram.ts), the partition logs one observation
 * per append and one per write, the socket path one addition per chunk; tiering pays one call per copied
 * segment or commit. Everything else (partitions, tables, caches, trailing bytes) is read when
 * Prometheus scrapes: `render()` first runs the scrape-time readers (which may read segment headers and
 * table metadata), then the registry asks each family for its values.
 *
 * Process and Node.js metrics (`process_*`, `nodejs_*`: CPU, memory, heap, GC, event-loop delay from
 * perf_hooks.monitorEventLoopDelay) are prom-client's defaults.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { API_SPECS } from '../../protocol/messages/index.js';
import type { SegmentRowCounts, TieringObserver } from '../../tiering/plugin/api.js';
import type { LogObserver } from '../log/log-observer.js';
import type { RequestObserver } from '../router.js';
import type { TrafficCounters } from '../server/connection.js';
import { BucketHistogram, type HistogramChild } from './bucket-histogram.js';

/** Latency buckets for Kafka requests: 0.5 ms (a cached metadata answer) to 30 s (a long-poll Fetch). */
export const REQUEST_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Buckets for the partition logs' waits, writes and fsyncs: 50 µs to 5 s. */
export const LOG_DURATION_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];
/** Buckets for tiering copies and commits: 10 ms to 5 min. */
export const TIERING_DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** One API's request figures, counted as plain numbers on the request path and read at scrape time. */
interface ApiChildren {
  readonly api: string;
  requests: number;
  failures: number;
  readonly duration: HistogramChild;
}

/** The name of a Kafka API key (`Produce`), `api_<key>` for one this broker does not declare, `unknown` for a frame that did not decode. */
export function apiName(apiKey: number): string {
  if (apiKey < 0) return 'unknown';
  return API_SPECS.get(apiKey)?.name ?? `api_${apiKey}`;
}

export class BrokerMetrics implements RequestObserver, TieringObserver, LogObserver {
  readonly registry = new Registry();
  /** Bytes read from and written to Kafka client sockets (the connections add to it). */
  readonly traffic: TrafficCounters = { bytesIn: 0, bytesOut: 0 };
  private readonly perApi = new Map<number, ApiChildren>();
  /**
   * Rows converted into each topic's table since start, with null keys and null values (counted from the
   * data files' column metrics, one addition per copied segment); the data-quality signals read them.
   */
  readonly converted = new Map<string, SegmentRowCounts>();
  private readonly beforeScrape: (() => Promise<void>)[] = [];
  private readonly duration: BucketHistogram<'api'>;
  private readonly segmentsCopied: Counter<'topic'>;
  private readonly bytesCopied: Counter<'topic'>;
  private readonly copyFailures: Counter<'topic'>;
  private readonly copyDuration: Histogram;
  private readonly commits: Counter<'topic'>;
  private readonly commitFailures: Counter<'topic'>;
  private readonly typedRecords: Counter<'topic' | 'bytes'>;
  private readonly deadLetters: Counter<'topic' | 'reason'>;
  private readonly commitRetries: Counter<'topic'>;
  private readonly upsertSyncs: Counter<'topic' | 'kind'>;
  private readonly upsertRows: Counter<'topic' | 'rows'>;
  private readonly upsertSeconds: Counter<'topic'>;
  private readonly commitDuration: Histogram;
  private readonly appendWait: HistogramChild;
  private readonly writeDuration: HistogramChild;
  private writtenBytes = 0;
  private inlineWrites = 0;
  private readonly flushDuration: HistogramChild;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const perApi = this.perApi;
    new Counter({
      name: 'floe_requests_total',
      help: 'Kafka requests answered, by API (ApiVersions included; a request that closed its connection counts in floe_request_failures_total instead).',
      labelNames: ['api'],
      registers,
      collect() {
        this.reset();
        for (const c of perApi.values()) if (c.requests > 0) this.inc({ api: c.api }, c.requests);
      },
    });
    new Counter({
      name: 'floe_request_failures_total',
      help: 'Kafka requests that failed and closed their connection (unparsable, unsupported version, handler error), by API.',
      labelNames: ['api'],
      registers,
      collect() {
        this.reset();
        for (const c of perApi.values()) if (c.failures > 0) this.inc({ api: c.api }, c.failures);
      },
    });
    this.duration = new BucketHistogram('floe_request_duration_seconds', 'Time from a decoded Kafka request to its encoded response, by API (a Fetch long poll counts its wait).', REQUEST_DURATION_BUCKETS, ['api'], registers);
    const logHistogram = (name: string, help: string): HistogramChild => new BucketHistogram(name, help, LOG_DURATION_BUCKETS, [], registers).labels({});
    this.appendWait = logHistogram(
      'floe_log_append_wait_seconds',
      'Time a partition-log append waited from the call until its write started: behind earlier writes of its partition and rolls (Kafka pays this on the partition lock).',
    );
    this.writeDuration = logHistogram(
      'floe_log_write_duration_seconds',
      'Time of one write of appended batches into a log segment, from the call to its completion seen on the broker\'s thread (the thread pool\'s queue and the event loop\'s delay included); appends queued meanwhile are written together.',
    );
    this.flushDuration = logHistogram(
      'floe_log_flush_duration_seconds',
      'Time of one fsync of partition-log data: a segment sealed on a roll (with its indexes), or a flush by flush.messages or flush.ms (Kafka: LogFlushRateAndTimeMs); not the fsyncs of a clean shutdown.',
    );
    const written = (): number => this.writtenBytes;
    new Counter({
      name: 'floe_log_written_bytes_total',
      help: 'Bytes of record batches appended to partition logs.',
      registers,
      collect() {
        this.reset();
        this.inc(written());
      },
    });
    const inlineWrites = (): number => this.inlineWrites;
    new Counter({
      name: 'floe_log_inline_writes_total',
      help: 'Writes into log segments made on the broker\'s thread (log.append.inline.max.bytes); the others went to the thread pool. Every write is counted by floe_log_write_duration_seconds_count.',
      registers,
      collect() {
        this.reset();
        this.inc(inlineWrites());
      },
    });
    const traffic = this.traffic;
    new Counter({
      name: 'floe_network_received_bytes_total',
      help: 'Bytes received from Kafka clients (request frames with their size prefix).',
      registers,
      collect() {
        this.reset();
        this.inc(traffic.bytesIn);
      },
    });
    new Counter({
      name: 'floe_network_sent_bytes_total',
      help: 'Bytes of responses written to Kafka clients.',
      registers,
      collect() {
        this.reset();
        this.inc(traffic.bytesOut);
      },
    });
    this.upsertSyncs = new Counter({ name: 'floe_upsert_partition_syncs_total', help: 'Partitions of a _latest upsert table brought up to its topic table, by topic and kind: append (new segments applied) or rebuild (the history changed: compaction, retention, settlement; or deletes piled up).', labelNames: ['topic', 'kind'], registers });
    this.upsertRows = new Counter({ name: 'floe_upsert_rows_total', help: 'Rows of the topic table the _latest upsert table read (rows="read") and the rows its new delete files hide (rows="hidden"), by topic.', labelNames: ['topic', 'rows'], registers });
    this.upsertSeconds = new Counter({ name: 'floe_upsert_sync_seconds_total', help: 'Time spent bringing _latest upsert tables up to their topic tables (reading rows, writing deletes, committing), by topic.', labelNames: ['topic'], registers });
    this.segmentsCopied = new Counter({ name: 'floe_tiering_copied_segments_total', help: 'Closed log segments converted to Parquet and uploaded to the warehouse, by topic.', labelNames: ['topic'], registers });
    this.bytesCopied = new Counter({ name: 'floe_tiering_copied_bytes_total', help: 'Bytes of local log segments converted and uploaded (the segment sizes, not the Parquet sizes), by topic.', labelNames: ['topic'], registers });
    this.copyFailures = new Counter({ name: 'floe_tiering_copy_failures_total', help: 'Segment copies that failed and will be retried, by topic.', labelNames: ['topic'], registers });
    this.copyDuration = new Histogram({ name: 'floe_tiering_copy_duration_seconds', help: 'Time to convert and upload one closed segment.', buckets: TIERING_DURATION_BUCKETS, registers });
    this.commits = new Counter({ name: 'floe_table_commits_total', help: 'Snapshots committed to the topic\'s Iceberg table by tiering, by topic.', labelNames: ['topic'], registers });
    this.typedRecords = new Counter({
      name: 'floe_table_typed_records_total',
      help: 'Records of schema-mode topics converted into typed columns, by topic and whether their exact bytes are rebuilt from the columns (rebuilt) or kept raw beside them (raw_kept). The raw-kept fraction is raw_kept / (rebuilt + raw_kept).',
      labelNames: ['topic', 'bytes'],
      registers,
    });
    this.deadLetters = new Counter({
      name: 'floe_table_dead_letter_records_total',
      help: 'Records of schema-mode topics that could not be typed, by topic and reason (MISSING_PREFIX, UNKNOWN_SCHEMA, UNSUPPORTED_SCHEMA, INCOMPATIBLE_SCHEMA, CORRUPT_PAYLOAD; DROPPED when iceberg.invalid.record.action=drop). Kafka consumers still read them.',
      labelNames: ['topic', 'reason'],
      registers,
    });
    this.commitFailures = new Counter({ name: 'floe_table_commit_failures_total', help: 'Table commits that failed (retried with backoff), by topic.', labelNames: ['topic'], registers });
    this.commitRetries = new Counter({ name: 'floe_table_commit_retries_total', help: 'Table commit attempts made after a failed one (whether they then landed or not), by topic.', labelNames: ['topic'], registers });
    this.commitDuration = new Histogram({ name: 'floe_tiering_commit_duration_seconds', help: 'Time of one table commit (manifests, metadata and catalog swap).', buckets: TIERING_DURATION_BUCKETS, registers });
  }

  /** Content type of `render()`'s text: `text/plain; version=0.0.4; charset=utf-8`. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Runs `read` before every scrape (after the previous scrape's readers): for values that need I/O. */
  beforeEachScrape(read: () => Promise<void>): void {
    this.beforeScrape.push(read);
  }

  /** The exposition text of every metric. */
  async render(): Promise<string> {
    await Promise.all(this.beforeScrape.map((r) => r()));
    return this.registry.metrics();
  }

  // LogObserver: the partition logs call these once per append, write and fsync.
  appendWaited(seconds: number): void {
    this.appendWait.observe(seconds);
  }

  segmentWritten(bytes: number, seconds: number, inline: boolean): void {
    this.writtenBytes += bytes;
    if (inline) this.inlineWrites++;
    this.writeDuration.observe(seconds);
  }

  flushed(seconds: number): void {
    this.flushDuration.observe(seconds);
  }

  // RequestObserver: the router calls these once per request.
  answered(apiKey: number, seconds: number): void {
    const c = this.children(apiKey);
    c.requests++;
    c.duration.observe(seconds);
  }

  failed(apiKey: number, seconds: number): void {
    const c = this.children(apiKey);
    c.failures++;
    c.duration.observe(seconds);
  }

  private children(apiKey: number): ApiChildren {
    let c = this.perApi.get(apiKey);
    if (c === undefined) {
      const api = apiName(apiKey);
      c = { api, requests: 0, failures: 0, duration: this.duration.labels({ api }) };
      this.perApi.set(apiKey, c);
    }
    return c;
  }

  // TieringObserver: the tiering scheduler calls these once per copy or commit.
  segmentCopied(e: { topic: string; sizeInBytes: number; seconds: number; rows?: SegmentRowCounts | undefined }): void {
    if (e.rows !== undefined) {
      const c = this.converted.get(e.topic) ?? { records: 0, nullKeys: 0, nullValues: 0 };
      this.converted.set(e.topic, { ...c, records: c.records + e.rows.records, nullKeys: c.nullKeys + e.rows.nullKeys, nullValues: c.nullValues + e.rows.nullValues });
    }
    this.segmentsCopied.inc({ topic: e.topic });
    this.bytesCopied.inc({ topic: e.topic }, e.sizeInBytes);
    this.copyDuration.observe(e.seconds);
  }

  copyFailed(e: { topic: string }): void {
    this.copyFailures.inc({ topic: e.topic });
  }

  committed(e: { topic: string; seconds: number; retry: boolean }): void {
    this.commits.inc({ topic: e.topic });
    if (e.retry) this.commitRetries.inc({ topic: e.topic });
    this.commitDuration.observe(e.seconds);
  }

  valuesTyped(e: { topic: string; exact: number; rawKept: number; deadLetters: Readonly<Record<string, number>> }): void {
    if (e.exact > 0) this.typedRecords.inc({ topic: e.topic, bytes: 'rebuilt' }, e.exact);
    if (e.rawKept > 0) this.typedRecords.inc({ topic: e.topic, bytes: 'raw_kept' }, e.rawKept);
    let dead = 0;
    for (const [reason, n] of Object.entries(e.deadLetters)) {
      this.deadLetters.inc({ topic: e.topic, reason }, n);
      dead += n;
    }
    // The status page's dead-letter and raw-kept shares (the rows come with segmentCopied).
    const c = this.converted.get(e.topic) ?? { records: 0, nullKeys: 0, nullValues: 0 };
    this.converted.set(e.topic, { ...c, deadLetters: (c.deadLetters ?? 0) + dead, rawKept: (c.rawKept ?? 0) + e.rawKept });
  }

  upsertSynced(e: { topic: string; rowsRead: number; rowsHidden: number; appended: number; rebuilt: number; seconds: number }): void {
    if (e.appended > 0) this.upsertSyncs.inc({ topic: e.topic, kind: 'append' }, e.appended);
    if (e.rebuilt > 0) this.upsertSyncs.inc({ topic: e.topic, kind: 'rebuild' }, e.rebuilt);
    this.upsertRows.inc({ topic: e.topic, rows: 'read' }, e.rowsRead);
    this.upsertRows.inc({ topic: e.topic, rows: 'hidden' }, e.rowsHidden);
    this.upsertSeconds.inc({ topic: e.topic }, e.seconds);
  }

  commitFailed(e: { topic: string; seconds: number; retry: boolean }): void {
    this.commitFailures.inc({ topic: e.topic });
    if (e.retry) this.commitRetries.inc({ topic: e.topic });
    this.commitDuration.observe(e.seconds);
  }
}

/**
 * A gauge labelled `topic`, set at scrape time from `rows()` (topic and its value source); a value that is
 * undefined leaves that topic out.
 */
export function topicGauge<T>(registers: Registry[], name: string, help: string, rows: () => Iterable<readonly [string, T]>, value: (row: T) => number | undefined): Gauge<'topic'> {
  return new Gauge({
    name,
    help,
    labelNames: ['topic'],
    registers,
    collect() {
      this.reset();
      for (const [topic, row] of rows()) {
        const v = value(row);
        if (v !== undefined) this.set({ topic }, v);
      }
    },
  });
}
