/**
 * DescribeAcls (29), CreateAcls (30) and DeleteAcls (31), as `kafka-acls --list/--add/--remove` and the
 * AdminClient use them. As in Kafka: SECURITY_DISABLED without an authorizer; Describe needs DESCRIBE and
 * Create/Delete need ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED otherwise); a filter with UNKNOWN
 * elements or a binding that cannot be stored is INVALID_REQUEST, with the reason.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { Logger } from '../logger.js';
import { type AclBinding, type AclBindingFilter, invalidFilter } from '../security/acls/acl.js';
import { allowedOnCluster } from '../security/acls/access.js';
import type { AclAuthorizer } from '../security/acls/authorizer.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';

const DISABLED = 'No authorizer is configured on the broker; set authorizer.class.name to manage ACLs.';
const denied = (op: string) => `The principal may not ${op} ACLs; it needs ${op === 'describe' ? 'DESCRIBE' : 'ALTER'} on the cluster (or be a super user).`;

interface WireFilter {
  resourceTypeFilter: number;
  resourceNameFilter: string | null;
  patternTypeFilter: number;
  principalFilter: string | null;
  hostFilter: string | null;
  operation: number;
  permissionType: number;
}

const toFilter = (f: WireFilter): AclBindingFilter => ({
  resourceType: f.resourceTypeFilter,
  resourceName: f.resourceNameFilter,
  patternType: f.patternTypeFilter,
  principal: f.principalFilter,
  host: f.hostFilter,
  operation: f.operation,
  permissionType: f.permissionType,
});

export class DescribeAclsHandler implements ApiHandler {
  readonly apiKey = 29;
  readonly minVersion = 0;
  readonly maxVersion = 3;

  constructor(private readonly authorizer: AclAuthorizer | undefined) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const answer = (errorCode: number, errorMessage: string | null, resources: Body[] = []) => ({ throttleTimeMs: 0, errorCode, errorMessage, resources });
    if (this.authorizer === undefined) return answer(ErrorCode.SECURITY_DISABLED, DISABLED);
    if (!allowedOnCluster(ctx, 'DESCRIBE')) return answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, denied('describe'));
    const filter = toFilter(body as unknown as WireFilter);
    const problem = invalidFilter(filter);
    if (problem !== undefined) return answer(ErrorCode.INVALID_REQUEST, `${problem}; use ANY to match every value.`);
    const groups = new Map<string, { resourceType: number; resourceName: string; patternType: number; acls: Body[] }>();
    for (const b of this.authorizer.describe(filter)) {
      const key = `${b.resourceType}\0${b.patternType}\0${b.resourceName}`;
      let group = groups.get(key);
      if (group === undefined) groups.set(key, (group = { resourceType: b.resourceType, resourceName: b.resourceName, patternType: b.patternType, acls: [] }));
      group.acls.push({ principal: b.principal, host: b.host, operation: b.operation, permissionType: b.permissionType });
    }
    return answer(ErrorCode.NONE, null, [...groups.values()]);
  }
}

export class CreateAclsHandler implements ApiHandler {
  readonly apiKey = 30;
  readonly minVersion = 0;
  readonly maxVersion = 3;

  constructor(
    private readonly authorizer: AclAuthorizer | undefined,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const creations = body.creations as (Omit<AclBinding, 'patternType'> & { resourcePatternType: number })[];
    const all = (errorCode: number, errorMessage: string) => ({ throttleTimeMs: 0, results: creations.map(() => ({ errorCode, errorMessage })) });
    if (this.authorizer === undefined) return all(ErrorCode.SECURITY_DISABLED, DISABLED);
    if (!allowedOnCluster(ctx, 'ALTER')) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, denied('create'));
    const bindings: AclBinding[] = creations.map((c) => ({
      resourceType: c.resourceType,
      resourceName: c.resourceName,
      patternType: c.resourcePatternType,
      principal: c.principal,
      host: c.host,
      operation: c.operation,
      permissionType: c.permissionType,
    }));
    try {
      const results = await this.authorizer.create(bindings);
      for (const [i, b] of bindings.entries()) if (results[i] === undefined) this.log.info('ACL created', { ...b, by: ctx.conn.security.principal });
      return { throttleTimeMs: 0, results: results.map((r) => (r === undefined ? { errorCode: ErrorCode.NONE, errorMessage: null } : { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: r })) };
    } catch (err) {
      this.log.error('could not store ACLs', { err });
      return all(ErrorCode.UNKNOWN_SERVER_ERROR, 'The ACLs could not be stored; see the broker log and retry.');
    }
  }
}

export class DeleteAclsHandler implements ApiHandler {
  readonly apiKey = 31;
  readonly minVersion = 0;
  readonly maxVersion = 3;

  constructor(
    private readonly authorizer: AclAuthorizer | undefined,
    private readonly log: Logger,
  ) {}

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const filters = (body.filters as WireFilter[]).map(toFilter);
    const all = (errorCode: number, errorMessage: string) => ({ throttleTimeMs: 0, filterResults: filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })) });
    if (this.authorizer === undefined) return all(ErrorCode.SECURITY_DISABLED, DISABLED);
    if (!allowedOnCluster(ctx, 'ALTER')) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, denied('delete'));
    const problems = filters.map(invalidFilter);
    const valid = filters.filter((_, i) => problems[i] === undefined);
    let matched: AclBinding[][];
    try {
      matched = await this.authorizer.delete(valid);
    } catch (err) {
      this.log.error('could not store ACLs', { err });
      return all(ErrorCode.UNKNOWN_SERVER_ERROR, 'The ACLs could not be deleted; see the broker log and retry.');
    }
    let next = 0;
    const filterResults = problems.map((problem) => {
      if (problem !== undefined) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `${problem}; use ANY to match every value.`, matchingAcls: [] };
      const acls = matched[next++] ?? [];
      for (const b of acls) this.log.info('ACL deleted', { ...b, by: ctx.conn.security.principal });
      return { errorCode: ErrorCode.NONE, errorMessage: null, matchingAcls: acls.map((b) => ({ errorCode: ErrorCode.NONE, errorMessage: null, ...b })) };
    });
    return { throttleTimeMs: 0, filterResults };
  }
}
