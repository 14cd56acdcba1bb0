/**
 * Broker-wide metrics read from the broker's services at scrape time: open and refused connections, requests with
 * trailing bytes (counted by the router), reads served from tiered storage, and the hits and misses of the
 * remote read caches (counted by the caches themselves).
 */
import { Counter, Gauge } from 'prom-client';
import type { ClientQuotas } from '../quotas/client-quotas.js';
import type { Router } from '../router.js';
import type { BrokerTiering } from '../tiering/broker-tiering.js';
import type { AuthenticationCounts } from './admin-port.js';
import type { TopicBacklog } from '../../tiering/plugin/api.js';
import { apiName, topicGauge, type BrokerMetrics } from './broker-metrics.js';

export interface ServiceMetricsSources {
  readonly router: Router;
  /** Open Kafka client connections. */
  readonly connections: () => number;
  /** Connections refused by max.connections.per.ip, per listener. */
  readonly connectionsRefused: () => ReadonlyMap<string, number>;
  /** Pools of reusable memory, by name: `requests` (request frames), `record_sets` (what Fetch reads). */
  readonly buffers?: Readonly<Record<string, FramePoolCounts>> | undefined;
  readonly authentication: () => AuthenticationCounts;
  /** Client quotas, whose throttles are counted. */
  readonly quotas?: Pick<ClientQuotas, 'throttled'> | undefined;
  readonly tiering?: BrokerTiering | undefined;
}

/** The request frame pool's counters (server/frame-pool.ts). */
export interface FramePoolCounts {
  readonly allocated: number;
  readonly reused: number;
  readonly idleBytes: number;
}

export function registerServiceMetrics(metrics: BrokerMetrics, sources: ServiceMetricsSources): void {
  const registers = [metrics.registry];
  new Gauge({
    name: 'floe_connections',
    help: 'Open Kafka client connections.',
    registers,
    collect() {
      this.set(sources.connections());
    },
  });
  new Counter({
    name: 'floe_connections_refused_total',
    help: 'Kafka client connections closed on arrival because their address already had max.connections.per.ip open, by listener.',
    labelNames: ['listener'],
    registers,
    collect() {
      this.reset();
      for (const [listener, n] of sources.connectionsRefused()) this.inc({ listener }, n);
    },
  });
  const pools = sources.buffers;
  if (pools !== undefined) {
    new Counter({
      name: 'floe_buffers_total',
      help: 'Buffers of 4 KiB or more, by pool (requests: request frames; record_sets: what Fetch reads from the log) and by where their memory came from: allocated afresh, or reused once an earlier one was done. Fresh allocations drive full garbage collections.',
      labelNames: ['pool', 'source'],
      registers,
      collect() {
        this.reset();
        for (const [pool, counts] of Object.entries(pools)) {
          this.inc({ pool, source: 'allocated' }, counts.allocated);
          this.inc({ pool, source: 'reused' }, counts.reused);
        }
      },
    });
    new Gauge({
      name: 'floe_buffers_idle_bytes',
      help: 'Memory given back and kept for reuse, by pool.',
      labelNames: ['pool'],
      registers,
      collect() {
        this.reset();
        for (const [pool, counts] of Object.entries(pools)) this.set({ pool }, counts.idleBytes);
      },
    });
  }
  new Counter({
    name: 'floe_sasl_authentications_total',
    help: 'SASL authentications (re-authentications included), by listener, mechanism and result (success or failure).',
    labelNames: ['listener', 'mechanism', 'result'],
    registers,
    collect() {
      this.reset();
      for (const o of sources.authentication().sasl) this.inc({ listener: o.listener, mechanism: o.mechanism, result: o.result }, o.count);
    },
  });
  new Counter({
    name: 'floe_tls_handshake_failures_total',
    help: 'TLS connections refused before a request: failed handshakes (plaintext clients, untrusted or expired certificates) and offered client certificates that do not verify, by listener.',
    labelNames: ['listener'],
    registers,
    collect() {
      this.reset();
      for (const o of sources.authentication().tlsHandshakeFailures) this.inc({ listener: o.listener }, o.count);
    },
  });
  new Counter({
    name: 'floe_requests_with_trailing_bytes_total',
    help: 'Kafka requests that carried bytes after their body (ignored, as Kafka does), by API: a client sending them is visible without being failed.',
    labelNames: ['api'],
    registers,
    collect() {
      this.reset();
      for (const [key, n] of sources.router.requestsWithTrailingBytes()) this.inc({ api: apiName(key) }, n);
    },
  });
  const quotas = sources.quotas;
  if (quotas !== undefined) {
    const apis = { produce: 'Produce', fetch: 'Fetch' } as const;
    new Counter({
      name: 'floe_quota_throttled_requests_total',
      help: 'Produce and Fetch requests throttled by a client quota (producer_byte_rate, consumer_byte_rate), by API.',
      labelNames: ['api'],
      registers,
      collect() {
        this.reset();
        for (const [type, api] of Object.entries(apis)) this.inc({ api }, quotas.throttled[type as keyof typeof apis].requests);
      },
    });
    new Counter({
      name: 'floe_quota_throttle_time_seconds_total',
      help: 'Throttle time given to clients over their quota (throttle_time_ms, during which their connection is muted), by API.',
      labelNames: ['api'],
      registers,
      collect() {
        this.reset();
        for (const [type, api] of Object.entries(apis)) this.inc({ api }, quotas.throttled[type as keyof typeof apis].throttleMs / 1000);
      },
    });
  }
  const tiering = sources.tiering;
  if (tiering === undefined) return;
  const backlogGauge = (name: string, help: string, value: (b: TopicBacklog) => number | undefined) => topicGauge(registers, name, help, () => tiering.backlogs().map((b) => [b.topic, b] as const), value);
  backlogGauge('floe_tiering_backlog_segments', 'Closed segments of a topic its table does not hold yet (waiting, being converted, or converted and not yet committed).', (b) => b.backlog.segments);
  backlogGauge('floe_tiering_backlog_bytes', 'Bytes of those segments.', (b) => b.backlog.bytes);
  backlogGauge('floe_tiering_backlog_eta_seconds', 'Time left of a large backlog (a backfill or catch-up) at the rate it has gone down so far.', (b) => b.progress?.etaSeconds);
  new Counter({
    name: 'floe_remote_fetches_total',
    help: 'Reads served from tiered storage (the Iceberg table\'s Parquet files) for Fetch requests below the local log start.',
    registers,
    collect() {
      this.reset();
      this.inc(tiering.remoteReads.reads);
    },
  });
  new Counter({
    name: 'floe_remote_fetch_bytes_total',
    help: 'Bytes of record batches rebuilt from tiered storage for Fetch requests.',
    registers,
    collect() {
      this.reset();
      this.inc(tiering.remoteReads.bytes);
    },
  });
  const cacheCounter = (name: string, help: string, value: (c: { hits: number; misses: number }) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['cache'],
      registers,
      collect() {
        this.reset();
        for (const c of tiering.cacheStats()) this.inc({ cache: c.cache }, value(c));
      },
    });
  cacheCounter('floe_cache_hits_total', 'Lookups answered from a remote-read cache (remote_batches: rebuilt record batches; parquet_footers; offset_indexes).', (c) => c.hits);
  cacheCounter('floe_cache_misses_total', 'Lookups a remote-read cache could not answer (the value was then read from the warehouse).', (c) => c.misses);
  new Gauge({
    name: 'floe_cache_bytes',
    help: 'Bytes a remote-read cache holds now (see remote.log.reader.cache.total.size.bytes for remote_batches).',
    labelNames: ['cache'],
    registers,
    collect() {
      this.reset();
      for (const c of tiering.cacheStats()) this.set({ cache: c.cache }, c.bytes);
    },
  });
}
