/** DescribeGroups (key 15): state, protocol and members of classic groups; unknown groups answer as Dead. */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { GroupCoordinator } from '../groups/coordinator.js';
import { allowed, authorizedOperations } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { AUTHORIZED_OPERATIONS_OMITTED } from './common.js';

interface DescribeGroupsRequest {
  groups: string[];
  includeAuthorizedOperations: boolean;
}

/** DESCRIBE, DELETE, READ as Kafka's AclOperation bit positions: what a group allows with no ACLs. */
const ALL_GROUP_OPERATIONS = [3, 6, 8].reduce((acc, bit) => acc | (1 << bit), 0);
const EMPTY = Buffer.alloc(0);

export class DescribeGroupsHandler implements ApiHandler {
  readonly apiKey = 15;
  readonly minVersion = 0;
  readonly maxVersion = 5;

  constructor(private readonly groups: GroupCoordinator) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const req = body as unknown as DescribeGroupsRequest;
    const operations = ctx.apiVersion >= 3 && req.includeAuthorizedOperations ? ALL_GROUP_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED;
    return {
      throttleTimeMs: 0,
      groups: req.groups.map((id) =>
        allowed(ctx, 'DESCRIBE', 'GROUP', id)
          ? this.describe(id, operations === AUTHORIZED_OPERATIONS_OMITTED ? operations : authorizedOperations(ctx, 'GROUP', id, operations))
          : { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, groupId: id, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED },
      ),
    };
  }

  private describe(groupId: string, authorizedOperations: number): Body {
    if (!this.groups.isActive) {
      return { errorCode: ErrorCode.NOT_COORDINATOR, groupId, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations };
    }
    const group = this.groups.group(groupId);
    if (!group) return { errorCode: ErrorCode.NONE, groupId, groupState: 'Dead', protocolType: '', protocolData: '', members: [], authorizedOperations };
    // Member metadata and assignments are shown only once the group is Stable, as Kafka does.
    const stable = group.state === 'Stable';
    const protocol = group.protocolName ?? '';
    return {
      errorCode: ErrorCode.NONE,
      groupId,
      groupState: group.state,
      protocolType: group.protocolType ?? '',
      protocolData: stable ? protocol : '',
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: stable ? m.metadataFor(protocol) : EMPTY,
        memberAssignment: stable ? m.assignment : EMPTY,
      })),
      authorizedOperations,
    };
  }
}
