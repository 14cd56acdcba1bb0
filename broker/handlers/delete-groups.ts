/** DeleteGroups (key 42): removes empty groups with their committed offsets; a group with members is refused. */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { OffsetManager } from '../groups/offset-manager.js';
import { allowed } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

interface DeleteGroupsRequest {
  groupsNames: string[];
}

export class DeleteGroupsHandler implements ApiHandler {
  readonly apiKey = 42;
  readonly minVersion = 0;
  readonly maxVersion = 2;

  constructor(private readonly offsets: OffsetManager) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const req = body as unknown as DeleteGroupsRequest;
    const results: Body[] = [];
    for (const groupId of req.groupsNames) {
      results.push({ groupId, errorCode: allowed(ctx, 'DELETE', 'GROUP', groupId) ? await this.offsets.deleteGroup(groupId) : ErrorCode.GROUP_AUTHORIZATION_FAILED });
    }
    return { throttleTimeMs: 0, results };
  }
}
