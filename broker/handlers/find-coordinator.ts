/** FindCoordinator (key 10): which broker coordinates a group (key type 0) or transactional id (1); v4+ batches keys. */
import { ErrorCode } from '../../protocol/error-codes.js';
import { CoordinatorKeyType, type CoordinatorLocator } from '../groups/coordinator-locator.js';
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
      return { throttleTimeMs: 0, coordinators: req.coordinatorKeys.map((key) => this.find(key, req.keyType, ctx.conn.security.listener)) };
    }
    const a = this.find(req.key, ctx.apiVersion >= 1 ? req.keyType : CoordinatorKeyType.GROUP, ctx.conn.security.listener);
    return { throttleTimeMs: 0, errorCode: a.errorCode, errorMessage: a.errorMessage, nodeId: a.nodeId, host: a.host, port: a.port };
  }

  private find(key: string, keyType: number, listener: string): Answer {
    if (keyType !== CoordinatorKeyType.GROUP && keyType !== CoordinatorKeyType.TRANSACTION) {
      return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported coordinator key type ${keyType}; use 0 (group) or 1 (transaction).` };
    }
    const node = this.locator.coordinatorFor(key, keyType, listener);
    if (!node) return { key, nodeId: -1, host: '', port: -1, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: 'No coordinator is available right now; retry shortly.' };
    return { key, nodeId: node.nodeId, host: node.host, port: node.port, errorCode: ErrorCode.NONE, errorMessage: null };
  }
}
