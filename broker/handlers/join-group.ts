/** JoinGroup (key 11): a member joins or rejoins a classic group; answered when the join phase completes. */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { GroupCoordinator } from '../groups/coordinator.js';
import type { Protocol } from '../groups/group.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface JoinGroupRequest {
  groupId: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string;
  protocols: Protocol[];
}

export class JoinGroupHandler implements ApiHandler {
  readonly apiKey = 11;
  readonly minVersion = 0;
  readonly maxVersion = 9;

  constructor(private readonly groups: GroupCoordinator) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as JoinGroupRequest;
    const v = ctx.apiVersion;
    if (!allowed(ctx, 'READ', 'GROUP', req.groupId)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, generationId: -1, protocolType: null, protocolName: v >= 7 ? null : '', leader: '', skipAssignment: false, memberId: req.memberId, members: [] };
    }
    const r = await this.groups.joinGroup({
      groupId: req.groupId,
      memberId: req.memberId,
      groupInstanceId: v >= 5 ? req.groupInstanceId : null,
      sessionTimeoutMs: req.sessionTimeoutMs,
      // v0 has no rebalance timeout: Kafka uses the session timeout.
      rebalanceTimeoutMs: v >= 1 && req.rebalanceTimeoutMs > 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs,
      protocolType: req.protocolType,
      protocols: req.protocols,
      clientId: ctx.header.clientId ?? '',
      clientHost: `/${hostOf(ctx.conn.remoteAddress)}`,
      requireKnownMemberId: v >= 4,
      supportsSkipAssignment: v >= 9,
    });
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      generationId: r.generationId,
      protocolType: r.protocolType,
      // protocolName is nullable only from v7.
      protocolName: v >= 7 ? r.protocolName : (r.protocolName ?? ''),
      leader: r.leader,
      skipAssignment: v >= 9 ? r.skipAssignment : false,
      memberId: r.memberId,
      members: r.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata })),
    };
  }
}

/** The host part of `host:port` / `[v6]:port`, shown as Kafka shows a member's client host. */
function hostOf(address: string): string {
  return address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
}
