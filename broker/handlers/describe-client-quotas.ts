/**
 * DescribeClientQuotas (48): Floe has no client quotas yet, so every filter matches nothing. Answered so
 * that `kafka-configs --describe --entity-type users` (which asks for quotas beside SCRAM credentials)
 * works; AlterClientQuotas is not advertised until quotas exist.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { allowedOnCluster } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

export class DescribeClientQuotasHandler implements ApiHandler {
  readonly apiKey = 48;
  readonly minVersion = 0;
  readonly maxVersion = 1;

  handle(_body: Body, ctx: HandlerContext): Body {
    // DESCRIBE_CONFIGS on the cluster, as Kafka asks.
    if (!allowedOnCluster(ctx, 'DESCRIBE_CONFIGS')) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'The principal may not describe quotas; grant DESCRIBE_CONFIGS on the cluster.', entries: null };
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, entries: [] };
  }
}
