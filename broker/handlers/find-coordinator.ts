/** FindCoordinator (key 10): which broker coordinates a group (key type 0) or transactional id (1); v4+ batches keys. */
import { ErrorCode } from '../../protocol/error-codes.js';
import { CoordinatorKeyType, type CoordinatorLocator } from '../groups/coordinator-locator.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface FindCoordinatorRequest {
  key: string;
  keyType: number;
  coordinatorKeys: string[];
}

interface Answer {
  key: string;
  nodeId: number;
  host: string;
  port: number;
  errorCode: number;
  errorMessage: string | null;
}

export class FindCoordinatorHandler implements ApiHandler {
  readonly apiKey = 10;
  readonly minVersion = 0;
  readonly maxVersion = 6;

  constructor(private readonly locator: CoordinatorLocator) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const req = body as unknown as FindCoordinatorRequest;
    if (ctx.apiVersion >= 4) {
      return { throttleTimeMs: 0, coordinators: req.coordinatorKeys.map((key) => this.find(key, req.keyType, ctx)) };
    }
    const a = this.find(req.key, ctx.apiVersion >= 1 ? req.keyType : CoordinatorKeyType.GROUP, ctx);
    return { throttleTimeMs: 0, errorCode: a.errorCode, errorMessage: a.errorMessage, nodeId: a.nodeId, host: a.host, port: a.port };
  }

  private find(key: string, keyType: number, ctx: HandlerContext): Answer {
    if (keyType !== CoordinatorKeyType.GROUP && keyType !== CoordinatorKeyType.TRANSACTION) {
      return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported coordinator key type ${keyType}; use 0 (group) or 1 (transaction).` };
    }
    // DESCRIBE on the group or transactional id, as Kafka asks.
    if (keyType === CoordinatorKeyType.GROUP && !allowed(ctx, 'DESCRIBE', 'GROUP', key)) {
      return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: `The principal may not use group '${key}'; grant READ or DESCRIBE on it.` };
    }
    if (keyType === CoordinatorKeyType.TRANSACTION && !allowed(ctx, 'DESCRIBE', 'TRANSACTIONAL_ID', key)) {
      return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, errorMessage: `The principal may not use transactional id '${key}'; grant WRITE or DESCRIBE on it.` };
    }
    const node = this.locator.coordinatorFor(key, keyType, ctx.conn.security.listener);
    if (!node) return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: 'No coordinator is available right now; retry shortly.' };
    return { key, nodeId: node.nodeId, host: node.host, port: node.port, errorCode: ErrorCode.NONE, errorMessage: null };
  }
}
