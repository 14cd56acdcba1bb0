/** SyncGroup (key 14): the leader hands out assignments; every member waits for and receives its own. */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { GroupCoordinator } from '../groups/coordinator.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface SyncGroupRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string | null;
  protocolName: string | null;
  assignments: { memberId: string; assignment: Buffer }[];
}

export class SyncGroupHandler implements ApiHandler {
  readonly apiKey = 14;
  readonly minVersion = 0;
  readonly maxVersion = 5;

  constructor(private readonly groups: GroupCoordinator) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as SyncGroupRequest;
    const v = ctx.apiVersion;
    if (!allowed(ctx, 'READ', 'GROUP', req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) };
    const r = await this.groups.syncGroup({
      groupId: req.groupId,
      generationId: req.generationId,
      memberId: req.memberId,
      groupInstanceId: v >= 3 ? req.groupInstanceId : null,
      protocolType: v >= 5 ? req.protocolType : null,
      protocolName: v >= 5 ? req.protocolName : null,
      assignments: req.assignments,
    });
    return { throttleTimeMs: 0, errorCode: r.errorCode, protocolType: r.protocolType, protocolName: r.protocolName, assignment: r.assignment };
  }
}
