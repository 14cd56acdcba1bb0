/** DeleteGroups (key 42): removes empty groups with their committed offsets; a group with members is refused. */
import type { OffsetManager } from '../groups/offset-manager.js';
import type { ApiHandler, Body } from './handler.js';

interface DeleteGroupsRequest {
  groupsNames: string[];
}

export class DeleteGroupsHandler implements ApiHandler {
  readonly apiKey = 42;
  readonly minVersion = 0;
  readonly maxVersion = 2;

  constructor(private readonly offsets: OffsetManager) {}

  async handle(body: Body): Promise<Body> {
    const req = body as unknown as DeleteGroupsRequest;
    const results: Body[] = [];
    for (const groupId of req.groupsNames) results.push({ groupId, errorCode: await this.offsets.deleteGroup(groupId) });
    return { throttleTimeMs: 0, results };
  }
}
