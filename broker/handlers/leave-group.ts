/** LeaveGroup (key 13): one member (v0-2) or a batch of members, possibly by instance id (v3+), leave a group. */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { GroupCoordinator } from '../groups/coordinator.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface LeaveGroupRequest {
  groupId: string;
  memberId: string;
  members: { memberId: string; groupInstanceId: string | null }[];
}

export class LeaveGroupHandler implements ApiHandler {
  readonly apiKey = 13;
  readonly minVersion = 0;
  readonly maxVersion = 5;

  constructor(private readonly groups: GroupCoordinator) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const req = body as unknown as LeaveGroupRequest;
    if (!allowed(ctx, 'READ', 'GROUP', req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] };
    if (ctx.apiVersion < 3) {
      const r = this.groups.leaveGroup(req.groupId, [{ memberId: req.memberId, groupInstanceId: null }]);
      const errorCode = r.errorCode !== ErrorCode.NONE ? r.errorCode : (r.members[0]?.errorCode ?? ErrorCode.NONE);
      return { throttleTimeMs: 0, errorCode };
    }
    const r = this.groups.leaveGroup(
      req.groupId,
      req.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId })),
    );
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      members: r.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: m.errorCode })),
    };
  }
}
