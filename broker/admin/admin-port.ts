/**
 * The admin port as the broker runs it: the HTTP server on `admin.host:admin.port` (off with -1) with the
 * health, readiness and metrics routes, and the metrics registry whose scrape-time readers are attached
 * once the broker's services exist (before that, `/metrics` has the process and request families only).
 * Attaching also starts the status history (status-history.ts) and adds the status page at `/`
 * (status-page.ts) and the JSON admin API under `/api/` (api-routes.ts) that the page and `floe` use.
 */
import { Gauge } from 'prom-client';
import type { BrokerConfig } from '../config/settings.js';
import type { LogManager } from '../log/log-manager.js';
import type { Logger } from '../logger.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { Router } from '../router.js';
import type { BrokerTiering } from '../tiering/broker-tiering.js';
import type { TopicManager } from '../topics/topic-manager.js';
import { apiRoutes } from './api-routes.js';
import { PartitionReader } from './partition-metrics.js';
import { StatusHistory } from './status-history.js';
import { statusPageRoutes } from './status-page.js';
import type { RequestListener, Server } from 'node:http';
import { AdminServer, type AdminGuard } from './admin-server.js';
import { BrokerMetrics } from './broker-metrics.js';
import { registerPartitionMetrics } from './partition-metrics.js';
import type { Readiness } from './readiness.js';
import { healthRoutes, metricsRoutes } from './routes.js';
import { registerServiceMetrics, type FramePoolCounts } from './service-metrics.js';
import type { ClientQuotas } from '../quotas/client-quotas.js';
import { registerCleanerMetrics } from './cleaner-metrics.js';
import type { LogCleanerMetrics } from '../log/cleaner/log-cleaner.js';
import { registerQualityMetrics, registerTableMetrics } from './table-metrics.js';

export interface AuthenticationCounts {
  readonly sasl: readonly { readonly listener: string; readonly mechanism: string; readonly result: 'success' | 'failure'; readonly count: number }[];
  readonly tlsHandshakeFailures: readonly { readonly listener: string; readonly count: number }[];
}

export interface AdminSources {
  readonly logs: LogManager;
  readonly metadata: MetadataStore;
  readonly log: Logger;
  readonly router: Router;
  readonly connections: () => number;
  /** Connections refused by max.connections.per.ip, per listener. */
  readonly connectionsRefused: () => ReadonlyMap<string, number>;
  /** Pools of reusable memory by name, and where their buffers came from (fresh or reused). */
  readonly buffers?: Readonly<Record<string, FramePoolCounts>>;
  /** SASL authentications by outcome, and TLS handshakes refused, per listener. */
  readonly authentication: () => AuthenticationCounts;
  /** Client quotas: throttled requests and their throttle time. */
  readonly quotas?: ClientQuotas;
  readonly tiering: BrokerTiering | undefined;
  readonly topics: TopicManager;
  /** The log cleaner, when log.cleaner.enable is on. */
  readonly cleaner?: { readonly metrics: LogCleanerMetrics } | undefined;
}

export interface AdminPort {
  readonly server: AdminServer;
  readonly metrics: BrokerMetrics;
  /** `http://host:port`, with 0.0.0.0 shown as 127.0.0.1. */
  readonly url: string;
  readonly port: number;
  /** Registers the metrics read from the broker's services (once they exist). */
  attach(sources: AdminSources): void;
  close(): Promise<void>;
}

/** Starts the admin port, or returns undefined when admin.port is -1. */
export async function startAdminPort(options: {
  config: BrokerConfig;
  log: Logger;
  readiness: Readiness;
  /** node:https with the broker's certificate (admin.ssl.enabled). */
  createServer?: (listener: RequestListener) => Server;
  /** Refuses requests without credentials (admin.authentication.method; admin-auth.ts). */
  guard?: AdminGuard;
}): Promise<AdminPort | undefined> {
  const { config, log, readiness } = options;
  const port = config['admin.port'];
  if (port < 0) return undefined;
  const metrics = new BrokerMetrics();
  new Gauge({
    name: 'floe_ready',
    help: '1 when /ready answers 200 (start-up finished, not stopping), else 0.',
    registers: [metrics.registry],
    collect() {
      this.set(readiness.ready ? 1 : 0);
    },
  });
  const server = new AdminServer(log, { ...(options.createServer ? { createServer: options.createServer } : {}), ...(options.guard ? { guard: options.guard } : {}) });
  for (const r of [...healthRoutes(readiness), ...metricsRoutes(metrics)]) server.route(r);
  const bound = await server.listen(port, config['admin.host']);
  log.info('admin HTTP started', { url: bound.url, endpoints: ['/health', '/ready', '/metrics'] });
  let attached = false;
  let history: StatusHistory | undefined;
  return {
    server,
    metrics,
    url: bound.url,
    port: bound.port,
    attach(sources) {
      if (attached) throw new Error('admin metrics are already attached');
      attached = true;
      registerServiceMetrics(metrics, sources);
      registerPartitionMetrics(metrics, sources);
      if (sources.cleaner !== undefined) registerCleanerMetrics(metrics, sources.cleaner);
      if (sources.tiering !== undefined) registerTableMetrics(metrics, { metadata: sources.metadata, tiering: sources.tiering, log: sources.log });
      // The status page's history and the JSON API (api-routes.ts) read the same sources.
      const partitions = new PartitionReader({ logs: sources.logs, tiering: sources.tiering });
      history = new StatusHistory({ logs: sources.logs, partitions, converted: metrics.converted }, { onError: (err) => sources.log.warn('status page sample failed; the next one retries', { err }) });
      history.start();
      registerQualityMetrics(metrics, history);
      for (const r of [...apiRoutes({ topics: sources.topics, logs: sources.logs, tiering: sources.tiering, partitions, history }), ...statusPageRoutes()]) server.route(r);
    },
    close: async () => {
      history?.stop();
      await server.close();
    },
  };
}
