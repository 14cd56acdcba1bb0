/**
 * The admin port's built-in endpoints:
 *
 *   GET /health   200 {"status":"alive"} while the process serves HTTP at all (liveness).
 *   GET /ready    200 {"status":"ready",...} once the Kafka listener is bound and start-up (log recovery,
 *                 table attach) is finished; 503 {"status":"starting"|"stopping","pending":[...]} before
 *                 and during shutdown (readiness: route clients here only when it says 200).
 *   GET /metrics  Prometheus text exposition format 0.0.4 (see broker-metrics.ts).
 */
import { json, type AdminRoute } from './admin-server.js';
import type { BrokerMetrics } from './broker-metrics.js';
import type { Readiness } from './readiness.js';

export function healthRoutes(readiness: Readiness): AdminRoute[] {
  return [
    { method: 'GET', path: '/health', handler: () => json(200, { status: 'alive' }) },
    {
      method: 'GET',
      path: '/ready',
      handler: () => {
        const report = readiness.report();
        return json(report.status === 'ready' ? 200 : 503, report);
      },
    },
  ];
}

export function metricsRoutes(metrics: BrokerMetrics): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/metrics',
      handler: async () => ({ status: 200, headers: { 'content-type': metrics.contentType }, body: await metrics.render() }),
    },
  ];
}
