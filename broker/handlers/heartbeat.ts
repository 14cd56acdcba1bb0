/** Heartbeat (key 12): keeps a member's session alive and tells it when the group is rebalancing. */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { GroupCoordinator } from '../groups/coordinator.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface HeartbeatRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

export class HeartbeatHandler implements ApiHandler {
  readonly apiKey = 12;
  readonly minVersion = 0;
  readonly maxVersion = 4;

  constructor(private readonly groups: GroupCoordinator) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const req = body as unknown as HeartbeatRequest;
    if (!allowed(ctx, 'READ', 'GROUP', req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    const instanceId = ctx.apiVersion >= 3 ? req.groupInstanceId : null;
    return { throttleTimeMs: 0, errorCode: this.groups.heartbeat(req.groupId, req.memberId, instanceId, req.generationId) };
  }
}
