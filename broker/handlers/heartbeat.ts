/** Heartbeat (key 12): keeps a member's session alive and tells it when the group is rebalancing. */
import type { GroupCoordinator } from '../groups/coordinator.js';
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
    const instanceId = ctx.apiVersion >= 3 ? req.groupInstanceId : null;
    return { throttleTimeMs: 0, errorCode: this.groups.heartbeat(req.groupId, req.memberId, instanceId, req.generationId) };
  }
}
