/**
 * What handlers ask: may this request's principal do this to that resource? The router binds one Access
 * to each request (principal and client host of its connection); with no authorizer configured, handlers
 * get none and every check passes, which is Floe's behaviour without `authorizer.class.name`.
 */
import type { ConnectionInfo } from '../../server/connection.js';
import type { OperationName, ResourceTypeName } from './acl.js';
import type { AclAuthorizer } from './authorizer.js';
import { CLUSTER_RESOURCE } from './acl.js';

export interface Access {
  allowed(operation: OperationName, resourceType: ResourceTypeName, name: string): boolean;
  /** Allowed on some resource of the type (Kafka's authorizeByResourceType). */
  allowedOnAny(operation: OperationName, resourceType: ResourceTypeName): boolean;
}

/** Kafka compares ACL hosts with the client's address as Java prints it: IPv4 without the ::ffff: prefix. */
export function clientHost(remoteAddress: string): string {
  return remoteAddress.startsWith('::ffff:') ? remoteAddress.slice(7) : remoteAddress;
}

export function accessFor(authorizer: AclAuthorizer, conn: ConnectionInfo): Access {
  const host = clientHost(conn.remoteAddress);
  return {
    allowed: (operation, resourceType, name) => authorizer.authorize(conn.security.principal, host, operation, resourceType, name),
    allowedOnAny: (operation, resourceType) => authorizer.authorizeAny(conn.security.principal, host, operation, resourceType),
  };
}

/** The checks handlers make, passing when the request carries no Access (no authorizer configured). */
export function allowed(ctx: { readonly access?: Access | undefined }, operation: OperationName, resourceType: ResourceTypeName, name: string): boolean {
  return ctx.access === undefined || ctx.access.allowed(operation, resourceType, name);
}

export function allowedOnCluster(ctx: { readonly access?: Access | undefined }, operation: OperationName): boolean {
  return allowed(ctx, operation, 'CLUSTER', CLUSTER_RESOURCE);
}

export function allowedOnAny(ctx: { readonly access?: Access | undefined }, operation: OperationName, resourceType: ResourceTypeName): boolean {
  return ctx.access === undefined || ctx.access.allowedOnAny(operation, resourceType);
}

const OPERATION_BY_CODE = new Map<number, OperationName>(
  (['ALL', 'READ', 'WRITE', 'CREATE', 'DELETE', 'ALTER', 'DESCRIBE', 'CLUSTER_ACTION', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS', 'IDEMPOTENT_WRITE', 'CREATE_TOKENS', 'DESCRIBE_TOKENS', 'TWO_PHASE_COMMIT'] as const).map(
    (name, i) => [i + 2, name],
  ),
);

/** The `*AuthorizedOperations` bit field: the bits of `all` (AclOperation codes) the principal is allowed. */
export function authorizedOperations(ctx: { readonly access?: Access | undefined }, resourceType: ResourceTypeName, name: string, all: number): number {
  if (ctx.access === undefined) return all;
  let bits = 0;
  for (const [code, op] of OPERATION_BY_CODE) if ((all & (1 << code)) !== 0 && ctx.access.allowed(op, resourceType, name)) bits |= 1 << code;
  return bits;
}
