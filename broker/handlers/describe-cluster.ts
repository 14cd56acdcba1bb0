/** DescribeCluster (key 60): this broker, the cluster id, and the controller (also this broker). */
import { ErrorCode } from '../../protocol/error-codes.js';
import { authorizedOperations } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { ALL_CLUSTER_OPERATIONS, AUTHORIZED_OPERATIONS_OMITTED, endpointFor, type BrokerIdentity } from './common.js';

const ENDPOINT_BROKERS = 1;

export class DescribeClusterHandler implements ApiHandler {
  readonly apiKey = 60;
  readonly minVersion = 0;
  readonly maxVersion = 1;

  constructor(private readonly identity: BrokerIdentity) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const { nodeId, clusterId } = this.identity;
    const { host, port } = endpointFor(this.identity, ctx.conn.security.listener);
    const endpointType = (body.endpointType as number | undefined) ?? ENDPOINT_BROKERS;
    const base = { throttleTimeMs: 0, endpointType, clusterId, controllerId: nodeId };
    if (endpointType !== ENDPOINT_BROKERS) {
      return { ...base, errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, errorMessage: 'Only broker endpoints (type 1) are served.', brokers: [], clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED };
    }
    return {
      ...base,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      brokers: [{ brokerId: nodeId, host, port, rack: null }],
      clusterAuthorizedOperations: body.includeClusterAuthorizedOperations ? authorizedOperations(ctx, 'CLUSTER', 'kafka-cluster', ALL_CLUSTER_OPERATIONS) : AUTHORIZED_OPERATIONS_OMITTED,
    };
  }
}
