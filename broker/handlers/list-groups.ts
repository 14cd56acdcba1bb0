/** ListGroups (key 16): every group this broker coordinates, filtered by state (v4+) and type (v5+). */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { GroupCoordinator } from '../groups/coordinator.js';
import { allowedOnCluster, visible } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface ListGroupsRequest {
  statesFilter: string[];
  typesFilter: string[];
}

/** Every group here uses the classic protocol (KIP-848 "consumer" groups are not served). */
const GROUP_TYPE = 'classic';

export class ListGroupsHandler implements ApiHandler {
  readonly apiKey = 16;
  readonly minVersion = 0;
  readonly maxVersion = 5;

  constructor(private readonly groups: GroupCoordinator) {}

  handle(body: Body, ctx: HandlerContext): Body {
    if (!this.groups.isActive) return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_COORDINATOR, groups: [] };
    const req = body as unknown as ListGroupsRequest;
    const states = ctx.apiVersion >= 4 && req.statesFilter.length > 0 ? new Set(req.statesFilter.map((s) => s.toLowerCase())) : undefined;
    const types = ctx.apiVersion >= 5 && req.typesFilter.length > 0 ? new Set(req.typesFilter.map((s) => s.toLowerCase())) : undefined;
    const groups: Body[] = [];
    // Only the groups the principal may describe, unless it may describe the cluster (as Kafka).
    const everything = allowedOnCluster(ctx, 'DESCRIBE', true);
    for (const g of this.groups.allGroups()) {
      if (g.state === 'Dead') continue;
      if (!everything && !visible(ctx, 'DESCRIBE', 'GROUP', g.groupId)) continue;
      if (states && !states.has(g.state.toLowerCase())) continue;
      if (types && !types.has(GROUP_TYPE)) continue;
      groups.push({ groupId: g.groupId, protocolType: g.protocolType ?? '', groupState: g.state, groupType: GROUP_TYPE });
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, groups };
  }
}
